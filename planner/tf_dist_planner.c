#include "tf_dist_planner.h"
#include "tf_cost_model.h"
#include "tf_analysis.h"
#include "tf_build.h"
#include "tf_classify.h"
#include "tf_agree_carry.h"
#include "tf_dist_classify.h"
#include "tf_dist_comm.h"
#include "tf_dist_encode.h"
#include "tf_dist_partition.h"
#include "tf_dist_prepare.h"
#include "tf_dist_rows.h"
#include "tf_error.h"
#include "tf_idle.h"
#include "tf_mem_trace.h"
#include "tf_partition.h"
#include "tf_partition_auto.h"
#include "tf_partition_metis.h"
#include "tf_plan_perm.h"
#include "tf_work_bands.h"

#include <stdlib.h>
#include <string.h>

#include <omp.h>

/* The cut of bands whose global weight prefix is increasing in the row:
 * band p ends at the first row whose prefix reaches floor(total (p + 1) / P).
 * at(ctx, k) is the global prefix at this rank's local row k (0..nrows);
 * each rank answers for the rows it holds and the smallest answer wins (the
 * minimum carries the agreement on status). A total of 0 is split by rows,
 * as the serial cut does (tf_partition_prefix). */
static int cut_bands(MPI_Comm comm, const tf_dcsr *a, int P, int64_t total,
                     int64_t (*at)(const void *ctx, int64_t k), const void *ctx, int64_t *off)
{
    if (total <= 0)
        return tf_partition_rows(a->m, P, off);
    int64_t *cand = malloc((size_t)P * sizeof *cand);
    int st = cand ? TF_OK : tf_fail(TF_ERR_NOMEM, "out of memory for %d bands", P);
    for (int p = 0; st == TF_OK && p < P; p++) {
        int64_t target = (int64_t)(((__int128)total * (p + 1)) / P);
        cand[p] = INT64_MAX;
        if (a->nrows == 0 && a->row0 != a->m)
            continue;
        /* Smallest local k whose global prefix reaches the target. */
        int64_t lo = 0, hi = a->nrows;
        if (at(ctx, hi) < target)
            continue;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (at(ctx, mid) >= target)
                hi = mid;
            else
                lo = mid + 1;
        }
        cand[p] = a->row0 + lo;
    }
    if ((st = tf_agree_allreduce(comm, st, cand, P, MPI_INT64_T, MPI_MIN)) == TF_OK) {
        off[0] = 0;
        for (int p = 0; p < P; p++)
            off[p + 1] = p == P - 1 ? a->m : (cand[p] < a->m ? cand[p] : a->m);
    }
    free(cand);
    return st;
}

typedef struct {
    const tf_dcsr *a;
    int64_t base, num, den;
} rowptr_prefix;

static int64_t at_rowptr(const void *ctx, int64_t k)
{
    const rowptr_prefix *r = ctx;
    return (r->base + r->a->loc.rowptr[k]) * r->den + (r->a->row0 + k) * r->num;
}

typedef struct {
    const int64_t *prefix; /* this rank's rows' weights, from 0 */
    int64_t base;          /* the weights of the rows before them */
} weights_prefix;

static int64_t at_weights(const void *ctx, int64_t k)
{
    const weights_prefix *w = ctx;
    return w->base + w->prefix[k];
}

/* Bands of equal work from the global row pointer, which no rank holds:
 * band p ends at the first row i with rowptr[i] den + i num >= W (p + 1) / P,
 * W = nnz den + m num, as in tf_partition_work (num = 0, den = 1: equal
 * nonzeros, tf_partition_nnz); each rank answers for the row pointers it
 * holds and the smallest answer wins. Integer prefixes: the same bands at
 * every number of planning ranks. */
static int bands_work(MPI_Comm comm, const tf_dcsr *a, int P, int64_t num, int64_t den,
                      int64_t *off)
{
    int64_t total;
    int st = tf_partition_work_total(a->nnz_total, a->m, num, &den, &total);
    if (st)
        return st;
    rowptr_prefix r = {a, tf_dist_exscan_i64(comm, a->loc.nnz), num, den};
    return cut_bands(comm, a, P, total, at_rowptr, &r, off);
}

/* The last `want` columns of the row-order stream before this rank's rows
 * (fewer near the start), in order: the reuse window's state where this
 * rank's rows begin. A rank with few nonzeros passes on the tail of the
 * ranks before it. *halo is malloc'ed (NULL when *nhalo is 0). */
