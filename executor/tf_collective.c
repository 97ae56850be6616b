/* The collective half's machinery, created once per context: one
 * distributed-graph communicator whose sources are the ranks this rank
 * receives B stripes from and whose destinations are the ranks it sends
 * stripes to, and the per-neighbour arguments of the exchange
 * (MPI_Ineighbor_alltoall{v,w} or their MPI_Ialltoall{v,w} fallback:
 * tf_exchange.h).
 *
 * Send side, per destination (TWOFACE_COLL_PACK, docs/executor.md):
 *  - packed: its rows are copied into the pack buffer at the start of every
 *    SpMM and go as a count of rows. On a web graph a destination's rows
 *    are hundreds of runs of 1-2 rows; Open MPI's datatype engine gathers
 *    such a type in pipelined fragments, slower than one memcpy per run plus
 *    a single-copy contiguous transfer. With TF_COMM_BF16 the copy is the
 *    rounding (tf_pack.h): float32 B in, bf16 out, so the owner's memory
 *    sees 6 bytes per element instead of a rounding pass into the window
 *    and a copy out of it (10).
 *  - zero-copy: one hindexed type of its stripes over the window (B, or with
 *    TF_COMM_BF16 its bf16 export, which tf_export_pack fills for these
 *    rows; adjacent stripes merged; a plain count of rows when they merge
 *    into one block).
 * When every rank packs every destination the exchange takes plain counts
 * (coll_v: the v form, p2p's call); otherwise the w form, a packed
 * destination's displacement pointing into the pack buffer.
 * Receive side: the stripes from one source are contiguous in the
 * collective buffer (the plan orders them by source, then first row, and
 * the sender orders its stripes for us by first row), so a count of rows
 * at a displacement. Displacements of the w form are MPI_Aint, so large
 * buffers are fine; counts are in rows (a K-element contiguous type), so
 * they fit in an int; the v form's displacements are rows too, and it is
 * used only when both buffers have fewer than 2^31 rows. */
#include "tf_exec.h"
#include "tf_kernels.h"
#include "tf_pack.h"

#include <stdlib.h>
#include <string.h>

static int count_distinct(const int32_t *a, int64_t n)
{
    int c = 0;
    for (int64_t i = 0; i < n; i++)
        if (i == 0 || a[i] != a[i - 1])
            c++;
    return c;
}

void tf_coll_free(tf_spmm_ctx *ctx)
{
    if (ctx->send_types) {
        for (int j = 0; j < ctx->n_dst; j++)
            if (ctx->send_types[j] != MPI_DATATYPE_NULL && ctx->send_types[j] != ctx->row_type)
                MPI_Type_free(&ctx->send_types[j]);
    }
    free(ctx->send_types);
    free(ctx->recv_types);
    free(ctx->send_counts);
    free(ctx->recv_counts);
    free(ctx->send_displs);
    free(ctx->recv_displs);
    free(ctx->src_ranks);
    free(ctx->dst_ranks);
    free(ctx->pack_buf);
    free(ctx->pack_first);
    free(ctx->pack_len);
    free(ctx->pack_from_xb);
    free(ctx->dst_packed);
    ctx->pack_from_xb = ctx->dst_packed = NULL;
    free(ctx->v_sdispl);
    free(ctx->v_rdispl);
    ctx->v_sdispl = ctx->v_rdispl = NULL;
    ctx->coll_v = 0;
    ctx->pack_buf = NULL;
    ctx->pack_first = ctx->pack_len = NULL;
    ctx->n_pack_runs = ctx->pack_rows = 0;
    ctx->n_pack_dst = 0;
    ctx->send_types = ctx->recv_types = NULL;
    ctx->send_counts = ctx->recv_counts = NULL;
    ctx->send_displs = ctx->recv_displs = NULL;
    ctx->src_ranks = ctx->dst_ranks = NULL;
    tf_xchg_free(&ctx->xchg);
}

/* TWOFACE_COLL_PACK=auto|always|never: how the send side travels. */
int tf_coll_pack_mode(int *mode)
{
    const char *s = getenv("TWOFACE_COLL_PACK");
    if (!s || !*s)
        return TF_OK;
    if (strcmp(s, "auto") == 0)
        *mode = TF_COLL_PACK_AUTO;
    else if (strcmp(s, "always") == 0)
        *mode = TF_COLL_PACK_ALWAYS;
    else if (strcmp(s, "never") == 0)
        *mode = TF_COLL_PACK_NEVER;
    else
        return tf_fail(TF_ERR_ARG, "TWOFACE_COLL_PACK=%s: expected auto, always or never", s);
    return TF_OK;
}

