/* Run-time choice of the dense products' instruction-set variant: the one the
 * executor's kernels run (tf_kern_variant: the best the CPU can, or the one
 * TF_KERNEL forces), so one knob selects both and a baseline run stays
 * baseline throughout. The loops: tf_gnn_dense_loops.h. */
#include "tf_gnn_dense.h"
#include "tf_gnn_dense_variants.h"
#include "tf_kernels.h"

#include <stdatomic.h>
#include <string.h>

static _Atomic(const tf_gnn_dense_ops *) active;

static const tf_gnn_dense_ops *ops(void)
{
    const tf_gnn_dense_ops *o = atomic_load_explicit(&active, memory_order_acquire);
    if (o)
        return o;
    o = &tf_gnn_dense_ops_baseline;
#if defined(__x86_64__)
    const char *k = tf_kern_variant();
    if (strcmp(k, tf_gnn_dense_ops_avx2.name) == 0)
        o = &tf_gnn_dense_ops_avx2;
    else if (strcmp(k, tf_gnn_dense_ops_avx512.name) == 0)
        o = &tf_gnn_dense_ops_avx512;
#endif
    atomic_store(&active, o);
    return o;
}

const char *tf_gnn_dense_variant(void) { return ops()->name; }

void tf_gnn_xw(const tf_csr *x, const int64_t *ids, const tf_gnn_drop *drop, const double *w,
               int k, float *out)
{
    ops()->xw(x, ids, drop, w, k, out);
}

void tf_gnn_xtg(const tf_csr *x, const int64_t *ids, const tf_gnn_drop *drop, const float *g,
                int k, double *gw)
{
    ops()->xtg(x, ids, drop, g, k, gw);
}

void tf_gnn_hw(const float *h, int64_t nrows, int a, const double *w, int b, float *out)
{
    ops()->hw(h, nrows, a, w, b, out);
}

void tf_gnn_htg(const float *h, int64_t nrows, int a, const float *g, int b, double *gw)
{
    ops()->htg(h, nrows, a, g, b, gw);
}

void tf_gnn_gwt(const float *g, int64_t nrows, int b, const double *w, int a, float *out)
{
    ops()->gwt(g, nrows, b, w, a, out);
}

void tf_gnn_relu_drop(const float *h, int64_t nrows, int k, const int64_t *ids,
                      const tf_gnn_drop *drop, float *r)
{
    ops()->relu_drop(h, nrows, k, ids, drop, r);
}
