/* The dense products for AVX-512 CPUs (the Makefile compiles this file with
 * -mavx512f -mavx512vl -mavx2 -mfma); tf_gnn_dense.c calls it when the
 * executor's kernels run their avx512 variant. Nothing on other
 * architectures. */
#if defined(__x86_64__)
#define TF_GNN_DENSE_OPS tf_gnn_dense_ops_avx512
#define TF_GNN_DENSE_NAME "avx512"
#define TF_GNN_DRAW_SIMD 1
#include "tf_gnn_dense_loops.h"
#else
typedef int tf_gnn_dense_avx512_unused; /* ISO C: no empty translation unit */
#endif
