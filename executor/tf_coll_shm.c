/* The collective half on one node: receivers read their peers' B rows
 * straight from shared memory (docs/executor.md, "The collective on one
 * node").
 *
 * When every rank of the communicator is on this node, float32 B lives in
 * an MPI_Win_allocate_shared window (the window itself; with bf16 a second
 * one, bwin, beside the export window fetchers read), and
 * MPI_Win_shared_query gives each rank the address of every owner's rows.
 * The plan's receive schedule says where each stripe goes: collective-
 * buffer rows [recv_off[r], recv_off[r] + recv_rows[r]) are owner
 * recv_src[r]'s B rows [recv_first[r], ...) - the very rows the exchange
 * would deliver there, whole stripes or needed-row runs alike - so the
 * receiver copies them itself: one copy, no pack, no message. With bf16 the
 * copy rounds (tf_bf16_pack, the owner's own rounding in the exchange):
 * round to nearest even is a function of the value, so coll_buf ends up
 * byte for byte as the exchange leaves it in either precision, and the
 * owner rounds nothing for the collective.
 *
 * Synchronisation, with no message: each rank has two counters in a small
 * shared window (tf_shm_flags), `entered` and `done`, and each context
 * counts its SpMMs (epoch, the same on every rank: SpMMs are collective).
 * What readers read is the owner's float32 B in both precisions, which
 * only the caller writes, between SpMMs (the bf16 export the owner writes
 * during the SpMM is the fetchers', under READY/DONE, tf_fetch.c):
 *  - a reader reads an owner's B only after the owner wrote it: the owner
 *    enters the SpMM after its caller's stores to B, calls MPI_Win_sync on
 *    B's window and stores entered = epoch with release order; the reader
 *    copies from an owner only once its acquire load of that owner's
 *    entered gives epoch (then MPI_Win_sync), so its loads happen after
 *    the owner's stores.
 *  - an owner overwrites B only after every reader is done: a reader, after
 *    its copies from an owner (all threads that copy synchronise with the
 *    one that publishes), adds 1 to that owner's done with release order;
 *    the owner returns from the SpMM - after which its caller may write B -
 *    only once its acquire load of done gives epoch x its readers, so every
 *    reader's loads happened before.
 * An owner cannot enter SpMM epoch + 1 before every reader finished epoch,
 * so entered >= epoch means this SpMM's B. Lock-free C11 atomics are
 * address-free, so they order accesses between processes mapping the same
 * memory; the MPI_Win_sync calls are the MPI-3 unified model's documented
 * pattern (sync, synchronisation, sync) on top, and need the passive-target
 * epoch the window holds for its lifetime (MPI_Win_lock_all).
 *
 * Why flags and not messages: two MPI_Ibarrier (entry, exit) complete only
 * after log2(P) rounds in which every rank calls into MPI, and a rank in
 * its local part does so only between chunks, so the rank with the most
 * local work held every other rank at the exit barrier (cnr-2000, P = 4,
 * K = 128: the collective's wait grew from 2 to 12 ms, max over ranks).
 * Pairwise zero-byte messages (the fetch half's READY/DONE) fixed that, but
 * every test between local chunks is an MPI call, which under
 * mpi_yield_when_idle gives the core away when nothing progressed: on 4
 * ranks over 2 cores the tests alone cost 1.5-5 ms per SpMM, against a
 * copy of 0.1-0.6 ms (cnr-2000, K = 32 and 128, under a 1-minute load of
 * about 4.4, so roughly). Loading a flag is free.
 *
 * Not in the SMPI build (TF_COLL_SHM_UNAVAILABLE): a simulated cluster has
 * one rank per host. */
#include "tf_bf16.h"
#include "tf_exec.h"
#include "tf_kernels.h"
#include "tf_node.h"

