/* The SpMM on one node, in place (docs/executor.md, "One node: B read in
 * place").
 *
 * When every rank is on this node, float32 B is one MPI_Win_allocate_shared
 * window in MPI's default, contiguous layout: rank q's rows begin where
 * rank q - 1's end, so with the bands in rank order global B row g is at
 * node_b + g * K in every process. Then nothing needs to travel. The
 * collective and fetch parts of the plan become one CSR over this rank's
 * rows whose columns are global B rows (collective nonzeros first, then
 * fetch nonzeros: per row, the order the copying path adds them in), and
 * the SpMM computes from the owners' rows where they are: no pack, no
 * copy, no receive buffer, and no second pass over C once every owner has
 * entered (tf_kern_csr2 with the local part).
 *
 * Synchronisation is the copying path's flags (tf_coll_shm.c) with one
 * change: a reader adds to an owner's `done` when its compute from that
 * owner's rows is over, not when a copy is. An owner therefore returns
 * from the SpMM when its last reader has finished computing: the SpMM ends
 * together on every rank that reads another, as an exchange's does when
 * the last rows arrive.
 *
 * Both classes of the plan read the same rows here, so the planner's
 * classification and the start-up trial decide nothing (tf_select.c skips
 * the trial). The message-passing transports stay what a cluster runs.
 *
 * With bf16 (rows travel rounded) the rows are read in place as float32
 * too: bf16 halves bytes that move, and here none do. Rounding them as
 * they are loaded would cost integer work per nonzero times K - each
 * remote row once per nonzero that reads it, where the copies round it
 * once - and took 1.2-1.7x float32's time (P = 2, K = 128, six graphs).
 * float32 B then lives in bwin, beside the bf16 export's window, laid out
 * contiguously; the export is not set up. */
#include "tf_exec.h"
#include "tf_partition.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

void tf_direct_free(tf_spmm_ctx *ctx)
{
    free(ctx->dir_ptr);
    free(ctx->dir_idx);
    free(ctx->dir_val);
    ctx->dir_ptr = NULL;
    ctx->dir_idx = NULL;
    ctx->dir_val = NULL;
    ctx->direct = 0;
    ctx->node_b = NULL;
}

/* 1 when every rank's part of B's window (bwin with bf16) is where the
 * contiguous layout puts it and holds its band. Rank q's row 0 is then
 * row brow_off[q] + q * row_slack of node_b: each part ends with the row
 * of slack that puts its rows on cache lines (tf_coll_shm_window), so a
 * B row's column in the in-place CSR is its global row plus its owner
 * times row_slack. */
static int layout_holds(tf_spmm_ctx *ctx, const float **node_b)
{
    const tf_handle *h = ctx->h;
    const int64_t *bo = h->plan.brow_off;
    const size_t rowbytes = (size_t)ctx->k * sizeof(float);
    uintptr_t base = 0;
    int have = 0;
    if (h->plan.n > (int64_t)INT32_MAX - h->nranks)
        return 0; /* the CSR's columns are int32 */
    for (int q = 0; q < h->nranks; q++) {
        MPI_Aint size = 0;
        int disp = 0;
        void *ptr = NULL;
        if (MPI_Win_shared_query(tf_coll_shm_b_window(ctx), q, &size, &disp, &ptr) != MPI_SUCCESS)
            return 0;
        int64_t rows = bo[q + 1] - bo[q];
        MPI_Aint pad = tf_coll_shm_b_pad(ctx, q);
        if (rows < 0 || pad < 0 || (size_t)size < (size_t)pad + (size_t)rows * rowbytes)
            return 0;
        if (rows == 0)
            continue; /* an empty part's address is anyone's guess */
        /* Integer arithmetic: the owners' parts are different objects
         * to C, one mapping to the machine. */
        uintptr_t b = (uintptr_t)ptr + (uintptr_t)pad -
                      (uintptr_t)(bo[q] + (int64_t)q * ctx->row_slack) * rowbytes;
        if (have && b != base)
            return 0;
        base = b;
        have = 1;
    }
    *node_b = (const float *)base;
    return 1;
}

/* The column of global B row g in the in-place CSR (layout_holds). */
static int32_t node_col(const tf_spmm_ctx *ctx, int64_t g)
{
    int q = tf_partition_owner(ctx->h->plan.brow_off, ctx->h->nranks, g);
    return (int32_t)(g + (int64_t)q * ctx->row_slack);
}

/* The remote CSR: per row, the collective nonzeros in plan order, then the
 * fetch nonzeros in buffer-column order; columns global B rows (node_col). */
