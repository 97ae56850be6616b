/* The kernels for AVX2 CPUs, 8 floats per register (the Makefile compiles
 * this file with -mavx2 -mfma; tf_kernels.c calls it only when the CPU has
 * both). Nothing on other architectures. */
#if defined(__x86_64__)
#define TF_VW 8
#define TF_KERN_OPS tf_kern_ops_avx2
#define TF_KERN_NAME "avx2"
#include "tf_kern_loops.h"
#else
typedef int tf_kern_avx2_unused; /* ISO C: no empty translation unit */
#endif
