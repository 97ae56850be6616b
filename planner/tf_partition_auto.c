#include "tf_partition_auto.h"
#include "tf_cost_model.h"
#include "tf_error.h"
#include "tf_partition.h"
#include "tf_work_bands.h"

#include <stdlib.h>
#include <string.h>

static int64_t heaviest(const int64_t *w, int P)
{
    int64_t m = 0;
    for (int p = 0; p < P; p++)
        if (w[p + 1] - w[p] > m)
            m = w[p + 1] - w[p];
    return m;
}

int tf_partition_auto_pick(const int64_t *w_nnz, const int64_t *w_work, int P, double *ratio)
{
    const int64_t hn = heaviest(w_nnz, P), hw = heaviest(w_work, P);
    if (ratio)
        *ratio = hw > 0 ? (double)hn / (double)hw : 1.0;
    /* Weights stay below 2^62 (tf_work_prefix): the products fit in 128 bits. */
    return (__int128)hn * TF_AUTO_WORK_DEN > (__int128)hw * TF_AUTO_WORK_NUM ? TF_PART_WORK
                                                                             : TF_PART_NNZ;
}

int tf_partition_auto(const tf_csr *a, const tf_coeffs *c, int k, int P, int64_t *off,
                      int *kind, double *ratio)
{
    tf_work_weights w;
    tf_cost_work_weights(c, k, &w);
    const int64_t n = a->nrows;
    int64_t *prefix = malloc((size_t)(n + 1) * sizeof *prefix);
    int64_t *buf = malloc((size_t)(P + 1) * 3 * sizeof *buf);
    if (!prefix || !buf) {
        free(prefix);
        free(buf);
        return tf_fail(TF_ERR_NOMEM, "out of memory for the work weights of %lld rows",
                       (long long)n);
    }
    int64_t *on = buf, *ow = off, *wn = buf + (P + 1), *ww = buf + 2 * (P + 1);
    int st = tf_work_prefix(a, a->ncols, NULL, 0, &w, prefix);
    if (st == TF_OK)
        st = tf_partition_nnz(a, P, on);
    if (st == TF_OK)
        st = tf_work_bands_cut(a, &w, prefix, P, ow);
    if (st == TF_OK) {
        for (int p = 0; p <= P; p++) {
            wn[p] = prefix[on[p]];
            ww[p] = prefix[ow[p]];
        }
        *kind = tf_partition_auto_pick(wn, ww, P, ratio);
        if (*kind == TF_PART_NNZ)
            memcpy(off, on, (size_t)(P + 1) * sizeof *off);
    }
    free(prefix);
    free(buf);
    return st;
}
