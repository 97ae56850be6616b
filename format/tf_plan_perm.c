#include "tf_plan_perm.h"
#include "tf_error.h"
#include "tf_fingerprint.h"

#include <stdlib.h>
#include <string.h>

int tf_perm_check(const int64_t *perm, const int64_t *iperm, int64_t n)
{
    if (n < 0)
        return tf_fail(TF_ERR_FORMAT, "permutation of %lld rows", (long long)n);
    if (n > 0 && !perm)
        return tf_fail(TF_ERR_FORMAT, "permutation of %lld rows is missing", (long long)n);
    /* A byte per row: a bitmap would save memory the plan holds anyway
     * (16 bytes a row for perm and iperm). */
    unsigned char *seen = calloc((size_t)(n > 0 ? n : 1), 1);
    if (!seen)
        return tf_fail(TF_ERR_NOMEM, "out of memory checking a permutation of %lld rows",
                       (long long)n);
    int st = TF_OK;
    for (int64_t i = 0; i < n && st == TF_OK; i++) {
        int64_t j = perm[i];
        if (j < 0 || j >= n)
            st = tf_fail(TF_ERR_FORMAT, "perm[%lld] = %lld is outside [0, %lld)", (long long)i,
                         (long long)j, (long long)n);
        else if (seen[j])
            st = tf_fail(TF_ERR_FORMAT, "perm[%lld] = %lld appears twice: not a permutation",
                         (long long)i, (long long)j);
        else
            seen[j] = 1;
    }
    free(seen);
    for (int64_t i = 0; iperm && i < n && st == TF_OK; i++)
        if (iperm[perm[i]] != i)
            st = tf_fail(TF_ERR_FORMAT, "iperm[%lld] = %lld, expected %lld (the inverse of perm)",
                         (long long)perm[i], (long long)iperm[perm[i]], (long long)i);
    return st;
}

int tf_perm_from_parts(const int32_t *part, int64_t n, int nparts, int64_t *perm,
                       int64_t *iperm, int64_t *off)
{
    if (nparts < 1 || n < 0)
        return tf_fail(TF_ERR_ARG, "cannot renumber %lld rows into %d parts", (long long)n,
                       nparts);
    for (int p = 0; p <= nparts; p++)
        off[p] = 0;
    for (int64_t j = 0; j < n; j++) {
        if (part[j] < 0 || part[j] >= nparts)
            return tf_fail(TF_ERR_INTERNAL, "row %lld is in part %d, outside [0, %d)",
                           (long long)j, part[j], nparts);
        off[part[j] + 1]++;
    }
    for (int p = 0; p < nparts; p++)
        off[p + 1] += off[p];
    /* off[p] is the next free slot of part p while placing, then restored. */
    for (int64_t j = 0; j < n; j++) {
        int64_t i = off[part[j]]++;
        perm[i] = j;
        iperm[j] = i;
    }
    for (int p = nparts; p > 0; p--)
        off[p] = off[p - 1];
    off[0] = 0;
    return TF_OK;
}

typedef struct {
    int64_t col;
    float val;
} pentry;

static int pentry_cmp(const void *a, const void *b)
{
    const pentry *x = a, *y = b;
    return (x->col > y->col) - (x->col < y->col);
}

/* Entries of row `src` of a, columns mapped through map, sorted. */
static void mapped_row(const tf_csr *a, int64_t src, const int64_t *map, pentry *buf)
{
    int64_t b = a->rowptr[src], len = a->rowptr[src + 1] - b;
    int sorted = 1;
    for (int64_t x = 0; x < len; x++) {
        buf[x].col = map ? map[a->col[b + x]] : a->col[b + x];
        buf[x].val = a->val[b + x];
        if (x > 0 && buf[x].col < buf[x - 1].col)
            sorted = 0;
    }
    if (!sorted)
        qsort(buf, (size_t)len, sizeof *buf, pentry_cmp);
}

static int64_t max_row_len(const tf_csr *a)
{
    int64_t w = 0;
    for (int64_t i = 0; i < a->nrows; i++)
        if (a->rowptr[i + 1] - a->rowptr[i] > w)
            w = a->rowptr[i + 1] - a->rowptr[i];
    return w;
}

int tf_csr_permute(const tf_csr *a, const int64_t *perm, const int64_t *iperm, tf_csr *out)
{
    memset(out, 0, sizeof *out);
    if (a->nrows != a->ncols)
        return tf_fail(TF_ERR_ARG,
                       "a permutation renumbers rows and columns alike: A must be square, "
                       "it is %lld x %lld",
                       (long long)a->nrows, (long long)a->ncols);
    int st = tf_csr_alloc(out, a->nrows, a->ncols, a->nnz);
    if (st)
        return st;
    int64_t n = a->nrows;
    for (int64_t i = 0; i < n; i++)
        out->rowptr[i + 1] = out->rowptr[i] + (a->rowptr[perm[i] + 1] - a->rowptr[perm[i]]);
    int64_t w = max_row_len(a);
    int fail = 0;
#pragma omp parallel reduction(| : fail)
    {
        pentry *buf = malloc((size_t)(w > 0 ? w : 1) * sizeof *buf);
        if (!buf)
            fail = 1;
#pragma omp for schedule(dynamic, 1024)
        for (int64_t i = 0; i < n; i++) {
            if (!buf)
                continue;
            mapped_row(a, perm[i], iperm, buf);
            int64_t o = out->rowptr[i], len = out->rowptr[i + 1] - o;
            for (int64_t x = 0; x < len; x++) {
                out->col[o + x] = (int32_t)buf[x].col;
                out->val[o + x] = buf[x].val;
            }
        }
        free(buf);
    }
    if (fail) {
        tf_csr_free(out);
        return tf_fail(TF_ERR_NOMEM, "out of memory permuting a %lld x %lld matrix",
                       (long long)n, (long long)n);
    }
    return TF_OK;
}

int tf_perm_fingerprint_rows(const tf_csr *rows, int64_t row_begin, const int64_t *perm,
                             uint64_t *share)
{
    if (!perm) {
        *share = tf_fingerprint_rows(rows->rowptr, rows->col, rows->val, row_begin, rows->nrows);
        return TF_OK;
    }
    int64_t w = max_row_len(rows);
    pentry *buf = malloc((size_t)(w > 0 ? w : 1) * sizeof *buf);
    int32_t *cols = malloc((size_t)(w > 0 ? w : 1) * sizeof *cols);
    float *vals = malloc((size_t)(w > 0 ? w : 1) * sizeof *vals);
    if (!buf || !cols || !vals) {
        free(buf);
        free(cols);
        free(vals);
        return tf_fail(TF_ERR_NOMEM, "out of memory for the fingerprint of %lld rows",
                       (long long)rows->nrows);
    }
    uint64_t sum = 0;
    for (int64_t r = 0; r < rows->nrows; r++) {
        mapped_row(rows, r, perm, buf);
        int64_t len = rows->rowptr[r + 1] - rows->rowptr[r];
        for (int64_t x = 0; x < len; x++) {
            cols[x] = (int32_t)buf[x].col;
            vals[x] = buf[x].val;
        }
        sum += tf_row_hash(perm[row_begin + r], cols, vals, len);
    }
    free(buf);
    free(cols);
    free(vals);
    *share = sum;
    return TF_OK;
}
