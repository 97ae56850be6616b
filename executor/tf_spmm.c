/* One SpMM: C(my rows) = A(my rows) * B.
 *
 * Three parts of A feed C: the local part (my own B rows, CSR), the
 * collective part (rows sent by the neighbourhood exchange of
 * tf_collective.c into the collective buffer, CSR) and the fetch part (runs of rows read by MPI_Rget
 * into the fetch buffer, CSC). On one node the last two can instead be read
 * where they lie (spmm_direct below, tf_node_direct.c). Otherwise two ways
 * to run them (docs/executor.md):
 *
 *  - threaded (threads_fetch >= 1, MPI_THREAD_MULTIPLE): the collective group
 *    computes local + collective rows straight into C, each thread its own
 *    rows; the fetch group computes each run as it lands into per-thread
 *    compact accumulators indexed like fetch_rows; afterwards everyone adds
 *    the accumulators into C, parallel over rows. No atomics on C.
 *  - single-thread overlap (threads_fetch == 0): one thread posts everything,
 *    computes the local part (issuing and collecting fetches between
 *    chunks), then completes fetched runs and the collective in one
 *    MPI_Waitsome loop, computing each as it lands, straight into C. Once
 *    the collective has landed, the local chunks still to come compute
 *    their collective nonzeros in the same pass (tf_kern_csr2), so those
 *    rows of C are written once instead of twice.
 *
 * B safety, pairwise (tf_fetch.c): at entry an owner sends READY to the
 * ranks that fetch from it; a fetcher issues gets to an owner only after
 * that owner's READY; when its last get from an owner completes it sends
 * DONE; an owner returns only after DONE from all its fetchers. The
 * collective through MPI needs nothing: its sends are posted after entry
 * and completed before returning. The collective through shared memory
 * (tf_coll_shm.c) replaces the exchange by counters in shared memory: an
 * owner publishes that it entered, a reader copies an owner's rows once it
 * has and publishes the copy, an owner returns once all its readers have
 * copied; the copy is the collective's transfer and is timed as
 * coll_wait. */
#include "tf_exec.h"
#include "tf_kernels.h"

#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#define ROW_BLOCK 64

/* Rows [r0, r1) of a CSR part; B is float32, or bf16 when bf. */
static void csr_any(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                    const float *val, const void *b, int bf, int64_t k, float *c, int add)
{
    if (bf)
        tf_kern_csr_bf16(r0, r1, ptr, idx, val, b, k, c, add);
    else
        tf_kern_csr(r0, r1, ptr, idx, val, b, k, c, add);
}

/* The same with `threads` threads. */
static void csr_rows(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                     const float *val, const void *b, int bf, int64_t k, float *c, int add,
                     int threads)
{
    if (threads <= 1 || r1 - r0 <= ROW_BLOCK) {
        csr_any(r0, r1, ptr, idx, val, b, bf, k, c, add);
        return;
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int64_t x = r0; x < r1; x += ROW_BLOCK)
        csr_any(x, x + ROW_BLOCK < r1 ? x + ROW_BLOCK : r1, ptr, idx, val, b, bf, k, c, add);
}

/* Rows [r0, r1) of the local and the collective part in one pass over C
 * (the collective buffer is complete): bitwise the two passes. Read in
 * place (tf_node_direct.c), the second part is every remote nonzero, read
 * from the owners' rows where they lie. */
static void fused_any(tf_spmm_ctx *ctx, int64_t r0, int64_t r1, float *c)
{
    const tf_rank_plan *rp = ctx->h->rp;
    if (ctx->direct)
        tf_kern_csr2(r0, r1, rp->loc_ptr, rp->loc_idx, rp->loc_val, ctx->b, ctx->dir_ptr,
                     ctx->dir_idx, ctx->dir_val, ctx->node_b, ctx->k, c, ctx->c_mode);
    else if (ctx->bf16)
        tf_kern_csr2_bf16(r0, r1, rp->loc_ptr, rp->loc_idx, rp->loc_val, ctx->b, rp->coll_ptr,
                          rp->coll_idx, rp->coll_val, ctx->coll_buf, ctx->k, c, ctx->c_mode);
    else
        tf_kern_csr2(r0, r1, rp->loc_ptr, rp->loc_idx, rp->loc_val, ctx->b, rp->coll_ptr,
                     rp->coll_idx, rp->coll_val, ctx->coll_buf, ctx->k, c, ctx->c_mode);
}