#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tf_coll_shm_mode(MPI_Comm comm, int *mode)
{
    /* Indexed by the TF_SHM_ values. */
    static const char *const name[5] = {"off", "copy", "direct", "trial", "auto"};
    const char *s = getenv("TWOFACE_COLL_SHM");
    int st = TF_OK;
    *mode = TF_SHM_AUTO;
    if (s && *s) {
        *mode = -1;
        for (int m = 0; m < 5; m++)
            if (strcmp(s, name[m]) == 0)
                *mode = m;
        if (*mode < 0) {
            *mode = TF_SHM_AUTO;
            st = tf_fail(TF_ERR_ARG, "TWOFACE_COLL_SHM=%s: expected auto, direct, trial, copy or off", s);
        }
    }
    st = tf_agree(comm, st);
    if (st)
        return st;
    /* Ranks that disagree would meet in different allocations and hang. */
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    return tf_agree_same(comm, tf_agree_mix(0, (uint64_t)*mode), TF_ERR_ARG,
                         "TWOFACE_COLL_SHM differs between ranks (%s on rank %d)", name[*mode],
                         rank);
}

/* Window creation with the communicator's errors returned instead of
 * passed to its handler, which by default aborts the job: a one-sided
 * component may refuse a window (Open MPI's osc pt2pt under
 * MPI_THREAD_MULTIPLE or without shared windows, osc rdma on one rank), and
 * the caller either falls back or reports it in one line. */
static MPI_Errhandler errors_return(MPI_Comm comm)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    if (MPI_Comm_get_errhandler(comm, &eh) != MPI_SUCCESS)
        eh = MPI_ERRHANDLER_NULL;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    return eh;
}

static void errors_restore(MPI_Comm comm, MPI_Errhandler eh)
{
    if (eh != MPI_ERRHANDLER_NULL) {
        MPI_Comm_set_errhandler(comm, eh);
        MPI_Errhandler_free(&eh);
    }
}

/* The message of a window the one-sided component refused: what failed,
 * and what the user can change. */
static int window_fail(int err, const char *what)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(err, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof s, "error %d", err);
    return tf_fail(TF_ERR_MPI,
                   "%s failed: %s; the MPI one-sided component cannot create this window%s", what,
                   s,
                   provided == MPI_THREAD_MULTIPLE
                       ? " under MPI_THREAD_MULTIPLE (Open MPI's osc pt2pt refuses it: run one "
                         "OpenMP thread per rank or choose another OMPI_MCA_osc)"
                       : " (with Open MPI, choose another OMPI_MCA_osc)");
}

#ifndef TF_COLL_SHM_UNAVAILABLE
/* A shared window of `bytes` (displacement unit `disp`) on every rank, or
 * on none: 1 when every rank has one, else 0. */
static int alloc_shared(tf_handle *h, MPI_Aint bytes, int disp, int contig, void *base,
                        MPI_Win *win)
{
    /* Contiguous (MPI's default): rank q's part begins where rank q - 1's
     * ends, so every B row has one address in the node's B, which the
     * in-place path needs (tf_node_direct.c). Otherwise each rank's part
     * on pages of its own: the owner first-touches all of it. */
    MPI_Info info = MPI_INFO_NULL;
    if (!contig && MPI_Info_create(&info) == MPI_SUCCESS)
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
    /* A one-sided component without shared windows (Open MPI's osc pt2pt,
     * chosen to emulate a network on one node) fails the call: the
     * exchange is the fallback, so the error must come back here. */
    MPI_Errhandler eh = errors_return(h->comm);
    int err = MPI_Win_allocate_shared(bytes, disp, info, h->comm, base, win);
    errors_restore(h->comm, eh);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    int ok = err == MPI_SUCCESS, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, h->comm);
    if (all_ok)
        return 1;
    /* Freeing is collective over the ranks that hold the window, which
     * the ranks without it cannot join: a partial window is left to
     * MPI_Finalize. Open MPI creates it on all ranks or on none. */
    *win = MPI_WIN_NULL;
    return 0;
}
#endif

