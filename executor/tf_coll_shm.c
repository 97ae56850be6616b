/* The collective half on one node: receivers read their peers' B rows
 * straight from shared memory (docs/executor.md, "The collective on one
 * node").
 *
 * When every rank of the communicator is on this node, B lives in an
 * MPI_Win_allocate_shared window, and MPI_Win_shared_query gives each rank
 * the address of every owner's rows. The plan's receive schedule says where
 * each stripe goes: collective-buffer rows [recv_off[r], recv_off[r] +
 * recv_rows[r]) are owner recv_src[r]'s B rows [recv_first[r], ...) - the
 * very rows the exchange would deliver there, whole stripes or needed-row
 * runs alike - so the receiver copies them itself: one copy, no pack, no
 * message, and coll_buf ends up byte for byte as the exchange leaves it.
 *
 * Why the reads are safe (the MPI-3 unified model; the documented pattern
 * is MPI_Win_sync, a synchronisation between the processes, MPI_Win_sync):
 *  - a reader reads an owner's B only after the owner wrote it: the owner
 *    enters the SpMM after its caller's stores to B, calls MPI_Win_sync (a
 *    memory barrier over the window: its stores are visible before what
 *    follows) and sends READY to each rank reading from it; the reader
 *    copies from an owner only once READY arrived from every owner it
 *    reads, and after its own MPI_Win_sync, so its loads are not satisfied
 *    from before.
 *  - an owner overwrites B only after every reader is done: a reader
 *    finishes its copies (all threads that copy synchronise with the one
 *    that sends), calls MPI_Win_sync and sends DONE to each owner it read;
 *    the owner returns from the SpMM - after which its caller may write B -
 *    only once DONE arrived from each of its readers.
 * READY of the next SpMM cannot be taken for this one's: each pair's
 * messages of one tag are matched in order, and a reader posts its next
 * READY receive only after this SpMM's completed. The messages live on a
 * communicator of their own, so that nothing else can match them. The
 * window is locked (MPI_Win_lock_all) for its lifetime, since MPI_Win_sync
 * needs a passive-target epoch.
 *
 * Pairwise messages rather than two MPI_Ibarrier: a barrier completes only
 * after log2(P) rounds in which every rank calls into MPI, and a rank in
 * its local part does so only between chunks, so one rank with more local
 * work held every other rank at the exit barrier (cnr-2000, P = 4,
 * K = 128: the collective's wait grew from 2 to 12 ms, max over ranks).
 * A zero-byte send completes at once; DONE needs no progress by the owner
 * until it waits for it.
 *
 * Not with bf16 (the window then holds only the rounded rows the exchange
 * sends zero-copy or fetchers read, tf_export.c): bf16 keeps the exchange.
 * Not in the SMPI build (TF_COLL_SHM_UNAVAILABLE): a simulated cluster has
 * one rank per host. */
#include "tf_exec.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_READY = 1, TAG_DONE = 2 };

int tf_coll_shm_mode(MPI_Comm comm, int *on)
{
    const char *s = getenv("TWOFACE_COLL_SHM");
    int st = TF_OK;
    *on = 1;
    if (s && *s) {
        if (strcmp(s, "auto") == 0)
            *on = 1;
        else if (strcmp(s, "off") == 0)
            *on = 0;
        else
            st = tf_fail(TF_ERR_ARG, "TWOFACE_COLL_SHM=%s: expected auto or off", s);
    }
    st = tf_agree(comm, st);
    if (st)
        return st;
    /* Ranks that disagree would meet in different allocations and hang. */
    int mm[2] = {*on, -*on}, all[2];
    MPI_Allreduce(mm, all, 2, MPI_INT, MPI_MIN, comm);
    if (all[0] != -all[1]) {
        int rank = 0;
        MPI_Comm_rank(comm, &rank);
        st = tf_fail(TF_ERR_ARG, "TWOFACE_COLL_SHM differs between ranks (%s on rank %d)",
                     *on ? "auto" : "off", rank);
    }
    return tf_agree(comm, st);
}

