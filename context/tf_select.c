/* The public context (twoface.h, tf_ctx): a layer over one ordinary SpMM
 * context (tf_spmm_ctx), or two while the start-up trial between the
 * planner's choice and its runner-up runs (tf_selection; docs/executor.md
 * "Start-up trial"), or the plan's context and dense shifting (tf_shift.h)
 * while the trial is between those. tf_spmm.c runs one plan and knows
 * nothing of the trial.
 *
 * Why at run time: the cost model ranks the two within its own error (the
 * per-graph prediction error reached +160% on skewed graphs on the
 * development machine, and fetch and collective plans often run within 20%
 * of each other), while a few real SpMMs rank them on the machine, the
 * transport and the K actually in use. Both plans compute the same C, so
 * the trial's only cost is the slower plan's excess on a few calls. */
#include "tf_select.h"
#include "tf_exec.h"
#include "tf_median.h"
#include "tf_node.h"
#include "tf_shift.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SELECT_CALLS_DEFAULT 4
/* Timed calls per plan by default: 4, or as many as make each side's trial
 * span TRIAL_WORK x 4 multiply-adds per rank (nonzeros x K / ranks per
 * call), up to SELECT_CALLS_MAX. A scheduler slice where ranks share cores
 * is milliseconds, a call on a small graph a fraction of one: with 4 calls
 * of 0.2 ms (Cora, P = 4 on 2 cores, K = 128), one process in four kept the
 * exchange at 0.93x p2p against in place's 0.34x. */
#define TRIAL_WORK ((double)(1 << 24))
#define SELECT_CALLS_MAX 32
/* In place against the MPI exchange, where ranks share processors and
 * few nonzeros are remote: an owner reading in place returns only when its
 * last reader has computed, so each rank's SpMM also holds the lag with
 * which its readers began - a lag the trial's calls, early and
 * interleaved, show less of than a long run does (cnr-2000, P = 4 on 2
 * cores: trial medians 0.96-1.08x the copies', steady state 1.07x).
 * The exchange stays unless in place is clearly faster. */
#define DIRECT_MARGIN 0.10
/* In place against the collective's copies, where many nonzeros are
 * remote: the other way round. Every remote row the copies move is copied
 * once more, and in place ran faster on every such graph of ../shared/data
 * (0.34-0.55x p2p against 0.57-0.79x), yet the trial's calls showed less
 * of that than a long run (email-Enron, K = 128: trial medians 0.81-0.94x
 * the copies' in float32 and up to 1.12x in bf16, where processes forcing
 * each gave 0.78-0.88x). The copies win only with a median 10 % below in
 * place's. */
#define COPIES_MARGIN (-0.10)
/* Where ranks share processors, the trial's side that does not read in
 * place is the MPI exchange when at most this share of the nonzeros is
 * remote, else the collective's copies: cnr-2000 (3 %) and luxembourg_osm
 * (6 %) ran faster through the exchange, the seven graphs of
 * ../shared/data with many remote rows through the copies, and a GCN on
 * copter2 trained 4 % slower when the trial kept the exchange, which there
 * timed as fast as in place in the trial's calls and ran slower than both
 * afterwards. */
#define XCHG_REMOTE_MAX 0.10
/* The trial starts with one untimed call of each plan. */
#define COLD_CALLS 2
/* Dense shifting is the trial's other side where the cost model predicts
 * it below this share of the plan's time and below the plan's runner-up,
 * if any. Not the runner-up's 2x: the model underprices shifting against
 * the plan (a row of C is reloaded once per band, which the plan's counts
 * cannot see). On the simulated cluster (docs/scale.md, 28 cases) shifting
 * over the plan measured 0.87-3.55x (median 1.4x) the model's ratio;
 * within 2x it entered 20 trials and won 2, the two where the model put it
 * below the plan (cit-HepPh at K = 128: 0.96x and 0.99x), and each lost
 * trial cost the job shifting's excess on the trial's calls. */
#define SHIFT_WITHIN 1.0