static int stream_tail(MPI_Comm comm, const tf_dcsr *a, int64_t want, int32_t **halo,
                       int64_t *nhalo)
{
    int Q, me;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    *nhalo = 0;
    /* The halo is at most `want` columns of the matrix: allocated before
     * the gather of the counts, which carries the agreement, so that no rank
     * fails once the exchange begins. */
    int64_t cap = want < a->nnz_total ? want : a->nnz_total;
    int64_t *start = malloc(((size_t)Q + 1) * sizeof *start);
    int64_t *cnt = malloc((size_t)Q * 4 * sizeof *cnt);
    *halo = malloc((size_t)(cap > 0 ? cap : 1) * sizeof **halo);
    int st = start && cnt && *halo ? TF_OK
                                   : tf_fail(TF_ERR_NOMEM, "out of memory for %lld columns of "
                                             "the reuse window", (long long)cap);
    st = tf_agree_allgather_i64(comm, st, &a->loc.nnz, start ? start + 1 : NULL, 1);
    if (st != TF_OK) {
        free(start);
        free(cnt);
        free(*halo);
        *halo = NULL;
        return st;
    }
    start[0] = 0;
    for (int q = 0; q < Q; q++)
        start[q + 1] += start[q];
    int64_t *send = cnt, *sdispl = cnt + Q, *recv = cnt + 2 * Q, *rdispl = cnt + 3 * Q;
    const int64_t e4 = (int64_t)sizeof(int32_t);
    int64_t end = start[me + 1], lo_me = start[me] > want ? start[me] - want : 0, total = 0;
    for (int q = 0; q < Q; q++) {
        /* Rank q wants [lo, start[q]); this rank holds [start[me], end). */
        int64_t lo = start[q] > want ? start[q] - want : 0;
        int64_t from = lo > start[me] ? lo : start[me], to = start[q] < end ? start[q] : end;
        send[q] = to > from ? (to - from) * e4 : 0;
        sdispl[q] = to > from ? (from - start[me]) * e4 : 0;
        from = lo_me > start[q] ? lo_me : start[q];
        to = start[me] < start[q + 1] ? start[me] : start[q + 1];
        recv[q] = to > from ? (to - from) * e4 : 0;
        rdispl[q] = total;
        total += recv[q];
    }
    *nhalo = total / e4;
    st = tf_dist_alltoallv(comm, a->loc.col, send, sdispl, *halo, recv, rdispl);
    free(start);
    free(cnt);
    if (st != TF_OK) {
        free(*halo);
        *halo = NULL;
        *nhalo = 0;
    }
    return st;
}

/* The global prefix of the rows' work weights as a single process counts
 * them (tf_work_prefix), the reuse window carried across ranks by
 * stream_tail: *prefix (malloc'ed, this rank's rows from 0), *base (the
 * weights before them) and *total. The sum carries the agreement. */
static int work_prefix_dist(MPI_Comm comm, const tf_dcsr *a, const tf_work_weights *w,
                            int64_t **prefix, int64_t *base, int64_t *total)
{
    int32_t *halo = NULL;
    int64_t nhalo = 0;
    int st = stream_tail(comm, a, w->window, &halo, &nhalo);
    *prefix = malloc((size_t)(a->nrows + 1) * sizeof **prefix);
    if (st == TF_OK && !*prefix)
        st = tf_fail(TF_ERR_NOMEM, "out of memory for the work weights of %lld rows",
                     (long long)a->nrows);
    if (st == TF_OK)
        st = tf_work_prefix(&a->loc, a->n, halo, nhalo, w, *prefix);
    free(halo);
    int64_t mine = st == TF_OK ? (*prefix)[a->nrows] : 0;
    *total = mine;
    *base = tf_dist_exscan_i64(comm, mine);
    st = tf_agree_allreduce(comm, st, total, 1, MPI_INT64_T, MPI_SUM);
    if (st) {
        free(*prefix);
        *prefix = NULL;
    }
    return st;
}

/* --partition work's bands from the weights' prefix, the distributed
 * tf_work_bands_cut (tf_work_bands.h): the cut of the prefix with the
 * reuse term, bands_work's cut of rows and nonzeros without it (which
 * reads no prefix: w_at may be NULL). */
static int cut_work(MPI_Comm comm, const tf_dcsr *a, int P, const tf_work_weights *w,
                    const weights_prefix *w_at, int64_t total, int64_t *off)
{
    return w->window > 0 ? cut_bands(comm, a, P, total, at_weights, w_at, off)
                         : bands_work(comm, a, P, w->row, w->miss, off);
}

/* --partition work (tf_work_bands.h): the distributed prefix where the cut
 * reads it. */
static int bands_work_kind(MPI_Comm comm, const tf_dcsr *a, int P, const tf_work_weights *w,
                           int64_t *off)
{
    if (w->window <= 0)
        return cut_work(comm, a, P, w, NULL, 0, off);
    int64_t *prefix, base, total;
    int st = work_prefix_dist(comm, a, w, &prefix, &base, &total);
    if (st == TF_OK) {
        weights_prefix w_at = {prefix, base};
        st = cut_work(comm, a, P, w, &w_at, total, off);
    }
    free(prefix);
    return st;
}

/* The global prefix at each of the n offsets off[] into *out: the rank
 * whose rows reach an offset answers (ranks meeting at a boundary give the
 * same value; a rank without rows only at the end, as in cut_bands) and the
 * maximum wins. */
static int prefix_at(MPI_Comm comm, const tf_dcsr *a, const weights_prefix *w,
                     const int64_t *off, int n, int64_t *out)
{
    const int answers = a->nrows > 0 || a->row0 == a->m;
    for (int i = 0; i < n; i++) {
        int64_t k = off[i] - a->row0;
        out[i] = answers && k >= 0 && k <= a->nrows ? at_weights(w, k) : INT64_MIN;
    }
    int st = tf_agree_allreduce(comm, TF_OK, out, n, MPI_INT64_T, MPI_MAX);
    /* The same on every rank: the ranks' rows leave no gap in 0..m. */
    for (int i = 0; st == TF_OK && i < n; i++)
        if (out[i] == INT64_MIN)
            st = tf_fail(TF_ERR_INTERNAL, "no planning rank holds row %lld of the bands",
                         (long long)off[i]);
    return st;
}