int tf_coll_shm_window(tf_spmm_ctx *ctx, MPI_Aint bytes, int want)
{
    tf_handle *h = ctx->h;
    int err;
    ctx->win_shared = 0;
#ifndef TF_COLL_SHM_UNAVAILABLE
    int shared = want && h->node_ranks == h->nranks;
    MPI_Allreduce(MPI_IN_PLACE, &shared, 1, MPI_INT, MPI_MIN, h->comm);
    if (shared) {
        /* Each rank's part on pages of its own: the owner first-touches it. */
        MPI_Info info = MPI_INFO_NULL;
        if (MPI_Info_create(&info) == MPI_SUCCESS)
            MPI_Info_set(info, "alloc_shared_noncontig", "true");
        err = MPI_Win_allocate_shared(bytes, (int)ctx->es, info, h->comm, &ctx->xb, &ctx->win);
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
        int ok = err == MPI_SUCCESS, all_ok = 0;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, h->comm);
        if (all_ok) {
            ctx->win_shared = 1;
            return TF_OK;
        }
        /* Freeing is collective over the ranks that hold the window, which
         * the ranks without it cannot join: a partial window is left to
         * MPI_Finalize. Open MPI creates it on all ranks or on none. */
        ctx->win = MPI_WIN_NULL;
        ctx->xb = NULL;
    }
#else
    (void)want;
#endif
    err = MPI_Win_allocate(bytes, (int)ctx->es, MPI_INFO_NULL, h->comm, &ctx->xb, &ctx->win);
    int st = TF_OK;
    if (err != MPI_SUCCESS) {
        ctx->win = MPI_WIN_NULL;
        st = tf_mpi_fail(err, "MPI_Win_allocate");
    }
    return tf_agree(h->comm, st);
}

static void free_requests(MPI_Request *r, int n)
{
    for (int i = 0; r && i < n; i++)
        if (r[i] != MPI_REQUEST_NULL)
            MPI_Request_free(&r[i]);
    free(r);
}

void tf_coll_shm_free(tf_spmm_ctx *ctx)
{
    free_requests(ctx->shm_ready_recv, ctx->shm_n_src);
    free_requests(ctx->shm_done_send, ctx->shm_n_src);
    free_requests(ctx->shm_ready_send, ctx->shm_n_rd);
    free_requests(ctx->shm_done_recv, ctx->shm_n_rd);
    free(ctx->shm_src_rank);
    free(ctx->shm_rd_rank);
    ctx->shm_ready_recv = ctx->shm_done_send = ctx->shm_ready_send = ctx->shm_done_recv = NULL;
    ctx->shm_src_rank = ctx->shm_rd_rank = NULL;
    ctx->shm_n_src = ctx->shm_n_rd = 0;
    if (ctx->shm_comm != MPI_COMM_NULL)
        MPI_Comm_free(&ctx->shm_comm);
    free(ctx->shm_src);
    free(ctx->shm_dst);
    free(ctx->shm_bytes);
    free(ctx->shm_split);
    free(ctx->shm_seg_first);
    free(ctx->shm_done_idx);
    ctx->shm_seg_first = NULL;
    ctx->shm_done_idx = NULL;
    ctx->shm_src = NULL;
    ctx->shm_dst = ctx->shm_bytes = ctx->shm_split = NULL;
    ctx->n_shm_seg = 0;
    ctx->coll_shm = 0;
}

/* Segments: stripes merged while both the source rows and the buffer rows
 * continue where the previous stripe ended; each checked against the
 * owner's window size, so that a plan inconsistent with its peers fails
 * here instead of reading outside their memory. */