/* The same with `threads` threads, split as csr_rows splits. */
static void fused_rows(tf_spmm_ctx *ctx, int64_t r0, int64_t r1, float *c, int threads)
{
    if (threads <= 1 || r1 - r0 <= ROW_BLOCK) {
        fused_any(ctx, r0, r1, c);
        return;
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int64_t x = r0; x < r1; x += ROW_BLOCK)
        fused_any(ctx, x, x + ROW_BLOCK < r1 ? x + ROW_BLOCK : r1, c);
}

/* Local chunk ch. Once the second part is complete (the collective buffer
 * landed, or in place every owner entered): the chunk's local and second-
 * part nonzeros in one pass, its time shared between the local and the
 * remote compute buckets at the model's prices of the two parts
 * (tf_stats_fused_local_share), so the in-situ calibration still sees each
 * half's share; *fused_from becomes the chunk's first row if it
 * is the first such chunk. Before that: the local part alone. */
static void local_chunk(tf_spmm_ctx *ctx, int ch, int landed, int64_t *fused_from, float *c)
{
    const tf_rank_plan *rp = ctx->h->rp;
    const int64_t r0 = ctx->local_split[ch], r1 = ctx->local_split[ch + 1];
    double t = MPI_Wtime();
    if (!landed) {
        csr_rows(r0, r1, rp->loc_ptr, rp->loc_idx, rp->loc_val, ctx->b, 0, ctx->k, c,
                 ctx->c_mode, ctx->threads);
        ctx->timing.local_comp += MPI_Wtime() - t;
        return;
    }
    if (*fused_from == rp->nrows)
        *fused_from = r0;
    fused_rows(ctx, r0, r1, c, ctx->threads);
    double dt = MPI_Wtime() - t;
    const int64_t *ptr2 = ctx->direct ? ctx->dir_ptr : rp->coll_ptr;
    double nl = (double)(rp->loc_ptr[r1] - rp->loc_ptr[r0]);
    double n2 = (double)(ptr2[r1] - ptr2[r0]);
    /* In place the second part is every remote nonzero, which the plan's
     * stats do not price as one part: by nonzeros there. */
    double fl = tf_stats_fused_local_share(ctx->direct ? NULL : &rp->stats, nl, n2);
    ctx->timing.local_comp += dt * fl;
    ctx->timing.coll_comp += dt * (1.0 - fl);
}

/* Rows [r0, r1) of the collective part, added into C. */
static void coll_rows(tf_spmm_ctx *ctx, int64_t r0, int64_t r1, float *c, int threads)
{
    const tf_rank_plan *rp = ctx->h->rp;
    csr_rows(r0, r1, rp->coll_ptr, rp->coll_idx, rp->coll_val, ctx->coll_buf, ctx->bf16, ctx->k,
             c, 1, threads);
}

static void compute_run_into_c(tf_spmm_ctx *ctx, int64_t r, float *c)
{
    const tf_rank_plan *rp = ctx->h->rp;
    int64_t j0 = rp->run_off[r], j1 = j0 + rp->run_count[r];
    if (ctx->bf16)
        tf_kern_csc_map_bf16(j0, j1, rp->fet_ptr, rp->fet_idx, rp->fet_val, ctx->fetch_buf,
                             ctx->k, rp->fetch_rows, c);
    else
        tf_kern_csc_map(j0, j1, rp->fet_ptr, rp->fet_idx, rp->fet_val, ctx->fetch_buf, ctx->k,
                        rp->fetch_rows, c);
}

static void compute_run_into_acc(tf_spmm_ctx *ctx, int64_t r, float *acc)
{
    const tf_rank_plan *rp = ctx->h->rp;
    int64_t j0 = rp->run_off[r], j1 = j0 + rp->run_count[r];
    if (ctx->bf16)
        tf_kern_csc_bf16(j0, j1, rp->fet_ptr, rp->fet_idx, rp->fet_val, ctx->fetch_buf, ctx->k,
                         acc);
    else
        tf_kern_csc(j0, j1, rp->fet_ptr, rp->fet_idx, rp->fet_val, ctx->fetch_buf, ctx->k, acc);
}

