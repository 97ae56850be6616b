/* The kernels for AVX-512 CPUs, 16 floats per register (the Makefile
 * compiles this file with -mavx512f -mavx512vl -mavx2 -mfma; tf_kernels.c
 * calls it only when the CPU has them). Nothing on other architectures. */
#if defined(__x86_64__)
#define TF_VW 16
#define TF_KERN_OPS tf_kern_ops_avx512
#define TF_KERN_NAME "avx512"
#include "tf_kern_loops.h"
#else
typedef int tf_kern_avx512_unused; /* ISO C: no empty translation unit */
#endif