/* --partition auto (tf_partition_auto.h): both band sets, weighed with the
 * one prefix; *kind gets the one chosen, whose bands are left in off. */
static int bands_auto(MPI_Comm comm, const tf_dcsr *a, const tf_plan_options *o, int64_t *off,
                      int *kind, double *ratio)
{
    const int P = o->nranks;
    tf_work_weights w;
    tf_cost_work_weights(&o->coeffs, o->k, &w);
    int64_t *prefix, base, total;
    int st = work_prefix_dist(comm, a, &w, &prefix, &base, &total);
    if (st)
        return st;
    int64_t *buf = malloc((size_t)(P + 1) * 3 * sizeof *buf);
    st = tf_agree(comm, buf ? TF_OK : tf_fail(TF_ERR_NOMEM, "out of memory for %d bands", P));
    if (st) {
        free(prefix);
        free(buf);
        return st;
    }
    int64_t *on = buf, *wn = buf + (P + 1), *ww = buf + 2 * (P + 1);
    weights_prefix w_at = {prefix, base};
    st = bands_work(comm, a, P, 0, 1, on);
    if (st == TF_OK)
        st = cut_work(comm, a, P, &w, &w_at, total, off);
    if (st == TF_OK)
        st = prefix_at(comm, a, &w_at, on, P + 1, wn);
    if (st == TF_OK)
        st = prefix_at(comm, a, &w_at, off, P + 1, ww);
    if (st == TF_OK) {
        *kind = tf_partition_auto_pick(wn, ww, P, ratio);
        if (*kind == TF_PART_NNZ)
            memcpy(off, on, (size_t)(P + 1) * sizeof *off);
    }
    free(prefix);
    free(buf);
    return st;
}

/* The bands of a kind other than metis and auto. */
static int bands_dist(MPI_Comm comm, const tf_dcsr *a, const tf_plan_options *o, int64_t *off)
{
    if (o->partition == TF_PART_NNZ)
        return bands_work(comm, a, o->nranks, 0, 1, off);
    if (o->partition == TF_PART_WORK) {
        tf_work_weights w;
        tf_cost_work_weights(&o->coeffs, o->k, &w);
        return bands_work_kind(comm, a, o->nranks, &w, off);
    }
    return tf_partition_rows(a->m, o->nranks, off);
}

/* --partition metis: the whole matrix on rank 0, which runs METIS (or
 * applies the given order) and keeps the permuted matrix; the caller then
 * moves its rows out to their bands. */
static int metis_on_root(MPI_Comm comm, tf_dcsr *a, const tf_plan_options *o, int64_t *off,
                         int64_t **perm, int64_t **iperm, tf_dcsr *ap)
{
    int Q, me, P = o->nranks;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    memset(ap, 0, sizeof *ap);
    int64_t *root = malloc((size_t)(Q + 1) * sizeof *root);
    if (!root)
        return tf_agree(comm, tf_fail(TF_ERR_NOMEM, "out of memory for %d ranks", Q));
    root[0] = 0;
    for (int r = 1; r <= Q; r++)
        root[r] = a->m;
    tf_dcsr whole;
    int st = tf_dist_redistribute(comm, TF_OK, a, root, &whole);
    free(root);
    if (st)
        return st;
    int64_t n = whole.m;
    if (me == 0) {
        tf_csr pa;
        memset(&pa, 0, sizeof pa);
        if (o->perm) {
            *perm = malloc((size_t)(n > 0 ? n : 1) * sizeof **perm);
            *iperm = malloc((size_t)(n > 0 ? n : 1) * sizeof **iperm);
            st = *perm && *iperm ? tf_perm_check(o->perm, o->iperm, n)
                                 : tf_fail(TF_ERR_NOMEM, "out of memory for a permutation");
            if (st == TF_OK) {
                memcpy(*perm, o->perm, (size_t)n * sizeof **perm);
                memcpy(*iperm, o->iperm, (size_t)n * sizeof **iperm);
                memcpy(off, o->row_off, (size_t)(P + 1) * sizeof *off);
                st = tf_csr_permute(&whole.loc, *perm, *iperm, &pa);
            }
        } else {
            st = tf_metis_order(&whole.loc, P, &o->metis, perm, iperm, off, &pa, NULL);
        }
        tf_csr_free(&whole.loc);
        ap->loc = pa;
        ap->nrows = pa.nrows;
    }
    st = tf_agree(comm, st);
    if (st == TF_OK && MPI_Bcast(off, P + 1, MPI_INT64_T, 0, comm) != MPI_SUCCESS)
        st = tf_fail(TF_ERR_MPI, "MPI_Bcast of the METIS bands failed");
    ap->m = whole.m;
    ap->n = whole.n;
    ap->nnz_total = whole.nnz_total;
    ap->row0 = me == 0 ? 0 : whole.m;
    tf_dcsr_free(&whole);
    if (st) {
        tf_dcsr_free(ap);
        if (me == 0) {
            free(*perm);
            free(*iperm);
            *perm = *iperm = NULL;
        }
    }
    return st;
}

