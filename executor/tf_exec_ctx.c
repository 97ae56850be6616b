/* Ordinary SpMM contexts (tf_spmm_ctx): everything one plan's SpMM at dense
 * width K needs, allocated and touched once (first-touch page faults cost
 * 12-17 us per page on the development VM), so that an SpMM allocates
 * nothing. The public tf_ctx over them is tf_select.c's. */
#include "tf_exec.h"
#include "tf_kernels.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void tf_exec_options_default(tf_exec_options *o)
{
    memset(o, 0, sizeof *o);
    o->threads = 0;
    o->threads_fetch = -1;
    o->max_requests = 0;
    o->baseline = 0;
    o->select_calls = 0;
    o->comm = TF_COMM_PLAN;
}

/* Splits rows [0, n) into parts bounds (parts + 1 entries) with about equal
 * weight, weight of row i = w0[i+1]-w0[i] + w1[i+1]-w1[i] + 1 (w1 may be NULL). */
static void split_rows(int64_t n, const int64_t *w0, const int64_t *w1, int parts,
                       int64_t *bounds)
{
    double total = 0.0;
    for (int64_t i = 0; i < n; i++)
        total += (double)(w0[i + 1] - w0[i]) + (w1 ? (double)(w1[i + 1] - w1[i]) : 0.0) + 1.0;
    bounds[0] = 0;
    double acc = 0.0;
    int64_t i = 0;
    for (int p = 1; p < parts; p++) {
        double goal = total * (double)p / (double)parts;
        while (i < n && acc < goal) {
            acc += (double)(w0[i + 1] - w0[i]) + (w1 ? (double)(w1[i + 1] - w1[i]) : 0.0) + 1.0;
            i++;
        }
        bounds[p] = i;
    }
    bounds[parts] = n;
}

/* Default thread count: omp_get_max_threads() when the user set
 * OMP_NUM_THREADS; otherwise also at most the node's processors divided by
 * the ranks on the node. Oversubscribing cores is ruinous here: MPI waits
 * busy-poll, so 4 ranks x 2 threads on 2 cores ran 30-50x slower than
 * 4 x 1 on the development VM. */
int tf_default_threads(const tf_handle *h)
{
    int t = omp_get_max_threads();
    if (!getenv("OMP_NUM_THREADS")) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        long share = cpus > 0 ? cpus / (h->node_ranks > 0 ? h->node_ranks : 1) : 1;
        if (share < 1)
            share = 1;
        if (t > share)
            t = (int)share;
    }
    return t < 1 ? 1 : t;
}

int tf_node_crowded(tf_handle *h, const tf_exec_options *opt)
{
    int threads = opt->threads > 0 ? opt->threads : tf_default_threads(h);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int crowded = cpus > 0 && (long)h->node_ranks * threads > cpus;
    MPI_Allreduce(MPI_IN_PLACE, &crowded, 1, MPI_INT, MPI_MAX, h->comm);
    return crowded;
}

/* Collective (window, communicator) when those exist. */
void tf_spmm_ctx_destroy(tf_spmm_ctx *ctx)
{
    if (!ctx)
        return;
    if (ctx->owns_win) {
        if (ctx->locked)
            MPI_Win_unlock_all(ctx->win);
        if (ctx->win != MPI_WIN_NULL)
            MPI_Win_free(&ctx->win);
        if (ctx->bwin != MPI_WIN_NULL) {
            MPI_Win_unlock_all(ctx->bwin);
            MPI_Win_free(&ctx->bwin);
        }
        free(ctx->win_pad);
        free(ctx->bwin_pad);
    }
    free(ctx->b_own);
    tf_export_free(ctx);
    tf_coll_free(ctx);
    tf_coll_shm_free(ctx);
    tf_direct_free(ctx);
    tf_sync_free(ctx);
    tf_fetch_free(ctx);
    if (ctx->row_type != MPI_DATATYPE_NULL)
        MPI_Type_free(&ctx->row_type);
    free(ctx->coll_buf);
    free(ctx->fetch_buf);
    free(ctx->row_split);
    free(ctx->local_split);
    free(ctx);
}

void tf_spmm_ctx_take_window(tf_spmm_ctx *to, tf_spmm_ctx *from)
{
    to->owns_win = from->owns_win;
    to->locked = from->locked;
    to->b_own = from->b_own;
    from->owns_win = 0;
    from->locked = 0;
    from->b_own = NULL;
}

