#include "tf_classify.h"
#include "tf_cost_model.h"
#include "tf_error.h"
#include "tf_plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One rank's counts, as a row of int64 so that every planning rank's share
 * adds up exactly (integer sums do not depend on their order, so the plan
 * cannot depend on how many ranks planned it). */
enum {
    C_NNZ_LOCAL,
    C_NNZ_COLL,
    C_NNZ_FETCH,
    C_ROWS_RECV,
    C_PEERS_RECV,
    C_FETCH_ROWS,
    C_FETCH_REQ,
    C_FPEERS_RECV, /* owners it fetches from */
    /* The receiver's B-row reuse (tf_analysis): constant over the rounds. */
    C_LOCAL_MISS,
    C_REMOTE_MISS,
    C_REMOTE_NNZ,
    C_ROWS_LOCAL,  /* rows of the rank: the local kernel writes every one */
    C_REMOTE_ROWS, /* its rows with a remote nonzero */
    C_FETCH_MISS,  /* remote nonzeros missing C rows in column order */
    /* Owner side: the sum of what its recipients contribute. */
    C_ROWS_SENT,
    C_PEERS_SENT,  /* recipients with a collective stripe from it */
    C_FPEERS_SENT, /* ranks fetching from it */
    C_N
};
_Static_assert(C_N == TF_CLASSIFY_COLS && C_ROWS_SENT == TF_CLASSIFY_RECV_COLS,
               "tf_classify.h's table layout: receiver columns first, then the owner's");

/* The model's prediction for a rank with counts x: the same function the
 * built plan's statistics use, so the two cannot drift apart. */
static void count_stats(const tf_coeffs *c, int k, const int64_t *x, tf_rank_stats *s)
{
    memset(s, 0, sizeof *s);
    s->nnz_local = x[C_NNZ_LOCAL];
    s->nnz_local_miss = x[C_LOCAL_MISS];
    s->nnz_coll = x[C_NNZ_COLL];
    s->nnz_coll_miss = tf_coll_miss(x[C_NNZ_COLL], x[C_REMOTE_MISS], x[C_REMOTE_NNZ]);
    s->rows_local = x[C_ROWS_LOCAL];
    s->rows_coll = tf_coll_rows_share(x[C_NNZ_COLL], x[C_REMOTE_ROWS], x[C_REMOTE_NNZ]);
    s->nnz_fetch = x[C_NNZ_FETCH];
    s->nnz_fetch_miss = tf_coll_miss(x[C_NNZ_FETCH], x[C_FETCH_MISS], x[C_REMOTE_NNZ]);
    s->coll_rows_recv = x[C_ROWS_RECV];
    s->coll_rows_sent = x[C_ROWS_SENT];
    s->coll_peers_recv = x[C_PEERS_RECV];
    s->coll_peers_sent = x[C_PEERS_SENT];
    s->fetch_rows = x[C_FETCH_ROWS];
    s->fetch_requests = x[C_FETCH_REQ];
    s->fetch_peers_recv = x[C_FPEERS_RECV];
    s->fetch_peers_sent = x[C_FPEERS_SENT];
    tf_cost_predict(c, k, s);
}

static double count_time(const tf_coeffs *c, int k, const int64_t *x)
{
    tf_rank_stats s;
    count_stats(c, k, x, &s);
    return s.t_total;
}

/* The plan's time: its slowest rank's. With `stats`, every rank's
 * prediction is kept there too (the owners' side of the next round). */
static double plan_time(const tf_coeffs *c, int k, const int64_t *glob, int P,
                        tf_rank_stats *stats)
{
    double m = 0;
    for (int p = 0; p < P; p++) {
        tf_rank_stats s, *out = stats ? &stats[p] : &s;
        count_stats(c, k, glob + (int64_t)p * C_N, out);
        m = fmax(m, out->t_total);
    }
    return m;
}