static int shm_describe(tf_spmm_ctx *ctx, int **seg_rank_out)
{
    const tf_handle *h = ctx->h;
    const tf_rank_plan *rp = h->rp;
    const int64_t rowbytes = (int64_t)ctx->k * (int64_t)ctx->es;
    size_t n = (size_t)rp->n_recv + 1;
    ctx->shm_src = malloc(n * sizeof *ctx->shm_src);
    ctx->shm_dst = malloc(n * sizeof *ctx->shm_dst);
    ctx->shm_bytes = malloc(n * sizeof *ctx->shm_bytes);
    ctx->shm_split = malloc(((size_t)ctx->n_coll_threads + 1) * sizeof *ctx->shm_split);
    int *seg_rank = *seg_rank_out = malloc(n * sizeof *seg_rank);
    if (!ctx->shm_src || !ctx->shm_dst || !ctx->shm_bytes || !ctx->shm_split || !seg_rank)
        return tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate the %lld-stripe copy schedule",
                       h->rank, (long long)rp->n_recv);
    int64_t m = 0;
    int src = -1;
    const char *base = NULL;
    int64_t owner_rows = 0;
    for (int64_t r = 0; r < rp->n_recv; r++) {
        if (rp->recv_src[r] != src) {
            src = rp->recv_src[r];
            MPI_Aint size = 0;
            int disp = 0;
            void *ptr = NULL;
            if (src < 0 || src >= h->nranks || src == h->rank)
                return tf_fail(TF_ERR_FORMAT, "rank %d: receives a stripe from rank %d",
                               h->rank, src);
            int err = MPI_Win_shared_query(ctx->win, src, &size, &disp, &ptr);
            if (err != MPI_SUCCESS)
                return tf_mpi_fail(err, "MPI_Win_shared_query");
            base = ptr;
            owner_rows = (int64_t)size / rowbytes;
        }
        int64_t first = rp->recv_first[r], rows = rp->recv_rows[r];
        if (first < 0 || rows < 0 || first > owner_rows - rows)
            return tf_fail(TF_ERR_FORMAT,
                           "rank %d: the plan reads B rows [%lld, %lld) of rank %d, which "
                           "owns %lld",
                           h->rank, (long long)first, (long long)(first + rows), src,
                           (long long)owner_rows);
        if (rows == 0)
            continue;
        const char *from = base + first * rowbytes;
        int64_t to = rp->recv_off[r] * rowbytes, bytes = rows * rowbytes;
        if (m > 0 && seg_rank[m - 1] == src && ctx->shm_src[m - 1] + ctx->shm_bytes[m - 1] == from &&
            ctx->shm_dst[m - 1] + ctx->shm_bytes[m - 1] == to) {
            ctx->shm_bytes[m - 1] += bytes;
        } else {
            ctx->shm_src[m] = from;
            ctx->shm_dst[m] = to;
            ctx->shm_bytes[m] = bytes;
            seg_rank[m] = src;
            m++;
        }
    }
    ctx->n_shm_seg = m;
    ctx->coll_msgs = 0;
    for (int64_t r = 0; r < rp->n_recv; r++)
        if (r == 0 || rp->recv_src[r] != rp->recv_src[r - 1])
            ctx->coll_msgs++;
    return TF_OK;
}

/* Who reads from whom, from the rows each rank reads of each peer (one
 * MPI_Alltoall), checked against this rank's send schedule as the exchange
 * checks it; then the persistent READY/DONE requests. */
