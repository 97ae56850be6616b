/* The fetch half's machinery: the order runs are issued in, runs split
 * among the fetch threads, request slots, compact accumulators, issuing
 * MPI_Rget, and the pairwise protocol that keeps B safe.
 *
 * A run r is one MPI_Rget of run_count[r] rows (a K-element contiguous
 * type, so the count is in rows) from run_owner[r]'s window at owner-local
 * row run_first[r] (displacement in elements: the window's unit is the size
 * of what travels, a float or, with TF_COMM_BF16, a bf16)
 * into fetch buffer rows run_off[r].. . Each fetch thread keeps at most
 * max_req requests in flight and refills slots as requests complete.
 *
 * Issue order: by owner, starting with rank + 1 and wrapping around, so that
 * ranks do not all start with the same owner; a run from an owner is issued
 * only once that owner's READY message has arrived. */
#include "tf_exec.h"
#include "tf_kernels.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define TAG_READY 1
#define TAG_DONE 2

void tf_fetch_free(tf_spmm_ctx *ctx)
{
    if (ctx->ft) {
        for (int f = 0; f < ctx->n_fetch_threads; f++) {
            tf_fetch_thread *ft = &ctx->ft[f];
            free(ft->acc);
            free(ft->req);
            free(ft->slot_run);
            free(ft->done_idx);
            free(ft->free_slot);
            free(ft->landed);
            free(ft->seg_owner);
            free(ft->seg_begin);
            free(ft->seg_end);
            free(ft->seg_next);
        }
    }
    free(ctx->ft);
    free(ctx->accs);
    free(ctx->run_order);
    free(ctx->run_owner_idx);
    ctx->ft = NULL;
    ctx->accs = NULL;
    ctx->run_order = NULL;
    ctx->run_owner_idx = NULL;
}

/* Cost of a run for load balancing among fetch threads: its nonzeros times
 * K plus a fixed request overhead expressed in nonzero-columns. */
static double run_cost(const tf_rank_plan *rp, int64_t r, int64_t k)
{
    int64_t j0 = rp->run_off[r], j1 = j0 + rp->run_count[r];
    return (double)(rp->fet_ptr[j1] - rp->fet_ptr[j0]) * (double)k + 2000.0 +
           (double)rp->run_count[r] * (double)k * 0.25;
}

/* Owners this rank fetches from (ascending by distance from rank + 1), the
 * owner index of every run, and the run order. */
static int order_runs(tf_spmm_ctx *ctx)
{
    const tf_rank_plan *rp = ctx->h->rp;
    const int P = ctx->h->nranks, me = ctx->h->rank;
    int64_t *per = calloc((size_t)P, sizeof *per);
    int *idx = malloc((size_t)P * sizeof *idx);
    ctx->run_order = malloc(((size_t)rp->n_runs + 1) * sizeof *ctx->run_order);
    ctx->run_owner_idx = malloc(((size_t)rp->n_runs + 1) * sizeof *ctx->run_owner_idx);
    if (!per || !idx || !ctx->run_order || !ctx->run_owner_idx) {
        free(per);
        free(idx);
        return tf_fail(TF_ERR_NOMEM, "rank %d: out of memory", me);
    }
    for (int64_t r = 0; r < rp->n_runs; r++)
        per[rp->run_owner[r]]++;
    int no = 0;
    for (int d = 1; d < P; d++) {
        int o = (me + d) % P;
        idx[o] = per[o] > 0 ? no++ : -1;
    }
    ctx->n_owners = no;
    ctx->owner_rank = malloc(((size_t)no + 1) * sizeof *ctx->owner_rank);
    ctx->owner_runs = calloc((size_t)no + 1, sizeof *ctx->owner_runs);
    ctx->owner_left = calloc((size_t)no + 1, sizeof *ctx->owner_left);
    ctx->owner_ready = calloc((size_t)no + 1, 1);
    int64_t *start = calloc((size_t)no + 1, sizeof *start);
    int st = TF_OK;
    if (!ctx->owner_rank || !ctx->owner_runs || !ctx->owner_left || !ctx->owner_ready || !start) {
        st = tf_fail(TF_ERR_NOMEM, "rank %d: out of memory", me);
    } else {
        for (int d = 1; d < P; d++) {
            int o = (me + d) % P;
            if (idx[o] >= 0) {
                ctx->owner_rank[idx[o]] = o;
                ctx->owner_runs[idx[o]] = per[o];
            }
        }
        for (int i = 1; i <= no; i++)
            start[i] = start[i - 1] + ctx->owner_runs[i - 1];
        for (int64_t r = 0; r < rp->n_runs; r++) {
            int oi = idx[rp->run_owner[r]];
            ctx->run_owner_idx[r] = oi;
            ctx->run_order[start[oi]++] = r;
        }
    }
    free(start);
    free(per);
    free(idx);
    return st;
}