/* Working state of the receivers this caller classifies. */
typedef struct {
    const tf_analysis *an;
    const tf_coeffs *c;
    int k, p0, p1;
    int64_t e0, e1;    /* their sparse stripes */
    int64_t *seg_of;   /* per stripe: its (receiver, owner) segment */
    int32_t *seg_size; /* per segment: its stripes */
    int32_t *seg_coll; /* per segment: how many are collective */
    int32_t *seg_q;    /* per segment: the owner */
    int64_t nseg;
    /* Per segment, during one receiver's turn: what its moves changed in
     * the owner's counts (rows, collective peers, fetch peers). */
    int64_t (*dq)[3];
    /* Per segment, for the round: how many receivers of lower rank have
     * a collective stripe ([0]) and a fetched one ([1]) from its owner;
     * [2], [3]: the same at the receiver's last turn. */
    int64_t (*pos)[4];
    int64_t *order; /* stripes by ascending key within each receiver */
    double *key;
    /* Every rank's prediction from the agreed counts of the round (glob):
     * an owner's receiving side does not change within a round, so a move
     * reprices only what it sends (tf_cost_predict_sends). */
    tf_rank_stats *glob_stats;
} state;

/* Adds the counts of the stripes [e0, e1) of receiver p, in their current
 * classes, to row p (receiver side) and their owners' rows (owner side). */
static void add_counts(const state *st, int p, const uint8_t *cls, int64_t *rows)
{
    const tf_analysis *an = st->an;
    int64_t *r = rows + (int64_t)p * C_N;
    r[C_NNZ_LOCAL] += an->nnz_local[p];
    r[C_LOCAL_MISS] += an->local_miss[p];
    r[C_REMOTE_MISS] += an->remote_miss[p];
    r[C_REMOTE_NNZ] += an->remote_nnz[p];
    r[C_ROWS_LOCAL] += an->row_off[p + 1] - an->row_off[p];
    r[C_REMOTE_ROWS] += an->remote_rows[p];
    r[C_FETCH_MISS] += an->fetch_miss[p];
    for (int64_t e = an->ss_off[p]; e < an->ss_off[p + 1]; e++) {
        int64_t g = st->seg_of[e];
        int64_t *o = rows + (int64_t)st->seg_q[g] * C_N;
        if (cls[e] == TF_CLASS_COLL) {
            int64_t n = tf_coll_rows_of(an, e);
            r[C_NNZ_COLL] += an->ss_nnz[e];
            r[C_ROWS_RECV] += n;
            o[C_ROWS_SENT] += n;
        } else {
            r[C_NNZ_FETCH] += an->ss_nnz[e];
            r[C_FETCH_ROWS] += an->ss_run_rows[e];
            r[C_FETCH_REQ] += an->ss_runs[e];
        }
        /* A segment's peers count once, at its first stripe. */
        if (e == an->ss_off[p] || st->seg_of[e - 1] != g) {
            int32_t nc = 0, nf = 0;
            for (int64_t x = e; x < an->ss_off[p + 1] && st->seg_of[x] == g; x++)
                *(cls[x] == TF_CLASS_COLL ? &nc : &nf) += 1;
            if (nc) {
                r[C_PEERS_RECV]++;
                o[C_PEERS_SENT]++;
            }
            if (nf) {
                r[C_FPEERS_RECV]++;
                o[C_FPEERS_SENT]++;
            }
        }
    }
}

/* Moves stripe e of the receiver whose live counts are `me` to the other
 * class, recording the owner's change in dq. */
static void move(state *st, int64_t *me, int64_t e, int to_fetch)
{
    const tf_analysis *an = st->an;
    int64_t g = st->seg_of[e];
    int64_t rows = tf_coll_rows_of(an, e);
    int sign = to_fetch ? -1 : 1;
    me[C_NNZ_COLL] += sign * an->ss_nnz[e];
    me[C_NNZ_FETCH] -= sign * an->ss_nnz[e];
    me[C_ROWS_RECV] += sign * rows;
    me[C_FETCH_ROWS] -= sign * an->ss_run_rows[e];
    me[C_FETCH_REQ] -= sign * an->ss_runs[e];
    st->dq[g][0] += sign * rows;
    int32_t before = st->seg_coll[g];
    st->seg_coll[g] += sign;
    if ((before == 0) != (st->seg_coll[g] == 0)) {
        me[C_PEERS_RECV] += sign;
        st->dq[g][1] += sign;
    }
    int32_t fbefore = st->seg_size[g] - before, fafter = st->seg_size[g] - st->seg_coll[g];
    if ((fbefore == 0) != (fafter == 0)) {
        me[C_FPEERS_RECV] -= sign;
        st->dq[g][2] -= sign;
    }
}

