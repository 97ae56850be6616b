#include "tf_build.h"
#include "tf_cost_model.h"
#include "tf_error.h"
#include "tf_radix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALLOC(ptr, n) ((ptr) = malloc((size_t)((n) > 0 ? (n) : 1) * sizeof *(ptr)))

/* Runs over distinct ascending columns: consecutive rows of one owner,
 * spanning gaps of at most `gap` unneeded rows. run_of[u] gets column u's
 * run; returns the number of runs. */
static int64_t make_runs(const uint32_t *cols, int64_t n, const int64_t *brow_off, int gap,
                         uint32_t *run_of)
{
    int64_t nruns = 0;
    int qprev = -1;
    for (int64_t u = 0; u < n; u++) {
        int64_t j = cols[u];
        int q = qprev < 0 ? 0 : qprev;
        while (brow_off[q + 1] <= j)
            q++;
        if (q != qprev || (int64_t)(j - cols[u - 1]) - 1 > gap)
            nruns++;
        run_of[u] = (uint32_t)(nruns - 1);
        qprev = q;
    }
    return nruns;
}

/* Owner, owner-local first row, row count and buffer offset of each run;
 * returns the buffer rows (gap rows included). */
static int64_t describe_runs(const uint32_t *cols, int64_t n, const uint32_t *run_of,
                             const int64_t *brow_off, int32_t *owner, int32_t *first,
                             int32_t *count, int64_t *off)
{
    int q = 0;
    int64_t boff = 0;
    for (int64_t u = 0; u < n;) {
        int64_t r = run_of[u];
        int64_t lo = cols[u], hi = lo;
        while (brow_off[q + 1] <= lo)
            q++;
        while (u < n && run_of[u] == r)
            hi = cols[u++];
        owner[r] = q;
        first[r] = (int32_t)(lo - brow_off[q]);
        count[r] = (int32_t)(hi - lo + 1);
        off[r] = boff;
        boff += hi - lo + 1;
    }
    return boff;
}

/* Builds rank p's part except the send schedule (which needs every rank's
 * receive schedule). The band's remote nonzeros are sorted by column once
 * (radix, with their positions), which gives every nonzero the index of its
 * distinct column; each distinct column's class, buffer slot and run are
 * then found once, and the passes over the nonzeros only look them up. */
