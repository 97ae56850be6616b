/* twoface-calibrate --validate: does the model predict what the executor
 * does? Runs plans through the public executor API exactly as an
 * application would (tf_open, tf_context_create, B from tf_dense_fill,
 * warm-up, timed tf_spmm, tf_timing_get) and puts the measured time of each
 * half beside the planner's prediction stored in the plan (all_stats).
 *
 * Measured halves, per rank and per SpMM (means over the timed calls):
 *   collective half = coll_wait + local_comp + coll_comp
 *   fetch half      = fetch_wait + fetch_comp
 *   total           = the whole tf_spmm
 * The SpMM time is the median over calls of the time from the first rank's
 * start to the last rank's end (tf_cal_sample_times; the slowest rank's own
 * time across nodes), the quantity the planner minimises (max_p T(p)).
 *
 * Several plans are run interleaved, one SpMM of each in turn: on a shared
 * machine the speed drifts between consecutive runs by more than the
 * differences between plans being compared (sensitivity experiments), and
 * interleaving spreads the drift evenly. */
#include "tf_calibrate.h"
#include "tf_cost_model.h"
#include "tf_dense.h"
#include "tf_error.h"
#include "tf_plan.h"
#include "tf_plan_io.h"
#include "twoface.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Measured per-rank quantities, per SpMM. */
enum {
    M_TOTAL, M_LOCAL, M_CWAIT, M_CCOMP, M_FWAIT, M_FCOMP, M_MERGE, M_SYNC, M_COLL_HALF,
    M_FETCH_HALF, M_OTHER, NM
};

typedef struct {
    const char *path;
    tf_handle *h;
    tf_ctx *ctx;
    float *c;
    int k;
    tf_plan hdr;     /* rank 0: header and all_stats */
    double *wall;    /* per timed call: start, then the call's time after the loop */
    double *wend;    /* per timed call: end */
    double *meas;    /* rank 0: nranks x NM */
} vplan;

/* Relative error of a prediction; NaN ("-") when the rank has no such work:
 * a half measured under a microsecond is bookkeeping, not work. */
static double rel_err(double pred, double meas)
{
    return meas >= 1e-6 ? (pred - meas) / meas : NAN;
}

static void print_err(FILE *f, double e)
{
    if (isnan(e))
        fprintf(f, " %7s", "-");
    else
        fprintf(f, " %+6.1f%%", 100.0 * e);
}

