/* What an owner exports into its window when B rows travel as bfloat16
 * (TF_COMM_BF16): the union of the rows its fetchers' runs read and the rows
 * the collective sends zero-copy (TWOFACE_COLL_PACK=never or auto), as merged
 * ranges of owner-local rows. On one node (tf_coll_shm.c) the collective's
 * readers round the rows they receive from float32 B themselves, so only
 * the fetchers' rows are exported. At the start of every SpMM, before READY goes
 * to any fetcher and before the collective starts, the owner rounds exactly
 * those rows of its float32 B into the window memory: once per SpMM, however
 * many ranks read a row. Rows that travel only in the collective's pack are
 * not here, unless they go to several destinations (shared_pack_rows): the
 * pack rounds them from B as it copies them (tf_pack.h), which spares a
 * pass through the window. Rows that never leave the rank are rounded
 * nowhere (the local part computes with float32 B).
 *
 * The owner learns its fetchers' runs once, at context creation (one
 * MPI_Alltoall of counts and one MPI_Alltoallv of the ranges); a float32
 * context needs none of this, the window being B itself. */
#include "tf_bf16.h"
#include "tf_exec.h"

#include <stdlib.h>
#include <string.h>

void tf_export_free(tf_spmm_ctx *ctx)
{
    free(ctx->xr_first);
    free(ctx->xr_rows);
    ctx->xr_first = ctx->xr_rows = NULL;
    ctx->n_xr = 0;
}

static int cmp_range(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0;
}

/* Sorts n (first, rows) pairs and stores their union in ctx. */
static int merge_ranges(tf_spmm_ctx *ctx, int64_t *pairs, int64_t n)
{
    qsort(pairs, (size_t)n, 2 * sizeof *pairs, cmp_range);
    ctx->xr_first = malloc(((size_t)n + 1) * sizeof *ctx->xr_first);
    ctx->xr_rows = malloc(((size_t)n + 1) * sizeof *ctx->xr_rows);
    if (!ctx->xr_first || !ctx->xr_rows)
        return tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate the exported row ranges",
                       ctx->h->rank);
    const int64_t nb = ctx->h->rp->nbrows;
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t f = pairs[2 * i], e = f + pairs[2 * i + 1];
        if (f < 0 || pairs[2 * i + 1] < 0 || e > nb)
            return tf_fail(TF_ERR_FORMAT,
                           "rank %d: another rank reads my B rows %lld..%lld, but I own %lld",
                           ctx->h->rank, (long long)f, (long long)e - 1, (long long)nb);
        if (e == f)
            continue;
        if (m > 0 && f <= ctx->xr_first[m - 1] + ctx->xr_rows[m - 1]) {
            int64_t end = ctx->xr_first[m - 1] + ctx->xr_rows[m - 1];
            if (e > end)
                ctx->xr_rows[m - 1] = e - ctx->xr_first[m - 1];
        } else {
            ctx->xr_first[m] = f;
            ctx->xr_rows[m] = e - f;
            m++;
        }
    }
    ctx->n_xr = m;
    return TF_OK;
}

/* A row the collective packs for R destinations costs 6R bytes per element
 * rounded in each pack (read 4, write 2), or 6 + 4R rounded once into the
 * window and copied into each pack (read 2, write 2): from R = 3 on the
 * window is no dearer, and it rounds once instead of R times. Appends the
 * ranges of rows packed for at least that many destinations to pairs. */
#define TF_EXPORT_SHARED_FROM 3
static int shared_pack_rows(tf_spmm_ctx *ctx, int64_t *pairs, int64_t *n)
{
    const int64_t nb = ctx->h->rp->nbrows;
    if (ctx->n_pack_runs == 0 || ctx->n_pack_dst < TF_EXPORT_SHARED_FROM)
        return TF_OK;
    int32_t *d = calloc((size_t)nb + 1, sizeof *d); /* recipients, differenced */
    if (!d)
        return tf_fail(TF_ERR_NOMEM, "rank %d: cannot count the recipients of my rows",
                       ctx->h->rank);
    for (int64_t r = 0; r < ctx->n_pack_runs; r++) {
        d[ctx->pack_first[r]]++;
        d[ctx->pack_first[r] + ctx->pack_len[r]]--;
    }
    int32_t dests = 0;
    int64_t open = -1;
    for (int64_t i = 0; i <= nb; i++) {
        dests += d[i];
        int shared = i < nb && dests >= TF_EXPORT_SHARED_FROM;
        if (shared && open < 0)
            open = i;
        else if (!shared && open >= 0) {
            pairs[(*n)++] = open;
            pairs[(*n)++] = i - open;
            open = -1;
        }
    }
    free(d);
    return TF_OK;
}