/* Rows on cache lines (docs/executor.md, "Rows on cache lines"). MPI
 * gives a window's memory at its own offset (Open MPI's components: 8
 * bytes past a line), so rows of a whole number of lines would each
 * straddle one more line than they fill, and every vector load of them two.
 * Where a row is whole lines each rank's part gets one row of slack and
 * its rows begin at the first line boundary in it: one row, not 64 bytes,
 * so that in the contiguous layout rank q's row 0 stays a whole number of
 * rows from rank 0's (tf_node_direct.c). */
static MPI_Aint slack_bytes(MPI_Aint rowbytes) { return rowbytes % 64 == 0 ? rowbytes : 0; }

/* Every rank's pad (bytes from its base to its row 0) into *pads, and this
 * rank's *base moved to its row 0. Collective; agrees. */
static int window_pads(tf_handle *h, void **base, MPI_Aint rowbytes, size_t es, MPI_Aint **pads)
{
    uintptr_t at = (uintptr_t)*base;
    MPI_Aint pad = slack_bytes(rowbytes) > 0 && at % es == 0 ? (MPI_Aint)((64 - at % 64) % 64) : 0;
    *pads = malloc((size_t)h->nranks * sizeof **pads);
    int st = tf_agree(h->comm, *pads ? TF_OK : tf_fail(TF_ERR_NOMEM, "rank %d: out of memory",
                                                        h->rank));
    if (st != TF_OK)
        return st;
    int err = MPI_Allgather(&pad, 1, MPI_AINT, *pads, 1, MPI_AINT, h->comm);
    st = tf_agree(h->comm, err == MPI_SUCCESS ? TF_OK : tf_mpi_fail(err, "MPI_Allgather"));
    if (st == TF_OK)
        *base = (char *)*base + pad;
    return st;
}

int tf_coll_shm_window(tf_spmm_ctx *ctx, int want, int contig)
{
    tf_handle *h = ctx->h;
    const int64_t rows = h->rp->nbrows;
    const MPI_Aint xbytes = (MPI_Aint)ctx->k * (MPI_Aint)ctx->es;
    int err, st = TF_OK;
    ctx->win_shared = 0;
    ctx->bwin = MPI_WIN_NULL;
    ctx->row_slack = 0;
#ifndef TF_COLL_SHM_UNAVAILABLE
    const MPI_Aint fbytes = (MPI_Aint)ctx->k * (MPI_Aint)sizeof(float);
    /* want is the same on every rank (an agreed TWOFACE_COLL_SHM). */
    int shared = tf_node_single(h->comm, h->node_ranks) && want;
    const MPI_Aint fsize = (MPI_Aint)rows * fbytes + slack_bytes(fbytes);
    if (shared && !ctx->bf16) {
        if (alloc_shared(h, fsize, (int)sizeof(float), contig, &ctx->xb, &ctx->win)) {
            ctx->win_shared = 1;
            ctx->row_slack = slack_bytes(fbytes) > 0;
            st = window_pads(h, &ctx->xb, fbytes, sizeof(float), &ctx->win_pad);
            ctx->b = ctx->xb;
            return st;
        }
        ctx->xb = NULL;
    } else if (shared) {
        /* bf16: fetchers still read the export with MPI_Rget from win;
         * readers of the collective round from float32 B in bwin. */
        void *fb = NULL;
        if (alloc_shared(h, fsize, (int)sizeof(float), contig, &fb, &ctx->bwin)) {
            err = MPI_Win_lock_all(MPI_MODE_NOCHECK, ctx->bwin); /* for MPI_Win_sync */
            if (err != MPI_SUCCESS)
                st = tf_mpi_fail(err, "MPI_Win_lock_all (B)");
            /* Freeing is collective: every rank frees when any failed. */
            if ((st = tf_agree(h->comm, st))) {
                if (err == MPI_SUCCESS)
                    MPI_Win_unlock_all(ctx->bwin);
                MPI_Win_free(&ctx->bwin);
                return st;
            }
            ctx->win_shared = 1;
            ctx->row_slack = slack_bytes(fbytes) > 0;
            if ((st = window_pads(h, &fb, fbytes, sizeof(float), &ctx->bwin_pad)))
                return st; /* the owner's destroy frees bwin */
            ctx->b = fb;
        }
    }
#else
    (void)want;
    (void)contig;
#endif
    if (ctx->bf16 && !ctx->win_shared) {
        ctx->b_own = tf_kern_alloc_rows(rows, ctx->k, sizeof(float));
        ctx->b = ctx->b_own;
        if (!ctx->b_own)
            st = tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate B (%lld x %d elements)", h->rank,
                         (long long)rows, ctx->k);
    }
    st = tf_agree(h->comm, st);
    if (st)
        return st;
    MPI_Errhandler eh = errors_return(h->comm);
    err = MPI_Win_allocate((MPI_Aint)rows * xbytes + slack_bytes(xbytes), (int)ctx->es,
                           MPI_INFO_NULL, h->comm, &ctx->xb, &ctx->win);
    errors_restore(h->comm, eh);
    if (err != MPI_SUCCESS) {
        ctx->win = MPI_WIN_NULL;
        ctx->xb = NULL;
        st = window_fail(err, "MPI_Win_allocate (B)");
    }
    st = tf_agree(h->comm, st);
    if (st == TF_OK)
        st = window_pads(h, &ctx->xb, xbytes, ctx->es, &ctx->win_pad);
    if (st == TF_OK && !ctx->bf16)
        ctx->b = ctx->xb;
    return st;
}