static int shm_peers(tf_spmm_ctx *ctx)
{
    tf_handle *h = ctx->h;
    const tf_rank_plan *rp = h->rp;
    const int P = h->nranks;
    int64_t *mine = calloc((size_t)P, sizeof *mine), *theirs = calloc((size_t)P, sizeof *theirs);
    int64_t *sent = calloc((size_t)P, sizeof *sent);
    int st = TF_OK;
    if (!mine || !theirs || !sent)
        st = tf_fail(TF_ERR_NOMEM, "rank %d: out of memory", h->rank);
    for (int64_t r = 0; st == TF_OK && r < rp->n_recv; r++)
        mine[rp->recv_src[r]] += rp->recv_rows[r];
    for (int64_t r = 0; st == TF_OK && r < rp->n_send; r++) {
        if (rp->send_dst[r] < 0 || rp->send_dst[r] >= P)
            st = tf_fail(TF_ERR_FORMAT, "rank %d: sends a stripe to rank %d", h->rank,
                         rp->send_dst[r]);
        else
            sent[rp->send_dst[r]] += rp->send_rows[r];
    }
    int ok = st == TF_OK, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, h->comm);
    if (all_ok) {
        int err = MPI_Alltoall(mine, 1, MPI_INT64_T, theirs, 1, MPI_INT64_T, h->comm);
        if (err != MPI_SUCCESS)
            st = tf_mpi_fail(err, "MPI_Alltoall");
    }
    for (int q = 0; all_ok && st == TF_OK && q < P; q++) {
        if (theirs[q] != sent[q])
            st = tf_fail(TF_ERR_FORMAT,
                         "plan schedules disagree: rank %d expects %lld B rows from rank %d, "
                         "which sends %lld",
                         q, (long long)theirs[q], h->rank, (long long)sent[q]);
        ctx->shm_n_src += mine[q] > 0;
        ctx->shm_n_rd += theirs[q] > 0;
    }
    size_t ns = (size_t)ctx->shm_n_src + 1, nr = (size_t)ctx->shm_n_rd + 1;
    if (st == TF_OK) {
        ctx->shm_src_rank = malloc(ns * sizeof(int));
        ctx->shm_rd_rank = malloc(nr * sizeof(int));
        ctx->shm_ready_recv = malloc(ns * sizeof(MPI_Request));
        ctx->shm_done_send = malloc(ns * sizeof(MPI_Request));
        ctx->shm_ready_send = malloc(nr * sizeof(MPI_Request));
        ctx->shm_done_recv = malloc(nr * sizeof(MPI_Request));
        ctx->shm_done_idx = malloc(ns * sizeof(int));
        if (!ctx->shm_done_idx || !ctx->shm_src_rank || !ctx->shm_rd_rank || !ctx->shm_ready_recv ||
            !ctx->shm_done_send || !ctx->shm_ready_send || !ctx->shm_done_recv)
            st = tf_fail(TF_ERR_NOMEM, "rank %d: out of memory", h->rank);
    }
    if (st == TF_OK) {
        for (size_t i = 0; i < ns; i++)
            ctx->shm_ready_recv[i] = ctx->shm_done_send[i] = MPI_REQUEST_NULL;
        for (size_t i = 0; i < nr; i++)
            ctx->shm_ready_send[i] = ctx->shm_done_recv[i] = MPI_REQUEST_NULL;
        int a = 0, b = 0;
        for (int q = 0; q < P; q++) {
            if (mine[q] > 0)
                ctx->shm_src_rank[a++] = q;
            if (theirs[q] > 0)
                ctx->shm_rd_rank[b++] = q;
        }
        /* Zero-byte messages; a static dummy so no rank passes NULL. */
        static char dummy;
        int err = MPI_SUCCESS;
        for (int i = 0; i < ctx->shm_n_src && err == MPI_SUCCESS; i++) {
            err = MPI_Recv_init(&dummy, 0, MPI_BYTE, ctx->shm_src_rank[i], TAG_READY,
                                ctx->shm_comm, &ctx->shm_ready_recv[i]);
            if (err == MPI_SUCCESS)
                err = MPI_Send_init(&dummy, 0, MPI_BYTE, ctx->shm_src_rank[i], TAG_DONE,
                                    ctx->shm_comm, &ctx->shm_done_send[i]);
        }
        for (int i = 0; i < ctx->shm_n_rd && err == MPI_SUCCESS; i++) {
            err = MPI_Send_init(&dummy, 0, MPI_BYTE, ctx->shm_rd_rank[i], TAG_READY,
                                ctx->shm_comm, &ctx->shm_ready_send[i]);
            if (err == MPI_SUCCESS)
                err = MPI_Recv_init(&dummy, 0, MPI_BYTE, ctx->shm_rd_rank[i], TAG_DONE,
                                    ctx->shm_comm, &ctx->shm_done_recv[i]);
        }
        if (err != MPI_SUCCESS)
            st = tf_mpi_fail(err, "MPI_Send_init/MPI_Recv_init");
    }
    free(mine);
    free(theirs);
    free(sent);
    return st;
}

/* Segments grouped by owner, in the order of shm_src_rank (a counting
 * sort, stable: within an owner the plan's order), so that the single-
 * thread path copies an owner's rows and releases it as soon as its READY
 * is in; then parts of about equal bytes for the collective group. */