/* A get of run r completed: the last one from its owner releases the owner. */
static int run_completed(tf_spmm_ctx *ctx, int64_t r)
{
    int oi = ctx->run_owner_idx[r];
    if (atomic_fetch_sub(&ctx->owner_left[oi], 1) == 1) {
        int err = MPI_Start(&ctx->done_send[oi]);
        if (err != MPI_SUCCESS)
            return tf_mpi_fail(err, "MPI_Start (DONE)");
    }
    return TF_OK;
}

/* Shared-memory collective, threaded path's fallback team of one: every
 * owner has entered, so their B is written; copy, then tell them. */
static int coll_shm_fill(tf_spmm_ctx *ctx)
{
    tf_coll_shm_arrived(ctx);
    tf_coll_shm_copy(ctx, 0, 1);
    return tf_coll_shm_copied(ctx);
}

/* The shared-memory collective's end: no rank reads my B any more. */
static int coll_shm_finish(tf_spmm_ctx *ctx)
{
    if (!ctx->coll_shm)
        return TF_OK;
    double t = MPI_Wtime();
    int st = tf_coll_shm_leave(ctx);
    ctx->timing.coll_wait += MPI_Wtime() - t;
    return st;
}

/* End of an SpMM: my DONE and READY sends complete, then wait until every
 * rank fetching from me has said DONE. */
static int sync_finish(tf_spmm_ctx *ctx)
{
    if (!ctx->any_fetch)
        return TF_OK;
    double t = MPI_Wtime();
    int err = MPI_SUCCESS;
    if (ctx->n_owners > 0)
        err = MPI_Waitall(ctx->n_owners, ctx->done_send, MPI_STATUSES_IGNORE);
    if (err == MPI_SUCCESS && ctx->n_fetchers > 0) {
        err = MPI_Waitall(ctx->n_fetchers, ctx->ready_send, MPI_STATUSES_IGNORE);
        if (err == MPI_SUCCESS)
            err = MPI_Waitall(ctx->n_fetchers, ctx->done_recv, MPI_STATUSES_IGNORE);
        MPI_Win_sync(ctx->win);
    }
    ctx->timing.sync += MPI_Wtime() - t;
    return err == MPI_SUCCESS ? TF_OK : tf_mpi_fail(err, "MPI_Waitall (B protection)");
}

/* ---- Single-thread overlap --------------------------------------------- */

