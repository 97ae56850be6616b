/* The dense products of a GCN layer on this rank's rows, outside the SpMMs:
 * X.W with the sparse local X (no communication), H.W, and the transposed
 * products of the backward pass; the hidden layer's ReLU and dropout.
 * Weights and weight gradients are double (replicated, summed over ranks);
 * activations are float like the SpMM's B and C. Rows are independent, so
 * every row's result is the same at any number of ranks; the weight
 * gradients sum rows in local order, in double. */
#ifndef TF_GNN_DENSE_H
#define TF_GNN_DENSE_H

#include "tf_csr.h"
#include "tf_gnn_rng.h"

#include <stdint.h>

/* Widest k the kernels take (hidden width, classes): per-row accumulators
 * live on the stack. */
#define TF_GNN_MAX_WIDTH 4096

/* Inverted dropout on the stored entries of X: entry (node, column) is kept
 * when its draw under `key` is >= p, and then scaled by 1 / (1 - p).
 * p == 0 (or a NULL tf_gnn_drop) means no dropout. */
typedef struct {
    uint64_t key; /* tf_gnn_rng_key(seed, epoch, TF_GNN_RNG_DROP_INPUT) */
    double p;
} tf_gnn_drop;

/* The entry's factor: 0 or 1 / (1 - p). */
static inline double tf_gnn_drop_factor(const tf_gnn_drop *d, uint64_t node_key, int64_t column)
{
    return tf_gnn_rng_u01(node_key, (uint64_t)column) >= d->p ? 1.0 / (1.0 - d->p) : 0.0;
}

/* out (x->nrows x k) = drop(X) . w, w is x->ncols x k; ids = global node ids. */
void tf_gnn_xw(const tf_csr *x, const int64_t *ids, const tf_gnn_drop *drop, const double *w,
               int k, float *out);
/* gw (x->ncols x k) += drop(X)^T . g, g is x->nrows x k. */
void tf_gnn_xtg(const tf_csr *x, const int64_t *ids, const tf_gnn_drop *drop, const float *g,
                int k, double *gw);
/* out (nrows x b) = h (nrows x a) . w (a x b). */
void tf_gnn_hw(const float *h, int64_t nrows, int a, const double *w, int b, float *out);
/* gw (a x b) += h^T (a x nrows) . g (nrows x b). */
void tf_gnn_htg(const float *h, int64_t nrows, int a, const float *g, int b, double *gw);
/* out (nrows x a) = g (nrows x b) . w^T, w is a x b. */
void tf_gnn_gwt(const float *g, int64_t nrows, int b, const double *w, int a, float *out);
/* r (nrows x k) = drop(ReLU(h)): entry (ids[i], j) kept with the factor of
 * tf_gnn_drop_factor, column j; NULL drop or p == 0: ReLU only. */
void tf_gnn_relu_drop(const float *h, int64_t nrows, int k, const int64_t *ids,
                      const tf_gnn_drop *drop, float *r);

/* The instruction-set variant the products run: the executor's kernels'
 * (tf_kern_variant, so TF_KERNEL forces it). Every variant gives bitwise the
 * same results. */
const char *tf_gnn_dense_variant(void);

#endif