int tf_fetch_setup(tf_spmm_ctx *ctx)
{
    const tf_rank_plan *rp = ctx->h->rp;
    int st = order_runs(ctx);
    if (st)
        return st;
    int nf = ctx->threads_fetch > 0 ? ctx->threads_fetch : 1;
    ctx->n_fetch_threads = nf;
    ctx->ft = calloc((size_t)nf, sizeof *ctx->ft);
    ctx->accs = calloc((size_t)nf, sizeof *ctx->accs);
    if (!ctx->ft || !ctx->accs)
        return tf_fail(TF_ERR_NOMEM, "rank %d: out of memory", ctx->h->rank);
    double total = 0.0;
    for (int64_t r = 0; r < rp->n_runs; r++)
        total += run_cost(rp, r, ctx->k);
    int64_t pos = 0;
    double acc = 0.0;
    for (int f = 0; f < nf; f++) {
        tf_fetch_thread *ft = &ctx->ft[f];
        ft->run_begin = pos;
        double goal = total * (double)(f + 1) / (double)nf;
        while (pos < rp->n_runs) {
            double c = run_cost(rp, ctx->run_order[pos], ctx->k);
            if (f < nf - 1 && acc + 0.5 * c > goal)
                break;
            acc += c;
            pos++;
        }
        ft->run_end = pos;
        int nseg = 0;
        for (int64_t x = ft->run_begin; x < ft->run_end; x++)
            if (x == ft->run_begin || ctx->run_owner_idx[ctx->run_order[x]] !=
                                          ctx->run_owner_idx[ctx->run_order[x - 1]])
                nseg++;
        ft->n_seg = nseg;
        ft->seg_owner = malloc(((size_t)nseg + 1) * sizeof *ft->seg_owner);
        ft->seg_begin = malloc(((size_t)nseg + 1) * sizeof *ft->seg_begin);
        ft->seg_end = malloc(((size_t)nseg + 1) * sizeof *ft->seg_end);
        ft->seg_next = malloc(((size_t)nseg + 1) * sizeof *ft->seg_next);
        /* Requests: the single-thread path puts the collective and the READY
         * receives in front of the run slots, in one MPI_Waitsome. */
        size_t ns = (size_t)ctx->max_req + 1 + (size_t)ctx->n_owners;
        ft->req = malloc(ns * sizeof *ft->req);
        ft->slot_run = malloc(ns * sizeof *ft->slot_run);
        ft->done_idx = malloc(ns * sizeof *ft->done_idx);
        ft->free_slot = malloc(ns * sizeof *ft->free_slot);
        ft->landed = malloc(((size_t)(ft->run_end - ft->run_begin) + 1) * sizeof *ft->landed);
        if (!ft->seg_owner || !ft->seg_begin || !ft->seg_end || !ft->seg_next || !ft->req ||
            !ft->slot_run || !ft->done_idx || !ft->free_slot || !ft->landed)
            return tf_fail(TF_ERR_NOMEM, "rank %d: out of memory", ctx->h->rank);
        int s = -1;
        for (int64_t x = ft->run_begin; x < ft->run_end; x++) {
            int oi = ctx->run_owner_idx[ctx->run_order[x]];
            if (s < 0 || oi != ft->seg_owner[s]) {
                s++;
                ft->seg_owner[s] = oi;
                ft->seg_begin[s] = x;
            }
            ft->seg_end[s] = x + 1;
        }
        for (size_t i = 0; i < ns; i++)
            ft->req[i] = MPI_REQUEST_NULL;
        if (ctx->threads_fetch > 0 && rp->n_fetch_rows > 0) {
            ft->acc = tf_kern_alloc_rows(rp->n_fetch_rows, ctx->k, sizeof *ft->acc);
            if (!ft->acc)
                return tf_fail(TF_ERR_NOMEM,
                               "rank %d: cannot allocate a %lld x %d fetch accumulator",
                               ctx->h->rank, (long long)rp->n_fetch_rows, ctx->k);
        }
        ctx->accs[f] = ft->acc;
    }
    return TF_OK;
}