static int spmm_single(tf_spmm_ctx *ctx, float *c)
{
    const tf_rank_plan *rp = ctx->h->rp;
    tf_fetch_thread *ft = &ctx->ft[0];
    const int NO = ctx->n_owners;
    /* req: [0] collective, [1, 1 + NO) READY from each owner, then run slots. */
    const int CI = 0, RO = 1 + NO;
    int st = TF_OK, err;
    double t;

    tf_fetch_reset(ctx, ft, RO);
    ft->req[CI] = MPI_REQUEST_NULL;
    int coll_done = 1, coll_landed = 0, nready = 0;
    /* Posting is timed too, into the bucket of its half: with the shared-
     * memory one-sided component an MPI_Rget copies the rows inside the
     * call, and the collective may pack while it is posted - time that is
     * the transfer's, and that the in-situ calibration must see. */
    if (ctx->any_fetch) {
        t = MPI_Wtime();
        st = tf_sync_start(ctx);
        ctx->timing.sync += MPI_Wtime() - t;
        if (st)
            return st;
        for (int i = 0; i < NO; i++)
            ft->req[1 + i] = ctx->ready_recv[i]; /* same persistent requests */
    }
    if (ctx->any_coll) {
        t = MPI_Wtime();
        /* Owners already in are copied (and released) at once. */
        st = ctx->coll_shm ? tf_coll_shm_enter(ctx) : tf_coll_start(ctx, &ft->req[CI]);
        if (st == TF_OK && ctx->coll_shm)
            st = tf_coll_shm_poll(ctx, 0, ctx->threads);
        ctx->timing.coll_wait += MPI_Wtime() - t;
        if (st)
            return st;
        coll_done = coll_landed = ctx->coll_shm && ctx->shm_left == 0;
    }
    int64_t runs_done = 0, n_runs = rp->n_runs;
    /* Rows from fused_from on were computed with the collective part in the
     * same pass (it had landed when their chunk began). */
    int64_t fused_from = rp->nrows;

    /* Local part, in chunks; between chunks, issue and collect fetches. */
    for (int ch = 0; ch < ctx->n_local_chunks; ch++) {
        local_chunk(ctx, ch, coll_landed, &fused_from, c);
        if (!coll_done) { /* progress; its compute must wait for the local part */
            int flag = 0;
            t = MPI_Wtime();
            if (!ctx->coll_shm)
                MPI_Test(&ft->req[CI], &flag, MPI_STATUS_IGNORE);
            else if ((st = tf_coll_shm_poll(ctx, 0, ctx->threads)) == TF_OK)
                flag = ctx->shm_left == 0;
            ctx->timing.coll_wait += MPI_Wtime() - t;
            if (st)
                return st;
            coll_done = coll_landed = flag;
        }
        if (n_runs == 0)
            continue;
        t = MPI_Wtime();
        int outc = 0;
        if (nready < NO) {
            MPI_Testsome(NO, ft->req + 1, &outc, ft->done_idx, MPI_STATUSES_IGNORE);
            for (int x = 0; x < outc && outc != MPI_UNDEFINED; x++, nready++)
                ctx->owner_ready[ft->done_idx[x]] = 1;
        }
        if (ft->inflight > 0) {
            MPI_Testsome(ft->hwm, ft->req + RO, &outc, ft->done_idx, MPI_STATUSES_IGNORE);
            for (int x = 0; x < outc && outc != MPI_UNDEFINED; x++) {
                int64_t r = tf_fetch_complete(ctx, ft, RO + ft->done_idx[x]);
                ft->landed[ft->nlanded++] = r;
                if ((st = run_completed(ctx, r)))
                    return st;
            }
        }
        st = tf_fetch_issue(ctx, ft, ctx->owner_ready);
        ctx->timing.fetch_wait += MPI_Wtime() - t;
        if (st)
            return st;
    }
    /* Runs that landed during the local part, then the collective part if
     * it arrived meanwhile. */
    t = MPI_Wtime();
    for (int64_t x = 0; x < ft->nlanded; x++)
        compute_run_into_c(ctx, ft->landed[x], c);
    runs_done += ft->nlanded;
    ft->nlanded = 0;
    ctx->timing.fetch_comp += MPI_Wtime() - t;
    if (coll_landed) {
        t = MPI_Wtime();
        coll_rows(ctx, 0, fused_from, c, ctx->threads);
        ctx->timing.coll_comp += MPI_Wtime() - t;
    }
    /* The shared-memory collective has no request in req[]: the owners not
     * copied yet are waited for here (fetches in flight complete
     * meanwhile: on one node a get copies when it is posted). */
    if (ctx->coll_shm && !coll_done) {
        t = MPI_Wtime();
        while (st == TF_OK && ctx->shm_left > 0)
            st = tf_coll_shm_poll(ctx, 1, ctx->threads);
        double t1 = MPI_Wtime();
        ctx->timing.coll_wait += t1 - t;
        if (st)
            return st;
        coll_done = 1;
        coll_rows(ctx, 0, rp->nrows, c, ctx->threads);
        ctx->timing.coll_comp += MPI_Wtime() - t1;
    }

    while (runs_done < n_runs || !coll_done) {
        int outc = 0;
        t = MPI_Wtime();
        err = MPI_Waitsome(RO + ft->hwm, ft->req, &outc, ft->done_idx, MPI_STATUSES_IGNORE);
        double w = MPI_Wtime() - t;
        if (err != MPI_SUCCESS)
            return tf_mpi_fail(err, "MPI_Waitsome");
        if (outc == MPI_UNDEFINED)
            return tf_fail(TF_ERR_INTERNAL, "rank %d: SpMM waiting on no request",
                           ctx->h->rank);
        if (runs_done < n_runs)
            ctx->timing.fetch_wait += w;
        else
            ctx->timing.coll_wait += w;
        int coll_now = 0;
        for (int x = 0; x < outc; x++) {
            int i = ft->done_idx[x];
            if (i == CI) {
                coll_now = 1;
            } else if (i < RO) {
                ctx->owner_ready[i - 1] = 1;
                nready++;
            } else {
                int64_t r = tf_fetch_complete(ctx, ft, i);
                if ((st = run_completed(ctx, r)))
                    return st;
                t = MPI_Wtime();
                compute_run_into_c(ctx, r, c);
                ctx->timing.fetch_comp += MPI_Wtime() - t;
                runs_done++;
            }
        }
        t = MPI_Wtime();
        st = tf_fetch_issue(ctx, ft, ctx->owner_ready);
        ctx->timing.fetch_wait += MPI_Wtime() - t;
        if (st)
            return st;
        if (coll_now) {
            coll_done = 1;
            t = MPI_Wtime();
            coll_rows(ctx, 0, rp->nrows, c, ctx->threads);
            ctx->timing.coll_comp += MPI_Wtime() - t;
        }
    }
    if ((st = coll_shm_finish(ctx)))
        return st;
    return sync_finish(ctx);
}