static int build_rank(const tf_csr *a, int64_t row_base, const tf_analysis *an,
                      const tf_plan *plan, int p, tf_rank_plan *rp)
{
    const int64_t r0 = plan->row_off[p], r1 = plan->row_off[p + 1];
    const int64_t b0 = plan->brow_off[p], b1 = plan->brow_off[p + 1];
    const int64_t e0 = an->ss_off[p], ne = an->ss_off[p + 1] - e0;
    int64_t *recv_idx = NULL;
    uint32_t *key = NULL, *pos = NULL, *tkey = NULL, *tpos = NULL, *fcols = NULL, *ccols = NULL;
    uint32_t *run_of = NULL, *crun_of = NULL;
    int32_t *uidx = NULL, *u_fc = NULL, *row_map = NULL;
    int64_t *u_ent = NULL, *fill = NULL;
    int st = TF_ERR_NOMEM;

    memset(rp, 0, sizeof *rp);
    rp->rank = p;
    rp->row_begin = r0;
    rp->nrows = r1 - r0;
    rp->brow_begin = b0;
    rp->nbrows = b1 - b0;
    /* Rows of `a` are numbered from row_base. */
    const int64_t lr0 = r0 - row_base, lr1 = r1 - row_base;
    const int64_t k0 = a->rowptr[lr0], nz = a->rowptr[lr1] - k0;
    if (nz > (int64_t)UINT32_MAX)
        return tf_fail(TF_ERR_RANGE, "rank %d: %lld nonzeros in one band: at most %lu", p,
                       (long long)nz, (unsigned long)UINT32_MAX);

    /* Remote nonzeros sorted by column, with their positions. */
    ALLOC(key, nz);
    ALLOC(pos, nz);
    ALLOC(tkey, nz);
    ALLOC(tpos, nz);
    ALLOC(uidx, nz);
    if (!key || !pos || !tkey || !tpos || !uidx)
        goto out;
    int64_t nrem = 0;
    for (int64_t k = k0; k < k0 + nz; k++) {
        int64_t j = a->col[k];
        uidx[k - k0] = -1;
        if (j >= b0 && j < b1)
            continue;
        key[nrem] = (uint32_t)j;
        pos[nrem++] = (uint32_t)(k - k0);
    }
    tf_radix_sort_u32(key, pos, nrem, tkey, tpos);
    free(tkey);
    free(tpos);
    tkey = tpos = NULL;
    /* Distinct columns (in place in key) and each nonzero's index. */
    int64_t nu = 0;
    for (int64_t x = 0; x < nrem; x++) {
        if (x == 0 || key[x] != key[nu - 1])
            key[nu++] = key[x];
        uidx[pos[x]] = (int32_t)(nu - 1);
    }
    free(pos);
    pos = NULL;
    /* Each distinct column's sparse stripe: columns ascend, so owners and
     * stripe ids do too, and one walk along p's sparse stripes finds them. */
    ALLOC(u_ent, nu);
    ALLOC(u_fc, nu);
    ALLOC(fcols, nu);
    ALLOC(ccols, nu);
    if (!u_ent || !u_fc || !fcols || !ccols)
        goto out;
    int64_t nf = 0, nc = 0;
    {
        int q = 0;
        int64_t e = e0;
        for (int64_t u = 0; u < nu; u++) {
            int64_t j = key[u];
            while (plan->brow_off[q + 1] <= j)
                q++;
            int64_t sid = tf_stripe_of(an, q, j);
            while (e < e0 + ne && an->ss_stripe[e] < sid)
                e++;
            if (e >= e0 + ne || an->ss_stripe[e] != sid) {
                st = tf_fail(TF_ERR_INTERNAL, "rank %d: column %lld has no sparse stripe", p,
                             (long long)j);
                goto out;
            }
            u_ent[u] = e;
            if (an->ss_class[e] == TF_CLASS_FETCH) {
                u_fc[u] = (int32_t)nf;
                fcols[nf++] = (uint32_t)j;
            } else {
                u_fc[u] = (int32_t)nc;
                ccols[nc++] = (uint32_t)j;
            }
        }
    }

    /* Collective receive schedule, grouped by source as the exchange needs.
     * Needed rows (default): runs of the rows this rank uses, like fetch
     * runs - the exchange is point to point (a neighbourhood all-to-all),
     * every recipient gets its own copy anyway, so the rest of the stripe
     * would only be wasted bytes. Whole stripes: every row of each
     * collective stripe, the published design's dense stripe. */
    int64_t nrecv = 0;
    if (an->coll_needed) {
        ALLOC(crun_of, nc);
        if (!crun_of)
            goto out;
        nrecv = make_runs(ccols, nc, plan->brow_off, tf_cost_coll_gap(plan->k_planned), crun_of);
    } else {
        ALLOC(recv_idx, ne);
        if (!recv_idx)
            goto out;
        for (int64_t e = 0; e < ne; e++)
            recv_idx[e] = an->ss_class[e0 + e] == TF_CLASS_COLL ? nrecv++ : -1;
    }
    rp->n_recv = nrecv;
    ALLOC(rp->recv_src, nrecv);
    ALLOC(rp->recv_first, nrecv);
    ALLOC(rp->recv_rows, nrecv);
    ALLOC(rp->recv_off, nrecv);
    if (!rp->recv_src || !rp->recv_first || !rp->recv_rows || !rp->recv_off)
        goto out;
    if (an->coll_needed) {
        rp->coll_buf_rows = describe_runs(ccols, nc, crun_of, plan->brow_off, rp->recv_src,
                                          rp->recv_first, rp->recv_rows, rp->recv_off);
    } else {
        int64_t off = 0;
        for (int64_t e = 0; e < ne; e++) {
            if (recv_idx[e] < 0)
                continue;
            int32_t sid = an->ss_stripe[e0 + e];
            int q = an->st_owner[sid];
            int64_t r = recv_idx[e];
            rp->recv_src[r] = q;
            rp->recv_first[r] = (int32_t)(an->st_first[sid] - plan->brow_off[q]);
            rp->recv_rows[r] = an->st_rows[sid];
            rp->recv_off[r] = off;
            off += an->st_rows[sid];
        }
        rp->coll_buf_rows = off;
    }
    rp->stats.fetch_needed = nf;

    /* Runs: consecutive needed rows of one owner, spanning gaps <= G. */
    ALLOC(run_of, nf);
    if (!run_of)
        goto out;
    int64_t nruns = make_runs(fcols, nf, plan->brow_off, plan->gap, run_of);
    rp->n_runs = nruns;
    ALLOC(rp->run_owner, nruns);
    ALLOC(rp->run_first, nruns);
    ALLOC(rp->run_count, nruns);
    ALLOC(rp->run_off, nruns);
    if (!rp->run_owner || !rp->run_first || !rp->run_count || !rp->run_off)
        goto out;
    rp->fetch_buf_rows = describe_runs(fcols, nf, run_of, plan->brow_off, rp->run_owner,
                                       rp->run_first, rp->run_count, rp->run_off);
    /* From here on a distinct column's buffer row is all that is needed:
     * u_fc becomes the fetch buffer slot or the collective buffer row. */
    for (int64_t u = 0; u < nu; u++) {
        int64_t j = key[u], f = u_fc[u];
        if (an->ss_class[u_ent[u]] == TF_CLASS_FETCH) {
            int64_t r = run_of[f];
            int q = rp->run_owner[r];
            u_fc[u] = (int32_t)(rp->run_off[r] + (j - plan->brow_off[q] - rp->run_first[r]));
        } else if (an->coll_needed) {
            int64_t r = crun_of[f];
            int64_t first = plan->brow_off[rp->recv_src[r]] + rp->recv_first[r];
            u_fc[u] = (int32_t)(rp->recv_off[r] + (j - first));
        } else {
            int64_t sid = an->ss_stripe[u_ent[u]];
            int64_t r = recv_idx[u_ent[u] - e0];
            u_fc[u] = (int32_t)(rp->recv_off[r] + (j - an->st_first[sid]));
        }
    }

    /* Rows of C touched by fetch stripes, and counts for the three parts. */
    ALLOC(row_map, rp->nrows);
    ALLOC(rp->loc_ptr, rp->nrows + 1);
    ALLOC(rp->coll_ptr, rp->nrows + 1);
    if (!row_map || !rp->loc_ptr || !rp->coll_ptr)
        goto out;
    rp->loc_ptr[0] = rp->coll_ptr[0] = 0;
    int64_t nloc = 0, ncoll = 0, nfet = 0, ntouched = 0;
#define IS_FETCH(k) (an->ss_class[u_ent[uidx[(k) - k0]]] == TF_CLASS_FETCH)
    for (int64_t i = lr0; i < lr1; i++) {
        int touched = 0;
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
            if (uidx[k - k0] < 0) {
                nloc++;
            } else if (IS_FETCH(k)) {
                nfet++;
                touched = 1;
            } else {
                ncoll++;
            }
        }
        row_map[i - lr0] = touched ? (int32_t)ntouched++ : -1;
        rp->loc_ptr[i - lr0 + 1] = nloc;
        rp->coll_ptr[i - lr0 + 1] = ncoll;
    }
    rp->loc_nnz = nloc;
    rp->coll_nnz = ncoll;
    rp->fet_nnz = nfet;
    rp->n_fetch_rows = ntouched;
    ALLOC(rp->loc_idx, nloc);
    ALLOC(rp->loc_val, nloc);
    ALLOC(rp->coll_idx, ncoll);
    ALLOC(rp->coll_val, ncoll);
    ALLOC(rp->fet_idx, nfet);
    ALLOC(rp->fet_val, nfet);
    ALLOC(rp->fet_ptr, rp->fetch_buf_rows + 1);
    ALLOC(rp->fetch_rows, ntouched);
    ALLOC(fill, rp->fetch_buf_rows + 1);
    if (!rp->loc_idx || !rp->loc_val || !rp->coll_idx || !rp->coll_val || !rp->fet_idx ||
        !rp->fet_val || !rp->fet_ptr || !rp->fetch_rows || !fill)
        goto out;
    for (int64_t r = 0; r < rp->nrows; r++)
        if (row_map[r] >= 0)
            rp->fetch_rows[row_map[r]] = (int32_t)r;

    /* Fetch CSC column counts (column = fetch buffer slot). */
    memset(rp->fet_ptr, 0, (size_t)(rp->fetch_buf_rows + 1) * sizeof *rp->fet_ptr);
    for (int64_t k = k0; k < k0 + nz; k++)
        if (uidx[k - k0] >= 0 && IS_FETCH(k))
            rp->fet_ptr[u_fc[uidx[k - k0]] + 1]++;
    for (int64_t c = 0; c < rp->fetch_buf_rows; c++)
        rp->fet_ptr[c + 1] += rp->fet_ptr[c];
    memcpy(fill, rp->fet_ptr, (size_t)(rp->fetch_buf_rows + 1) * sizeof *fill);

    /* Fill all three parts; rows ascending keeps CSC row indices sorted. */
    int64_t wl = 0, wc = 0;
    for (int64_t i = lr0; i < lr1; i++) {
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
            int32_t u = uidx[k - k0];
            float v = a->val[k];
            if (u < 0) {
                rp->loc_idx[wl] = (int32_t)(a->col[k] - b0);
                rp->loc_val[wl++] = v;
            } else if (IS_FETCH(k)) {
                int64_t w = fill[u_fc[u]]++;
                rp->fet_idx[w] = row_map[i - lr0];
                rp->fet_val[w] = v;
            } else {
                rp->coll_idx[wc] = u_fc[u];
                rp->coll_val[wc++] = v;
            }
        }
    }
