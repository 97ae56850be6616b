/* One setting of the CSR kernel's knobs (prefetch distance, K panel, FMA
 * contraction) for bench/kernels_knobs.c: the Makefile compiles this file
 * once per setting with the AVX-512 flags and -DTF_KERN_OPS=knob_NAME. */
#define TF_VW 16
#include "tf_kern_loops.h"