/* Whether a destination's nb blocks of `bytes` in all travel packed. One
 * block is already contiguous: auto sends it from B; always packs it too,
 * so that every send comes from the pack buffer and the exchange can be the
 * plain-count one (coll_v). */
static int pack_blocks(int mode, int nb, MPI_Aint bytes)
{
    if (mode != TF_COLL_PACK_AUTO)
        return mode == TF_COLL_PACK_ALWAYS;
    return nb > 1 && bytes / nb < TF_COLL_PACK_BLOCK_BYTES;
}

/* Local part of the setup: neighbour lists, counts, datatypes. */
static int coll_describe(tf_spmm_ctx *ctx)
{
    const tf_rank_plan *rp = ctx->h->rp;
    const MPI_Aint rowbytes = (MPI_Aint)ctx->k * (MPI_Aint)ctx->es;
    int ns = count_distinct(rp->recv_src, rp->n_recv);
    int nd = count_distinct(rp->send_dst, rp->n_send);
    ctx->n_src = ns;
    ctx->n_dst = nd;
    ctx->coll_msgs = ns;
    /* At least one element each: some MPI builds dislike NULL arrays. */
    size_t as = (size_t)ns + 1, ad = (size_t)nd + 1;
    ctx->src_ranks = calloc(as, sizeof(int));
    ctx->recv_counts = calloc(as, sizeof(int));
    ctx->recv_displs = calloc(as, sizeof(MPI_Aint));
    ctx->recv_types = calloc(as, sizeof(MPI_Datatype));
    ctx->dst_ranks = calloc(ad, sizeof(int));
    ctx->send_counts = calloc(ad, sizeof(int));
    ctx->send_displs = calloc(ad, sizeof(MPI_Aint));
    ctx->send_types = calloc(ad, sizeof(MPI_Datatype));
    if (!ctx->src_ranks || !ctx->recv_counts || !ctx->recv_displs || !ctx->recv_types ||
        !ctx->dst_ranks || !ctx->send_counts || !ctx->send_displs || !ctx->send_types)
        return tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate the collective schedule",
                       ctx->h->rank);
    for (int j = 0; j < nd; j++)
        ctx->send_types[j] = MPI_DATATYPE_NULL;

    /* Receive side. */
    int s = -1;
    for (int64_t r = 0; r < rp->n_recv; r++) {
        if (r == 0 || rp->recv_src[r] != rp->recv_src[r - 1]) {
            s++;
            ctx->src_ranks[s] = rp->recv_src[r];
            ctx->recv_displs[s] = (MPI_Aint)rp->recv_off[r] * rowbytes;
            ctx->recv_types[s] = ctx->row_type;
        }
        if ((int64_t)ctx->recv_counts[s] + rp->recv_rows[r] > INT32_MAX)
            return tf_fail(TF_ERR_RANGE, "rank %d: more than 2^31 rows from rank %d",
                           ctx->h->rank, rp->recv_src[r]);
        ctx->recv_counts[s] += rp->recv_rows[r];
    }

    /* Send side: blocks of merged adjacent stripes per destination. */
    int mode = TF_COLL_PACK_DEFAULT;
    int st = tf_coll_pack_mode(&mode);
    if (st)
        return st;
    int *blen = malloc(((size_t)rp->n_send + 1) * sizeof *blen);
    MPI_Aint *bdisp = malloc(((size_t)rp->n_send + 1) * sizeof *bdisp);
    char *packed = ctx->dst_packed = calloc(ad, 1);
    ctx->pack_first = malloc(((size_t)rp->n_send + 1) * sizeof *ctx->pack_first);
    ctx->pack_len = malloc(((size_t)rp->n_send + 1) * sizeof *ctx->pack_len);
    if (!blen || !bdisp || !packed || !ctx->pack_first || !ctx->pack_len) {
        free(blen);
        free(bdisp);
        return tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate the send blocks", ctx->h->rank);
    }
    int64_t r = 0;
    for (int j = 0; j < nd && st == TF_OK; j++) {
        int d = rp->send_dst[r];
        ctx->dst_ranks[j] = d;
        int nb = 0;
        int64_t total = 0;
        for (; r < rp->n_send && rp->send_dst[r] == d; r++) {
            int64_t first = rp->send_first[r], rows = rp->send_rows[r];
            total += rows;
            if (nb > 0 && bdisp[nb - 1] + (MPI_Aint)blen[nb - 1] * rowbytes ==
                              (MPI_Aint)first * rowbytes &&
                (int64_t)blen[nb - 1] + rows <= INT32_MAX) {
                blen[nb - 1] += (int)rows;
            } else {
                blen[nb] = (int)rows;
                bdisp[nb] = (MPI_Aint)first * rowbytes;
                nb++;
            }
        }
        if (total > INT32_MAX) {
            st = tf_fail(TF_ERR_RANGE, "rank %d: more than 2^31 rows to rank %d", ctx->h->rank, d);
            break;
        }
        if (pack_blocks(mode, nb, total * rowbytes)) {
            /* Its rows go to pack_buf from row pack_rows on; the byte
             * displacement is fixed once pack_buf exists. */
            for (int b = 0; b < nb; b++) {
                ctx->pack_first[ctx->n_pack_runs] = bdisp[b] / rowbytes;
                ctx->pack_len[ctx->n_pack_runs++] = blen[b];
            }
            ctx->send_types[j] = ctx->row_type;
            ctx->send_counts[j] = (int)total;
            ctx->send_displs[j] = (MPI_Aint)ctx->pack_rows * rowbytes;
            packed[j] = 1;
            ctx->pack_rows += total;
            ctx->n_pack_dst++;
        } else if (nb == 1) {
            ctx->send_types[j] = ctx->row_type;
            ctx->send_counts[j] = blen[0];
            ctx->send_displs[j] = bdisp[0];
        } else {
            MPI_Datatype t;
            int err = MPI_Type_create_hindexed(nb, blen, bdisp, ctx->row_type, &t);
            if (err == MPI_SUCCESS)
                err = MPI_Type_commit(&t);
            if (err != MPI_SUCCESS) {
                st = tf_mpi_fail(err, "MPI_Type_create_hindexed");
                break;
            }
            ctx->send_types[j] = t;
            ctx->send_counts[j] = 1;
            ctx->send_displs[j] = 0;
        }
    }
    free(blen);
    free(bdisp);
    if (st == TF_OK && ctx->n_pack_dst > 0) {
        int64_t rows = ctx->pack_rows > 0 ? ctx->pack_rows : 1;
        ctx->pack_buf = tf_kern_alloc_rows(rows, ctx->k, ctx->es);
        MPI_Aint at = 0, base = 0;
        if (!ctx->pack_buf)
            st = tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate the %lld-row pack buffer",
                         ctx->h->rank, (long long)ctx->pack_rows);
        else if (MPI_Get_address(ctx->pack_buf, &at) != MPI_SUCCESS ||
                 MPI_Get_address(ctx->xb, &base) != MPI_SUCCESS)
            st = tf_fail(TF_ERR_MPI, "rank %d: MPI_Get_address failed", ctx->h->rank);
        for (int j = 0; j < nd && st == TF_OK; j++)
            if (packed[j])
                ctx->send_displs[j] = MPI_Aint_add(MPI_Aint_diff(at, base), ctx->send_displs[j]);
    }
    return st;
}