void tf_fetch_reset(tf_spmm_ctx *ctx, tf_fetch_thread *ft, int req_off)
{
    ft->req_off = req_off;
    ft->hwm = 0;
    ft->inflight = 0;
    ft->nfree = ctx->max_req;
    for (int i = 0; i < ctx->max_req; i++) {
        ft->free_slot[i] = ctx->max_req - 1 - i; /* slot 0 on top */
        ft->slot_run[i] = -1;
    }
    for (int s = 0; s < ft->n_seg; s++)
        ft->seg_next[s] = ft->seg_begin[s];
    ft->seg_first = 0;
    ft->nlanded = 0;
}

int tf_fetch_issue(tf_spmm_ctx *ctx, tf_fetch_thread *ft, const char *ready)
{
    const tf_rank_plan *rp = ctx->h->rp;
    const int64_t k = ctx->k;
    while (ft->seg_first < ft->n_seg && ft->seg_next[ft->seg_first] == ft->seg_end[ft->seg_first])
        ft->seg_first++;
    for (int s = ft->seg_first; s < ft->n_seg && ft->nfree > 0; s++) {
        if (ready && !ready[ft->seg_owner[s]])
            continue;
        while (ft->seg_next[s] < ft->seg_end[s] && ft->nfree > 0) {
            int64_t r = ctx->run_order[ft->seg_next[s]++];
            int slot = ft->free_slot[--ft->nfree];
            int err = MPI_Rget((char *)ctx->fetch_buf + (size_t)(rp->run_off[r] * k) * ctx->es,
                               rp->run_count[r],
                               ctx->row_type, rp->run_owner[r],
                               ctx->win_pad[rp->run_owner[r]] / (MPI_Aint)ctx->es +
                                   (MPI_Aint)rp->run_first[r] * (MPI_Aint)k,
                               rp->run_count[r],
                               ctx->row_type, ctx->win, &ft->req[ft->req_off + slot]);
            if (err != MPI_SUCCESS)
                return tf_mpi_fail(err, "MPI_Rget");
            ft->slot_run[slot] = r;
            ft->inflight++;
            if (slot >= ft->hwm)
                ft->hwm = slot + 1;
        }
    }
    return TF_OK;
}

int64_t tf_fetch_complete(tf_spmm_ctx *ctx, tf_fetch_thread *ft, int index)
{
    int slot = index - ft->req_off;
    int64_t r = ft->slot_run[slot];
    ft->slot_run[slot] = -1;
    ft->free_slot[ft->nfree++] = slot;
    ft->inflight--;
    (void)ctx;
    return r;
}

/* ---- Pairwise protection of B ------------------------------------------ */

void tf_sync_free(tf_spmm_ctx *ctx)
{
    MPI_Request *arrs[4] = {ctx->ready_recv, ctx->done_send, ctx->ready_send, ctx->done_recv};
    int ns[4] = {ctx->n_owners, ctx->n_owners, ctx->n_fetchers, ctx->n_fetchers};
    for (int a = 0; a < 4; a++) {
        for (int i = 0; arrs[a] && i < ns[a]; i++)
            if (arrs[a][i] != MPI_REQUEST_NULL)
                MPI_Request_free(&arrs[a][i]);
        free(arrs[a]);
    }
    ctx->ready_recv = ctx->done_send = ctx->ready_send = ctx->done_recv = NULL;
    free(ctx->owner_rank);
    free(ctx->owner_runs);
    free((void *)ctx->owner_left);
    free(ctx->owner_ready);
    free(ctx->fetcher_rank);
    ctx->owner_rank = ctx->fetcher_rank = NULL;
    ctx->owner_runs = NULL;
    ctx->owner_left = NULL;
    ctx->owner_ready = NULL;
    if (ctx->sync_comm != MPI_COMM_NULL)
        MPI_Comm_free(&ctx->sync_comm);
    ctx->sync_comm = MPI_COMM_NULL;
}

/* Collective over h->comm; run after tf_fetch_setup (which finds the owners)
 * on every rank. Finds the fetchers with one MPI_Alltoall of flags. */