MPI_Aint tf_coll_shm_b_pad(const tf_spmm_ctx *ctx, int q)
{
    const MPI_Aint *p = ctx->bf16 ? ctx->bwin_pad : ctx->win_pad;
    return p ? p[q] : 0;
}

void tf_coll_shm_free(tf_spmm_ctx *ctx)
{
    if (ctx->shm_flag_win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(ctx->shm_flag_win);
        MPI_Win_free(&ctx->shm_flag_win);
    }
    free(ctx->shm_flag);
    free(ctx->shm_copied);
    free(ctx->shm_src_rank);
    free(ctx->shm_src);
    free(ctx->shm_dst);
    free(ctx->shm_len);
    free(ctx->shm_split);
    free(ctx->shm_seg_first);
    ctx->shm_flag = NULL;
    ctx->shm_my_flag = NULL;
    ctx->shm_copied = NULL;
    ctx->shm_src_rank = NULL;
    ctx->shm_src = NULL;
    ctx->shm_dst = ctx->shm_len = ctx->shm_split = ctx->shm_seg_first = NULL;
    ctx->n_shm_seg = 0;
    ctx->shm_n_src = ctx->shm_n_rd = 0;
    ctx->coll_shm = 0;
}

MPI_Win tf_coll_shm_b_window(const tf_spmm_ctx *ctx) { return ctx->bf16 ? ctx->bwin : ctx->win; }

/* Segments: stripes merged while both the source rows and the buffer rows
 * continue where the previous stripe ended; each checked against the
 * owner's window size, so that a plan inconsistent with its peers fails
 * here instead of reading outside their memory. */