#undef IS_FETCH

    /* Statistics (send side filled later). */
    tf_rank_stats *sx = &rp->stats;
    sx->nnz_local = nloc;
    sx->nnz_local_miss = an->local_miss[p];
    sx->nnz_coll = ncoll;
    sx->nnz_coll_miss = tf_coll_miss_of(an, p, ncoll);
    sx->rows_local = rp->nrows;
    sx->rows_coll = tf_coll_rows_share_of(an, p, ncoll);
    sx->nnz_fetch = nfet;
    sx->nnz_fetch_miss = tf_fetch_miss_of(an, p, nfet);
    for (int64_t e = 0; e < ne; e++) {
        if (an->ss_class[e0 + e] == TF_CLASS_COLL)
            sx->stripes_coll++;
        else
            sx->stripes_fetch++;
    }
    sx->coll_rows_recv = rp->coll_buf_rows;
    for (int64_t r = 0; r < nrecv; r++)
        if (r == 0 || rp->recv_src[r] != rp->recv_src[r - 1])
            sx->coll_peers_recv++;
    sx->fetch_rows = rp->fetch_buf_rows;
    sx->fetch_requests = nruns;
    /* Distinct owners (runs come from sorted columns, so owners ascend):
     * the ranks this one exchanges READY/DONE with. */
    for (int64_t r = 0; r < nruns; r++)
        if (r == 0 || rp->run_owner[r] != rp->run_owner[r - 1])
            sx->fetch_peers_recv++;
    sx->remote_distinct = an->remote_distinct[p];
    st = TF_OK;