/* A collective receive (kind 0: q sends rows [first, first + rows) to p)
 * or a fetch partnership (kind 1: p fetches from q), sent to q's holder. */
typedef struct {
    int32_t kind, q, p, first, rows;
} sched_rec;

/* The send schedules and the owner-side statistics, which need the other
 * ranks' receive schedules, then every rank's statistics on every rank.
 * Records reach q's holder from the planning ranks in rank order, each in
 * ascending receiver: the serial order (build_send, tf_build.c). st_in: the
 * parts' build, agreed on with this function's first allocations. Returns
 * an agreed status; the final MPI_Allgatherv's own goes to *gather_st, for
 * the caller's next agreement (every rank goes on to its collectives). */
static int build_send_dist(MPI_Comm comm, tf_plan *plan, const int *first_part, int st_in,
                           int *gather_st)
{
    *gather_st = TF_OK;
    int Q, me;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    const int P = plan->nranks, p0 = plan->first_rank;
    int64_t *q4 = calloc((size_t)Q * 4, sizeof *q4);
    int64_t *s = q4, *r = q4 + Q, *sd = q4 + 2 * Q, *rd = q4 + 3 * Q, stot = 0, rtot = 0;
    sched_rec *sb = NULL, *rb = NULL;
    int *holder = malloc((size_t)P * sizeof *holder);
    int st = st_in ? st_in
             : q4 && holder ? TF_OK
                            : tf_fail(TF_ERR_NOMEM, "out of memory for %d ranks", P);
    if (st == TF_OK) {
        for (int x = 0; x < Q; x++)
            for (int p = first_part[x]; p < first_part[x + 1]; p++)
                holder[p] = x;
        for (int i = 0; i < plan->n_parts; i++) {
            const tf_rank_plan *rp = &plan->parts[i];
            for (int64_t x = 0; x < rp->n_recv; x++)
                s[holder[rp->recv_src[x]]]++;
            for (int64_t x = 0; x < rp->n_runs; x++)
                if (x == 0 || rp->run_owner[x] != rp->run_owner[x - 1])
                    s[holder[rp->run_owner[x]]]++;
        }
    }
    /* Collectives follow: every rank goes on, or none (the parts' build
     * included: one agreement for both, carried by the counts). */
    st = tf_dist_counts_agree(comm, st, s, r, sd, rd, &stot, &rtot);
    if (st == TF_OK) {
        sb = malloc((size_t)(stot ? stot : 1) * sizeof *sb);
        rb = malloc((size_t)(rtot ? rtot : 1) * sizeof *rb);
        if (!sb || !rb)
            st = tf_fail(TF_ERR_NOMEM, "out of memory for %lld schedule entries",
                         (long long)(stot + rtot));
    }
    int64_t *pos = NULL;
    if (st == TF_OK && !(pos = malloc((size_t)Q * sizeof *pos)))
        st = tf_fail(TF_ERR_NOMEM, "out of memory for %d ranks", Q);
    /* The buffers are sized by this rank's schedule entries: agree before
     * the exchange, so that a rank short of memory leaves nobody waiting. */
    st = tf_agree(comm, st);
    if (st == TF_OK) {
        memcpy(pos, sd, (size_t)Q * sizeof *pos);
        for (int i = 0; i < plan->n_parts; i++) {
            const tf_rank_plan *rp = &plan->parts[i];
            for (int64_t x = 0; x < rp->n_recv; x++)
                sb[pos[holder[rp->recv_src[x]]]++] =
                    (sched_rec){0, rp->recv_src[x], rp->rank, rp->recv_first[x],
                                rp->recv_rows[x]};
            for (int64_t x = 0; x < rp->n_runs; x++)
                if (x == 0 || rp->run_owner[x] != rp->run_owner[x - 1])
                    sb[pos[holder[rp->run_owner[x]]]++] =
                        (sched_rec){1, rp->run_owner[x], rp->rank, 0, 0};
        }
        for (int q = 0; q < Q; q++) {
            s[q] *= (int64_t)sizeof(sched_rec);
            r[q] *= (int64_t)sizeof(sched_rec);
            sd[q] *= (int64_t)sizeof(sched_rec);
            rd[q] *= (int64_t)sizeof(sched_rec);
        }
        st = tf_dist_alltoallv(comm, sb, s, sd, rb, r, rd);
    }
    free(pos);
    free(sb);
    for (int64_t t = 0; st == TF_OK && t < rtot; t++) {
        int q = rb[t].q;
        if (q < p0 || q >= p0 + plan->n_parts)
            st = tf_fail(TF_ERR_INTERNAL, "rank %d got a schedule entry for rank %d", me, q);
        else if (rb[t].kind == 0)
            plan->parts[q - p0].n_send++;
    }
    for (int i = 0; st == TF_OK && i < plan->n_parts; i++) {
        tf_rank_plan *rq = &plan->parts[i];
        int64_t n = rq->n_send ? rq->n_send : 1;
        rq->send_dst = malloc((size_t)n * sizeof *rq->send_dst);
        rq->send_first = malloc((size_t)n * sizeof *rq->send_first);
        rq->send_rows = malloc((size_t)n * sizeof *rq->send_rows);
        if (!rq->send_dst || !rq->send_first || !rq->send_rows)
            st = tf_fail(TF_ERR_NOMEM, "out of memory building send schedules");
        rq->n_send = 0;
    }
    for (int64_t t = 0; st == TF_OK && t < rtot; t++) {
        tf_rank_plan *rq = &plan->parts[rb[t].q - p0];
        if (rb[t].kind == 1) {
            rq->stats.fetch_peers_sent++;
            continue;
        }
        int64_t w = rq->n_send++;
        rq->send_dst[w] = rb[t].p;
        rq->send_first[w] = rb[t].first;
        rq->send_rows[w] = rb[t].rows;
    }
    free(rb);
    for (int i = 0; st == TF_OK && i < plan->n_parts; i++)
        tf_build_send_stats(plan, &plan->parts[i]);
    /* Every rank's statistics everywhere (P entries: the plan's summary). */
    int *bc = NULL, *bd = NULL;
    tf_rank_stats *mine = NULL;
    if (st == TF_OK) {
        plan->all_stats = calloc((size_t)P, sizeof *plan->all_stats);
        bc = malloc((size_t)Q * sizeof *bc);
        bd = malloc((size_t)Q * sizeof *bd);
        mine = malloc((size_t)(plan->n_parts ? plan->n_parts : 1) * sizeof *mine);
        if (!plan->all_stats || !bc || !bd || !mine)
            st = tf_fail(TF_ERR_NOMEM, "out of memory for %d ranks' statistics", P);
    }
    st = tf_agree(comm, st);
    if (st == TF_OK) {
        for (int x = 0; x < Q; x++) {
            bc[x] = (first_part[x + 1] - first_part[x]) * (int)sizeof(tf_rank_stats);
            bd[x] = first_part[x] * (int)sizeof(tf_rank_stats);
        }
        for (int i = 0; i < plan->n_parts; i++)
            mine[i] = plan->parts[i].stats;
        if (MPI_Allgatherv(mine, bc[me], MPI_BYTE, plan->all_stats, bc, bd, MPI_BYTE, comm) !=
            MPI_SUCCESS)
            *gather_st = tf_fail(TF_ERR_MPI, "MPI_Allgatherv of rank statistics failed");
    }
    free(bc);
    free(bd);
    free(mine);
    free(q4);
    free(holder);
    return st;
}