static int shm_describe(tf_spmm_ctx *ctx, int **seg_rank_out)
{
    const tf_handle *h = ctx->h;
    const tf_rank_plan *rp = h->rp;
    const int64_t k = ctx->k, rowbytes = k * (int64_t)sizeof(float);
    size_t n = (size_t)rp->n_recv + 1;
    ctx->shm_src = malloc(n * sizeof *ctx->shm_src);
    ctx->shm_dst = malloc(n * sizeof *ctx->shm_dst);
    ctx->shm_len = malloc(n * sizeof *ctx->shm_len);
    ctx->shm_split = malloc(((size_t)ctx->n_coll_threads + 1) * sizeof *ctx->shm_split);
    int *seg_rank = *seg_rank_out = malloc(n * sizeof *seg_rank);
    if (!ctx->shm_src || !ctx->shm_dst || !ctx->shm_len || !ctx->shm_split || !seg_rank)
        return tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate the %lld-stripe copy schedule",
                       h->rank, (long long)rp->n_recv);
    int64_t m = 0;
    int src = -1;
    const float *base = NULL;
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
            int err = MPI_Win_shared_query(tf_coll_shm_b_window(ctx), src, &size, &disp, &ptr);
            if (err != MPI_SUCCESS)
                return tf_mpi_fail(err, "MPI_Win_shared_query");
            MPI_Aint pad = tf_coll_shm_b_pad(ctx, src);
            base = (const float *)((const char *)ptr + pad);
            /* Its band, as far as its part holds it (not the slack). */
            owner_rows = size > pad ? (int64_t)(size - pad) / rowbytes : 0;
            int64_t band = h->plan.brow_off[src + 1] - h->plan.brow_off[src];
            if (owner_rows > band)
                owner_rows = band;
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
        const float *from = base + first * k;
        int64_t to = rp->recv_off[r] * k, len = rows * k;
        if (m > 0 && seg_rank[m - 1] == src && ctx->shm_src[m - 1] + ctx->shm_len[m - 1] == from &&
            ctx->shm_dst[m - 1] + ctx->shm_len[m - 1] == to) {
            ctx->shm_len[m - 1] += len;
        } else {
            ctx->shm_src[m] = from;
            ctx->shm_dst[m] = to;
            ctx->shm_len[m] = len;
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

int tf_coll_shm_peers_set(tf_spmm_ctx *ctx, const int64_t *reads, const int64_t *read_by)
{
    const int P = ctx->h->nranks;
    ctx->shm_n_src = ctx->shm_n_rd = 0;
    for (int q = 0; q < P; q++) {
        ctx->shm_n_src += reads[q] > 0;
        ctx->shm_n_rd += read_by[q] > 0;
    }
    size_t ns = (size_t)ctx->shm_n_src + 1;
    ctx->shm_src_rank = malloc(ns * sizeof(int));
    ctx->shm_flag = malloc(ns * sizeof *ctx->shm_flag);
    ctx->shm_copied = calloc(ns, 1);
    if (!ctx->shm_src_rank || !ctx->shm_flag || !ctx->shm_copied)
        return tf_fail(TF_ERR_NOMEM, "rank %d: out of memory", ctx->h->rank);
    for (int q = 0, a = 0; q < P; q++)
        if (reads[q] > 0)
            ctx->shm_src_rank[a++] = q;
    return TF_OK;
}

int tf_coll_shm_entered(const tf_spmm_ctx *ctx, int i)
{
    return atomic_load_explicit(&ctx->shm_flag[i]->entered, memory_order_acquire) >=
           ctx->shm_epoch;
}

/* Who reads from whom, from the rows each rank reads of each peer (one
 * MPI_Alltoall), checked against this rank's send schedule as the exchange
 * checks it. */
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
    for (int q = 0; all_ok && st == TF_OK && q < P; q++)
        if (theirs[q] != sent[q])
            st = tf_fail(TF_ERR_FORMAT,
                         "plan schedules disagree: rank %d expects %lld B rows from rank %d, "
                         "which sends %lld",
                         q, (long long)theirs[q], h->rank, (long long)sent[q]);
    if (all_ok && st == TF_OK)
        st = tf_coll_shm_peers_set(ctx, mine, theirs);
    free(mine);
    free(theirs);
    free(sent);
    return st;
}

/* Segments grouped by owner, in the order of shm_src_rank (a counting
 * sort, stable: within an owner the plan's order), so that the single-
 * thread path copies an owner's rows and releases it as soon as that
 * owner has entered; then parts of about equal bytes for the collective group. */
