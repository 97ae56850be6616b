/* The dense products for any CPU of the architecture (on x86-64: SSE2). */
#define TF_GNN_DENSE_OPS tf_gnn_dense_ops_baseline
#define TF_GNN_DENSE_NAME "baseline"
#define TF_GNN_DRAW_SIMD 0
#include "tf_gnn_dense_loops.h"