/* One candidate plan (the analysis classified for it): this rank's parts,
 * the send side, every rank's statistics and, on rank 0, the stripe table.
 * st_in: this rank's classification, not yet agreed on (nothing is built
 * on a rank where it failed). carry: the status returned is this rank's,
 * and the caller's next collective carries the agreement on it
 * (tf_dist_encode_drop); otherwise it is agreed. */
static int build_candidate(MPI_Comm comm, int st_in, const tf_dcsr *a, const tf_analysis *an,
                           const tf_plan *hdr, int mode, const int *first_part, int lean,
                           int carry, tf_plan *out)
{
    int Q, me;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    const int P = hdr->nranks;
    *out = *hdr;
    out->mode = mode;
    out->row_off = malloc((size_t)(P + 1) * sizeof *out->row_off);
    out->brow_off = malloc((size_t)(P + 1) * sizeof *out->brow_off);
    out->perm = out->iperm = NULL;
    out->parts = NULL;
    out->all_stats = NULL;
    out->alt = NULL;
    memset(&out->stripes, 0, sizeof out->stripes);
    int st = st_in;
    if (st == TF_OK && !(out->row_off && out->brow_off))
        st = tf_fail(TF_ERR_NOMEM, "out of memory for %d ranks", P);
    if (st == TF_OK) {
        memcpy(out->row_off, hdr->row_off, (size_t)(P + 1) * sizeof *out->row_off);
        memcpy(out->brow_off, hdr->brow_off, (size_t)(P + 1) * sizeof *out->brow_off);
        st = lean ? tf_build_parts_range_lean(&a->loc, a->row0, first_part[me],
                                              first_part[me + 1], an, out)
                  : tf_build_parts_range(&a->loc, a->row0, first_part[me], first_part[me + 1],
                                         an, out);
    }
    int gather_st;
    st = build_send_dist(comm, out, first_part, st, &gather_st);
    if (st == TF_OK) {
        tf_stripe_table *t = &out->stripes;
        void *rbuf = me == 0 ? MPI_IN_PLACE : t->recipients;
        void *fbuf = me == 0 ? MPI_IN_PLACE : t->fetchers;
        if (MPI_Reduce(rbuf, t->recipients, (int)t->n, MPI_INT32_T, MPI_SUM, 0, comm) !=
                MPI_SUCCESS ||
            MPI_Reduce(fbuf, t->fetchers, (int)t->n, MPI_INT32_T, MPI_SUM, 0, comm) !=
                MPI_SUCCESS)
            st = tf_fail(TF_ERR_MPI, "MPI_Reduce of the stripe table failed");
        if (gather_st)
            st = gather_st;
        if (!carry)
            st = tf_agree(comm, st);
    }
    if (st)
        tf_plan_free(out);
    return st;
}