/* The plain-count form addresses rows with int displacements. */
static int rp_rows_fit_int(const tf_spmm_ctx *ctx)
{
    return ctx->pack_rows <= INT32_MAX && ctx->h->rp->coll_buf_rows <= INT32_MAX;
}

/* Counts and displacements in rows for the plain-count form: sends from the
 * pack buffer in destination order, receives where the w form puts them. */
static int coll_v_args(tf_spmm_ctx *ctx)
{
    const MPI_Aint rowbytes = (MPI_Aint)ctx->k * (MPI_Aint)ctx->es;
    ctx->v_sdispl = calloc((size_t)ctx->n_dst + 1, sizeof(int));
    ctx->v_rdispl = calloc((size_t)ctx->n_src + 1, sizeof(int));
    if (!ctx->pack_buf) /* nothing to send: still a valid address */
        ctx->pack_buf = malloc(1);
    if (!ctx->v_sdispl || !ctx->v_rdispl || !ctx->pack_buf)
        return tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate the exchange's displacements",
                       ctx->h->rank);
    int at = 0;
    for (int j = 0; j < ctx->n_dst; j++) {
        ctx->v_sdispl[j] = at;
        at += ctx->send_counts[j];
    }
    for (int i = 0; i < ctx->n_src; i++)
        ctx->v_rdispl[i] = (int)(ctx->recv_displs[i] / rowbytes);
    return tf_xchg_prepare_v(&ctx->xchg, ctx->send_counts, ctx->v_sdispl, ctx->recv_counts,
                             ctx->v_rdispl);
}