static int shm_group(tf_spmm_ctx *ctx, const int *seg_rank)
{
    const int64_t m = ctx->n_shm_seg;
    const int ns = ctx->shm_n_src;
    int *idx_of = malloc((size_t)ctx->h->nranks * sizeof *idx_of);
    const char **src = malloc(((size_t)m + 1) * sizeof *src);
    int64_t *dst = malloc(((size_t)m + 1) * sizeof *dst);
    int64_t *bytes = malloc(((size_t)m + 1) * sizeof *bytes);
    int64_t *at = calloc((size_t)ns + 1, sizeof *at);
    ctx->shm_seg_first = calloc((size_t)ns + 1, sizeof *ctx->shm_seg_first);
    if (!idx_of || !src || !dst || !bytes || !at || !ctx->shm_seg_first) {
        free(idx_of);
        free(src);
        free(dst);
        free(bytes);
        free(at);
        return tf_fail(TF_ERR_NOMEM, "rank %d: out of memory", ctx->h->rank);
    }
    for (int i = 0; i < ns; i++)
        idx_of[ctx->shm_src_rank[i]] = i;
    for (int64_t x = 0; x < m; x++)
        ctx->shm_seg_first[idx_of[seg_rank[x]] + 1]++;
    for (int i = 0; i < ns; i++) {
        ctx->shm_seg_first[i + 1] += ctx->shm_seg_first[i];
        at[i] = ctx->shm_seg_first[i];
    }
    int64_t total = 0;
    for (int64_t x = 0; x < m; x++) {
        int64_t y = at[idx_of[seg_rank[x]]]++;
        src[y] = ctx->shm_src[x];
        dst[y] = ctx->shm_dst[x];
        bytes[y] = ctx->shm_bytes[x];
        total += bytes[y];
    }
    free(ctx->shm_src);
    free(ctx->shm_dst);
    free(ctx->shm_bytes);
    ctx->shm_src = src;
    ctx->shm_dst = dst;
    ctx->shm_bytes = bytes;
    free(idx_of);
    free(at);
    /* Parts of about equal bytes, whole segments each. */
    const int parts = ctx->n_coll_threads;
    int64_t s = 0, acc = 0;
    ctx->shm_split[0] = 0;
    for (int p = 1; p < parts; p++) {
        double goal = (double)total * p / parts;
        while (s < m && (double)acc < goal)
            acc += ctx->shm_bytes[s++];
        ctx->shm_split[p] = s;
    }
    ctx->shm_split[parts] = m;
    return TF_OK;
}

int tf_coll_shm_setup(tf_spmm_ctx *ctx)
{
    tf_handle *h = ctx->h;
    ctx->coll_shm = 1;
    int *seg_rank = NULL;
    int st = shm_describe(ctx, &seg_rank);
    st = tf_agree(h->comm, st);
    if (st) {
        free(seg_rank);
        return st;
    }
    int err = MPI_Comm_dup(h->comm, &ctx->shm_comm);
    if (err != MPI_SUCCESS) {
        ctx->shm_comm = MPI_COMM_NULL;
        st = tf_mpi_fail(err, "MPI_Comm_dup");
    }
    st = tf_agree(h->comm, st);
    if (st == TF_OK)
        st = shm_peers(ctx);
    if (st == TF_OK)
        st = shm_group(ctx, seg_rank);
    free(seg_rank);
    return tf_agree(h->comm, st);
}

int tf_coll_shm_enter(tf_spmm_ctx *ctx)
{
    int err = MPI_SUCCESS;
    if (ctx->shm_n_rd > 0) {
        err = MPI_Startall(ctx->shm_n_rd, ctx->shm_done_recv);
        MPI_Win_sync(ctx->win); /* my B is written: visible before READY */
        if (err == MPI_SUCCESS)
            err = MPI_Startall(ctx->shm_n_rd, ctx->shm_ready_send);
    }
    if (err == MPI_SUCCESS && ctx->shm_n_src > 0)
        err = MPI_Startall(ctx->shm_n_src, ctx->shm_ready_recv);
    ctx->shm_left = ctx->shm_n_src;
    return err == MPI_SUCCESS ? TF_OK : tf_mpi_fail(err, "MPI_Startall (READY)");
}