struct tf_ctx {
    tf_spmm_ctx *use; /* the plan in use: the planner's choice, after a trial the winner */
    tf_spmm_ctx *alt; /* the runner-up while the trial runs (it shares use's window) */
    /* Dense shifting (tf_shift.h): the trial's other side instead of alt;
     * after a trial it won (it is freed when it loses), what every tf_spmm
     * runs, from use's B. */
    tf_baseline *shift;
    tf_timing shift_timing;
    double *trial_t;  /* 2 x sel.calls call times on this rank, then the max */
    /* The runner-up wins only with a median below (1 - margin) x the
     * planned one's: 0 against the plan's runner-up; where the runner-up is
     * the same plan read in place, DIRECT_MARGIN against the exchange and
     * COPIES_MARGIN (negative: in place wins unless clearly slower)
     * against the copies. */
    double margin;
    tf_selection sel;
};

/* The share of the plan's nonzeros whose B rows are remote (collective
 * and fetch), over every rank. */
static int remote_share(const tf_handle *h, double *share)
{
    const tf_rank_plan *rp = h->rp;
    int64_t n[2] = {rp->loc_nnz + rp->coll_nnz + rp->fet_nnz, rp->coll_nnz + rp->fet_nnz};
    int err = MPI_Allreduce(MPI_IN_PLACE, n, 2, MPI_INT64_T, MPI_SUM, h->comm);
    if (err != MPI_SUCCESS)
        return tf_mpi_fail(err, "MPI_Allreduce (remote nonzeros)");
    *share = n[0] > 0 ? (double)n[1] / (double)n[0] : 0.0;
    return TF_OK;
}

/* The same on every rank: the plan's nonzero count and k are. */
static int default_calls(const tf_handle *h, int k)
{
    const double work = (double)h->plan.nnz * k / (h->nranks > 0 ? h->nranks : 1);
    const double calls = SELECT_CALLS_DEFAULT * TRIAL_WORK / (work > 1.0 ? work : 1.0);
    if (calls <= SELECT_CALLS_DEFAULT)
        return SELECT_CALLS_DEFAULT;
    return calls >= SELECT_CALLS_MAX ? SELECT_CALLS_MAX : (int)ceil(calls);
}

static const char *transport(const tf_spmm_ctx *s)
{
    if (s->direct)
        return "direct";
    return !s->any_coll ? "none" : s->coll_shm ? "shm" : "mpi";
}