/* Owner q's time with `mult` times the change d to its counts: what
 * count_time gives for them, from the round's prediction of q. */
static double owner_time(const state *st, const int64_t *glob, int q, const int64_t *d,
                         int64_t mult)
{
    const int64_t *x = glob + (int64_t)q * C_N;
    tf_rank_stats s = st->glob_stats[q];
    int64_t v[3];
    static const int field[3] = {C_ROWS_SENT, C_PEERS_SENT, C_FPEERS_SENT};
    for (int i = 0; i < 3; i++) {
        v[i] = x[field[i]] + mult * d[i];
        if (v[i] < 0)
            v[i] = 0;
    }
    s.coll_rows_sent = v[0];
    s.coll_peers_sent = v[1];
    s.fetch_peers_sent = v[2];
    tf_cost_predict_sends(st->c, st->k, &s);
    return s.t_total;
}

/* One receiver's turn: the greedy over its own stripes in ascending key,
 * against the counts agreed at the end of the previous round (glob). A
 * stripe goes to fetch when that lowers the larger time of the two ranks it
 * involves, or lowers total work (key < 0) without raising it; back to
 * collective on the mirrored test. One pass: a move that pays off only
 * after later ones gets its turn in the next round.
 *
 * Every recipient of an owner decides at once against the same counts, so
 * a receiver sees the owner changed by its own moves times the recipients
 * that could make them (m: without that, all of them would convert until
 * the owner looked idle, and overshoot), and judges each move as if the
 * recipients before it in rank order (pos[g] of them) had made it already.
 * The second part breaks the tie between identical recipients: of many
 * recipients of one overloaded stripe, the first ones convert and the rest
 * see an owner already relieved, as in a serial greedy, instead of all
 * converting or none. */
static int64_t receiver_turn(state *st, const int64_t *glob, int p, uint8_t *cls)
{
    const tf_analysis *an = st->an;
    int64_t me[C_N];
    memcpy(me, glob + (int64_t)p * C_N, sizeof me);
    for (int64_t e = an->ss_off[p]; e < an->ss_off[p + 1]; e++) {
        int64_t g = st->seg_of[e];
        memset(st->dq[g], 0, sizeof st->dq[0]);
        st->pos[g][2] = st->pos[g][0];
        st->pos[g][3] = st->pos[g][1];
    }
    double t_me = st->glob_stats[p].t_total; /* count_time(me), from the round's */
    int64_t moves = 0;
    for (int64_t i = an->ss_off[p]; i < an->ss_off[p + 1]; i++) {
        int64_t e = st->order[i - st->e0];
        int64_t g = st->seg_of[e];
        int q = st->seg_q[g];
        int to_fetch = cls[e] == TF_CLASS_COLL;
        int64_t n = st->pos[g][to_fetch ? 0 : 1], was[3], d[3];
        memcpy(was, st->dq[g], sizeof was);
        move(st, me, e, to_fetch);
        /* Recipients that could make the move: all count for what the
         * receiver did so far, those before it for this move. */
        int64_t m = glob[(int64_t)q * C_N + (to_fetch ? C_PEERS_SENT : C_FPEERS_SENT)];
        m = m > n + 1 ? m : n + 1;
        for (int f = 0; f < 3; f++) {
            d[f] = st->dq[g][f] - was[f];
            was[f] = m * was[f] + n * d[f];
        }
        double before = fmax(t_me, owner_time(st, glob, q, was, 1));
        double eps = 1e-12 * before;
        double a_me = count_time(st->c, st->k, me);
        int less_work = to_fetch ? st->key[e - st->e0] < 0 : st->key[e - st->e0] > 0;
        /* The receiver's own time alone can rule the move out. */
        int ok = a_me < before - eps || (a_me <= before + eps && less_work);
        if (ok) {
            double after = fmax(a_me, owner_time(st, glob, q, st->dq[g], m));
            ok = after < before - eps || (after <= before + eps && less_work);
        }
        if (ok) {
            cls[e] = to_fetch ? TF_CLASS_FETCH : TF_CLASS_COLL;
            t_me = a_me;
            moves++;
        } else {
            move(st, me, e, !to_fetch);
        }
    }
    return moves;
}

