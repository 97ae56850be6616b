#include "tf_reference.h"
#include "tf_bf16.h"
#include "tf_dense.h"

#include <math.h>

void tf_reference_spmm(const tf_csr *a, int64_t row_begin, int64_t row_end, const float *b,
                       int64_t k, double *c)
{
    for (int64_t i = row_begin; i < row_end; i++) {
        double *ci = c + (i - row_begin) * k;
        for (int64_t x = 0; x < k; x++)
            ci[x] = 0.0;
        for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++) {
            const float *bj = b + (int64_t)a->col[e] * k;
            double v = a->val[e];
            for (int64_t x = 0; x < k; x++)
                ci[x] += v * (double)bj[x];
        }
    }
}

void tf_reference_spmm_gen(const tf_csr *a, int64_t row_begin, int64_t row_end, uint64_t seed,
                           int64_t k, double *c)
{
    for (int64_t i = row_begin; i < row_end; i++) {
        double *ci = c + (i - row_begin) * k;
        for (int64_t x = 0; x < k; x++)
            ci[x] = 0.0;
        for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++) {
            double v = a->val[e];
            for (int64_t x = 0; x < k; x++)
                ci[x] += v * (double)tf_dense_value(seed, a->col[e], x);
        }
    }
}

void tf_reference_spmm_gen_bf16(const tf_csr *a, int64_t row_begin, int64_t row_end,
                                 uint64_t seed, int64_t k, int64_t own_begin, int64_t own_end,
                                 double *c)
{
    for (int64_t i = row_begin; i < row_end; i++) {
        double *ci = c + (i - row_begin) * k;
        for (int64_t x = 0; x < k; x++)
            ci[x] = 0.0;
        for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++) {
            double v = a->val[e];
            int64_t j = a->col[e];
            int remote = j < own_begin || j >= own_end;
            for (int64_t x = 0; x < k; x++) {
                float bv = tf_dense_value(seed, j, x);
                ci[x] += v * (double)(remote ? tf_bf16_round_f32(bv) : bv);
            }
        }
    }
}

double tf_reference_scaled_error(const float *c, const double *cref, const double *absrow,
                                 int64_t nrows, int64_t k, double bmax)
{
    double worst = 0.0;
    for (int64_t i = 0; i < nrows; i++) {
        double scale = absrow[i] * bmax + 1e-30;
        for (int64_t x = 0; x < k; x++) {
            double d = fabs((double)c[i * k + x] - cref[i * k + x]);
            if (!(d == d)) /* NaN in the result is the worst error there is */
                return INFINITY;
            if (d / scale > worst)
                worst = d / scale;
        }
    }
    return worst;
}
