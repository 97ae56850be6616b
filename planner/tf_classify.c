#include "tf_classify.h"
#include "tf_cost_model.h"
#include "tf_error.h"
#include "tf_plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Per-rank running counts during classification. */
typedef struct {
    int64_t nnz_coll, nnz_fetch, rows_recv, rows_sent, peers_recv, peers_sent;
    int64_t fetch_rows, fetch_req;
    int64_t fpeers_recv, fpeers_sent; /* READY/DONE partners */
} counts;

typedef struct {
    const tf_analysis *an;
    const tf_coeffs *c;
    int k;
    counts *cnt;
    /* One segment per (receiver, owner) pair with sparse stripes: how many of
     * them are collective, so peers appear and disappear exactly. */
    int64_t *seg_of;   /* per sparse stripe */
    int32_t *seg_coll; /* per segment */
    int32_t *seg_size; /* per segment: its sparse stripes */
} state;

/* The model's prediction for rank p's running counts: the same function
 * the built plan's statistics use, so the two cannot drift apart. */
static double rank_time(const state *st, int p)
{
    const counts *x = &st->cnt[p];
    tf_rank_stats s;
    memset(&s, 0, sizeof s);
    s.nnz_local = st->an->nnz_local[p];
    s.nnz_local_miss = st->an->local_miss[p];
    s.nnz_coll = x->nnz_coll;
    s.nnz_coll_miss = tf_coll_miss_of(st->an, p, x->nnz_coll);
    s.nnz_fetch = x->nnz_fetch;
    s.coll_rows_recv = x->rows_recv;
    s.coll_rows_sent = x->rows_sent;
    s.coll_peers_recv = x->peers_recv;
    s.coll_peers_sent = x->peers_sent;
    s.fetch_rows = x->fetch_rows;
    s.fetch_requests = x->fetch_req;
    s.fetch_peers_recv = x->fpeers_recv;
    s.fetch_peers_sent = x->fpeers_sent;
    tf_cost_predict(st->c, st->k, &s);
    return s.t_total;
}

static double plan_time(const state *st)
{
    double m = 0;
    for (int p = 0; p < st->an->nranks; p++)
        m = fmax(m, rank_time(st, p));
    return m;
}

/* Moves sparse stripe e of receiver p between classes in the counts. */
static void apply(state *st, int p, int64_t e, int to_fetch)
{
    const tf_analysis *an = st->an;
    int32_t s = an->ss_stripe[e];
    int q = an->st_owner[s];
    int64_t rows = tf_coll_rows_of(an, e);
    int sign = to_fetch ? -1 : 1;
    counts *r = &st->cnt[p], *o = &st->cnt[q];
    r->nnz_coll += sign * an->ss_nnz[e];
    r->nnz_fetch -= sign * an->ss_nnz[e];
    r->rows_recv += sign * rows;
    o->rows_sent += sign * rows;
    r->fetch_rows -= sign * an->ss_run_rows[e];
    r->fetch_req -= sign * an->ss_runs[e];
    int64_t g = st->seg_of[e];
    int32_t before = st->seg_coll[g];
    st->seg_coll[g] += sign;
    if ((before == 0) != (st->seg_coll[g] == 0)) {
        r->peers_recv += sign;
        o->peers_sent += sign;
    }
    int32_t fbefore = st->seg_size[g] - before, fafter = st->seg_size[g] - st->seg_coll[g];
    if ((fbefore == 0) != (fafter == 0)) {
        r->fpeers_recv -= sign;
        o->fpeers_sent -= sign;
    }
}

/* Moves every stripe whose class differs from `cls` to it. */
static void set_all(state *st, const int *recv_of, int cls)
{
    tf_analysis *an = (tf_analysis *)st->an;
    for (int64_t e = 0; e < an->ss_off[an->nranks]; e++)
        if (an->ss_class[e] != cls) {
            apply(st, recv_of[e], e, cls == TF_CLASS_FETCH);
            an->ss_class[e] = (uint8_t)cls;
        }
}