/* Whether receiver p's turn would read other counts than at its last turn
 * (its own row, an owner's, its positions): a receiver that moved nothing
 * then, against the same counts, would move nothing again. */
static int inputs_changed(const state *st, const int64_t *glob, const int64_t *prev, int p)
{
    const tf_analysis *an = st->an;
    size_t row = C_N * sizeof *glob;
    if (memcmp(glob + (int64_t)p * C_N, prev + (int64_t)p * C_N, row))
        return 1;
    for (int64_t e = an->ss_off[p]; e < an->ss_off[p + 1]; e++) {
        int64_t g = st->seg_of[e];
        if ((e == an->ss_off[p] || st->seg_of[e - 1] != g) &&
            (memcmp(glob + (int64_t)st->seg_q[g] * C_N, prev + (int64_t)st->seg_q[g] * C_N, row) ||
             st->pos[g][0] != st->pos[g][2] || st->pos[g][1] != st->pos[g][3]))
            return 1;
    }
    return 0;
}

/* Sorts idx[0..n) by (key[idx - base], idx): a merge sort, deterministic. */
static void sort_by_key(int64_t *idx, int64_t *tmp, int64_t n, const double *key, int64_t base)
{
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n;
            int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, w = lo;
            while (i < mid && j < hi) {
                int64_t a = idx[i], b = idx[j];
                double ka = key[a - base], kb = key[b - base];
                tmp[w++] = ka < kb || (ka == kb && a < b) ? idx[i++] : idx[j++];
            }
            while (i < mid)
                tmp[w++] = idx[i++];
            while (j < hi)
                tmp[w++] = idx[j++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof *idx);
    }
}

/* The callers' sum, after agreeing on their status (one process: none). */
static int sum_all(tf_classify_sum_fn sum, void *ctx, int64_t *v, int64_t n, int status)
{
    return sum ? sum(v, status ? 0 : n, TF_CLASSIFY_SUM, status, ctx) : status;
}

/* The sum over the callers of lower receivers (one process: zero). */
static int sum_before(tf_classify_sum_fn sum, void *ctx, int64_t *v, int64_t n, int status)
{
    if (!sum) {
        if (status == TF_OK)
            memset(v, 0, (size_t)n * sizeof *v);
        return status;
    }
    return sum(v, status ? 0 : n, TF_CLASSIFY_EXSCAN, status, ctx);
}

/* pos of every segment for the round: counts per owner of the receivers
 * before each one with a collective / fetched stripe from it, ranks of the
 * other callers included (their counts come from sum_before). */
static int positions(state *st, const uint8_t *cls, int64_t *scan, tf_classify_sum_fn sum,
                     void *ctx, int status)
{
    const tf_analysis *an = st->an;
    const int P = an->nranks;
    for (int64_t g = 0; g < st->nseg; g++)
        st->seg_coll[g] = 0;
    for (int64_t e = st->e0; e < st->e1; e++)
        st->seg_coll[st->seg_of[e]] += cls[e] == TF_CLASS_COLL;
    if (status == TF_OK) {
        memset(scan, 0, (size_t)2 * P * sizeof *scan);
        for (int64_t g = 0; g < st->nseg; g++) {
            scan[2 * st->seg_q[g]] += st->seg_coll[g] > 0;
            scan[2 * st->seg_q[g] + 1] += st->seg_coll[g] < st->seg_size[g];
        }
    }
    status = sum_before(sum, ctx, scan, 2 * (int64_t)P, status);
    if (status)
        return status;
    for (int64_t g = 0; g < st->nseg; g++) {
        int64_t *x = scan + 2 * st->seg_q[g];
        st->pos[g][0] = x[0];
        st->pos[g][1] = x[1];
        /* A receiver's segments have distinct owners, and the next
         * receiver's segments follow: count this one after reading. */
        x[0] += st->seg_coll[g] > 0;
        x[1] += st->seg_coll[g] < st->seg_size[g];
    }
    return TF_OK;
}

static void state_free(state *st)
{
    free(st->seg_of);
    free(st->seg_size);
    free(st->seg_coll);
    free(st->seg_q);
    free(st->dq);
    free(st->pos);
    free(st->order);
    free(st->key);
    free(st->glob_stats);
}