/* ---- In place on one node (tf_node_direct.c) ---------------------------- */

/* The local part in chunks; from the first chunk that begins after every
 * owner has entered, local and remote nonzeros in one pass. The rows before
 * it get their remote nonzeros added afterwards - the order of the copying
 * path, so C is bitwise the same as the collective's. */
static int spmm_direct(tf_spmm_ctx *ctx, float *c)
{
    const tf_rank_plan *rp = ctx->h->rp;
    double t = MPI_Wtime();
    tf_coll_shm_enter(ctx);
    int in = tf_direct_arrived(ctx, 0);
    ctx->timing.coll_wait += MPI_Wtime() - t;
    int64_t fused_from = rp->nrows;
    for (int ch = 0; ch < ctx->n_local_chunks; ch++) {
        local_chunk(ctx, ch, in, &fused_from, c);
        if (!in) {
            t = MPI_Wtime();
            in = tf_direct_arrived(ctx, 0);
            ctx->timing.coll_wait += MPI_Wtime() - t;
        }
    }
    if (fused_from > 0) {
        t = MPI_Wtime();
        tf_direct_arrived(ctx, 1);
        double t1 = MPI_Wtime();
        ctx->timing.coll_wait += t1 - t;
        csr_rows(0, fused_from, ctx->dir_ptr, ctx->dir_idx, ctx->dir_val, ctx->node_b, 0, ctx->k,
                 c, 1, ctx->threads);
        ctx->timing.coll_comp += MPI_Wtime() - t1;
    }
    tf_direct_release(ctx);
    return coll_shm_finish(ctx);
}

/* ---- Two thread groups ------------------------------------------------- */

static void spin_until(atomic_int *flag)
{
    while (!atomic_load_explicit(flag, memory_order_acquire))
        sched_yield();
}

static void spin_until_count(atomic_int *n, int goal)
{
    while (atomic_load_explicit(n, memory_order_acquire) < goal)
        sched_yield();
}

/* One fetch thread: issue its runs (every owner is READY), compute each as
 * it lands into its accumulator. */
static int fetch_thread(tf_spmm_ctx *ctx, tf_fetch_thread *ft)
{
    int st = TF_OK;
    double t0 = MPI_Wtime();
    st = tf_fetch_issue(ctx, ft, NULL);
    ft->t_wait += MPI_Wtime() - t0; /* posting copies on shared memory */
    if (st)
        return st;
    while (ft->inflight > 0) {
        int outc = 0;
        double t = MPI_Wtime();
        int err = MPI_Waitsome(ft->hwm, ft->req, &outc, ft->done_idx, MPI_STATUSES_IGNORE);
        double t1 = MPI_Wtime();
        ft->t_wait += t1 - t;
        if (err != MPI_SUCCESS)
            return tf_mpi_fail(err, "MPI_Waitsome");
        if (outc == MPI_UNDEFINED)
            break;
        for (int x = 0; x < outc; x++) {
            int64_t r = tf_fetch_complete(ctx, ft, ft->done_idx[x]);
            if ((st = run_completed(ctx, r)))
                return st;
            compute_run_into_acc(ctx, r, ft->acc);
        }
        /* Refill so requests stay in flight; posting is transfer time. */
        double t2 = MPI_Wtime();
        ft->t_comp += t2 - t1;
        st = tf_fetch_issue(ctx, ft, NULL);
        ft->t_wait += MPI_Wtime() - t2;
        if (st)
            return st;
    }
    return TF_OK;
}

