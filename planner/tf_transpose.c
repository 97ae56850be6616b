#include "tf_transpose.h"
#include "tf_dense.h"
#include "tf_error.h"

#include <stdlib.h>
#include <string.h>

int tf_csr_transpose(const tf_csr *a, tf_csr *t)
{
    int st = tf_csr_alloc(t, a->ncols, a->nrows, a->nnz);
    if (st)
        return st;
    for (int64_t e = 0; e < a->nnz; e++)
        t->rowptr[a->col[e] + 1]++;
    for (int64_t j = 0; j < a->ncols; j++)
        t->rowptr[j + 1] += t->rowptr[j];
    int64_t *next = malloc((size_t)(a->ncols > 0 ? a->ncols : 1) * sizeof *next);
    if (!next) {
        tf_csr_free(t);
        return tf_fail(TF_ERR_NOMEM, "out of memory for the transpose of a %lld x %lld matrix",
                       (long long)a->nrows, (long long)a->ncols);
    }
    memcpy(next, t->rowptr, (size_t)a->ncols * sizeof *next);
    /* Rows in order: each row of t receives its entries in ascending column. */
    for (int64_t i = 0; i < a->nrows; i++)
        for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++) {
            int64_t w = next[a->col[e]]++;
            t->col[w] = (int32_t)i;
            t->val[w] = a->val[e];
        }
    free(next);
    return TF_OK;
}

static uint64_t entry_hash(uint64_t i, uint64_t j, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return tf_mix64(tf_mix64(tf_mix64(i + 0x9E3779B97F4A7C15ULL) ^ j) ^ bits);
}

uint64_t tf_csr_symmetry_residue(const tf_csr *a, int64_t row0)
{
    /* A sum modulo 2^64 does not depend on its order: any split over
     * threads gives the same residue. */
    uint64_t d = 0;
#pragma omp parallel for reduction(+ : d) schedule(static) if (a->nnz > 262144)
    for (int64_t r = 0; r < a->nrows; r++)
        for (int64_t e = a->rowptr[r]; e < a->rowptr[r + 1]; e++) {
            uint64_t i = (uint64_t)(row0 + r), j = (uint64_t)a->col[e];
            d += entry_hash(i, j, a->val[e]) - entry_hash(j, i, a->val[e]);
        }
    return d;
}

int tf_csr_is_symmetric(const tf_csr *a, int *symmetric)
{
    *symmetric = 0;
    if (a->nrows != a->ncols || tf_csr_symmetry_residue(a, 0) != 0)
        return TF_OK;
    tf_csr t;
    int st = tf_csr_transpose(a, &t);
    if (st)
        return st;
    size_t n = (size_t)a->nnz;
    *symmetric = memcmp(t.rowptr, a->rowptr, ((size_t)a->nrows + 1) * sizeof *a->rowptr) == 0 &&
                 (n == 0 || (memcmp(t.col, a->col, n * sizeof *a->col) == 0 &&
                             memcmp(t.val, a->val, n * sizeof *a->val) == 0));
    tf_csr_free(&t);
    return TF_OK;
}