out:
    if (st == TF_ERR_NOMEM)
        tf_fail(st, "out of memory building the plan of rank %d", p);
    free(recv_idx);
    free(key);
    free(pos);
    free(tkey);
    free(tpos);
    free(uidx);
    free(u_ent);
    free(u_fc);
    free(fcols);
    free(ccols);
    free(run_of);
    free(crun_of);
    free(row_map);
    free(fill);
    if (st != TF_OK)
        tf_rank_plan_free(rp);
    return st;
}

void tf_build_send_stats(const tf_plan *plan, tf_rank_plan *rq)
{
    for (int64_t w = 0; w < rq->n_send; w++) {
        rq->stats.coll_rows_sent += rq->send_rows[w];
        if (w == 0 || rq->send_dst[w] != rq->send_dst[w - 1])
            rq->stats.coll_peers_sent++;
    }
    tf_cost_predict(&plan->coeffs, plan->k_planned, &rq->stats);
}

/* Send schedules: rank q sends stripe s to p for each collective (p, s);
 * visiting receivers in order keeps each list sorted by (recipient, row). */
static int build_send(tf_plan *plan)
{
    int P = plan->nranks;
    for (int p = 0; p < P; p++) {
        const tf_rank_plan *rp = &plan->parts[p];
        for (int64_t r = 0; r < rp->n_recv; r++)
            plan->parts[rp->recv_src[r]].n_send++;
    }
    for (int q = 0; q < P; q++) {
        tf_rank_plan *rq = &plan->parts[q];
        ALLOC(rq->send_dst, rq->n_send);
        ALLOC(rq->send_first, rq->n_send);
        ALLOC(rq->send_rows, rq->n_send);
        if (!rq->send_dst || !rq->send_first || !rq->send_rows)
            return tf_fail(TF_ERR_NOMEM, "out of memory building send schedules");
        rq->n_send = 0;
    }
    for (int p = 0; p < P; p++) {
        const tf_rank_plan *rp = &plan->parts[p];
        for (int64_t r = 0; r < rp->n_recv; r++) {
            tf_rank_plan *rq = &plan->parts[rp->recv_src[r]];
            int64_t w = rq->n_send++;
            rq->send_dst[w] = p;
            rq->send_first[w] = rp->recv_first[r];
            rq->send_rows[w] = rp->recv_rows[r];
        }
    }
    for (int p = 0; p < P; p++) {
        const tf_rank_plan *rp = &plan->parts[p];
        for (int64_t r = 0; r < rp->n_runs; r++)
            if (r == 0 || rp->run_owner[r] != rp->run_owner[r - 1])
                plan->parts[rp->run_owner[r]].stats.fetch_peers_sent++;
    }
    for (int q = 0; q < P; q++) {
        tf_build_send_stats(plan, &plan->parts[q]);
        plan->all_stats[q] = plan->parts[q].stats;
    }
    return TF_OK;
}