static int spmm_threaded(tf_spmm_ctx *ctx, float *c)
{
    const tf_rank_plan *rp = ctx->h->rp;
    const int64_t k = ctx->k;
    const int T = ctx->threads, G = ctx->n_coll_threads, F = ctx->n_fetch_threads;
    MPI_Request coll_req = MPI_REQUEST_NULL;
    int st;

    for (int f = 0; f < F; f++) {
        tf_fetch_reset(ctx, &ctx->ft[f], 0);
        ctx->ft[f].t_wait = ctx->ft[f].t_comp = 0.0;
    }
    double tp = MPI_Wtime();
    if (ctx->any_fetch && (st = tf_sync_start(ctx)))
        return st;
    double tp1 = MPI_Wtime();
    ctx->timing.sync += tp1 - tp;
    if (ctx->any_coll &&
        (st = ctx->coll_shm ? tf_coll_shm_enter(ctx) : tf_coll_start(ctx, &coll_req)))
        return st;
    ctx->timing.coll_wait += MPI_Wtime() - tp1;
    atomic_int coll_ready = 0, owners_ready = 0, failed = 0, copied = 0;
    double t_local = 0, t_cwait = 0, t_ccomp = 0, t_merge = 0;

#pragma omp parallel num_threads(T)
    {
        int tid = omp_get_thread_num();
        int nth = omp_get_num_threads();
        if (nth != T) {
            /* The runtime gave a smaller team (nested call, OMP_DYNAMIC,
             * a thread limit): thread 0 runs both halves one after the other
             * with the same buffers; the merge below adapts to the team. */
            if (tid == 0) {
                double t = MPI_Wtime();
                tf_kern_csr(0, rp->nrows, rp->loc_ptr, rp->loc_idx, rp->loc_val, ctx->b, k, c,
                            ctx->c_mode);
                double t1 = MPI_Wtime();
                if (coll_req != MPI_REQUEST_NULL &&
                    MPI_Wait(&coll_req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                    atomic_store(&failed, 1);
                if (ctx->coll_shm &&
                    (tf_coll_shm_wait(ctx) != TF_OK || coll_shm_fill(ctx) != TF_OK))
                    atomic_store(&failed, 1);
                double t2 = MPI_Wtime();
                coll_rows(ctx, 0, rp->nrows, c, 1);
                t_local = t1 - t;
                t_cwait = t2 - t1;
                t_ccomp = MPI_Wtime() - t2;
                if (ctx->n_owners > 0 &&
                    MPI_Waitall(ctx->n_owners, ctx->ready_recv, MPI_STATUSES_IGNORE) !=
                        MPI_SUCCESS)
                    atomic_store(&failed, 1);
                for (int f = 0; f < F; f++)
                    if (fetch_thread(ctx, &ctx->ft[f]) != TF_OK)
                        atomic_store(&failed, 1);
            }
        } else if (tid < G) {
            int64_t r0 = ctx->row_split[tid], r1 = ctx->row_split[tid + 1];
            double t = MPI_Wtime();
            tf_kern_csr(r0, r1, rp->loc_ptr, rp->loc_idx, rp->loc_val, ctx->b, k, c, ctx->c_mode);
            double t1 = MPI_Wtime();
            if (tid == 0) {
                if (coll_req != MPI_REQUEST_NULL &&
                    MPI_Wait(&coll_req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                    atomic_store(&failed, 1);
                if (ctx->coll_shm) {
                    if (tf_coll_shm_wait(ctx) != TF_OK)
                        atomic_store(&failed, 1);
                    tf_coll_shm_arrived(ctx);
                }
                atomic_store_explicit(&coll_ready, 1, memory_order_release);
            } else {
                spin_until(&coll_ready);
            }
            if (ctx->coll_shm) {
                /* The group copies its parts, then thread 0 tells the
                 * owners once every part is in. */
                tf_coll_shm_copy(ctx, tid, G);
                atomic_fetch_add_explicit(&copied, 1, memory_order_acq_rel);
                spin_until_count(&copied, G);
                if (tid == 0 && tf_coll_shm_copied(ctx) != TF_OK)
                    atomic_store(&failed, 1);
            }
            double t2 = MPI_Wtime();
            coll_rows(ctx, r0, r1, c, 1);
            if (tid == 0) {
                t_local = t1 - t;
                t_cwait = t2 - t1;
                t_ccomp = MPI_Wtime() - t2;
            }
        } else {
            int f = tid - G;
            tf_fetch_thread *ft = &ctx->ft[f];
            if (f == 0) {
                /* Every owner's B is written (READY) before any get. */
                double t = MPI_Wtime();
                if (ctx->n_owners > 0 &&
                    MPI_Waitall(ctx->n_owners, ctx->ready_recv, MPI_STATUSES_IGNORE) !=
                        MPI_SUCCESS)
                    atomic_store(&failed, 1);
                ft->t_wait += MPI_Wtime() - t;
                atomic_store_explicit(&owners_ready, 1, memory_order_release);
            } else if (ft->run_end > ft->run_begin) {
                spin_until(&owners_ready);
            }
            if (ft->run_end > ft->run_begin && fetch_thread(ctx, ft) != TF_OK)
                atomic_store(&failed, 1);
        }
#pragma omp barrier
        if (rp->n_fetch_rows > 0) {
            double t = MPI_Wtime();
            int64_t n = rp->n_fetch_rows;
            int64_t i0 = n * tid / nth, i1 = n * (tid + 1) / nth;
            tf_kern_merge(i0, i1, rp->fetch_rows, ctx->accs, F, k, c);
            if (tid == 0)
                t_merge = MPI_Wtime() - t;
        }
    }
    if (atomic_load(&failed))
        return tf_fail(TF_ERR_MPI, "rank %d: an MPI call failed during the SpMM", ctx->h->rank);
    if ((st = coll_shm_finish(ctx)) || (st = sync_finish(ctx)))
        return st;

    ctx->timing.local_comp += t_local;
    ctx->timing.coll_wait += t_cwait;
    ctx->timing.coll_comp += t_ccomp;
    ctx->timing.merge += t_merge;
    double fw = 0, fc = 0;
    for (int x = 0; x < F; x++) {
        fw += ctx->ft[x].t_wait;
        fc += ctx->ft[x].t_comp;
    }
    ctx->timing.fetch_wait += fw / F;
    ctx->timing.fetch_comp += fc / F;
    return TF_OK;
}

int tf_spmm_run(tf_spmm_ctx *ctx, float *c)
{
    if (ctx->released)
        return tf_fail(TF_ERR_INTERNAL, "rank %d: an SpMM on a plan context whose buffers "
                                        "were released (dense shifting runs instead)",
                       ctx->h->rank);
    double t0 = MPI_Wtime();
    /* bf16: the rows others read from the window (fetched, or sent
     * zero-copy by the exchange) are rounded before anyone may read them
     * (the collective is posted, READY sent, after this). Readers through
     * shared memory round their own rows from B as they copy them; read in
     * place, nothing travels and nothing is rounded. */
    if (ctx->bf16 && !ctx->direct) {
        tf_export_pack(ctx);
        ctx->timing.pack += MPI_Wtime() - t0;
    }
    int st = ctx->direct             ? spmm_direct(ctx, c)
             : ctx->threads_fetch > 0 ? spmm_threaded(ctx, c)
                                      : spmm_single(ctx, c);
    ctx->timing.total += MPI_Wtime() - t0;
    ctx->timing.calls++;
    const tf_rank_plan *rp = ctx->h->rp;
    if (ctx->direct) {
        /* Read in place: the distinct rows read from peers, one "message"
         * per peer, as the copying collective counts its copies. */
        ctx->timing.bytes_coll += ctx->direct_rows * ctx->k * (int64_t)sizeof(float);
        ctx->timing.msgs_coll += ctx->shm_n_src;
    } else {
        ctx->timing.bytes_coll += rp->coll_buf_rows * ctx->k * (int64_t)ctx->es;
        ctx->timing.bytes_fetch += ctx->fetch_rows_got * ctx->k * (int64_t)ctx->es;
        ctx->timing.msgs_coll += ctx->coll_msgs;
        ctx->timing.msgs_fetch += rp->n_runs;
    }
    return st;
}
