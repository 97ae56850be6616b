/* The permutation of a METIS plan, executor side: the original ids of a
 * rank's rows and the collective moves between original order and the
 * plan's order (include/twoface.h, "Permuted plans"; docs/executor.md). */
#include "tf_exec.h"
#include "tf_exec_perm.h"
#include "tf_partition.h"
#include "tf_plan_perm.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int64_t *ids_of(const int64_t *perm, int64_t begin, int64_t n)
{
    int64_t *ids = malloc((size_t)(n > 0 ? n : 1) * sizeof *ids);
    if (ids)
        for (int64_t i = 0; i < n; i++)
            ids[i] = tf_perm_orig(perm, begin + i);
    return ids;
}

int tf_perm_handle_init(tf_handle *h)
{
    const tf_rank_plan *rp = h->rp;
    h->row_ids = ids_of(h->plan.perm, rp->row_begin, rp->nrows);
    h->brow_ids = ids_of(h->plan.perm, rp->brow_begin, rp->nbrows);
    if (!h->row_ids || !h->brow_ids)
        return tf_fail(TF_ERR_NOMEM, "rank %d: out of memory for the row ids", h->rank);
    return TF_OK;
}

void tf_perm_handle_free(tf_handle *h)
{
    free(h->row_ids);
    free(h->brow_ids);
    h->row_ids = h->brow_ids = NULL;
}

int tf_get_permuted(const tf_handle *h) { return h->plan.perm != NULL; }

const int64_t *tf_get_row_ids(const tf_handle *h) { return h->rp->nrows > 0 ? h->row_ids : NULL; }

const int64_t *tf_get_brow_ids(const tf_handle *h)
{
    return h->rp->nbrows > 0 ? h->brow_ids : NULL;
}

void tf_even_rows(const tf_handle *h, int which, int64_t *orig_begin, int64_t *orig_nrows)
{
    int64_t total = which == TF_BROWS ? h->plan.n : h->plan.m;
    int64_t base = total / h->nranks, extra = total % h->nranks, r = h->rank;
    if (orig_begin)
        *orig_begin = r * base + (r < extra ? r : extra);
    if (orig_nrows)
        *orig_nrows = base + (r < extra ? 1 : 0);
}

typedef struct {
    int64_t g; /* source id */
    int64_t d; /* local destination row */
} pair;

static int pair_cmp(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    return (x->g > y->g) - (x->g < y->g);
}

/* Moves rows from numbering X (rank p holds ids [xo[p], xo[p+1])) to
 * numbering Y (rank p holds [yo[p], yo[p+1])), X id x becoming Y id
 * map_xy[x] (NULL: the same), map_yx the inverse. One MPI_Alltoallv: a
 * sender packs its rows by destination rank in ascending X id; a receiver,
 * whose sources' ranges ascend with their rank, finds row k of its receive
 * buffer by sorting its rows by X id. Every rank calls it with the same
 * offsets; the caller has agreed on the arguments. */
static int redistribute(const tf_handle *h, size_t rb, const int64_t *xo, const int64_t *yo,
                        const int64_t *map_xy, const int64_t *map_yx, const void *src,
                        void *dst)
{
    int P = h->nranks, me = h->rank;
    int64_t nx = xo[me + 1] - xo[me], ny = yo[me + 1] - yo[me];
    int *sc = calloc((size_t)P, sizeof *sc), *sd = calloc((size_t)P, sizeof *sd);
    int *rc = calloc((size_t)P, sizeof *rc), *rd = calloc((size_t)P, sizeof *rd);
    int *pos = calloc((size_t)P, sizeof *pos);
    char *sbuf = malloc((size_t)(nx > 0 ? nx : 1) * rb);
    char *rbuf = malloc((size_t)(ny > 0 ? ny : 1) * rb);
    pair *pr = malloc((size_t)(ny > 0 ? ny : 1) * sizeof *pr);
    MPI_Datatype row = MPI_DATATYPE_NULL;
    int st = TF_OK;
    if (!sc || !sd || !rc || !rd || !pos || !sbuf || !rbuf || !pr)
        st = tf_fail(TF_ERR_NOMEM, "rank %d: out of memory redistributing %lld rows", me,
                     (long long)(nx > ny ? nx : ny));
    if (st == TF_OK) {
        for (int64_t x = 0; x < nx; x++)
            sc[tf_partition_owner(yo, P, tf_perm_orig(map_xy, xo[me] + x))]++;
        for (int q = 1; q < P; q++)
            sd[q] = sd[q - 1] + sc[q - 1];
        memcpy(pos, sd, (size_t)P * sizeof *pos);
        for (int64_t x = 0; x < nx; x++) {
            int q = tf_partition_owner(yo, P, tf_perm_orig(map_xy, xo[me] + x));
            memcpy(sbuf + (size_t)pos[q]++ * rb, (const char *)src + (size_t)x * rb, rb);
        }
        for (int64_t d = 0; d < ny; d++) {
            pr[d].g = tf_perm_orig(map_yx, yo[me] + d);
            pr[d].d = d;
            rc[tf_partition_owner(xo, P, pr[d].g)]++;
        }
        for (int q = 1; q < P; q++)
            rd[q] = rd[q - 1] + rc[q - 1];
        qsort(pr, (size_t)ny, sizeof *pr, pair_cmp);
    }
    st = tf_agree(h->comm, st);
    if (st == TF_OK && (MPI_Type_contiguous((int)rb, MPI_BYTE, &row) != MPI_SUCCESS ||
                        MPI_Type_commit(&row) != MPI_SUCCESS))
        st = tf_fail(TF_ERR_MPI, "rank %d: cannot make a datatype of %zu bytes", me, rb);
    st = tf_agree(h->comm, st);
    if (st == TF_OK &&
        MPI_Alltoallv(sbuf, sc, sd, row, rbuf, rc, rd, row, h->comm) != MPI_SUCCESS)
        st = tf_fail(TF_ERR_MPI, "rank %d: MPI_Alltoallv of rows failed", me);
    if (st == TF_OK)
        for (int64_t k = 0; k < ny; k++)
            memcpy((char *)dst + (size_t)pr[k].d * rb, rbuf + (size_t)k * rb, rb);
    if (row != MPI_DATATYPE_NULL)
        MPI_Type_free(&row);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(pos);
    free(sbuf);
    free(rbuf);
    free(pr);
    return tf_agree(h->comm, st);
}