/* Segments, keys and per-receiver order of the stripes of [p0, p1). */
static int state_init(state *st)
{
    const tf_analysis *an = st->an;
    int64_t T = st->e1 - st->e0, n = T ? T : 1;
    st->seg_of = malloc((size_t)(an->ss_off[an->nranks] ? an->ss_off[an->nranks] : 1) *
                        sizeof *st->seg_of);
    st->seg_size = calloc((size_t)n, sizeof *st->seg_size);
    st->seg_coll = calloc((size_t)n, sizeof *st->seg_coll);
    st->seg_q = malloc((size_t)n * sizeof *st->seg_q);
    st->dq = calloc((size_t)n, sizeof *st->dq);
    st->pos = calloc((size_t)n, sizeof *st->pos);
    st->order = malloc((size_t)n * sizeof *st->order);
    st->key = malloc((size_t)n * sizeof *st->key);
    st->glob_stats = malloc((size_t)an->nranks * sizeof *st->glob_stats);
    int64_t *tmp = malloc((size_t)n * sizeof *tmp);
    if (!st->seg_of || !st->seg_size || !st->seg_coll || !st->seg_q || !st->dq || !st->pos ||
        !st->order || !st->key || !st->glob_stats || !tmp) {
        free(tmp);
        state_free(st);
        return tf_fail(TF_ERR_NOMEM, "out of memory classifying %lld stripes", (long long)T);
    }
    const tf_coeffs *c = st->c;
    const int k = st->k;
    const double row_bytes = (c->elem_bytes == 2 ? 2.0 : 4.0) * k; /* f, as tf_cost_model */
    for (int p = st->p0; p < st->p1; p++) {
        int lastq = -1;
        for (int64_t e = an->ss_off[p]; e < an->ss_off[p + 1]; e++) {
            int q = an->st_owner[an->ss_stripe[e]];
            if (q != lastq) {
                st->seg_q[st->nseg++] = q;
                lastq = q;
            }
            st->seg_of[e] = st->nseg - 1;
            st->seg_size[st->nseg - 1]++;
            /* Net cost as a fetch: the fetch minus the collective work it
             * removes at the receiver and at the owner (beta_coll_max: each
             * side's busier direction shrinks by at most the rows, counted
             * once per side like beta_coll). */
            double fetch = tf_cost_fetch(c, k, an->ss_runs[e], an->ss_run_rows[e], an->ss_nnz[e]);
            double saved = (c->beta_coll * 2.0 + c->beta_coll_max * 2.0) *
                               (double)tf_coll_rows_of(an, e) * row_bytes +
                           tf_cost_csr(c, c->gamma_coll, k, an->ss_nnz[e],
                                       tf_coll_miss_of(an, p, an->ss_nnz[e])) +
                           tf_cost_rows(c, k, tf_coll_rows_share_of(an, p, an->ss_nnz[e]));
            st->key[e - st->e0] = fetch - saved;
            st->order[e - st->e0] = e;
        }
        int64_t b = an->ss_off[p] - st->e0;
        sort_by_key(st->order + b, tmp, an->ss_off[p + 1] - an->ss_off[p], st->key, st->e0);
    }
    free(tmp);
    return TF_OK;
}