static int build_csr(tf_spmm_ctx *ctx)
{
    const tf_handle *h = ctx->h;
    const tf_rank_plan *rp = h->rp;
    const int64_t nr = rp->nrows;
    int64_t *at = malloc((size_t)(nr + 1) * sizeof *at);
    ctx->dir_ptr = calloc((size_t)nr + 1, sizeof *ctx->dir_ptr);
    int64_t nnz = rp->coll_nnz + rp->fet_nnz;
    ctx->dir_idx = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *ctx->dir_idx);
    ctx->dir_val = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *ctx->dir_val);
    if (!at || !ctx->dir_ptr || !ctx->dir_idx || !ctx->dir_val) {
        free(at);
        return tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate the in-place CSR (%lld nonzeros)",
                       h->rank, (long long)nnz);
    }
    for (int64_t i = 0; i < nr; i++)
        ctx->dir_ptr[i + 1] = rp->coll_ptr[i + 1] - rp->coll_ptr[i];
    for (int64_t e = 0; e < rp->fet_nnz; e++)
        ctx->dir_ptr[rp->fetch_rows[rp->fet_idx[e]] + 1]++;
    for (int64_t i = 0; i < nr; i++)
        ctx->dir_ptr[i + 1] += ctx->dir_ptr[i];
    memcpy(at, ctx->dir_ptr, (size_t)(nr + 1) * sizeof *at);
    for (int64_t i = 0; i < nr; i++)
        for (int64_t e = rp->coll_ptr[i]; e < rp->coll_ptr[i + 1]; e++) {
            ctx->dir_idx[at[i]] = node_col(ctx, h->coll_gcol[rp->coll_idx[e]]);
            ctx->dir_val[at[i]++] = rp->coll_val[e];
        }
    for (int64_t j = 0; j < rp->fetch_buf_rows; j++)
        for (int64_t e = rp->fet_ptr[j]; e < rp->fet_ptr[j + 1]; e++) {
            int64_t i = rp->fetch_rows[rp->fet_idx[e]];
            ctx->dir_idx[at[i]] = node_col(ctx, h->fetch_gcol[j]);
            ctx->dir_val[at[i]++] = rp->fet_val[e];
        }
    free(at);
    /* The distinct rows read from peers, for the byte counts (tf_timing):
     * the buffer rows some nonzero uses - each buffer row is one B row, and
     * a stripe is in one class, so no row is in both buffers. */
    char *used = calloc((size_t)rp->coll_buf_rows + 1, 1);
    if (!used)
        return tf_fail(TF_ERR_NOMEM, "rank %d: out of memory", h->rank);
    ctx->direct_rows = 0;
    for (int64_t e = 0; e < rp->coll_nnz; e++)
        if (!used[rp->coll_idx[e]]) {
            used[rp->coll_idx[e]] = 1;
            ctx->direct_rows++;
        }
    free(used);
    for (int64_t j = 0; j < rp->fetch_buf_rows; j++)
        ctx->direct_rows += rp->fet_ptr[j + 1] > rp->fet_ptr[j];
    return TF_OK;
}

/* The owners this rank reads (the collective's sources and the fetch
 * part's owners), and how many ranks read this one (an MPI_Alltoall). */
static int peers(tf_spmm_ctx *ctx)
{
    tf_handle *h = ctx->h;
    const tf_rank_plan *rp = h->rp;
    const int P = h->nranks;
    int64_t *mine = calloc((size_t)P, sizeof *mine), *theirs = calloc((size_t)P, sizeof *theirs);
    int st = TF_OK;
    if (!mine || !theirs)
        st = tf_fail(TF_ERR_NOMEM, "rank %d: out of memory", h->rank);
    for (int64_t r = 0; st == TF_OK && r < rp->n_recv; r++)
        mine[rp->recv_src[r]] += rp->recv_rows[r];
    for (int64_t r = 0; st == TF_OK && r < rp->n_runs; r++)
        mine[rp->run_owner[r]] += rp->run_count[r];
    if (st == TF_OK)
        mine[h->rank] = 0; /* my own rows need no flag */
    int ok = st == TF_OK, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, h->comm);
    if (all_ok) {
        int err = MPI_Alltoall(mine, 1, MPI_INT64_T, theirs, 1, MPI_INT64_T, h->comm);
        if (err != MPI_SUCCESS)
            st = tf_mpi_fail(err, "MPI_Alltoall");
    }
    if (all_ok && st == TF_OK)
        st = tf_coll_shm_peers_set(ctx, mine, theirs);
    free(mine);
    free(theirs);
    return st; /* the failing rank's status; tf_agree spreads it */
}

int tf_direct_setup(tf_spmm_ctx *ctx)
{
    tf_handle *h = ctx->h;
    const float *node_b = NULL;
    int ok = ctx->win_shared && layout_holds(ctx, &node_b), all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, h->comm);
    if (!all)
        return TF_OK; /* the copying path */
    ctx->direct = 1;
    ctx->coll_shm = 1;
    ctx->node_b = node_b;
    int st = tf_agree(h->comm, build_csr(ctx));
    if (st == TF_OK)
        st = tf_agree(h->comm, peers(ctx));
    if (st == TF_OK)
        st = tf_coll_shm_flags(ctx); /* agrees */
    return st;
}

int tf_direct_arrived(tf_spmm_ctx *ctx, int block)
{
    while (ctx->shm_left > 0) {
        for (int i = 0; i < ctx->shm_n_src; i++) {
            if (ctx->shm_copied[i] || !tf_coll_shm_entered(ctx, i))
                continue;
            ctx->shm_copied[i] = 1;
            ctx->shm_left--;
        }
        if (ctx->shm_left == 0)
            tf_coll_shm_arrived(ctx); /* read their B as written */
        else if (!block)
            return 0;
        else
            sched_yield();
    }
    return 1;
}

void tf_direct_release(tf_spmm_ctx *ctx)
{
    for (int i = 0; i < ctx->shm_n_src; i++)
        tf_shm_counter_add(&ctx->shm_flag[i]->done, 1);
}