/* Builds lean candidate *pl again in full. Building is deterministic, so
 * the statistics the choice was made on must come back the same; a
 * difference is an error rather than a plan chosen on other numbers. */
static int rebuild_full(MPI_Comm comm, const tf_dcsr *a, const tf_analysis *an,
                        const tf_plan *hdr, int mode, const int *first_part, tf_plan *pl)
{
    const int P = hdr->nranks;
    tf_rank_stats *lean = malloc((size_t)P * sizeof *lean);
    int st = tf_agree(comm, lean ? TF_OK : tf_fail(TF_ERR_NOMEM, "out of memory for %d "
                                                                   "ranks' statistics", P));
    if (st)
        return st;
    memcpy(lean, pl->all_stats, (size_t)P * sizeof *lean);
    tf_plan_free(pl);
    st = build_candidate(comm, TF_OK, a, an, hdr, mode, first_part, 0, 0, pl);
    if (st == TF_OK && memcmp(lean, pl->all_stats, (size_t)P * sizeof *lean) != 0) {
        tf_plan_free(pl);
        st = tf_fail(TF_ERR_INTERNAL, "the %s plan built in full has other statistics than "
                                      "built lean", tf_mode_name(mode));
    }
    free(lean);
    return st;
}

/* Whether candidate i (1: all-fetch, 2: all-collective) is built beside
 * the classification's plan greedy: in twoface mode, as the serial planner
 * decides (tf_plan_pure_wanted). */
static int pure_wanted(const tf_plan_options *o, const tf_plan *greedy, int i)
{
    return o->mode == TF_MODE_TWOFACE && !o->no_pure_check &&
           tf_plan_pure_wanted(greedy, i, o->no_alternative);
}

/* level < 0: every candidate keeps its arrays (tf_dist_plan_build);
 * otherwise each is encoded into enc_out's slot as soon as it is built
 * and its arrays freed (tf_dist_plan_build_enc). */
