#include "tf_work_bands.h"
#include "tf_error.h"
#include "tf_partition.h"
#include "tf_reuse.h"

#include <stdlib.h>

int tf_work_prefix(const tf_csr *a, int64_t ncols, const int32_t *halo, int64_t nhalo,
                   const tf_work_weights *w, int64_t *prefix)
{
    int64_t n = a->nrows;
    int64_t *miss = malloc((size_t)(n > 0 ? n : 1) * sizeof *miss);
    uint32_t *last = w->window > 0 ? malloc((size_t)(ncols > 0 ? ncols : 1) * sizeof *last)
                                   : NULL;
    if (!miss || (w->window > 0 && !last)) {
        free(miss);
        free(last);
        return tf_fail(TF_ERR_NOMEM, "out of memory for the work weights of %lld rows and "
                       "%lld columns", (long long)n, (long long)ncols);
    }
    tf_reuse_row_misses(a->rowptr, a->col, n, halo, nhalo, w->window, last, ncols, miss);
    free(last);
    /* Each row adds at most row + miss * nnz_i, so a prefix below 2^62
     * before the row cannot overflow while it is added. */
    int st = TF_OK;
    prefix[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t nz = a->rowptr[i + 1] - a->rowptr[i];
        __int128 v = (__int128)prefix[i] + w->row + (__int128)w->miss * miss[i] +
                     (__int128)w->hit * (nz - miss[i]);
        if (v > ((int64_t)1 << 62)) {
            st = tf_fail(TF_ERR_RANGE, "the work weights of %lld rows pass 2^62",
                         (long long)n);
            break;
        }
        prefix[i + 1] = (int64_t)v;
    }
    free(miss);
    return st;
}

int tf_work_bands_cut(const tf_csr *a, const tf_work_weights *w, const int64_t *prefix,
                      int nparts, int64_t *off)
{
    return w->window > 0 ? tf_partition_prefix(prefix, a->nrows, nparts, off)
                         : tf_partition_work(a, nparts, w->row, w->miss, off);
}

int tf_work_bands(const tf_csr *a, const tf_work_weights *w, int nparts, int64_t *off)
{
    if (w->window <= 0)
        return tf_work_bands_cut(a, w, NULL, nparts, off);
    int64_t *prefix = malloc((size_t)(a->nrows + 1) * sizeof *prefix);
    if (!prefix)
        return tf_fail(TF_ERR_NOMEM, "out of memory for the work weights of %lld rows",
                       (long long)a->nrows);
    int st = tf_work_prefix(a, a->ncols, NULL, 0, w, prefix);
    if (st == TF_OK)
        st = tf_work_bands_cut(a, w, prefix, nparts, off);
    free(prefix);
    return st;
}