int tf_coll_setup(tf_spmm_ctx *ctx)
{
    tf_handle *h = ctx->h;
    int st = coll_describe(ctx);
    st = tf_agree(h->comm, st);
    if (st)
        return st;
    int mode = TF_XCHG_NEIGHBOR;
    st = tf_agree(h->comm, tf_xchg_mode(&mode));
    if (st == TF_OK)
        st = tf_xchg_create(&ctx->xchg, h->comm, mode, ctx->n_src, ctx->src_ranks, ctx->n_dst,
                            ctx->dst_ranks); /* agrees */
    /* Plain counts (MPI_Ineighbor_alltoallv, p2p's exchange) when every rank
     * sends everything from its pack buffer; the collective must be the same
     * call on every rank. */
    int all_packed = ctx->n_pack_dst == ctx->n_dst && rp_rows_fit_int(ctx);
    if (st == TF_OK)
        MPI_Allreduce(MPI_IN_PLACE, &all_packed, 1, MPI_INT, MPI_MIN, h->comm);
    ctx->coll_v = st == TF_OK && all_packed;
    if (st == TF_OK && ctx->coll_v)
        st = tf_agree(h->comm, coll_v_args(ctx));
    else if (st == TF_OK)
        st = tf_agree(h->comm,
                      tf_xchg_prepare_w(&ctx->xchg, ctx->send_counts, ctx->send_displs,
                                        ctx->send_types, ctx->recv_counts,
                                        ctx->recv_displs, ctx->recv_types));
    if (st)
        return st;

    /* Both sides of every edge must agree on how many rows cross it, or the
     * first SpMM would fail with a truncation error (fatal) or hang. */
    int64_t *sent = calloc((size_t)ctx->n_dst + 1, sizeof *sent);
    int64_t *got = calloc((size_t)ctx->n_src + 1, sizeof *got);
    if (!sent || !got) {
        st = tf_fail(TF_ERR_NOMEM, "rank %d: out of memory", h->rank);
    } else {
        const tf_rank_plan *rp = h->rp;
        int64_t r = 0;
        for (int j = 0; j < ctx->n_dst; j++)
            for (; r < rp->n_send && rp->send_dst[r] == ctx->dst_ranks[j]; r++)
                sent[j] += rp->send_rows[r];
    }
    int ok = st == TF_OK;
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, h->comm);
    if (all_ok) {
        st = tf_xchg_alltoall_i64(&ctx->xchg, sent, got);
        for (int i = 0; i < ctx->n_src && st == TF_OK; i++)
            if (got[i] != ctx->recv_counts[i])
                st = tf_fail(TF_ERR_FORMAT,
                             "plan schedules disagree: rank %d expects %d B rows from rank %d, "
                             "which sends %lld",
                             h->rank, ctx->recv_counts[i], ctx->src_ranks[i], (long long)got[i]);
    }
    free(sent);
    free(got);
    return tf_agree(h->comm, st);
}

/* A pack run whose rows are in the window's export anyway (fetchers read
 * them, or the collective packs them for so many destinations that
 * tf_export.c rounds them once there) is copied from xb, where
 * tf_export_pack has rounded it before the collective starts: 2 bytes read
 * and 2 written per element, against 4 read and 2 written to round it again
 * from B. Every other run is rounded from B as it is packed. */
int tf_coll_pack_sources(tf_spmm_ctx *ctx)
{
    if (!ctx->bf16 || ctx->n_pack_runs == 0 || ctx->n_xr == 0)
        return TF_OK; /* pack_from_xb NULL: every run rounded from B */
    int64_t m = tf_pack_split(ctx->pack_first, ctx->pack_len, ctx->n_pack_runs, ctx->xr_first,
                              ctx->xr_rows, ctx->n_xr, NULL, NULL, NULL);
    int64_t *first = malloc((size_t)m * sizeof *first), *len = malloc((size_t)m * sizeof *len);
    char *from = malloc((size_t)m);
    if (!first || !len || !from) {
        free(first);
        free(len);
        free(from);
        return tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate %lld pack segments",
                       ctx->h->rank, (long long)m);
    }
    tf_pack_split(ctx->pack_first, ctx->pack_len, ctx->n_pack_runs, ctx->xr_first, ctx->xr_rows,
                  ctx->n_xr, first, len, from);
    free(ctx->pack_first);
    free(ctx->pack_len);
    free(ctx->pack_from_xb);
    ctx->pack_first = first;
    ctx->pack_len = len;
    ctx->pack_from_xb = from;
    ctx->n_pack_runs = m;
    return TF_OK;
}