static void json_num(FILE *f, const char *key, double v, int comma)
{
    if (isnan(v))
        fprintf(f, "\"%s\": null%s", key, comma ? ", " : "");
    else
        fprintf(f, "\"%s\": %.6g%s", key, v, comma ? ", " : "");
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

/* Predicted stats of every rank at the run's K (the plan's own when K is
 * the planned one; recomputed from the stored counts otherwise). */
static void predicted(const vplan *v, int p, tf_rank_stats *s)
{
    *s = v->hdr.all_stats[p];
    if (v->k != v->hdr.k_planned)
        tf_cost_predict(&v->hdr.coeffs, v->k, s);
}

static void report(FILE *f, const vplan *v, int nranks, const tf_validate_options *o,
                   int nplans, int threads, int threads_fetch)
{
    double med = tf_median(v->wall, o->iters);
    double pred_max = 0.0;
    int64_t st_coll = 0, st_fetch = 0, reqs = 0;
    for (int p = 0; p < nranks; p++) {
        tf_rank_stats s;
        predicted(v, p, &s);
        pred_max = fmax(pred_max, s.t_total);
        st_coll += s.stripes_coll;
        st_fetch += s.stripes_fetch;
        reqs += s.fetch_requests;
    }
    if (o->json) {
        fprintf(f, "{\"plan\": ");
        json_str(f, v->path);
        fprintf(f, ", \"mode\": ");
        json_str(f, tf_mode_name(v->hdr.mode));
        fprintf(f, ", \"k\": %d, \"k_planned\": %d, \"ranks\": %d, \"threads\": %d, "
                   "\"threads_fetch\": %d, \"model_threads\": %d, \"iterations\": %d, "
                   "\"plans_interleaved\": %d, ",
                v->k, v->hdr.k_planned, nranks, threads, threads_fetch, v->hdr.coeffs.threads,
                o->iters, nplans);
        fprintf(f, "\"stripes_coll\": %lld, \"stripes_fetch\": %lld, \"fetch_requests\": %lld, ",
                (long long)st_coll, (long long)st_fetch, (long long)reqs);
        json_num(f, "median_s", med, 1);
        json_num(f, "min_s", v->wall[0], 1); /* sorted by the median */
        json_num(f, "pred_s", pred_max, 1);
        json_num(f, "err", rel_err(pred_max, med), 1);
        /* Summaries over ranks, for tables: mean |relative error| of each
         * half and of the rank totals, and the slowest rank's halves. */
        double mae[3] = {0, 0, 0}, pmax[2] = {0, 0}, mmax[5] = {0, 0, 0, 0, 0};
        int cnt[3] = {0, 0, 0};
        for (int p = 0; p < nranks; p++) {
            tf_rank_stats s;
            predicted(v, p, &s);
            const double *m = v->meas + (size_t)p * NM;
            double e[3] = {rel_err(s.t_coll_half, m[M_COLL_HALF]),
                           rel_err(s.t_fetch_half, m[M_FETCH_HALF]), rel_err(s.t_total, m[M_TOTAL])};
            for (int j = 0; j < 3; j++)
                if (!isnan(e[j])) {
                    mae[j] += fabs(e[j]);
                    cnt[j]++;
                }
            pmax[0] = fmax(pmax[0], s.t_coll_half);
            pmax[1] = fmax(pmax[1], s.t_fetch_half);
            mmax[0] = fmax(mmax[0], m[M_COLL_HALF]);
            mmax[1] = fmax(mmax[1], m[M_FETCH_HALF]);
            mmax[2] = fmax(mmax[2], m[M_TOTAL]);
            mmax[3] = fmax(mmax[3], m[M_SYNC]);
            mmax[4] = fmax(mmax[4], m[M_OTHER]);
        }
        json_num(f, "mae_coll_half", cnt[0] ? mae[0] / cnt[0] : NAN, 1);
        json_num(f, "mae_fetch_half", cnt[1] ? mae[1] / cnt[1] : NAN, 1);
        json_num(f, "mae_total", cnt[2] ? mae[2] / cnt[2] : NAN, 1);
        json_num(f, "pred_coll_max_s", pmax[0], 1);
        json_num(f, "meas_coll_max_s", mmax[0], 1);
        json_num(f, "pred_fetch_max_s", pmax[1], 1);
        json_num(f, "meas_fetch_max_s", mmax[1], 1);
        json_num(f, "meas_total_max_s", mmax[2], 1);
        json_num(f, "meas_sync_max_s", mmax[3], 1);
        json_num(f, "meas_other_max_s", mmax[4], 1);
        fprintf(f, "\"per_rank\": [");
        for (int p = 0; p < nranks; p++) {
            tf_rank_stats s;
            predicted(v, p, &s);
            const double *m = v->meas + (size_t)p * NM;
            fprintf(f, "%s{\"rank\": %d, ", p ? ", " : "", p);
            json_num(f, "pred_coll_s", s.t_coll_half, 1);
            json_num(f, "meas_coll_s", m[M_COLL_HALF], 1);
            json_num(f, "pred_fetch_s", s.t_fetch_half, 1);
            json_num(f, "meas_fetch_s", m[M_FETCH_HALF], 1);
            json_num(f, "pred_total_s", s.t_total, 1);
            json_num(f, "meas_total_s", m[M_TOTAL], 1);
            json_num(f, "pred_local_s", s.t_local, 1);
            json_num(f, "meas_local_s", m[M_LOCAL], 1);
            json_num(f, "pred_coll_comm_s", s.t_coll_comm, 1);
            json_num(f, "meas_coll_wait_s", m[M_CWAIT], 1);
            json_num(f, "pred_coll_comp_s", s.t_coll_comp, 1);
            json_num(f, "meas_coll_comp_s", m[M_CCOMP], 1);
            json_num(f, "pred_fetch_comm_s", s.t_fetch_comm, 1);
            json_num(f, "meas_fetch_wait_s", m[M_FWAIT], 1);
            json_num(f, "pred_fetch_comp_s", s.t_fetch_comp, 1);
            json_num(f, "meas_fetch_comp_s", m[M_FCOMP], 1);
            json_num(f, "meas_merge_s", m[M_MERGE], 1);
            json_num(f, "meas_sync_s", m[M_SYNC], 1);
            json_num(f, "meas_other_s", m[M_OTHER], 0);
            fprintf(f, "}");
        }
        fprintf(f, "]}\n");
        return;
    }
    fprintf(f, "plan %s: mode %s, %d ranks, K = %d (planned %d), %d thread(s) per rank "
               "(fetch group %d), model for %d thread(s); %d SpMMs after %d warm-up(s)%s\n",
            v->path, tf_mode_name(v->hdr.mode), nranks, v->k, v->hdr.k_planned, threads,
            threads_fetch, v->hdr.coeffs.threads, o->iters, o->warmup,
            nplans > 1 ? ", interleaved with the other plans" : "");
    fprintf(f, "  stripes: %lld collective, %lld fetch; %lld fetch requests per SpMM\n",
            (long long)st_coll, (long long)st_fetch, (long long)reqs);
    fprintf(f, "  per rank, ms per SpMM (halves: predicted / measured / error):\n");
    fprintf(f, "  %4s %9s %9s %8s %9s %9s %8s %9s %9s %8s\n", "rank", "coll_pred", "coll_meas",
            "err", "fet_pred", "fet_meas", "err", "tot_pred", "tot_meas", "err");
    for (int p = 0; p < nranks; p++) {
        tf_rank_stats s;
        predicted(v, p, &s);
        const double *m = v->meas + (size_t)p * NM;
        fprintf(f, "  %4d %9.3f %9.3f", p, 1e3 * s.t_coll_half, 1e3 * m[M_COLL_HALF]);
        print_err(f, rel_err(s.t_coll_half, m[M_COLL_HALF]));
        fprintf(f, " %9.3f %9.3f", 1e3 * s.t_fetch_half, 1e3 * m[M_FETCH_HALF]);
        print_err(f, rel_err(s.t_fetch_half, m[M_FETCH_HALF]));
        fprintf(f, " %9.3f %9.3f", 1e3 * s.t_total, 1e3 * m[M_TOTAL]);
        print_err(f, rel_err(s.t_total, m[M_TOTAL]));
        fputc('\n', f);
    }
    fprintf(f, "  terms, ms per SpMM (predicted / measured): local, collective comm / wait, "
               "collective compute, fetch comm / wait, fetch compute; measured merge, final sync, "
               "other (in no timing bucket)\n");
    for (int p = 0; p < nranks; p++) {
        tf_rank_stats s;
        predicted(v, p, &s);
        const double *m = v->meas + (size_t)p * NM;
        fprintf(f, "  %4d %7.3f/%-7.3f %7.3f/%-7.3f %7.3f/%-7.3f %7.3f/%-7.3f %7.3f/%-7.3f "
                   "%7.3f %7.3f %7.3f\n",
                p, 1e3 * s.t_local, 1e3 * m[M_LOCAL], 1e3 * s.t_coll_comm, 1e3 * m[M_CWAIT],
                1e3 * s.t_coll_comp, 1e3 * m[M_CCOMP], 1e3 * s.t_fetch_comm, 1e3 * m[M_FWAIT],
                1e3 * s.t_fetch_comp, 1e3 * m[M_FCOMP], 1e3 * m[M_MERGE], 1e3 * m[M_SYNC],
                1e3 * m[M_OTHER]);
    }
    fprintf(f, "  SpMM (slowest rank): predicted %.3f ms, measured %.3f ms (median, first start "
               "to last end; min %.3f ms), error",
            1e3 * pred_max, 1e3 * med, 1e3 * v->wall[0]);
    print_err(f, rel_err(pred_max, med));
    fputc('\n', f);
}

int tf_validate(MPI_Comm comm, int nplans, char *const *paths, const tf_validate_options *o,
                FILE *out)
{
    int rank, nranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    if (nplans < 1 || o->iters < 1 || o->warmup < 0)
        return tf_fail(TF_ERR_ARG, "validate: need at least one plan and one iteration");
    vplan *v = calloc((size_t)nplans, sizeof *v);
    int st = v ? TF_OK : tf_fail(TF_ERR_NOMEM, "validate: out of memory");
    st = tf_cal_agree(comm, st);
    if (st) {
        free(v);
        return st;
    }
    tf_exec_options opt;
    tf_exec_options_default(&opt);
    opt.threads = o->threads;
    /* The plan whose prediction is checked, not a trial's winner. */
    opt.select_calls = -1;
    int threads = 1, threads_fetch = 0;

    for (int i = 0; i < nplans && st == TF_OK; i++) {
        v[i].path = paths[i];
        st = tf_open(paths[i], comm, &v[i].h); /* agrees itself */
        if (st) {
            tf_fail_prefix(st, "%s", paths[i]); /* which of the plans given */
            break;
        }
        /* The predictions of every rank, on the rank that prints them. */
        if (rank == 0)
            st = tf_plan_read(paths[i], TF_PLAN_READ_HEADER, &v[i].hdr);
        st = tf_cal_agree(comm, st);
        if (st)
            break;
        v[i].k = o->k > 0 ? o->k : tf_get_k_planned(v[i].h);
        st = tf_context_create(v[i].h, v[i].k, &opt, &v[i].ctx); /* agrees itself */
        if (st) {
            tf_fail_prefix(st, "%s", paths[i]);
            break;
        }
        threads = tf_ctx_threads(v[i].ctx);
        threads_fetch = tf_ctx_threads_fetch(v[i].ctx);
        int64_t b0, nb, r0, nr;
        float *b = tf_b_rows(v[i].ctx, &b0, &nb);
        if (nb > 0)
            tf_dense_fill(b, o->seed, b0, nb, v[i].k);
        tf_get_rows(v[i].h, &r0, &nr);
        size_t cn = (size_t)(nr > 0 ? nr : 1) * (size_t)v[i].k;
        v[i].c = malloc(cn * sizeof *v[i].c);
        v[i].wall = calloc((size_t)o->iters, sizeof *v[i].wall);
        v[i].wend = calloc((size_t)o->iters, sizeof *v[i].wend);
        if (rank == 0)
            v[i].meas = calloc((size_t)nranks * NM, sizeof *v[i].meas);
        if (!v[i].c || !v[i].wall || !v[i].wend || (rank == 0 && !v[i].meas))
            st = tf_fail(TF_ERR_NOMEM, "rank %d: out of memory for C of %s", rank, paths[i]);
        else
            memset(v[i].c, 0, cn * sizeof *v[i].c); /* first touch outside the timing */
        st = tf_cal_agree(comm, st);
    }

    if (st == TF_OK) {
        for (int it = -o->warmup; it < o->iters; it++) {
            /* The order rotates, so that no plan always follows the same
             * other plan (whose data it would find in or evict from cache). */
            for (int j = 0; j < nplans; j++) {
                int i = (j + (it > 0 ? it : 0)) % nplans;
                if (it == 0)
                    tf_timing_reset(v[i].ctx);
                MPI_Barrier(comm);
                double t0 = tf_cal_now();
                int s2 = tf_spmm(v[i].ctx, v[i].c);
                double t1 = tf_cal_now();
                if (s2) /* other ranks may be blocked inside the SpMM (twoface.h) */
                    tf_cal_abort(comm, "%s: SpMM failed: %s", paths[i], tf_error_message());
                if (it >= 0) {
                    v[i].wall[it] = t0;
                    v[i].wend[it] = t1;
                }
            }
        }
        int one_node = tf_cal_one_node(comm);
        for (int i = 0; i < nplans; i++) {
            tf_cal_sample_times(comm, one_node, v[i].wall, v[i].wend, o->iters);
            tf_timing tm;
            tf_timing_get(v[i].ctx, &tm);
            double c = (double)(tm.calls > 0 ? tm.calls : 1), m[NM];
            m[M_TOTAL] = tm.total / c;
            m[M_LOCAL] = tm.local_comp / c;
            m[M_CWAIT] = tm.coll_wait / c;
            m[M_CCOMP] = tm.coll_comp / c;
            m[M_FWAIT] = tm.fetch_wait / c;
            m[M_FCOMP] = tm.fetch_comp / c;
            m[M_MERGE] = tm.merge / c;
            m[M_SYNC] = tm.sync / c;
            m[M_COLL_HALF] = m[M_CWAIT] + m[M_LOCAL] + m[M_CCOMP];
            m[M_FETCH_HALF] = m[M_FWAIT] + m[M_FCOMP];
            /* Time in no bucket of tf_timing: posting the collective and
             * the gets (where a shared-memory transport may do the copies),
             * the start barrier's bookkeeping. In the single-thread path
             * the halves are sequential, so the remainder is meaningful. */
            m[M_OTHER] = m[M_TOTAL] - (threads_fetch > 0 ? fmax(m[M_COLL_HALF], m[M_FETCH_HALF])
                                                         : m[M_COLL_HALF] + m[M_FETCH_HALF]) -
                         m[M_MERGE] - m[M_SYNC];
            MPI_Gather(m, NM, MPI_DOUBLE, v[i].meas, NM, MPI_DOUBLE, 0, comm);
            if (rank == 0 && out) {
                report(out, &v[i], nranks, o, nplans, threads, threads_fetch);
                fflush(out);
            }
        }
    }

    for (int i = nplans - 1; i >= 0; i--) {
        /* Collective frees; every rank reached the same point (agreed). */
        tf_context_free(v[i].ctx);
        tf_close(v[i].h);
        tf_plan_free(&v[i].hdr);
        free(v[i].c);
        free(v[i].wall);
        free(v[i].wend);
        free(v[i].meas);
    }
    free(v);
    return st;
}