static int plan_build(MPI_Comm comm, tf_dcsr *a, const tf_plan_options *o_in, int level,
                      tf_plan *out, tf_dist_enc enc_out[2])
{
    /* A copy: --partition auto becomes the kind it chooses before the
     * header records it. */
    tf_plan_options oo = *o_in;
    const tf_plan_options *o = &oo;
    int Q, me;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    memset(out, 0, sizeof *out);
    int st = tf_plan_check_options(a->m, a->n, o);
    if (st == TF_OK && o->partition != TF_PART_METIS && o->perm)
        st = tf_fail(TF_ERR_ARG, "a permutation is given, but the partition is %s, not metis",
                     tf_partition_name(o->partition));
    if (st == TF_OK && o->partition == TF_PART_METIS && (!o->perm != !o->iperm ||
                                                         !o->perm != !o->row_off))
        st = tf_fail(TF_ERR_ARG, "a metis plan on fixed bands needs the permutation they were "
                                 "made with, and a given permutation needs its bands");
    /* Agreed below, with the allocations: the options' check decides
     * whether P can be trusted to size them. */
    const int P = st == TF_OK ? o->nranks : 0;
    int *first_part = st == TF_OK ? malloc((size_t)(Q + 1) * sizeof *first_part) : NULL;
    int64_t *row_off = st == TF_OK ? malloc((size_t)(P + 1) * sizeof *row_off) : NULL;
    int64_t *brow_off = st == TF_OK ? malloc((size_t)(P + 1) * sizeof *brow_off) : NULL;
    int64_t *band = st == TF_OK ? malloc((size_t)(Q + 1) * sizeof *band) : NULL;
    int64_t *perm = NULL, *iperm = NULL;
    tf_dcsr mine;
    memset(&mine, 0, sizeof mine);
    tf_analysis an;
    memset(&an, 0, sizeof an);
    tf_plan cand[3], hdr;
    memset(cand, 0, sizeof cand);
    tf_dist_enc enc[3];
    memset(enc, 0, sizeof enc);
    if (enc_out)
        memset(enc_out, 0, 2 * sizeof *enc_out);
    int have[3] = {0, 0, 0};
    double t[3] = {0, 0, 0};
    double t0 = MPI_Wtime(), t1 = t0, t2 = t0, t3 = t0, t4 = t0, t_encode = 0;
    if (st == TF_OK && !(first_part && row_off && brow_off && band))
        st = tf_fail(TF_ERR_NOMEM, "out of memory for %d ranks", P);
    for (int r = 0; st == TF_OK && r <= Q; r++)
        first_part[r] = tf_dist_first_part(P, Q, r);
    /* The checksum is of the matrix as given (a metis plan's too: of A in
     * the original ids, tf_plan_perm.h); its sum carries the agreement on
     * the allocations. */
    uint64_t checksum = 0;
    if ((st = tf_dist_fingerprint_agree(comm, st, a, o->normalization, &checksum))) {
        tf_dcsr_free(a);
        goto done;
    }
    if (o->partition == TF_PART_METIS) {
        /* On more than one rank the partition and the renumbering are
         * distributed too (tf_dist_partition.h); a given permutation needs
         * no partitioner. */
        tf_dcsr ap;
        /* The partitioner and the renumbering take the rows in blocks. */
        if (Q > 1 && (st = tf_dist_to_blocks(comm, a)))
            goto done;
        if (Q == 1)
            st = metis_on_root(comm, a, o, row_off, &perm, &iperm, &ap);
        else if (o->perm)
            st = tf_dist_perm_given(comm, a, P, o->perm, o->iperm, o->row_off, row_off, &perm,
                                    &iperm, &ap);
        else
            st = tf_dist_metis_order(comm, a, P, &o->metis, row_off, &perm, &iperm, &ap);
        if (st)
            goto done;
        memcpy(brow_off, o->perm ? o->brow_off : row_off, (size_t)(P + 1) * sizeof *brow_off);
        *a = ap;
    } else if (o->row_off) {
        memcpy(row_off, o->row_off, (size_t)(P + 1) * sizeof *row_off);
        memcpy(brow_off, o->brow_off, (size_t)(P + 1) * sizeof *brow_off);
    } else {
        st = o->partition == TF_PART_AUTO
                 ? bands_auto(comm, a, o, row_off, &oo.partition, o->auto_ratio)
                 : bands_dist(comm, a, o, row_off);
        if (st == TF_OK) {
            if (a->m == a->n)
                memcpy(brow_off, row_off, (size_t)(P + 1) * sizeof *brow_off);
            else
                st = tf_partition_rows(a->n, P, brow_off);
        }
        /* Not agreed here: the redistribution's counts carry it. */
    }
    /* Each planning rank takes the rows of the plan ranks it builds. */
    for (int r = 0; st == TF_OK && r <= Q; r++)
        band[r] = row_off[first_part[r]];
    if ((st = tf_dist_redistribute(comm, st, a, band, &mine)))
        goto done;
    tf_mem_trace("partition");
    t1 = MPI_Wtime();
    tf_plan_header_init(&hdr, mine.m, mine.n, mine.nnz_total, checksum, o);
    hdr.row_off = row_off;
    hdr.brow_off = brow_off;
    st = tf_analysis_run_part(&mine.loc, mine.row0, first_part[me], first_part[me + 1], P,
                              row_off, brow_off, o->stripe_width, hdr.gap,
                              tf_cost_reuse_window(&hdr.coeffs, o->k),
                              tf_cost_fetch_window(&hdr.coeffs, o->k), &an);
    /* Not agreed here: the first candidate's first collective carries it
     * (the classification's first sum, or the build's counts). */
    int step = st;
    st = TF_OK;
    an.coll_needed = o->coll_rows == TF_COLL_NEEDED;
    tf_mem_trace("analyse");
    t2 = MPI_Wtime();
    /* Candidates as in tf_planner.c: the mode asked for, and in twoface
     * mode the two pure plans beside the greedy result. The analysis does
     * not depend on the mode and is made once. */
    const int64_t T = step == TF_OK ? an.ss_off[P] : 0;
    double t_classify = 0, t_build = 0;
    const char *cls = NULL;
    /* Encoding a candidate as soon as it is built and freeing its arrays
     * keeps one candidate's arrays beside A at a time, and the others'
     * compressed chunks (tf_dist_encode.h). The last of several is built
     * lean (tf_build.h) beside the others' chunks, and in full only if
     * kept, once the one dropped is freed: one candidate's chunks beside
     * the arrays being built, never two. An earlier candidate not kept was
     * compressed for nothing, which costs less than building every
     * candidate lean first and the two kept again in full. */
    int lean = -1;
    /* With one part a rank (tf_dist_first_part spreads the P parts evenly:
     * at most one each when Q >= P), a lean build holds that part's arrays
     * as a full build does; the rebuild of a kept lean candidate would only
     * repeat the build and its exchanges. */
    const int one_part_each = Q >= P;
    for (int i = 0; i < 3 && st == TF_OK; i++) {
        int mode = i == 0 ? o->mode : i == 1 ? TF_MODE_FETCH : TF_MODE_COLLECTIVE;
        if (i > 0 && !pure_wanted(o, &cand[0], i))
            continue;
        double c0 = MPI_Wtime();
        /* The status from here to the build's counts is this rank's: they
         * carry the agreement. */
        if (mode == TF_MODE_TWOFACE) {
            tf_dist_classify_ctx x;
            tf_dist_classify_init(&x, comm, P, first_part);
            /* A rank whose analysis failed takes part in the first sum
             * only: the agreement (tf_classify.h). */
            st = step == TF_OK
                     ? tf_classify_part(&an, first_part[me], first_part[me + 1], &hdr.coeffs,
                                        o->k, tf_dist_classify_sum, &x)
                     : tf_dist_classify_sum(NULL, 0, TF_CLASSIFY_SUM, step, &x);
            tf_dist_classify_free(&x);
        } else {
            st = step;
            if (st == TF_OK)
                memset(an.ss_class, mode == TF_MODE_FETCH ? TF_CLASS_FETCH : TF_CLASS_COLL,
                       (size_t)T);
        }
        step = TF_OK;
        double c1 = MPI_Wtime();
        tf_mem_trace("classify");
        /* Whether more candidates follow is known once the first is built. */
        int last = i > 0;
        for (int j = i + 1; last && j < 3; j++)
            last = !pure_wanted(o, &cand[0], j);
        if (level >= 0 && last && !one_part_each)
            lean = i;
        /* A candidate encoded at once leaves the agreement on its build to
         * the encoding's first collective. */
        int carry = level >= 0 && lean != i;
        st = build_candidate(comm, st, &mine, &an, &hdr, mode, first_part, lean == i, carry,
                             &cand[i]);
        tf_mem_trace(i == 0 ? "build 1st" : i == 1 ? "build fetch" : "build coll");
        if (st == TF_OK) {
            have[i] = 1;
            t[i] = tf_plan_predicted_time(&cand[i]);
            if (i == 0)
                cls = tf_plan_classes(&cand[0]);
        }
        if (carry) {
            int more = 0;
            for (int j = i + 1; st == TF_OK && j < 3; j++)
                more = more || pure_wanted(o, &cand[0], j);
            if (st == TF_OK && !more) {
                /* Nothing is built from A or the analysis any more. */
                tf_analysis_free(&an);
                tf_dcsr_free(&mine);
            }
            double e0 = MPI_Wtime();
            st = tf_dist_encode_drop(comm, st, &cand[i], level, &enc[i]);
            t_encode += MPI_Wtime() - e0;
            tf_mem_trace("encode");
        }
        t_classify += c1 - c0;
        t_build += MPI_Wtime() - c1;
    }
    t3 = t2 + t_classify;
    if (st) {
        t4 = t3 + t_build;
        goto done;
    }
    int chosen = 0, runner = -1, alt_mode = o->mode;
    if (o->mode == TF_MODE_TWOFACE && !o->no_pure_check)
        tf_plan_choose(t, have, cls, o->no_alternative, &chosen, &runner, &alt_mode);
    for (int i = 0; i < 3; i++)
        if (i != chosen && i != runner) {
            if (have[i])
                tf_plan_free(&cand[i]);
            have[i] = 0;
            tf_dist_enc_free(&enc[i]);
        }
    tf_mem_trace("choose");
    if (lean >= 0 && have[lean]) {
        /* The lean candidate is kept: its arrays now, with the classes it
         * was built from still in an.ss_class (the last ones set). */
        double c1 = MPI_Wtime();
        int mode = lean == 1 ? TF_MODE_FETCH : TF_MODE_COLLECTIVE;
        st = rebuild_full(comm, &mine, &an, &hdr, mode, first_part, &cand[lean]);
        tf_analysis_free(&an);
        tf_dcsr_free(&mine);
        tf_mem_trace("rebuild");
        double e0 = MPI_Wtime();
        if (st == TF_OK)
            st = tf_dist_encode_drop(comm, TF_OK, &cand[lean], level, &enc[lean]);
        t_encode += MPI_Wtime() - e0;
        t_build += MPI_Wtime() - c1;
        tf_mem_trace("encode");
    }
    t4 = t3 + t_build;
    if (st)
        goto done;
    *out = cand[chosen];
    have[chosen] = 0;
    if (enc_out) {
        enc_out[0] = enc[chosen];
        memset(&enc[chosen], 0, sizeof enc[chosen]);
        if (runner >= 0) {
            enc_out[1] = enc[runner];
            memset(&enc[runner], 0, sizeof enc[runner]);
        }
    }
    if (o->mode == TF_MODE_TWOFACE && !o->no_pure_check) {
        out->mode = TF_MODE_TWOFACE;
        if (runner >= 0) {
            out->alt = malloc(sizeof *out->alt);
            if (!out->alt)
                st = tf_fail(TF_ERR_NOMEM, "out of memory for the alternative plan");
            else {
                *out->alt = cand[runner];
                out->alt->mode = alt_mode;
                have[runner] = 0;
            }
            /* The same runner on every rank: all agree, or none need to. */
            st = tf_agree(comm, st);
        }
        if (st) {
            tf_plan_free(out);
            memset(out, 0, sizeof *out);
            if (enc_out) {
                tf_dist_enc_free(&enc_out[0]);
                tf_dist_enc_free(&enc_out[1]);
            }
            goto done;
        }
    }
    if (o->partition == TF_PART_METIS && me == 0) {
        out->perm = perm;
        out->iperm = iperm;
        perm = iperm = NULL;
    }
done:
    for (int i = 0; i < 3; i++) {
        if (have[i])
            tf_plan_free(&cand[i]);
        tf_dist_enc_free(&enc[i]);
    }
    tf_analysis_free(&an);
    tf_dcsr_free(&mine);
    free(perm);
    free(iperm);
    free(first_part);
    free(row_off);
    free(brow_off);
    free(band);
    if (o->timing && st == TF_OK) {
        o->timing[0] = t1 - t0;
        o->timing[1] = t2 - t1;
        o->timing[2] = t3 - t2;
        o->timing[3] = t4 - t3 - t_encode;
        o->timing[4] = t_encode;
    }
    return st;
}

int tf_dist_plan_build(MPI_Comm comm, tf_dcsr *a, const tf_plan_options *o, tf_plan *out)
{
    return plan_build(comm, a, o, -1, out, NULL);
}

int tf_dist_plan_build_enc(MPI_Comm comm, tf_dcsr *a, const tf_plan_options *o, int zstd_level,
                           tf_plan *out, tf_dist_enc enc[2])
{
    return plan_build(comm, a, o, zstd_level, out, enc);
}
