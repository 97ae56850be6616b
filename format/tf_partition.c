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
    if (nparts < 1)
        return tf_fail(TF_ERR_ARG, "cannot split into %d bands", nparts);
    if (a->nnz == 0)
        return tf_partition_rows(a->nrows, nparts, off);
    off[0] = 0;
    int64_t i = 0;
    for (int p = 0; p < nparts; p++) {
        /* 128-bit free: nnz * P stays far below 2^63 for any real input. */
        int64_t target = (int64_t)(((__int128)a->nnz * (p + 1)) / nparts);
        while (i < a->nrows && a->rowptr[i] < target)
            i++;
        off[p + 1] = (p == nparts - 1) ? a->nrows : i;
    }
    return TF_OK;
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
    return kind == TF_PART_NNZ ? "nnz" : kind == TF_PART_METIS ? "metis" : "rows";
}

int tf_partition_parse(const char *s, int *kind)
{
    if (strcmp(s, "rows") == 0)
        *kind = TF_PART_ROWS;
    else if (strcmp(s, "nnz") == 0)
        *kind = TF_PART_NNZ;
    else if (strcmp(s, "metis") == 0)
        *kind = TF_PART_METIS;
    else
        return tf_fail(TF_ERR_ARG, "partition '%s': expected 'rows', 'nnz' or 'metis'", s);
    return TF_OK;
}