static int shm_group(tf_spmm_ctx *ctx, const int *seg_rank)
{
    const int64_t m = ctx->n_shm_seg;
    const int ns = ctx->shm_n_src;
    int *idx_of = malloc((size_t)ctx->h->nranks * sizeof *idx_of);
    const float **src = malloc(((size_t)m + 1) * sizeof *src);
    int64_t *dst = malloc(((size_t)m + 1) * sizeof *dst);
    int64_t *len = malloc(((size_t)m + 1) * sizeof *len);
    int64_t *at = calloc((size_t)ns + 1, sizeof *at);
    ctx->shm_seg_first = calloc((size_t)ns + 1, sizeof *ctx->shm_seg_first);
    if (!idx_of || !src || !dst || !len || !at || !ctx->shm_seg_first) {
        free(idx_of);
        free(src);
        free(dst);
        free(len);
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
        len[y] = ctx->shm_len[x];
        total += len[y];
    }
    free(ctx->shm_src);
    free(ctx->shm_dst);
    free(ctx->shm_len);
    ctx->shm_src = src;
    ctx->shm_dst = dst;
    ctx->shm_len = len;
    free(idx_of);
    free(at);
    /* Parts of about equal size, whole segments each. */
    const int parts = ctx->n_coll_threads;
    int64_t s = 0, acc = 0;
    ctx->shm_split[0] = 0;
    for (int p = 1; p < parts; p++) {
        double goal = (double)total * p / parts;
        while (s < m && (double)acc < goal)
            acc += ctx->shm_len[s++];
        ctx->shm_split[p] = s;
    }
    ctx->shm_split[parts] = m;
    return TF_OK;
}

int tf_coll_shm_flags(tf_spmm_ctx *ctx)
{
    tf_handle *h = ctx->h;
    int st = TF_OK;
    /* The flags: zeroed by their owner, then a barrier before any use. */
    MPI_Info info = MPI_INFO_NULL;
    if (MPI_Info_create(&info) == MPI_SUCCESS)
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
    MPI_Errhandler eh = errors_return(h->comm);
    int err = MPI_Win_allocate_shared((MPI_Aint)sizeof(tf_shm_flags), 1, info, h->comm,
                                      &ctx->shm_my_flag, &ctx->shm_flag_win);
    errors_restore(h->comm, eh);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    if (err != MPI_SUCCESS) {
        ctx->shm_flag_win = MPI_WIN_NULL;
        ctx->shm_my_flag = NULL;
        st = window_fail(err, "MPI_Win_allocate_shared (flags)");
    } else {
        atomic_init(&ctx->shm_my_flag->entered, 0);
        tf_shm_counter_init(&ctx->shm_my_flag->done);
        err = MPI_Win_lock_all(MPI_MODE_NOCHECK, ctx->shm_flag_win);
        if (err == MPI_SUCCESS)
            MPI_Win_sync(ctx->shm_flag_win);
        else {
            MPI_Win_free(&ctx->shm_flag_win);
            st = tf_mpi_fail(err, "MPI_Win_lock_all (flags)");
        }
    }
    st = tf_agree(h->comm, st);
    for (int i = 0; st == TF_OK && i < ctx->shm_n_src; i++) {
        MPI_Aint size = 0;
        int disp = 0;
        void *ptr = NULL;
        err = MPI_Win_shared_query(ctx->shm_flag_win, ctx->shm_src_rank[i], &size, &disp, &ptr);
        if (err != MPI_SUCCESS)
            st = tf_mpi_fail(err, "MPI_Win_shared_query (flags)");
        ctx->shm_flag[i] = ptr;
    }
    st = tf_agree(h->comm, st);
    if (st == TF_OK) {
        MPI_Barrier(h->comm); /* every rank's flags are zero */
        MPI_Win_sync(ctx->shm_flag_win);
    }
    return st;
}