int tf_context_create(tf_handle *h, int k, const tf_exec_options *opt, tf_ctx **out)
{
    if (!h || !out)
        return tf_fail(TF_ERR_ARG, "tf_context_create: NULL argument");
    *out = NULL;
    tf_exec_options defaults;
    tf_exec_options_default(&defaults);
    if (!opt)
        opt = &defaults;
    tf_ctx *ctx = calloc(1, sizeof *ctx);
    int st = tf_agree(h->comm, ctx ? TF_OK
                                   : tf_fail(TF_ERR_NOMEM,
                                             "rank %d: cannot allocate a context", h->rank));
    /* One precision for both plans of a trial: they share the window. */
    tf_exec_options o = *opt;
    if (st == TF_OK)
        st = tf_comm_resolve(h, opt->comm, &o.comm); /* agrees */
    opt = &o;
    /* Where every rank is on one node, the SpMM can read its peers' rows
     * in place (tf_node_direct.c); where ranks share processors, whether
     * that beats the other transport is the trial's to find out
     * (docs/executor.md, "One node: B read in place"): the other context
     * first, the one reading in place beside it. The other is the MPI
     * exchange where few nonzeros are remote (remote_share), else the
     * collective's copies. The copies, like in place, hold an owner until
     * its readers are done with its B, which on shared cores waits for
     * their scheduler slices; the exchange's sends do not, but copy every
     * moved row twice (cnr-2000, 3 % remote, P = 4 on 2 cores, K = 32: 0.83-0.91x
     * p2p against 0.98-1.06x for the copies; pubmed, K = 128: 0.97x against
     * 0.76-0.81x). */
    int mode = TF_SHM_AUTO, ttrial = 0, place = TF_PLACE_ANY;
    if (st == TF_OK)
        st = tf_coll_shm_mode(h->comm, &mode); /* agrees */
    if (st == TF_OK && (mode == TF_SHM_TRIAL || mode == TF_SHM_AUTO)) {
        /* Without a trial (select_calls = -1), the copies where ranks
         * share processors: they beat the exchange where many rows move. */
        int crowded = mode == TF_SHM_TRIAL || tf_node_crowded(h, opt);
        ttrial = crowded && opt->select_calls >= 0;
        place = !crowded ? TF_PLACE_ANY : ttrial ? TF_PLACE_LAYOUT : TF_PLACE_NEVER;
        if (ttrial) {
            double share = 0.0;
            st = remote_share(h, &share); /* the same on every rank */
            if (share <= XCHG_REMOTE_MAX)
                place |= TF_PLACE_XCHG;
        }
    }
    if (st == TF_OK)
        st = tf_spmm_ctx_create(h, k, opt, NULL, place, &ctx->use); /* agrees */
    tf_handle *other = NULL;
    if (st == TF_OK && ttrial) {
        st = tf_spmm_ctx_create(h, k, opt, ctx->use, TF_PLACE_ANY, &ctx->alt); /* agrees */
        if (st == TF_OK && !ctx->alt->direct) {
            /* Nothing to read in place (one rank, no remote rows, or
             * the window's layout): the same on every rank. The planned
             * context keeps its transport, the exchange where place has
             * TF_PLACE_XCHG. */
            tf_spmm_ctx_destroy(ctx->alt);
            ctx->alt = NULL;
        } else if (st == TF_OK) {
            other = h;
            ctx->margin = (place & TF_PLACE_XCHG) ? DIRECT_MARGIN : COPIES_MARGIN;
        }
    }
    /* Dense shifting as the other side, unless the SpMM reads in place or
     * the trial is already about reading in place: those are one node's
     * ways, and shift's ring of copies ran slowest of every strategy on one
     * node (docs/benchmarks.md). The model proposes it only across nodes;
     * TWOFACE_SHIFT=c forces it anywhere. Every input is the same on every
     * rank. */
    int shift_c = 0, set = 0;
    if (st == TF_OK)
        st = tf_shift_setting(h, &set); /* agrees: a bad setting fails wherever it is read */
    if (st == TF_OK && !other && opt->select_calls >= 0 && !ctx->use->direct && h->nranks > 1) {
        if (set > 0) {
            shift_c = set;
        } else if (set == 0 && !tf_node_single(h->comm, h->node_ranks)) {
            int c = 0;
            double t = INFINITY;
            tf_shift_predict(h, &c, &t);
            double planned = tf_plan_predicted_time(&h->plan);
            double runner_up = h->alt ? tf_plan_predicted_time(&h->alt->plan) : INFINITY;
            if (t < SHIFT_WITHIN * planned && t < runner_up)
                shift_c = c;
        }
        if (shift_c > 0) {
            st = tf_shift_create(h, k, shift_c, ctx->use->bf16, &ctx->shift); /* agrees */
            /* The model's proposal is optional: where its buffers do not
             * fit (tf_bl_alloc's node budget), the plan runs without it.
             * A forced one fails the context with the reason. */
            if (st != TF_OK && set == 0) {
                st = TF_OK;
                shift_c = 0;
            }
        }
    }
    /* The plan's runner-up, unless the SpMM reads in place: then both
     * classes read the same rows, and there is nothing to choose. h->alt is
     * the same on every rank (tf_open agreed on the plan file). */
    if (st == TF_OK && !other && !ctx->shift && h->alt && opt->select_calls >= 0 &&
        !ctx->use->direct) {
        st = tf_spmm_ctx_create(h->alt, k, opt, ctx->use, TF_PLACE_NEVER, &ctx->alt); /* agrees */
        if (st == TF_OK)
            other = h->alt;
    }
    if (st == TF_OK && (other || ctx->shift)) {
        ctx->sel.trial = 1;
        ctx->sel.calls = opt->select_calls > 0 ? opt->select_calls : default_calls(h, k);
        ctx->sel.calls_total = COLD_CALLS + 2 * ctx->sel.calls;
        if (ctx->shift) {
            snprintf(ctx->sel.classes[1], sizeof ctx->sel.classes[1], "shift(c=%d)", shift_c);
            snprintf(ctx->sel.transport[1], sizeof ctx->sel.transport[1], "ring");
        } else {
            snprintf(ctx->sel.classes[1], sizeof ctx->sel.classes[1], "%s",
                     tf_plan_classes(&other->plan));
            snprintf(ctx->sel.transport[1], sizeof ctx->sel.transport[1], "%s",
                     transport(ctx->alt));
        }
        /* 2 x calls times, then room to split them for the medians */
        ctx->trial_t = calloc(4 * (size_t)ctx->sel.calls, sizeof *ctx->trial_t);
        st = ctx->trial_t ? TF_OK
                          : tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate the trial times",
                                    h->rank);
        st = tf_agree(h->comm, st);
    }
    if (st != TF_OK) {
        tf_context_free(ctx);
        return st;
    }
    snprintf(ctx->sel.classes[0], sizeof ctx->sel.classes[0], "%s", tf_plan_classes(&h->plan));
    snprintf(ctx->sel.transport[0], sizeof ctx->sel.transport[0], "%s", transport(ctx->use));
    *out = ctx;
    return TF_OK;
}