static int build_stripe_table(const tf_analysis *an, tf_plan *plan)
{
    tf_stripe_table *t = &plan->stripes;
    int64_t S = an->nstripes;
    t->n = S;
    ALLOC(t->owner, S);
    ALLOC(t->first, S);
    ALLOC(t->rows, S);
    t->recipients = calloc((size_t)(S ? S : 1), sizeof *t->recipients);
    t->fetchers = calloc((size_t)(S ? S : 1), sizeof *t->fetchers);
    if (!t->owner || !t->first || !t->rows || !t->recipients || !t->fetchers)
        return tf_fail(TF_ERR_NOMEM, "out of memory for the stripe table");
    if (S) {
        memcpy(t->owner, an->st_owner, (size_t)S * sizeof *t->owner);
        memcpy(t->first, an->st_first, (size_t)S * sizeof *t->first);
        memcpy(t->rows, an->st_rows, (size_t)S * sizeof *t->rows);
    }
    for (int64_t e = 0; e < an->ss_off[an->nranks]; e++) {
        if (an->ss_class[e] == TF_CLASS_COLL)
            t->recipients[an->ss_stripe[e]]++;
        else
            t->fetchers[an->ss_stripe[e]]++;
    }
    return TF_OK;
}

static int build_range(const tf_csr *a, int64_t row_base, int p0, int p1,
                       const tf_analysis *an, int keep_arrays, tf_plan *plan);

static int build_parts(const tf_csr *a, const tf_analysis *an, int keep_arrays, tf_plan *plan)
{
    int P = plan->nranks;
    int st = build_range(a, 0, 0, P, an, keep_arrays, plan);
    if (st)
        return st;
    plan->all_stats = calloc((size_t)P, sizeof *plan->all_stats);
    if (!plan->all_stats)
        return tf_fail(TF_ERR_NOMEM, "out of memory for %d rank plans", P);
    return build_send(plan);
}

int tf_build_parts(const tf_csr *a, const tf_analysis *an, tf_plan *plan)
{
    return build_parts(a, an, 1, plan);
}

int tf_build_parts_lean(const tf_csr *a, const tf_analysis *an, tf_plan *plan)
{
    return build_parts(a, an, 0, plan);
}

void tf_build_drop_arrays(tf_rank_plan *rp)
{
    free(rp->loc_ptr);
    free(rp->loc_idx);
    free(rp->loc_val);
    free(rp->coll_ptr);
    free(rp->coll_idx);
    free(rp->coll_val);
    free(rp->fetch_rows);
    free(rp->fet_ptr);
    free(rp->fet_idx);
    free(rp->fet_val);
    rp->loc_ptr = rp->coll_ptr = rp->fet_ptr = NULL;
    rp->loc_idx = rp->coll_idx = rp->fet_idx = rp->fetch_rows = NULL;
    rp->loc_val = rp->coll_val = rp->fet_val = NULL;
}

static int build_range(const tf_csr *a, int64_t row_base, int p0, int p1,
                       const tf_analysis *an, int keep_arrays, tf_plan *plan)
{
    int np = p1 - p0;
    plan->parts = calloc((size_t)(np > 0 ? np : 1), sizeof *plan->parts);
    if (!plan->parts)
        return tf_fail(TF_ERR_NOMEM, "out of memory for %d rank plans", np);
    plan->first_rank = p0;
    plan->n_parts = np;
    int st = build_stripe_table(an, plan);
    if (st)
        return st;
    int failed = TF_OK;
    char msg[512] = "";
#pragma omp parallel for schedule(dynamic, 1)
    for (int p = p0; p < p1; p++) {
        int s = build_rank(a, row_base, an, plan, p, &plan->parts[p - p0]);
        if (s == TF_OK && !keep_arrays)
            tf_build_drop_arrays(&plan->parts[p - p0]);
        if (s != TF_OK) {
#pragma omp critical
            {
                if (failed == TF_OK) {
                    failed = s;
                    snprintf(msg, sizeof msg, "%s", tf_error_message());
                }
            }
        }
    }
    if (failed != TF_OK)
        return tf_fail(failed, "%s", msg);
    return TF_OK;
}

int tf_build_parts_range(const tf_csr *a, int64_t row_base, int p0, int p1,
                         const tf_analysis *an, tf_plan *plan)
{
    return build_range(a, row_base, p0, p1, an, 1, plan);
}

int tf_build_parts_range_lean(const tf_csr *a, int64_t row_base, int p0, int p1,
                              const tf_analysis *an, tf_plan *plan)
{
    return build_range(a, row_base, p0, p1, an, 0, plan);
}