int tf_coll_shm_setup(tf_spmm_ctx *ctx)
{
    tf_handle *h = ctx->h;
    ctx->coll_shm = 1;
    int *seg_rank = NULL;
    int st = tf_agree(h->comm, shm_describe(ctx, &seg_rank));
    if (st == TF_OK) {
        st = shm_peers(ctx); /* collective on every rank, not agreed */
        if (st == TF_OK)
            st = shm_group(ctx, seg_rank);
        st = tf_agree(h->comm, st);
    }
    free(seg_rank);
    if (st == TF_OK)
        st = tf_coll_shm_flags(ctx); /* agrees */
    return st;
}

int tf_coll_shm_enter(tf_spmm_ctx *ctx)
{
    ctx->shm_epoch++;
    ctx->shm_left = ctx->shm_n_src;
    if (ctx->shm_n_src > 0)
        memset(ctx->shm_copied, 0, (size_t)ctx->shm_n_src);
    MPI_Win_sync(tf_coll_shm_b_window(ctx)); /* my B is written */
    atomic_store_explicit(&ctx->shm_my_flag->entered, ctx->shm_epoch, memory_order_release);
    return TF_OK;
}

/* Segments [s0, s1) with `threads` threads. With bf16 the rounding is the
 * owner's pack's (tf_bf16_pack), so the buffer holds the exchange's bits. */
static void copy_segments(tf_spmm_ctx *ctx, int64_t s0, int64_t s1, int threads)
{
    const int bf = ctx->bf16;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads) if (threads > 1 && s1 - s0 > 16)
    for (int64_t s = s0; s < s1; s++) {
        if (bf)
            tf_bf16_pack(ctx->shm_src[s], (uint16_t *)ctx->coll_buf + ctx->shm_dst[s],
                         ctx->shm_len[s]);
        else
            memcpy((float *)ctx->coll_buf + ctx->shm_dst[s], ctx->shm_src[s],
                   (size_t)ctx->shm_len[s] * sizeof(float));
    }
}

int tf_coll_shm_poll(tf_spmm_ctx *ctx, int block, int threads)
{
    while (ctx->shm_left > 0) {
        int any = 0;
        for (int i = 0; i < ctx->shm_n_src; i++) {
            if (ctx->shm_copied[i] || !tf_coll_shm_entered(ctx, i))
                continue;
            if (!any)
                MPI_Win_sync(tf_coll_shm_b_window(ctx)); /* read their B as written */
            any = 1;
            copy_segments(ctx, ctx->shm_seg_first[i], ctx->shm_seg_first[i + 1], threads);
            tf_shm_counter_add(&ctx->shm_flag[i]->done, 1);
            ctx->shm_copied[i] = 1;
            ctx->shm_left--;
        }
        if (!block)
            break;
        if (!any)
            sched_yield();
    }
    return TF_OK;
}

int tf_coll_shm_wait(tf_spmm_ctx *ctx)
{
    for (int i = 0; i < ctx->shm_n_src; i++)
        while (!tf_coll_shm_entered(ctx, i))
            sched_yield();
    return TF_OK;
}

void tf_coll_shm_arrived(tf_spmm_ctx *ctx) { MPI_Win_sync(tf_coll_shm_b_window(ctx)); }

void tf_coll_shm_copy(tf_spmm_ctx *ctx, int part, int parts)
{
    if (parts > 1)
        copy_segments(ctx, ctx->shm_split[part], ctx->shm_split[part + 1], 1);
    else
        copy_segments(ctx, 0, ctx->n_shm_seg, 1);
}

int tf_coll_shm_copied(tf_spmm_ctx *ctx)
{
    for (int i = 0; i < ctx->shm_n_src; i++)
        tf_shm_counter_add(&ctx->shm_flag[i]->done, 1);
    ctx->shm_left = 0;
    return TF_OK;
}

int tf_coll_shm_leave(tf_spmm_ctx *ctx)
{
    const int64_t goal = ctx->shm_epoch * ctx->shm_n_rd;
    tf_shm_counter_wait(&ctx->shm_my_flag->done, goal);
    MPI_Win_sync(tf_coll_shm_b_window(ctx));
    return TF_OK;
}
