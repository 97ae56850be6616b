#include "tf_partition.h"
#include "tf_error.h"

#include <string.h>

int tf_partition_rows(int64_t n, int nparts, int64_t *off)
{
    if (nparts < 1 || n < 0)
        return tf_fail(TF_ERR_ARG, "cannot split %lld rows into %d bands", (long long)n, nparts);
    int64_t base = n / nparts, extra = n % nparts;
    off[0] = 0;
    for (int p = 0; p < nparts; p++)
        off[p + 1] = off[p] + base + (p < extra ? 1 : 0);
    return TF_OK;
}

int tf_partition_nnz(const tf_csr *a, int nparts, int64_t *off)
{
    return tf_partition_work(a, nparts, 0, 1, off);
}

int tf_partition_work_total(int64_t nnz, int64_t rows, int64_t num, int64_t *den,
                            int64_t *total)
{
    if (*den < 1 || num < 0)
        return tf_fail(TF_ERR_ARG, "row weight %lld/%lld: expected a denominator >= 1 and a "
                       "numerator >= 0", (long long)num, (long long)*den);
    __int128 w = (__int128)nnz * *den + (__int128)rows * num;
    if (w > INT64_MAX)
        return tf_fail(TF_ERR_RANGE, "row weight %lld/%lld: %lld nonzeros and %lld rows weigh "
                       "more than 2^63", (long long)num, (long long)*den, (long long)nnz,
                       (long long)rows);
    /* The targets are rounded down, so a scale would move some cuts by a
     * row: without a row weight these are exactly the nnz bands. */
    if (num == 0)
        *den = 1;
    *total = nnz * *den + rows * num;
    return TF_OK;
}

/* The cut every weighted partition shares: band p ends at the first row i
 * whose prefix at(ctx, i) reaches floor((p + 1) total / P); a total of 0 is
 * split by rows. */
static int cut_rows(int64_t nrows, int nparts, int64_t total,
                    int64_t (*at)(const void *ctx, int64_t i), const void *ctx, int64_t *off)
{
    if (total <= 0)
        return tf_partition_rows(nrows, nparts, off);
    off[0] = 0;
    int64_t i = 0;
    for (int p = 0; p < nparts; p++) {
        int64_t target = (int64_t)(((__int128)total * (p + 1)) / nparts);
        while (i < nrows && at(ctx, i) < target)
            i++;
        off[p + 1] = (p == nparts - 1) ? nrows : i;
    }
    return TF_OK;
}

typedef struct {
    const int64_t *rowptr;
    int64_t num, den;
} work_prefix;

static int64_t at_work(const void *ctx, int64_t i)
{
    const work_prefix *w = ctx;
    return w->rowptr[i] * w->den + i * w->num;
}

static int64_t at_prefix(const void *ctx, int64_t i) { return ((const int64_t *)ctx)[i]; }

int tf_partition_work(const tf_csr *a, int nparts, int64_t num, int64_t den, int64_t *off)
{
    if (nparts < 1)
        return tf_fail(TF_ERR_ARG, "cannot split into %d bands", nparts);
    int64_t total;
    int st = tf_partition_work_total(a->nnz, a->nrows, num, &den, &total);
    if (st)
        return st;
    work_prefix w = {a->rowptr, num, den};
    return cut_rows(a->nrows, nparts, total, at_work, &w, off);
}

int tf_partition_prefix(const int64_t *prefix, int64_t nrows, int nparts, int64_t *off)
{
    if (nparts < 1)
        return tf_fail(TF_ERR_ARG, "cannot split into %d bands", nparts);
    return cut_rows(nrows, nparts, prefix[nrows], at_prefix, prefix, off);
}

int tf_partition_owner(const int64_t *off, int nparts, int64_t i)
{
    int lo = 0, hi = nparts - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (off[mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    /* Empty bands share an offset with the next band: skip forward to the
     * band that actually contains i. */
    while (lo < nparts - 1 && off[lo + 1] <= i)
        lo++;
    return lo;
}

const char *tf_partition_name(int kind)
{
    return kind == TF_PART_NNZ     ? "nnz"
           : kind == TF_PART_METIS ? "metis"
           : kind == TF_PART_WORK  ? "work"
           : kind == TF_PART_AUTO  ? "auto"
                                   : "rows";
}

int tf_partition_parse(const char *s, int *kind)
{
    if (strcmp(s, "rows") == 0)
        *kind = TF_PART_ROWS;
    else if (strcmp(s, "nnz") == 0)
        *kind = TF_PART_NNZ;
    else if (strcmp(s, "metis") == 0)
        *kind = TF_PART_METIS;
    else if (strcmp(s, "work") == 0)
        *kind = TF_PART_WORK;
    else if (strcmp(s, "auto") == 0)
        *kind = TF_PART_AUTO;
    else
        return tf_fail(TF_ERR_ARG,
                       "partition '%s': expected 'auto', 'rows', 'nnz', 'work' or 'metis'", s);
    return TF_OK;
}