int tf_export_setup(tf_spmm_ctx *ctx)
{
    tf_handle *h = ctx->h;
    const tf_rank_plan *rp = h->rp;
    const int P = h->nranks;
    int st = TF_OK;
    int *scount = calloc((size_t)P, sizeof *scount), *rcount = calloc((size_t)P, sizeof *rcount);
    int *sdispl = calloc((size_t)P, sizeof *sdispl), *rdispl = calloc((size_t)P, sizeof *rdispl);
    int64_t *sbuf = malloc(((size_t)rp->n_runs + 1) * 2 * sizeof *sbuf);
    int64_t *pairs = NULL;
    if (!scount || !rcount || !sdispl || !rdispl || !sbuf)
        st = tf_fail(TF_ERR_NOMEM, "rank %d: out of memory", h->rank);
    /* My runs, grouped by owner: counts in int64s, two per run. */
    if (st == TF_OK) {
        for (int64_t r = 0; r < rp->n_runs; r++) {
            if (scount[rp->run_owner[r]] > INT32_MAX - 2) {
                st = tf_fail(TF_ERR_RANGE, "rank %d: too many runs from rank %d", h->rank,
                             rp->run_owner[r]);
                break;
            }
            scount[rp->run_owner[r]] += 2;
        }
        for (int p = 1; p < P; p++)
            sdispl[p] = sdispl[p - 1] + scount[p - 1];
        int *fill = rdispl; /* scratch until the exchange */
        memcpy(fill, sdispl, (size_t)P * sizeof *fill);
        for (int64_t r = 0; r < rp->n_runs && st == TF_OK; r++) {
            int o = rp->run_owner[r];
            sbuf[fill[o]++] = rp->run_first[r];
            sbuf[fill[o]++] = rp->run_count[r];
        }
    }
    st = tf_agree(h->comm, st);
    int err = MPI_SUCCESS;
    if (st == TF_OK)
        err = MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, h->comm);
    if (st == TF_OK && err != MPI_SUCCESS)
        st = tf_mpi_fail(err, "MPI_Alltoall (exported rows)");
    int64_t nrecv = 0;
    if (st == TF_OK) {
        for (int p = 0; p < P; p++) {
            rdispl[p] = (int)nrecv;
            nrecv += rcount[p];
        }
        size_t cap = (size_t)nrecv + 2 * (size_t)rp->n_send + 2 * (size_t)ctx->n_pack_runs + 2;
        if (nrecv + 2 * rp->n_send > INT32_MAX)
            st = tf_fail(TF_ERR_RANGE, "rank %d: too many exported row ranges", h->rank);
        else if (!(pairs = malloc(cap * sizeof *pairs)))
            st = tf_fail(TF_ERR_NOMEM, "rank %d: out of memory", h->rank);
    }
    st = tf_agree(h->comm, st);
    if (st == TF_OK) {
        err = MPI_Alltoallv(sbuf, scount, sdispl, MPI_INT64_T, pairs, rcount, rdispl,
                            MPI_INT64_T, h->comm);
        if (err != MPI_SUCCESS)
            st = tf_mpi_fail(err, "MPI_Alltoallv (exported rows)");
    }
    if (st == TF_OK) {
        /* The collective's zero-copy stripes (send_first is owner-local),
         * destination by destination as tf_collective.c numbers them; none
         * when the collective's readers round from B in shared memory. */
        int64_t n = nrecv;
        for (int64_t s = 0, j = -1; !ctx->coll_shm && s < rp->n_send; s++) {
            if (s == 0 || rp->send_dst[s] != rp->send_dst[s - 1])
                j++;
            if (ctx->dst_packed && ctx->dst_packed[j])
                continue;
            pairs[n++] = rp->send_first[s];
            pairs[n++] = rp->send_rows[s];
        }
        st = shared_pack_rows(ctx, pairs, &n);
        if (st == TF_OK)
            st = merge_ranges(ctx, pairs, n / 2);
    }
    if (st == TF_OK)
        st = tf_coll_pack_sources(ctx);
    free(scount);
    free(rcount);
    free(sdispl);
    free(rdispl);
    free(sbuf);
    free(pairs);
    return tf_agree(h->comm, st);
}

/* The rows others read from the window. */
void tf_export_pack(tf_spmm_ctx *ctx)
{
    const int64_t k = ctx->k;
    uint16_t *x = ctx->xb;
    for (int64_t i = 0; i < ctx->n_xr; i++)
        tf_bf16_pack(ctx->b + ctx->xr_first[i] * k, x + ctx->xr_first[i] * k,
                     ctx->xr_rows[i] * k);
}