int tf_sync_setup(tf_spmm_ctx *ctx)
{
    tf_handle *h = ctx->h;
    const int P = h->nranks;
    int st = TF_OK;
    int *mine = calloc((size_t)P, sizeof *mine), *theirs = calloc((size_t)P, sizeof *theirs);
    if (!mine || !theirs)
        st = tf_fail(TF_ERR_NOMEM, "rank %d: out of memory", h->rank);
    st = tf_agree(h->comm, st);
    if (st) {
        free(mine);
        free(theirs);
        return st;
    }
    for (int i = 0; i < ctx->n_owners; i++)
        mine[ctx->owner_rank[i]] = 1;
    int err = MPI_Alltoall(mine, 1, MPI_INT, theirs, 1, MPI_INT, h->comm);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_dup(h->comm, &ctx->sync_comm);
    if (err != MPI_SUCCESS)
        st = tf_mpi_fail(err, "MPI_Alltoall/MPI_Comm_dup");
    int nf = 0;
    for (int q = 0; st == TF_OK && q < P; q++)
        nf += theirs[q] != 0;
    ctx->n_fetchers = st == TF_OK ? nf : 0;
    ctx->fetcher_rank = malloc(((size_t)nf + 1) * sizeof *ctx->fetcher_rank);
    size_t no = (size_t)ctx->n_owners + 1, nfe = (size_t)nf + 1;
    ctx->ready_recv = malloc(no * sizeof(MPI_Request));
    ctx->done_send = malloc(no * sizeof(MPI_Request));
    ctx->ready_send = malloc(nfe * sizeof(MPI_Request));
    ctx->done_recv = malloc(nfe * sizeof(MPI_Request));
    if (st == TF_OK && (!ctx->fetcher_rank || !ctx->ready_recv || !ctx->done_send ||
                        !ctx->ready_send || !ctx->done_recv))
        st = tf_fail(TF_ERR_NOMEM, "rank %d: out of memory", h->rank);
    for (size_t i = 0; ctx->ready_recv && ctx->done_send && i < no; i++)
        ctx->ready_recv[i] = ctx->done_send[i] = MPI_REQUEST_NULL;
    for (size_t i = 0; ctx->ready_send && ctx->done_recv && i < nfe; i++)
        ctx->ready_send[i] = ctx->done_recv[i] = MPI_REQUEST_NULL;
    if (st == TF_OK) {
        nf = 0;
        for (int q = 0; q < P; q++)
            if (theirs[q])
                ctx->fetcher_rank[nf++] = q;
        /* Zero-byte messages; a static dummy so no rank passes NULL. */
        static char dummy;
        for (int i = 0; i < ctx->n_owners && err == MPI_SUCCESS; i++) {
            err = MPI_Recv_init(&dummy, 0, MPI_BYTE, ctx->owner_rank[i], TAG_READY,
                                ctx->sync_comm, &ctx->ready_recv[i]);
            if (err == MPI_SUCCESS)
                err = MPI_Send_init(&dummy, 0, MPI_BYTE, ctx->owner_rank[i], TAG_DONE,
                                    ctx->sync_comm, &ctx->done_send[i]);
        }
        for (int i = 0; i < ctx->n_fetchers && err == MPI_SUCCESS; i++) {
            err = MPI_Send_init(&dummy, 0, MPI_BYTE, ctx->fetcher_rank[i], TAG_READY,
                                ctx->sync_comm, &ctx->ready_send[i]);
            if (err == MPI_SUCCESS)
                err = MPI_Recv_init(&dummy, 0, MPI_BYTE, ctx->fetcher_rank[i], TAG_DONE,
                                    ctx->sync_comm, &ctx->done_recv[i]);
        }
        if (err != MPI_SUCCESS)
            st = tf_mpi_fail(err, "MPI_Send_init/MPI_Recv_init");
    }
    free(mine);
    free(theirs);
    return tf_agree(h->comm, st);
}

int tf_sync_start(tf_spmm_ctx *ctx)
{
    int err = MPI_SUCCESS;
    for (int i = 0; i < ctx->n_owners; i++) {
        ctx->owner_left[i] = ctx->owner_runs[i];
        ctx->owner_ready[i] = 0;
    }
    if (ctx->n_fetchers > 0) {
        /* My B is written: make the stores visible to one-sided reads, then
         * tell my fetchers. */
        MPI_Win_sync(ctx->win);
        err = MPI_Startall(ctx->n_fetchers, ctx->done_recv);
        if (err == MPI_SUCCESS)
            err = MPI_Startall(ctx->n_fetchers, ctx->ready_send);
    }
    if (err == MPI_SUCCESS && ctx->n_owners > 0)
        err = MPI_Startall(ctx->n_owners, ctx->ready_recv);
    return err == MPI_SUCCESS ? TF_OK : tf_mpi_fail(err, "MPI_Startall");
}