int tf_context_free(tf_ctx *ctx)
{
    if (!ctx)
        return TF_OK;
    tf_baseline_free(ctx->shift);
    tf_spmm_ctx_destroy(ctx->alt); /* first: it uses the window of ctx->use */
    tf_spmm_ctx_destroy(ctx->use);
    free(ctx->trial_t);
    free(ctx);
    return TF_OK;
}

/* ABBA order: call i runs the runner-up when i % 4 is 1 or 2, so that a
 * drift in the machine's speed during the trial (caches warming, a
 * neighbour's load fading) falls on both plans alike. */
static int runs_alt(int i) { return i % 4 == 1 || i % 4 == 2; }

/* The smallest and largest of v[0..n), n >= 1. */
static void span(const double *v, int n, double *lo, double *hi)
{
    *lo = *hi = v[0];
    for (int x = 1; x < n; x++) {
        *lo = v[x] < *lo ? v[x] : *lo;
        *hi = v[x] > *hi ? v[x] : *hi;
    }
}

/* Dense shifting runs every SpMM: it won the trial. */
static int shifting(const tf_ctx *ctx) { return ctx->shift && !ctx->trial_t; }

/* Side 0 is the plan in use, side 1 the runner-up or dense shifting. */
static int run_side(tf_ctx *ctx, int side, float *c)
{
    if (!side)
        return tf_spmm_run(ctx->use, c);
    if (ctx->alt)
        return tf_spmm_run(ctx->alt, c);
    const tf_rank_plan *rp = ctx->use->h->rp;
    return tf_shift_run(ctx->shift, rp->nbrows > 0 ? ctx->use->b : NULL, c, ctx->use->threads,
                        &ctx->shift_timing);
}

/* Calls per side after which a trial may end early, and how often it
 * looks (after every ABBA block). */
#define EARLY_MIN 4

/* One tf_spmm call during the trial; the last one decides, or an earlier
 * one where the two plans do not overlap. A long trial (up to 32 calls per
 * side on small problems) costs the slower plan's excess on every call:
 * where that excess is large, the first calls already show it (a GCN on
 * copter2 at K = 16, P = 4 on 2 cores, spent its first 33 epochs trialling
 * an exchange twice as slow as in place), and where it is small a long
 * trial costs little. So after every ABBA block from EARLY_MIN calls per
 * side on, the trial ends when every call of one plan beat every call of
 * the other by the margin - with no margin and equal plans, 2 chances in 70 at 4
 * calls each. */
static int trial_step(tf_ctx *ctx, float *c)
{
    const int n = 2 * ctx->sel.calls;
    int i = ctx->sel.calls_made - COLD_CALLS;
    if (i < 0) {
        /* The first call of each plan pays for what no later call does
         * (connections set up lazily over TCP, first touches inside MPI):
         * 10x a warm call over TCP. Timed, it made the planned plan, which
         * runs first, lose 5 of 5 trials it should have won (bench run of
         * 17:05): it is run, not timed. */
        ctx->sel.calls_made++;
        return run_side(ctx, i != -COLD_CALLS, c);
    }
    double t0 = MPI_Wtime();
    int st = run_side(ctx, runs_alt(i), c);
    ctx->trial_t[i] = MPI_Wtime() - t0;
    ctx->sel.calls_made++;
    const int done = i + 1;
    const int look = done < n && done % 4 == 0 && done >= 2 * EARLY_MIN;
    if (st != TF_OK || (done < n && !look))
        return st;
    /* An SpMM ends when its slowest rank does. Every rank then holds the same
     * numbers and reaches the same decision. Maxima of maxima are maxima, so
     * the calls reduced at a look are simply reduced again at the end. */
    MPI_Comm comm = ctx->use->h->comm;
    int err = MPI_Allreduce(MPI_IN_PLACE, ctx->trial_t, done, MPI_DOUBLE, MPI_MAX, comm);
    if (err != MPI_SUCCESS)
        return tf_mpi_fail(err, "MPI_Allreduce (start-up trial times)");
    double *mine = ctx->trial_t + n, *other = ctx->trial_t + n + ctx->sel.calls;
    int a = 0, b = 0;
    for (int x = 0; x < done; x++) {
        if (runs_alt(x))
            other[b++] = ctx->trial_t[x];
        else
            mine[a++] = ctx->trial_t[x];
    }
    const double keep = 1.0 - ctx->margin;
    int which = 0;
    if (look) {
        double min0, max0, min1, max1;
        span(mine, a, &min0, &max0);
        span(other, b, &min1, &max1);
        if (max1 < keep * min0)
            which = 1;
        else if (min1 >= keep * max0)
            which = 0;
        else
            return TF_OK; /* they overlap: go on */
    }
    ctx->sel.median[0] = tf_median(mine, a);
    ctx->sel.median[1] = tf_median(other, b);
    if (!look)
        which = ctx->sel.median[1] < keep * ctx->sel.median[0];
    return tf_select_finish(ctx, which);
}