int tf_classify(tf_analysis *an, const tf_coeffs *c, int k, int mode)
{
    int P = an->nranks;
    int64_t T = an->ss_off[P];
    if (mode == TF_MODE_FETCH || mode == TF_MODE_COLLECTIVE) {
        memset(an->ss_class, mode == TF_MODE_FETCH ? TF_CLASS_FETCH : TF_CLASS_COLL, (size_t)T);
        return TF_OK;
    }
    state st = {an, c, k, NULL, NULL, NULL, NULL};
    st.cnt = calloc((size_t)P, sizeof *st.cnt);
    st.seg_of = malloc((size_t)(T ? T : 1) * sizeof *st.seg_of);
    st.seg_coll = calloc((size_t)(T ? T : 1), sizeof *st.seg_coll);
    st.seg_size = calloc((size_t)(T ? T : 1), sizeof *st.seg_size);
    uint8_t *best = malloc((size_t)(T ? T : 1));
    int64_t *order = malloc((size_t)(T ? T : 1) * sizeof *order);
    double *key = malloc((size_t)(T ? T : 1) * sizeof *key);
    int *recv_of = malloc((size_t)(T ? T : 1) * sizeof *recv_of);
    if (!st.cnt || !st.seg_of || !st.seg_coll || !st.seg_size || !best || !order || !key ||
        !recv_of) {
        free(st.seg_size);
        free(best);
        free(st.cnt);
        free(st.seg_of);
        free(st.seg_coll);
        free(order);
        free(key);
        free(recv_of);
        return tf_fail(TF_ERR_NOMEM, "out of memory classifying %lld stripes", (long long)T);
    }
    /* Everything starts as a fetch in the counts, then each stripe is moved
     * to collective: one code path (apply) maintains every count. */
    int64_t nseg = 0;
    for (int p = 0; p < P; p++) {
        int lastq = -1;
        for (int64_t e = an->ss_off[p]; e < an->ss_off[p + 1]; e++) {
            int q = an->st_owner[an->ss_stripe[e]];
            if (q != lastq) {
                nseg++;
                lastq = q;
                st.cnt[p].fpeers_recv++;
                st.cnt[q].fpeers_sent++;
            }
            st.seg_of[e] = nseg - 1;
            st.seg_size[nseg - 1]++;
            recv_of[e] = p;
            st.cnt[p].nnz_fetch += an->ss_nnz[e];
            st.cnt[p].fetch_rows += an->ss_run_rows[e];
            st.cnt[p].fetch_req += an->ss_runs[e];
        }
    }
    double row_bytes = 4.0 * k;
    for (int64_t e = 0; e < T; e++) {
        apply(&st, recv_of[e], e, 0);
        an->ss_class[e] = TF_CLASS_COLL;
        int64_t rows = tf_coll_rows_of(an, e);
        double fetch = tf_cost_fetch(c, k, an->ss_runs[e], an->ss_run_rows[e], an->ss_nnz[e]);
        /* beta_coll_max: each side's busier direction shrinks by at most
         * the rows, counted once per side like beta_coll. */
        double saved = (c->beta_coll * 2.0 + c->beta_coll_max * 2.0) * (double)rows * row_bytes +
                       tf_cost_csr(c, c->gamma_coll, k, an->ss_nnz[e],
                                   tf_coll_miss_of(an, recv_of[e], an->ss_nnz[e]));
        key[e] = fetch - saved;
        order[e] = e;
    }
    /* Sort stripe indices by key (ascending); ties by index for determinism. */
    {
        /* Simple merge sort on (key, index) to stay deterministic and O(T log T). */
        int64_t *tmp = malloc((size_t)(T ? T : 1) * sizeof *tmp);
        if (!tmp) {
            free(st.seg_size);
            free(best);
            free(st.cnt);
            free(st.seg_of);
            free(st.seg_coll);
            free(order);
            free(key);
            free(recv_of);
            return tf_fail(TF_ERR_NOMEM, "out of memory sorting %lld stripes", (long long)T);
        }
        for (int64_t width = 1; width < T; width *= 2) {
            for (int64_t lo = 0; lo < T; lo += 2 * width) {
                int64_t mid = lo + width < T ? lo + width : T;
                int64_t hi = lo + 2 * width < T ? lo + 2 * width : T;
                int64_t i = lo, j = mid, w = lo;
                while (i < mid && j < hi) {
                    int64_t a = order[i], b = order[j];
                    if (key[a] < key[b] || (key[a] == key[b] && a < b))
                        tmp[w++] = order[i++];
                    else
                        tmp[w++] = order[j++];
                }
                while (i < mid)
                    tmp[w++] = order[i++];
                while (j < hi)
                    tmp[w++] = order[j++];
            }
            memcpy(order, tmp, (size_t)T * sizeof *order);
        }
        free(tmp);
    }
    /* Passes in ascending order until nothing changes (a conversion can make
     * an earlier-rejected one pay off by shifting which rank is critical). */
    for (int pass = 0; pass < 4; pass++) {
        int64_t changed = 0;
        for (int64_t i = 0; i < T; i++) {
            int64_t e = order[i];
            if (an->ss_class[e] != TF_CLASS_COLL)
                continue;
            int p = recv_of[e];
            int q = an->st_owner[an->ss_stripe[e]];
            double before = fmax(rank_time(&st, p), rank_time(&st, q));
            apply(&st, p, e, 1);
            double after = fmax(rank_time(&st, p), rank_time(&st, q));
            double eps = 1e-12 * before;
            if (after < before - eps || (after <= before + eps && key[e] < 0)) {
                an->ss_class[e] = TF_CLASS_FETCH;
                changed++;
            } else {
                apply(&st, p, e, 0);
            }
        }
        if (!changed)
            break;
    }
    /* The greedy pass judges one stripe at a time, so it cannot see a saving
     * that needs many conversions together (the handshake with an owner is
     * paid once, by the first fetch from it). Compare the whole result with
     * the two pure plans and keep the fastest; ties keep the greedy plan. */
    double t_best = plan_time(&st);
    memcpy(best, an->ss_class, (size_t)T);
    const int pure[2] = {TF_CLASS_FETCH, TF_CLASS_COLL};
    for (int i = 0; i < 2; i++) {
        set_all(&st, recv_of, pure[i]);
        double t = plan_time(&st);
        if (t < t_best * (1.0 - 1e-9)) {
            t_best = t;
            memcpy(best, an->ss_class, (size_t)T);
        }
    }
    memcpy(an->ss_class, best, (size_t)T);
    free(st.seg_size);
    free(best);
    free(st.cnt);
    free(st.seg_of);
    free(st.seg_coll);
    free(order);
    free(key);
    free(recv_of);
    return TF_OK;
}
