#include "tf_normalize.h"
#include "tf_error.h"
#include "tf_plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 1/sqrt(d), or 0 for a zero degree. The same function serves rows and
 * columns: for a symmetric A + I the row and column sums are the same
 * sequence of additions (see column_sums), so the scales are bit-identical
 * and so are the values of (i, j) and (j, i). */
double tf_norm_inv_sqrt(double d) { return d > 0 ? 1.0 / sqrt(d) : 0.0; }

/* Row i's sum in ascending column order. */
double tf_norm_row_sum(const tf_csr *a, int64_t i)
{
    double s = 0.0;
    for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++)
        s += (double)a->val[e];
    return s;
}

/* Column sums, rows visited in order: column j adds (r, j) for ascending r,
 * which for a symmetric matrix is row j's own sequence. */
static int column_sums(const tf_csr *a, double **out)
{
    double *cs = calloc((size_t)(a->ncols > 0 ? a->ncols : 1), sizeof *cs);
    if (!cs)
        return tf_fail(TF_ERR_NOMEM, "out of memory for %lld column sums", (long long)a->ncols);
    for (int64_t i = 0; i < a->nrows; i++)
        for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++)
            cs[a->col[e]] += (double)a->val[e];
    *out = cs;
    return TF_OK;
}

/* Position of column j in row i, or -1. */
static int64_t find_col(const tf_csr *a, int64_t i, int32_t j)
{
    int64_t lo = a->rowptr[i], hi = a->rowptr[i + 1];
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (a->col[mid] < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < a->rowptr[i + 1] && a->col[lo] == j ? lo : -1;
}

/* A + I with the loops added once: rows lacking a diagonal entry get one of
 * value 1 in its sorted place, existing ones keep their value. */
int tf_norm_add_loops(const tf_csr *a, int64_t row0, tf_csr *out)
{
    int64_t missing = 0;
#pragma omp parallel for reduction(+ : missing) schedule(static)
    for (int64_t i = 0; i < a->nrows; i++)
        missing += find_col(a, i, (int32_t)(row0 + i)) < 0;
    int st = tf_csr_alloc(out, a->nrows, a->ncols, a->nnz + missing);
    if (st)
        return st;
    int64_t w = 0;
    for (int64_t i = 0; i < a->nrows; i++) {
        const int32_t d = (int32_t)(row0 + i);
        int placed = 0;
        for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++) {
            if (!placed && a->col[e] >= d) {
                if (a->col[e] != d) {
                    out->col[w] = d;
                    out->val[w++] = 1.0f;
                }
                placed = 1;
            }
            out->col[w] = a->col[e];
            out->val[w++] = a->val[e];
        }
        if (!placed) {
            out->col[w] = d;
            out->val[w++] = 1.0f;
        }
        out->rowptr[i + 1] = w;
    }
    return TF_OK;
}

int tf_norm_store(float *dst, double v, int64_t i, int32_t j)
{
    float f = (float)v;
    if (!isfinite(f))
        return tf_fail(TF_ERR_RANGE,
                       "normalised value of entry (%lld, %lld) is %g: outside float32",
                       (long long)i + 1, (long long)j + 1, v);
    *dst = f;
    return TF_OK;
}

static int normalize_gcn(tf_csr *a)
{
    if (a->nrows != a->ncols)
        return tf_fail(TF_ERR_ARG,
                       "gcn normalisation needs a square matrix (A + I), this one is %lld x %lld",
                       (long long)a->nrows, (long long)a->ncols);
    tf_csr s;
    int st = tf_norm_add_loops(a, 0, &s);
    if (st)
        return st;
    double *rs = malloc((size_t)(s.nrows > 0 ? s.nrows : 1) * sizeof *rs), *cs = NULL;
    st = rs ? column_sums(&s, &cs) : tf_fail(TF_ERR_NOMEM, "out of memory for row sums");
    for (int64_t i = 0; st == TF_OK && i < s.nrows; i++) {
        rs[i] = tf_norm_row_sum(&s, i);
        const char *what = rs[i] < 0 ? "row" : cs[i] < 0 ? "column" : NULL;
        if (what)
            st = tf_fail(TF_ERR_ARG,
                         "gcn normalisation: %s %lld of A + I sums to %g; the square root of "
                         "a negative degree is undefined",
                         what, (long long)i + 1, rs[i] < 0 ? rs[i] : cs[i]);
    }
    for (int64_t i = 0; st == TF_OK && i < s.nrows; i++) {
        rs[i] = tf_norm_inv_sqrt(rs[i]);
        cs[i] = tf_norm_inv_sqrt(cs[i]);
    }
    for (int64_t i = 0; st == TF_OK && i < s.nrows; i++)
        for (int64_t e = s.rowptr[i]; st == TF_OK && e < s.rowptr[i + 1]; e++)
            st = tf_norm_store(&s.val[e], (double)s.val[e] * (rs[i] * cs[s.col[e]]), i, s.col[e]);
    free(rs);
    free(cs);
    if (st) {
        tf_csr_free(&s);
        return st;
    }
    tf_csr_free(a);
    *a = s;
    return TF_OK;
}

int tf_norm_mean_rows(tf_csr *a, int64_t row0)
{
    float *v = malloc((size_t)(a->nnz > 0 ? a->nnz : 1) * sizeof *v);
    if (!v)
        return tf_fail(TF_ERR_NOMEM, "out of memory for %lld values", (long long)a->nnz);
    int st = TF_OK;
    for (int64_t i = 0; st == TF_OK && i < a->nrows; i++) {
        double d = tf_norm_row_sum(a, i);
        for (int64_t e = a->rowptr[i]; st == TF_OK && e < a->rowptr[i + 1]; e++)
            st = d != 0 ? tf_norm_store(&v[e], (double)a->val[e] / d, row0 + i, a->col[e])
                        : (v[e] = 0.0f, TF_OK);
    }
    if (st) {
        free(v);
        return st;
    }
    free(a->val);
    a->val = v;
    return TF_OK;
}

int tf_normalize(tf_csr *a, int normalization)
{
    switch (normalization) {
    case TF_NORM_NONE: return TF_OK;
    case TF_NORM_GCN: return normalize_gcn(a);
    case TF_NORM_MEAN: return tf_norm_mean_rows(a, 0);
    default: return tf_fail(TF_ERR_ARG, "unknown normalisation %d", normalization);
    }
}