/* Segments [s0, s1) with `threads` threads. */
static void copy_segments(tf_spmm_ctx *ctx, int64_t s0, int64_t s1, int threads)
{
    char *to = ctx->coll_buf;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads) if (threads > 1 && s1 - s0 > 16)
    for (int64_t s = s0; s < s1; s++)
        memcpy(to + ctx->shm_dst[s], ctx->shm_src[s], (size_t)ctx->shm_bytes[s]);
}

int tf_coll_shm_poll(tf_spmm_ctx *ctx, int block, int threads)
{
    if (ctx->shm_left == 0)
        return TF_OK;
    int outc = 0;
    int err = block ? MPI_Waitsome(ctx->shm_n_src, ctx->shm_ready_recv, &outc, ctx->shm_done_idx,
                                   MPI_STATUSES_IGNORE)
                    : MPI_Testsome(ctx->shm_n_src, ctx->shm_ready_recv, &outc, ctx->shm_done_idx,
                                   MPI_STATUSES_IGNORE);
    if (err != MPI_SUCCESS)
        return tf_mpi_fail(err, block ? "MPI_Waitsome (READY)" : "MPI_Testsome (READY)");
    if (outc == MPI_UNDEFINED || outc == 0)
        return TF_OK;
    MPI_Win_sync(ctx->win); /* their READY is in: read their B as written */
    for (int x = 0; x < outc; x++) {
        int i = ctx->shm_done_idx[x];
        copy_segments(ctx, ctx->shm_seg_first[i], ctx->shm_seg_first[i + 1], threads);
    }
    MPI_Win_sync(ctx->win); /* my loads of their B are done before DONE */
    for (int x = 0; x < outc && err == MPI_SUCCESS; x++)
        err = MPI_Start(&ctx->shm_done_send[ctx->shm_done_idx[x]]);
    ctx->shm_left -= outc;
    return err == MPI_SUCCESS ? TF_OK : tf_mpi_fail(err, "MPI_Start (DONE)");
}

int tf_coll_shm_wait(tf_spmm_ctx *ctx)
{
    if (ctx->shm_n_src == 0)
        return TF_OK;
    int err = MPI_Waitall(ctx->shm_n_src, ctx->shm_ready_recv, MPI_STATUSES_IGNORE);
    return err == MPI_SUCCESS ? TF_OK : tf_mpi_fail(err, "MPI_Waitall (READY)");
}

void tf_coll_shm_copy(tf_spmm_ctx *ctx, int part, int parts)
{
    if (parts > 1)
        copy_segments(ctx, ctx->shm_split[part], ctx->shm_split[part + 1], 1);
    else
        copy_segments(ctx, 0, ctx->n_shm_seg, 1);
}

void tf_coll_shm_arrived(tf_spmm_ctx *ctx) { MPI_Win_sync(ctx->win); }

int tf_coll_shm_copied(tf_spmm_ctx *ctx)
{
    if (ctx->shm_n_src == 0)
        return TF_OK;
    MPI_Win_sync(ctx->win); /* my loads of their B are done before DONE */
    int err = MPI_Startall(ctx->shm_n_src, ctx->shm_done_send);
    return err == MPI_SUCCESS ? TF_OK : tf_mpi_fail(err, "MPI_Startall (DONE)");
}

int tf_coll_shm_leave(tf_spmm_ctx *ctx)
{
    int err = MPI_SUCCESS;
    if (ctx->shm_n_rd > 0) {
        err = MPI_Waitall(ctx->shm_n_rd, ctx->shm_done_recv, MPI_STATUSES_IGNORE);
        if (err == MPI_SUCCESS)
            err = MPI_Waitall(ctx->shm_n_rd, ctx->shm_ready_send, MPI_STATUSES_IGNORE);
    }
    if (err == MPI_SUCCESS && ctx->shm_n_src > 0)
        err = MPI_Waitall(ctx->shm_n_src, ctx->shm_done_send, MPI_STATUSES_IGNORE);
    MPI_Win_sync(ctx->win);
    return err == MPI_SUCCESS ? TF_OK : tf_mpi_fail(err, "MPI_Waitall (DONE)");
}