void tf_spmm_ctx_release(tf_spmm_ctx *ctx)
{
    /* The receive and pack buffers hold about twice the rows the rank
     * receives; where dense shifting won, its own blocks are in use and
     * these would stay allocated, idle, for the whole job. */
    free(ctx->coll_buf);
    free(ctx->fetch_buf);
    free(ctx->pack_buf);
    ctx->coll_buf = ctx->fetch_buf = ctx->pack_buf = NULL;
    for (int f = 0; ctx->ft && f < ctx->n_fetch_threads; f++) {
        free(ctx->ft[f].acc);
        ctx->ft[f].acc = NULL;
    }
    ctx->released = 1;
}

int tf_spmm_ctx_create(tf_handle *h, int k, const tf_exec_options *opt, tf_spmm_ctx *share,
                       int place, tf_spmm_ctx **out)
{
    *out = NULL;
    const tf_rank_plan *rp = h->rp;
    int st = TF_OK;

    tf_spmm_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        st = tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate a context", h->rank);
    else {
        ctx->h = h;
        ctx->k = k;
        ctx->win = MPI_WIN_NULL;
        ctx->bwin = MPI_WIN_NULL;
        tf_xchg_init(&ctx->xchg);
        ctx->sync_comm = MPI_COMM_NULL;
        ctx->shm_flag_win = MPI_WIN_NULL;
        ctx->row_type = MPI_DATATYPE_NULL;
        ctx->bf16 = opt->comm == TF_COMM_BF16;
        ctx->es = ctx->bf16 ? sizeof(uint16_t) : sizeof(float);
    }
    if (st == TF_OK && opt->comm != TF_COMM_F32 && opt->comm != TF_COMM_BF16)
        st = tf_fail(TF_ERR_INTERNAL, "comm = %d: not resolved to f32 or bf16", opt->comm);
    if (st == TF_OK && k < 1)
        st = tf_fail(TF_ERR_ARG, "dense width K = %d: must be at least 1", k);
    /* The programs' --threads limit: libgomp crashed when asked for 100000. */
    if (st == TF_OK && (opt->threads < 0 || opt->threads > 4096))
        st = tf_fail(TF_ERR_ARG, "threads = %d: must be in 0..4096", opt->threads);
    if (st == TF_OK && opt->threads_fetch < -1)
        st = tf_fail(TF_ERR_ARG, "threads_fetch = %d: must be >= -1", opt->threads_fetch);
    if (st == TF_OK && opt->max_requests < 0)
        st = tf_fail(TF_ERR_ARG, "max_requests = %d: must be >= 0", opt->max_requests);
    if (st == TF_OK && opt->baseline != 0)
        st = tf_fail(TF_ERR_ARG, "baseline %d: not available", opt->baseline);
    if (st == TF_OK && opt->select_calls < -1)
        st = tf_fail(TF_ERR_ARG, "select_calls = %d: must be >= -1", opt->select_calls);
    /* Sizes: every buffer is (rows * K) floats and must be addressable. */
    int64_t biggest = rp->nbrows;
    if (rp->coll_buf_rows > biggest)
        biggest = rp->coll_buf_rows;
    if (rp->fetch_buf_rows > biggest)
        biggest = rp->fetch_buf_rows;
    if (rp->n_fetch_rows > biggest)
        biggest = rp->n_fetch_rows;
    if (st == TF_OK && k >= 1 && biggest > (int64_t)(INT64_MAX / 8) / k)
        st = tf_fail(TF_ERR_RANGE, "rank %d: %lld rows x K = %d does not fit", h->rank,
                     (long long)biggest, k);

    if (st == TF_OK) {
        int provided = MPI_THREAD_SINGLE;
        MPI_Query_thread(&provided);
        int threads = opt->threads > 0 ? opt->threads : tf_default_threads(h);
        /* Default: a fetch group of one thread when this rank fetches at
         * all; otherwise every thread computes the local and collective
         * parts (the single-thread-MPI path parallelises its loops). */
        int tfetch = opt->threads_fetch >= 0 ? opt->threads_fetch
                                              : (threads >= 2 && rp->n_runs > 0 ? 1 : 0);
        if (tfetch > threads - 1)
            tfetch = threads - 1;
        if (provided < MPI_THREAD_MULTIPLE)
            tfetch = 0;
        ctx->threads = threads;
        ctx->threads_fetch = tfetch;
        ctx->max_req = opt->max_requests > 0 ? opt->max_requests : 512;
        ctx->n_coll_threads = tfetch > 0 ? threads - tfetch : threads;

        /* bf16 travels as its bits: no MPI type for it in MPI 3.1. */
        int err = MPI_Type_contiguous(k, ctx->bf16 ? MPI_UINT16_T : MPI_FLOAT, &ctx->row_type);
        if (err == MPI_SUCCESS)
            err = MPI_Type_commit(&ctx->row_type);
        if (err != MPI_SUCCESS)
            st = tf_mpi_fail(err, "MPI_Type_contiguous");
    }
    st = tf_agree(h->comm, st);
    if (st != TF_OK) {
        tf_spmm_ctx_destroy(ctx); /* nothing collective exists yet */
        return st;
    }

    /* Which halves exist anywhere: a rank with nothing to receive must still
     * take part in creating the collective (it may send) and the protection
     * of B (others may read its rows). */
    int flags[2] = {rp->n_recv > 0 || rp->n_send > 0, rp->n_runs > 0}, any[2] = {0, 0};
    MPI_Allreduce(flags, any, 2, MPI_INT, MPI_MAX, h->comm);
    ctx->any_coll = any[0];
    ctx->any_fetch = any[1];

    /* What others read lives in the window (B itself, or its bf16 export);
     * MPI_Win_allocate lets the sm component map it into every rank on the
     * node; with every rank on one node float32 B is in shared memory (the
     * window, or beside the bf16 export), and the SpMM reads peers' rows in
     * place (tf_node_direct.c) or the collective copies them
     * (tf_coll_shm.c). A window with a runner-up must serve both plans:
     * they travel in the same precision (tf_context_create resolves one for
     * both). */
    int err = MPI_SUCCESS;
    int shm_mode = TF_SHM_OFF;
    /* The exchange's variables are checked even where the collective goes
     * through shared memory or does not exist: a misspelt value would
     * otherwise pass every run on one node and fail first on a cluster. */
    int pack_mode = 0, xchg_mode = 0;
    st = tf_coll_pack_mode(&pack_mode);
    if (st == TF_OK)
        st = tf_xchg_mode(&xchg_mode);
    st = tf_agree(h->comm, st);
    if (st == TF_OK)
        st = tf_coll_shm_mode(h->comm, &shm_mode); /* agrees itself */
    /* In place where the caller allows it and the setting does; the
     * window is laid out for it also when a context sharing it may read in
     * place (TF_PLACE_LAYOUT: the transport trial's other side, tf_select.c). */
    const int may_direct = (shm_mode == TF_SHM_DIRECT || shm_mode == TF_SHM_AUTO ||
                            shm_mode == TF_SHM_TRIAL) &&
                           (ctx->any_coll || ctx->any_fetch);
    const int want_direct = may_direct && (place & TF_PLACE_ANY);
    if (st == TF_OK && share) {
        ctx->win = share->win;
        ctx->b = share->b;
        ctx->xb = share->xb;
        ctx->bwin = share->bwin;
        ctx->win_shared = share->win_shared;
        ctx->win_pad = share->win_pad;
        ctx->bwin_pad = share->bwin_pad;
        ctx->row_slack = share->row_slack;
        if (share->bf16 != ctx->bf16)
            st = tf_fail(TF_ERR_INTERNAL, "a runner-up context in another precision");
    } else if (st == TF_OK) {
        ctx->owns_win = 1; /* what it allocated, even on failure */
        st = tf_coll_shm_window(ctx, shm_mode != TF_SHM_OFF,
                                may_direct && (place & (TF_PLACE_ANY | TF_PLACE_LAYOUT)));
    }
    st = tf_agree(h->comm, st);
    if (st == TF_OK && want_direct)
        st = tf_direct_setup(ctx); /* agrees itself */
    if (st == TF_OK && ctx->direct) {
        /* Nothing is fetched: every thread computes. */
        ctx->threads_fetch = 0;
        ctx->n_coll_threads = ctx->threads;
    }

    /* The receive buffers and the fetch state (none when reading in place). */
    const int64_t coll_rows = ctx->direct ? 0 : rp->coll_buf_rows;
    const int64_t fetch_rows = ctx->direct ? 0 : rp->fetch_buf_rows;
    if (st == TF_OK) {
        /* Rows on cache lines, as B's (tf_coll_shm_window). */
        ctx->coll_buf = tf_kern_alloc_rows(coll_rows, k, ctx->es);
        ctx->fetch_buf = tf_kern_alloc_rows(fetch_rows, k, ctx->es);
        ctx->row_split = malloc(((size_t)ctx->n_coll_threads + 1) * sizeof *ctx->row_split);
        ctx->n_local_chunks = rp->nrows >= 8 ? 8 : 1;
        ctx->c_mode = tf_kern_c_mode(rp->nrows * (int64_t)k * (int64_t)sizeof(float));
        ctx->local_split = malloc(((size_t)ctx->n_local_chunks + 1) * sizeof *ctx->local_split);
        if (!ctx->coll_buf || !ctx->fetch_buf || !ctx->row_split || !ctx->local_split)
            st = tf_fail(TF_ERR_NOMEM,
                         "rank %d: cannot allocate the buffers (%lld + %lld rows of %d "
                         "elements of %zu bytes)",
                         h->rank, (long long)coll_rows, (long long)fetch_rows, k, ctx->es);
    }
    if (st == TF_OK) {
        split_rows(rp->nrows, rp->loc_ptr, ctx->direct ? ctx->dir_ptr : rp->coll_ptr,
                   ctx->n_coll_threads, ctx->row_split);
        split_rows(rp->nrows, rp->loc_ptr, NULL, ctx->n_local_chunks, ctx->local_split);
        if (!ctx->direct)
            st = tf_fetch_setup(ctx);
    }
    if (st == TF_OK) {
        for (int64_t r = 0; r < rp->n_runs; r++)
            ctx->fetch_rows_got += rp->run_count[r];
    }
    st = tf_agree(h->comm, st);
    if (st == TF_OK && !ctx->direct && ctx->any_coll && shm_mode != TF_SHM_OFF &&
        ctx->win_shared && !(place & TF_PLACE_XCHG))
        st = tf_coll_shm_setup(ctx); /* agrees itself */
    else if (st == TF_OK && !ctx->direct && ctx->any_coll)
        st = tf_coll_setup(ctx); /* agrees itself */
    if (st == TF_OK && !ctx->direct && ctx->any_fetch)
        st = tf_sync_setup(ctx); /* agrees itself */
    if (st == TF_OK && ctx->bf16 && !ctx->direct && (ctx->any_coll || ctx->any_fetch))
        st = tf_export_setup(ctx); /* agrees itself; read in place, nothing is exported */
    if (st != TF_OK) {
        tf_spmm_ctx_destroy(ctx);
        return st;
    }

    /* Touch every buffer once, outside the timed region. */
    if (rp->nbrows > 0 && !share) {
        memset(ctx->b, 0, (size_t)rp->nbrows * (size_t)k * sizeof(float));
        if (ctx->bf16)
            memset(ctx->xb, 0, (size_t)rp->nbrows * (size_t)k * ctx->es);
    }
    memset(ctx->coll_buf, 0, (size_t)(coll_rows > 0 ? coll_rows * k : 1) * ctx->es);
    memset(ctx->fetch_buf, 0, (size_t)(fetch_rows > 0 ? fetch_rows * k : 1) * ctx->es);
    for (int f = 0; f < ctx->n_fetch_threads; f++)
        if (ctx->ft[f].acc)
            memset(ctx->ft[f].acc, 0, (size_t)rp->n_fetch_rows * (size_t)k * sizeof(float));

    if (ctx->any_coll && !ctx->coll_shm)
        st = tf_coll_warm(ctx); /* after B holds zeros */
    st = tf_agree(h->comm, st);
    if (st != TF_OK) {
        tf_spmm_ctx_destroy(ctx);
        return st;
    }

    /* One passive-target epoch for the window's lifetime, opened by the
     * first context on it that fetches or reads it directly (any_fetch and
     * coll_shm are the same everywhere); MPI_Win_sync needs one too. */
    tf_spmm_ctx *owner = share ? share : ctx;
    if ((ctx->any_fetch || ctx->coll_shm) && !owner->locked) {
        err = MPI_Win_lock_all(MPI_MODE_NOCHECK, owner->win);
        if (err != MPI_SUCCESS)
            st = tf_mpi_fail(err, "MPI_Win_lock_all");
        else
            owner->locked = 1;
    }
    st = tf_agree(h->comm, st);
    if (st != TF_OK) {
        tf_spmm_ctx_destroy(ctx);
        return st;
    }
    *out = ctx;
    return TF_OK;
}
