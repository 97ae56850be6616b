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
 * is a barrier between two MPI_Win_sync calls):
 *  - a reader reads an owner's B only after the owner wrote it: the owner
 *    enters the SpMM after its caller's stores to B, calls MPI_Win_sync (a
 *    memory barrier over the window: its stores are visible before what
 *    follows) and posts the entry barrier; the reader copies only once that
 *    barrier completed - so every owner has posted it - and after its own
 *    MPI_Win_sync, so its loads are not satisfied from before.
 *  - an owner overwrites B only after every reader is done: a reader
 *    finishes its copies (all threads that copy synchronise with the one
 *    that posts), calls MPI_Win_sync and posts the exit barrier; the owner
 *    returns from the SpMM - after which its caller may write B - only once
 *    the exit barrier completed, which needs every reader's post.
 * The barriers live on a communicator of their own, so that no other
 * collective of the caller or of the executor can be matched with them.
 * The window is locked (MPI_Win_lock_all) for its lifetime, since
 * MPI_Win_sync needs a passive-target epoch.
 *
 * Not with bf16 (the window then holds only the rounded rows the exchange
 * sends zero-copy or fetchers read, tf_export.c): bf16 keeps the exchange.
 * Not in the SMPI build (TF_COLL_SHM_UNAVAILABLE): a simulated cluster has
 * one rank per host. */
#include "tf_exec.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

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

void tf_coll_shm_free(tf_spmm_ctx *ctx)
{
    if (ctx->shm_comm != MPI_COMM_NULL)
        MPI_Comm_free(&ctx->shm_comm);
    free(ctx->shm_src);
    free(ctx->shm_dst);
    free(ctx->shm_bytes);
    free(ctx->shm_split);
    ctx->shm_src = NULL;
    ctx->shm_dst = ctx->shm_bytes = ctx->shm_split = NULL;
    ctx->n_shm_seg = 0;
    ctx->coll_shm = 0;
}

/* Segments: stripes merged while both the source rows and the buffer rows
 * continue where the previous stripe ended; each checked against the
 * owner's window size, so that a plan inconsistent with its peers fails
 * here instead of reading outside their memory. */
static int shm_describe(tf_spmm_ctx *ctx)
{
    const tf_handle *h = ctx->h;
    const tf_rank_plan *rp = h->rp;
    const int64_t rowbytes = (int64_t)ctx->k * (int64_t)ctx->es;
    size_t n = (size_t)rp->n_recv + 1;
    ctx->shm_src = malloc(n * sizeof *ctx->shm_src);
    ctx->shm_dst = malloc(n * sizeof *ctx->shm_dst);
    ctx->shm_bytes = malloc(n * sizeof *ctx->shm_bytes);
    ctx->shm_split = malloc(((size_t)ctx->n_coll_threads + 1) * sizeof *ctx->shm_split);
    if (!ctx->shm_src || !ctx->shm_dst || !ctx->shm_bytes || !ctx->shm_split)
        return tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate the %lld-stripe copy schedule",
                       h->rank, (long long)rp->n_recv);
    int64_t m = 0, total = 0;
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
        if (m > 0 && ctx->shm_src[m - 1] + ctx->shm_bytes[m - 1] == from &&
            ctx->shm_dst[m - 1] + ctx->shm_bytes[m - 1] == to) {
            ctx->shm_bytes[m - 1] += bytes;
        } else {
            ctx->shm_src[m] = from;
            ctx->shm_dst[m] = to;
            ctx->shm_bytes[m] = bytes;
            m++;
        }
        total += bytes;
    }
    ctx->n_shm_seg = m;
    ctx->coll_msgs = 0;
    for (int64_t r = 0; r < rp->n_recv; r++)
        if (r == 0 || rp->recv_src[r] != rp->recv_src[r - 1])
            ctx->coll_msgs++;
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
    int st = shm_describe(ctx);
    if (st == TF_OK) {
        int err = MPI_Comm_dup(h->comm, &ctx->shm_comm);
        if (err != MPI_SUCCESS) {
            ctx->shm_comm = MPI_COMM_NULL;
            st = tf_mpi_fail(err, "MPI_Comm_dup");
        }
    }
    return tf_agree(h->comm, st);
}

int tf_coll_shm_enter(tf_spmm_ctx *ctx, MPI_Request *req)
{
    MPI_Win_sync(ctx->win);
    int err = MPI_Ibarrier(ctx->shm_comm, req);
    return err == MPI_SUCCESS ? TF_OK : tf_mpi_fail(err, "MPI_Ibarrier (entry)");
}

void tf_coll_shm_copy(tf_spmm_ctx *ctx, int part, int parts)
{
    int64_t s0 = 0, s1 = ctx->n_shm_seg;
    if (parts > 1) {
        s0 = ctx->shm_split[part];
        s1 = ctx->shm_split[part + 1];
    }
    char *to = ctx->coll_buf;
    for (int64_t s = s0; s < s1; s++)
        memcpy(to + ctx->shm_dst[s], ctx->shm_src[s], (size_t)ctx->shm_bytes[s]);
}

void tf_coll_shm_arrived(tf_spmm_ctx *ctx) { MPI_Win_sync(ctx->win); }

void tf_coll_shm_copy_all(tf_spmm_ctx *ctx, int threads)
{
    if (threads <= 1 || threads != ctx->n_coll_threads || ctx->n_shm_seg < 2) {
        tf_coll_shm_copy(ctx, 0, 1);
        return;
    }
#pragma omp parallel num_threads(threads)
    {
        int nth = omp_get_num_threads();
        int tid = omp_get_thread_num();
        if (nth == threads)
            tf_coll_shm_copy(ctx, tid, threads);
        else if (tid == 0)
            tf_coll_shm_copy(ctx, 0, 1);
    }
}

int tf_coll_shm_copied(tf_spmm_ctx *ctx)
{
    MPI_Win_sync(ctx->win);
    int err = MPI_Ibarrier(ctx->shm_comm, &ctx->shm_exit);
    return err == MPI_SUCCESS ? TF_OK : tf_mpi_fail(err, "MPI_Ibarrier (exit)");
}

int tf_coll_shm_leave(tf_spmm_ctx *ctx)
{
    int err = MPI_Wait(&ctx->shm_exit, MPI_STATUS_IGNORE);
    MPI_Win_sync(ctx->win);
    return err == MPI_SUCCESS ? TF_OK : tf_mpi_fail(err, "MPI_Wait (exit barrier)");
}