int tf_classify_part(tf_analysis *an, int p0, int p1, const tf_coeffs *c, int k,
                     tf_classify_sum_fn sum, void *ctx)
{
    const int P = an->nranks;
    const int64_t rows = (int64_t)P * C_N;
    state st;
    memset(&st, 0, sizeof st);
    st.an = an;
    st.c = c;
    st.k = k;
    st.p0 = p0;
    st.p1 = p1;
    st.e0 = an->ss_off[p0];
    st.e1 = an->ss_off[p1];
    const int64_t T = st.e1 - st.e0;
    uint8_t *cls = an->ss_class;
    int status = state_init(&st);
    int inited = status == TF_OK;
    /* Five tables of P rows: the agreed counts, this caller's share of the
     * next ones (and its moves in the round), the two pure plans', the
     * previous round's; and two counts per rank for positions(). */
    int64_t *glob = inited ? calloc((size_t)rows * 5 + 1 + 2 * (size_t)P, sizeof *glob) : NULL;
    uint8_t *best = inited ? malloc((size_t)(T ? T : 1)) : NULL;
    uint8_t *settled = inited ? calloc((size_t)P, 1) : NULL;
    if (inited && (!glob || !best || !settled))
        status = tf_fail(TF_ERR_NOMEM, "out of memory classifying for %d ranks", P);
    int64_t *own = glob ? glob + rows : NULL, *pure_f = glob ? own + rows + 1 : NULL;
    int64_t *pure_c = glob ? pure_f + rows : NULL, *prev = glob ? pure_c + rows : NULL;
    int64_t *scan = glob ? prev + rows : NULL;
    if (status == TF_OK) {
        memset(cls + st.e0, TF_CLASS_FETCH, (size_t)T);
        for (int p = p0; p < p1; p++)
            add_counts(&st, p, cls, pure_f);
        memset(cls + st.e0, TF_CLASS_COLL, (size_t)T);
        for (int p = p0; p < p1; p++)
            add_counts(&st, p, cls, pure_c);
    }
    /* Every caller reaches every sum, a failed one too, so that none waits
     * for it. */
    status = sum_all(sum, ctx, pure_f, 2 * rows, status);
    double t_best = 0;
    if (status == TF_OK) {
        memcpy(glob, pure_c, (size_t)rows * sizeof *glob);
        t_best = plan_time(c, k, glob, P, st.glob_stats);
        memcpy(best, cls + st.e0, (size_t)T);
    }
    /* Rounds from all-collective: every receiver moves its own stripes
     * against the counts agreed at the end of the previous round, then the
     * new counts are summed. The best round is kept: the receivers move at
     * once, so a round need not improve on the last. A round in which no
     * receiver moved ends them: every later one would read the same counts
     * and move nothing either (the same result as running them all). */
    for (int round = 0; round < TF_CLASSIFY_ROUNDS && status == TF_OK; round++) {
        status = positions(&st, cls, scan, sum, ctx, status);
        if (status)
            break;
        memset(own, 0, (size_t)(rows + 1) * sizeof *own);
        for (int p = p0; p < p1; p++)
            if (!settled[p] || inputs_changed(&st, glob, prev, p)) {
                int64_t moves = receiver_turn(&st, glob, p, cls);
                settled[p] = moves == 0;
                own[rows] += moves;
            }
        for (int p = p0; p < p1; p++)
            add_counts(&st, p, cls, own);
        status = sum_all(sum, ctx, own, rows + 1, status);
        if (status || own[rows] == 0)
            break;
        memcpy(prev, glob, (size_t)rows * sizeof *glob);
        memcpy(glob, own, (size_t)rows * sizeof *glob);
        double t = plan_time(c, k, glob, P, st.glob_stats);
        if (t < t_best * (1.0 - 1e-9)) {
            t_best = t;
            memcpy(best, cls + st.e0, (size_t)T);
        }
    }
    if (status == TF_OK) {
        /* One stripe at a time cannot see a saving that needs many
         * conversions together (the handshake with an owner is paid once,
         * by the first fetch from it): the pure plans are compared whole,
         * and ties keep the rounds' plan. */
        memcpy(cls + st.e0, best, (size_t)T);
        double tf = plan_time(c, k, pure_f, P, NULL), tc = plan_time(c, k, pure_c, P, NULL);
        if (tf < t_best * (1.0 - 1e-9) && tf <= tc)
            memset(cls + st.e0, TF_CLASS_FETCH, (size_t)T);
        else if (tc < t_best * (1.0 - 1e-9))
            memset(cls + st.e0, TF_CLASS_COLL, (size_t)T);
    }
    free(glob);
    free(best);
    free(settled);
    if (inited)
        state_free(&st);
    return status;
}

int tf_classify(tf_analysis *an, const tf_coeffs *c, int k, int mode)
{
    if (mode == TF_MODE_FETCH || mode == TF_MODE_COLLECTIVE) {
        memset(an->ss_class, mode == TF_MODE_FETCH ? TF_CLASS_FETCH : TF_CLASS_COLL,
               (size_t)an->ss_off[an->nranks]);
        return TF_OK;
    }
    return tf_classify_part(an, 0, an->nranks, c, k, NULL, NULL);
}