static void coll_pack(tf_spmm_ctx *ctx)
{
    if (ctx->n_pack_runs > 0)
        tf_pack_rows(ctx->bf16, ctx->es, ctx->k, ctx->xb, ctx->b, ctx->n_pack_runs,
                     ctx->pack_first, ctx->pack_len, ctx->pack_from_xb, ctx->pack_buf);
}

static int coll_post(tf_spmm_ctx *ctx, MPI_Request *req)
{
    if (ctx->coll_v)
        return tf_xchg_start_v(&ctx->xchg, ctx->pack_buf, ctx->send_counts, ctx->v_sdispl,
                               ctx->coll_buf, ctx->recv_counts, ctx->v_rdispl, ctx->row_type,
                               req);
    return tf_xchg_start_w(&ctx->xchg, ctx->xb, ctx->send_counts, ctx->send_displs,
                           ctx->send_types, ctx->coll_buf, ctx->recv_counts, ctx->recv_displs,
                           ctx->recv_types, req);
}

int tf_coll_start(tf_spmm_ctx *ctx, MPI_Request *req)
{
    if (!ctx->bf16) {
        coll_pack(ctx);
        return coll_post(ctx, req);
    }
    /* The bf16 pack is the owner's rounding: it goes to `pack` with the
     * rest of it. The caller charges this whole call to the collective's
     * wait, so the pack's share is moved from there. */
    double t = MPI_Wtime();
    coll_pack(ctx);
    t = MPI_Wtime() - t;
    ctx->timing.pack += t;
    ctx->timing.coll_wait -= t;
    return coll_post(ctx, req);
}

/* The first exchanges of a fresh context are slow: on the development VM
 * (osc sm, 4 ranks on 2 cores, citeseer, K = 32) the first SpMMs of a
 * collective plan took 30x, 10x, 5x ... a warm one and reached it only
 * after 15-20 calls, while a fetch plan was warm after 2 (Open MPI sets up
 * its internal buffers for small exchanges on first use; with large
 * messages, soc-Slashdot0902 at K = 512, only the first call was slow).
 * That cost belongs with the other first touches of context creation, not
 * in the caller's first SpMMs, and not in the start-up trial, which it
 * biased against the collective. 20 exchanges brought the first SpMMs to
 * 1-1.5x the warm time; stopping when three in a row were within 25% of
 * the fastest stopped too early (the times fall slowly). So: WARM_MAX
 * exchanges, or fewer once WARM_BUDGET seconds are spent (at least
 * WARM_MIN), which bounds the cost for large exchanges that warm at once.
 * The SMPI build sets TF_COLL_WARM_MAX to 2: a simulated MPI has no lazy
 * setup to warm, and at P = 256 every exchange of the MPI_Ialltoallw
 * fallback is 2 (P - 1) simulated messages per rank. */
#ifndef TF_COLL_WARM_MAX
#define TF_COLL_WARM_MAX 20
#endif
#define WARM_MAX TF_COLL_WARM_MAX
#define WARM_MIN 2
#define WARM_BUDGET 0.2

int tf_coll_warm(tf_spmm_ctx *ctx)
{
    double spent = 0;
    for (int i = 0; i < WARM_MAX && (i < WARM_MIN || spent < WARM_BUDGET); i++) {
        double t = MPI_Wtime();
        MPI_Request req;
        coll_pack(ctx);
        int st = coll_post(ctx, &req);
        if (st == TF_OK) {
            int err = MPI_Wait(&req, MPI_STATUS_IGNORE);
            if (err != MPI_SUCCESS)
                st = tf_mpi_fail(err, "MPI_Wait (warming the exchange)");
        }
        if (st != TF_OK)
            return st;
        t = MPI_Wtime() - t;
        /* Every rank must stop after the same exchange. */
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, ctx->h->comm);
        spent += t;
    }
    return TF_OK;
}