/* The original ranges of every rank as offsets (P + 1, malloc), checked to
 * tile [0, total) in rank order. `missing` is 1 (src) or 2 (dst) when this
 * rank passed that buffer as NULL although it has rows there, else 0. The
 * row size and the buffers are checked over all ranks too: a rank whose
 * rows differ in size would make the exchange fail inside MPI, and a NULL
 * buffer would crash its rank while the others wait. Collective; the same
 * outcome everywhere. */
static int orig_offsets(const tf_handle *h, int which, size_t row_bytes, int64_t begin,
                        int64_t nrows, int missing, int64_t **out)
{
    int P = h->nranks;
    int64_t total = which == TF_BROWS ? h->plan.n : h->plan.m;
    int64_t mine[4] = {begin, nrows, row_bytes > INT64_MAX ? INT64_MAX : (int64_t)row_bytes,
                       missing};
    int64_t *all = malloc((size_t)P * 4 * sizeof *all);
    int64_t *off = malloc((size_t)(P + 1) * sizeof *off);
    int st = all && off ? TF_OK : tf_fail(TF_ERR_NOMEM, "rank %d: out of memory", h->rank);
    st = tf_agree(h->comm, st);
    if (st == TF_OK &&
        MPI_Allgather(mine, 4, MPI_INT64_T, all, 4, MPI_INT64_T, h->comm) != MPI_SUCCESS)
        st = tf_fail(TF_ERR_MPI, "MPI_Allgather of the original row ranges failed");
    st = tf_agree(h->comm, st);
    /* Every rank checks the same numbers: no agreement needed below. */
    if (st == TF_OK && (which != TF_ROWS && which != TF_BROWS))
        st = tf_fail(TF_ERR_ARG, "rows to move: %d is neither TF_ROWS nor TF_BROWS", which);
    if (st == TF_OK && (all[2] == 0 || all[2] > INT_MAX))
        st = tf_fail(TF_ERR_ARG, "row size %lld bytes: expected 1..%d", (long long)all[2],
                     INT_MAX);
    for (int p = 1; p < P && st == TF_OK; p++)
        if (all[4 * p + 2] != all[2])
            st = tf_fail(TF_ERR_ARG,
                         "rank %d passes rows of %lld bytes, rank 0 of %lld: the row size must "
                         "be the same on every rank", p, (long long)all[4 * p + 2],
                         (long long)all[2]);
    for (int p = 0; p < P && st == TF_OK; p++)
        if (all[4 * p + 3])
            st = tf_fail(TF_ERR_ARG, "rank %d passes NULL as %s but has rows there", p,
                         all[4 * p + 3] == 1 ? "src" : "dst");
    if (st == TF_OK) {
        off[0] = 0;
        for (int p = 0; p < P && st == TF_OK; p++) {
            int64_t b = all[4 * p], n = all[4 * p + 1];
            /* An empty range may start anywhere. */
            if ((n != 0 && b != off[p]) || n < 0 || n > total - off[p])
                st = tf_fail(TF_ERR_ARG,
                             "rank %d passes original rows [%lld, +%lld); the ranges must tile "
                             "[0, %lld) in rank order, so it must start at %lld",
                             p, (long long)b, (long long)n, (long long)total, (long long)off[p]);
            else
                off[p + 1] = off[p] + n;
        }
        if (st == TF_OK && off[P] != total)
            st = tf_fail(TF_ERR_ARG,
                         "the ranks pass %lld original rows in all, the plan has %lld",
                         (long long)off[P], (long long)total);
    }
    free(all);
    if (st != TF_OK) {
        free(off);
        return st;
    }
    *out = off;
    return TF_OK;
}

int tf_scatter_rows(const tf_handle *h, int which, size_t row_bytes, int64_t orig_begin,
                    int64_t orig_nrows, const void *src, void *dst)
{
    int64_t *xo = NULL;
    const int64_t *off = which == TF_BROWS ? h->plan.brow_off : h->plan.row_off;
    int missing = !src && orig_nrows > 0 ? 1 : !dst && off[h->rank + 1] > off[h->rank] ? 2 : 0;
    int st = orig_offsets(h, which, row_bytes, orig_begin, orig_nrows, missing, &xo);
    if (st)
        return st;
    st = redistribute(h, row_bytes, xo, off, h->plan.iperm, h->plan.perm, src, dst);
    free(xo);
    return st;
}

int tf_gather_rows(const tf_handle *h, int which, size_t row_bytes, const void *src,
                   int64_t orig_begin, int64_t orig_nrows, void *dst)
{
    int64_t *yo = NULL;
    const int64_t *off = which == TF_BROWS ? h->plan.brow_off : h->plan.row_off;
    int missing = !src && off[h->rank + 1] > off[h->rank] ? 1 : !dst && orig_nrows > 0 ? 2 : 0;
    int st = orig_offsets(h, which, row_bytes, orig_begin, orig_nrows, missing, &yo);
    if (st)
        return st;
    st = redistribute(h, row_bytes, off, yo, h->plan.perm, h->plan.iperm, src, dst);
    free(yo);
    return st;
}