int tf_select_finish(tf_ctx *ctx, int which)
{
    if (!ctx || !ctx->trial_t)
        return tf_fail(TF_ERR_ARG, "tf_select_finish: no start-up trial is running");
    ctx->sel.decided = 1;
    ctx->sel.chose_alternative = which != 0;
    free(ctx->trial_t);
    ctx->trial_t = NULL;
    if (ctx->shift) {
        /* Shifting reads B where the plan's context keeps it, so that
         * context stays whichever wins; its buffers go with the plan. */
        if (!which) {
            tf_baseline_free(ctx->shift); /* collective: the same call on every rank */
            ctx->shift = NULL;
        } else {
            tf_spmm_ctx_release(ctx->use);
        }
        return TF_OK;
    }
    tf_spmm_ctx *loser = which ? ctx->use : ctx->alt;
    if (which) {
        /* The runner-up shares the window the planner's choice allocated. */
        tf_spmm_ctx_take_window(ctx->alt, ctx->use);
        ctx->use = ctx->alt;
    }
    ctx->alt = NULL;
    tf_spmm_ctx_destroy(loser); /* collective: the same call on every rank */
    return TF_OK;
}

int tf_spmm(tf_ctx *ctx, float *c)
{
    if (!ctx)
        return tf_fail(TF_ERR_ARG, "tf_spmm: NULL context");
    const tf_rank_plan *rp = ctx->use->h->rp;
    if (!c && rp->nrows > 0)
        return tf_fail(TF_ERR_ARG, "tf_spmm: NULL C with %lld rows", (long long)rp->nrows);
    if (ctx->trial_t)
        return trial_step(ctx, c);
    return shifting(ctx) ? run_side(ctx, 1, c) : tf_spmm_run(ctx->use, c);
}

/* Both plans of a trial share B and use the same options: the context in
 * use answers for both. */
float *tf_b_rows(tf_ctx *ctx, int64_t *row_begin, int64_t *nrows)
{
    const tf_rank_plan *rp = ctx->use->h->rp;
    if (row_begin)
        *row_begin = rp->brow_begin;
    if (nrows)
        *nrows = rp->nbrows;
    return rp->nbrows > 0 ? ctx->use->b : NULL;
}

int tf_ctx_k(const tf_ctx *ctx) { return ctx->use->k; }
int tf_ctx_threads(const tf_ctx *ctx) { return ctx->use->threads; }
int tf_ctx_threads_fetch(const tf_ctx *ctx) { return ctx->use->threads_fetch; }
int tf_ctx_comm_precision(const tf_ctx *ctx) { return ctx->use->bf16 ? TF_COMM_BF16 : TF_COMM_F32; }

const char *tf_ctx_coll_transport(const tf_ctx *ctx)
{
    return shifting(ctx) ? "ring" : transport(ctx->use);
}

void tf_timing_get(const tf_ctx *ctx, tf_timing *t)
{
    *t = shifting(ctx) ? ctx->shift_timing : ctx->use->timing;
}
void tf_selection_get(const tf_ctx *ctx, tf_selection *s) { *s = ctx->sel; }

/* Both plans' timings: whichever wins a trial still running counts from here. */
void tf_timing_reset(tf_ctx *ctx)
{
    memset(&ctx->use->timing, 0, sizeof ctx->use->timing);
    memset(&ctx->shift_timing, 0, sizeof ctx->shift_timing);
    if (ctx->alt)
        memset(&ctx->alt->timing, 0, sizeof ctx->alt->timing);
}
