/* Internal to the dense products: one table of the tf_gnn_dense.h functions
 * per instruction set (tf_gnn_dense_loops.h compiled three times), chosen by
 * tf_gnn_dense.c. */
#ifndef TF_GNN_DENSE_VARIANTS_H
#define TF_GNN_DENSE_VARIANTS_H

#include "tf_gnn_dense.h"

typedef struct {
    const char *name;
    void (*xw)(const tf_csr *x, const int64_t *ids, const tf_gnn_drop *drop, const double *w,
               int k, float *out);
    void (*xtg)(const tf_csr *x, const int64_t *ids, const tf_gnn_drop *drop, const float *g,
                int k, double *gw);
    void (*hw)(const float *h, int64_t nrows, int a, const double *w, int b, float *out);
    void (*htg)(const float *h, int64_t nrows, int a, const float *g, int b, double *gw);
    void (*gwt)(const float *g, int64_t nrows, int b, const double *w, int a, float *out);
    void (*relu_drop)(const float *h, int64_t nrows, int k, const int64_t *ids,
                      const tf_gnn_drop *drop, float *r);
} tf_gnn_dense_ops;

extern const tf_gnn_dense_ops tf_gnn_dense_ops_baseline;
#if defined(__x86_64__)
extern const tf_gnn_dense_ops tf_gnn_dense_ops_avx2;
extern const tf_gnn_dense_ops tf_gnn_dense_ops_avx512;
#endif

#endif
