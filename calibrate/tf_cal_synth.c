/* Synthetic sparse parts for the kernel measurements. Kernel speed depends
 * on where the indices point (B rows in cache or not), so uniformly random
 * indices would overstate the cost and a pure band would understate it;
 * real graphs after a locality-preserving ordering have a mixture, which is
 * what `near` and `window` give. */
#include "tf_calibrate.h"
#include "tf_dense.h"
#include "tf_error.h"

#include <stdlib.h>
#include <string.h>

void tf_cal_sparse_free(tf_cal_sparse *s)
{
    free(s->ptr);
    free(s->idx);
    free(s->val);
    memset(s, 0, sizeof *s);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int tf_cal_synth(tf_cal_sparse *s, int64_t nouter, int64_t ninner, double deg, double near,
                 int64_t window, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    if (nouter < 1 || ninner < 1 || ninner > INT32_MAX || deg < 1.0)
        return tf_fail(TF_ERR_ARG, "synthetic part %lld x %lld, degree %g: bad shape",
                       (long long)nouter, (long long)ninner, deg);
    int64_t maxdeg = (int64_t)(2.0 * deg) - 1;
    if (maxdeg < 1)
        maxdeg = 1;
    if (maxdeg > ninner)
        maxdeg = ninner;
    s->ptr = malloc((size_t)(nouter + 1) * sizeof *s->ptr);
    s->idx = malloc((size_t)(nouter * maxdeg) * sizeof *s->idx);
    if (!s->ptr || !s->idx) {
        tf_cal_sparse_free(s);
        return tf_fail(TF_ERR_NOMEM, "synthetic part: out of memory for %lld lists",
                       (long long)nouter);
    }
    uint64_t h = tf_mix64(seed);
    int64_t e = 0;
    s->ptr[0] = 0;
    for (int64_t i = 0; i < nouter; i++) {
        h = tf_mix64(h + (uint64_t)i);
        int64_t d = 1 + (int64_t)(h % (uint64_t)maxdeg);
        int64_t centre = (int64_t)((double)i * (double)ninner / (double)nouter);
        int64_t e0 = e;
        for (int64_t x = 0; x < d; x++) {
            h = tf_mix64(h);
            int64_t j;
            if ((double)(h >> 11) * 0x1.0p-53 < near) {
                j = centre - window + (int64_t)((h >> 20) % (uint64_t)(2 * window + 1));
                j = j < 0 ? 0 : (j >= ninner ? ninner - 1 : j);
            } else {
                j = (int64_t)((h >> 17) % (uint64_t)ninner);
            }
            s->idx[e++] = (int32_t)j;
        }
        qsort(s->idx + e0, (size_t)(e - e0), sizeof *s->idx, cmp_i32);
        int64_t w = e0;
        for (int64_t x = e0; x < e; x++)
            if (x == e0 || s->idx[x] != s->idx[w - 1])
                s->idx[w++] = s->idx[x];
        e = w;
        s->ptr[i + 1] = e;
    }
    s->val = malloc((size_t)(e > 0 ? e : 1) * sizeof *s->val);
    if (!s->val) {
        tf_cal_sparse_free(s);
        return tf_fail(TF_ERR_NOMEM, "synthetic part: out of memory for %lld values", (long long)e);
    }
    for (int64_t x = 0; x < e; x++)
        s->val[x] = tf_dense_value(seed, x, 0);
    s->nouter = nouter;
    s->ninner = ninner;
    s->nnz = e;
    return TF_OK;
}
