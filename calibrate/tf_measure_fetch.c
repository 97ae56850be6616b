/* alpha_fetch and beta_fetch: one-sided fetches done the way the executor's
 * fetch half does them (executor/tf_fetch.c): B in memory from
 * MPI_Win_allocate, one passive-target epoch (MPI_Win_lock_all with
 * MPI_MODE_NOCHECK) for the whole run, each run of L consecutive rows one
 * MPI_Rget of a K-float row type, at most TF_CAL_MAX_REQ requests in flight,
 * refilled as MPI_Waitsome completes them.
 *
 * A point (Q, L): every rank fetches Q runs of L rows, spread round-robin
 * over the other ranks at scattered offsets (a real plan's runs are
 * scattered over the owners' bands). Regressed as
 * t = alpha_fetch * Q + beta_fetch * Q * L * K * 4. */
#include "tf_calibrate.h"
#include "tf_dense.h"
#include "tf_error.h"

#include <stdlib.h>
#include <string.h>

#define NET_K 128
#define WIN_ROWS 8192          /* rows of B per rank: 4 MiB at NET_K */
#define TF_CAL_MAX_REQ 512     /* the executor's default max_requests */

typedef struct {
    int q, l;
} fetch_point;

/* One timed fetch of a point's runs (a failed MPI call ends the job:
 * tf_cal_abort). */
static void fetch_runs(MPI_Win win, MPI_Datatype row, float *buf, int rank, int P,
                      const fetch_point *pt, MPI_Request *req, int *idx, int *slot_free,
                      double *t0, double *t1)
{
    int nfree = TF_CAL_MAX_REQ, inflight = 0, next = 0;
    for (int i = 0; i < TF_CAL_MAX_REQ; i++) {
        slot_free[i] = i;
        req[i] = MPI_REQUEST_NULL;
    }
    *t0 = tf_cal_now();
    while (next < pt->q || inflight > 0) {
        while (next < pt->q && nfree > 0) {
            int r = next++;
            int target = (rank + 1 + r % (P - 1)) % P;
            uint64_t h = tf_mix64((uint64_t)rank * 1000003u + (uint64_t)r * 7919u + (uint64_t)pt->l);
            MPI_Aint first = (MPI_Aint)(h % (uint64_t)(WIN_ROWS - pt->l + 1));
            int s = slot_free[--nfree];
            int err = MPI_Rget(buf + (size_t)r * pt->l * NET_K, pt->l, row, target, first * NET_K,
                               pt->l, row, win, &req[s]);
            if (err != MPI_SUCCESS)
                tf_cal_abort(MPI_COMM_WORLD, "fetch measurement: MPI_Rget failed");
            inflight++;
        }
        int outc = 0;
        if (MPI_Waitsome(TF_CAL_MAX_REQ, req, &outc, idx, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            tf_cal_abort(MPI_COMM_WORLD, "fetch measurement: MPI_Waitsome failed");
        if (outc == MPI_UNDEFINED)
            break;
        for (int x = 0; x < outc; x++)
            slot_free[nfree++] = idx[x];
        inflight -= outc;
    }
    *t1 = tf_cal_now();
}

int tf_measure_fetch(const tf_cal_config *cfg, tf_fit *fit)
{
    const int P = cfg->nranks, rank = cfg->rank;
    static const int q_quick[] = {16, 128, 512}, l_quick[] = {1, 8, 64};
    static const int q_full[] = {16, 64, 256, 1024}, l_full[] = {1, 4, 16, 64, 256};
    const int *qs = cfg->quick ? q_quick : q_full, *ls = cfg->quick ? l_quick : l_full;
    const int nq = cfg->quick ? 3 : 4, nl = cfg->quick ? 3 : 5;
    const int reps = tf_cal_reps(cfg, 40, 200);
    /* Cap the rows of one point: bigger fetches add nothing to the fit but
     * memory and time. */
    const int64_t cap = cfg->quick ? 8192 : 32768;
    const MPI_Aint rowbytes = (MPI_Aint)NET_K * (MPI_Aint)sizeof(float);

    fetch_point pts[32];
    int npts = 0;
    int64_t maxrows = 0;
    for (int a = 0; a < nq; a++)
        for (int b = 0; b < nl; b++)
            if ((int64_t)qs[a] * ls[b] <= cap) {
                pts[npts].q = qs[a];
                pts[npts].l = ls[b];
                if ((int64_t)qs[a] * ls[b] > maxrows)
                    maxrows = (int64_t)qs[a] * ls[b];
                npts++;
            }

    tf_cal_window w;
    memset(&w, 0, sizeof w);
    int st = TF_OK, opened = 0;
    float *buf = malloc((size_t)maxrows * (size_t)rowbytes);
    MPI_Request *req = malloc(TF_CAL_MAX_REQ * sizeof *req);
    int *idx = malloc(TF_CAL_MAX_REQ * sizeof *idx);
    int *slot_free = malloc(TF_CAL_MAX_REQ * sizeof *slot_free);
    double *t = calloc((size_t)reps * npts, sizeof *t);
    double *te = calloc((size_t)reps * npts, sizeof *te);
    double x[64], y[32];
    if (!buf || !req || !idx || !slot_free || !t || !te)
        st = tf_fail(TF_ERR_NOMEM, "fetch measurement: out of memory");
    else
        memset(buf, 0, (size_t)maxrows * (size_t)rowbytes);
    st = tf_cal_agree(cfg->comm, st);
    if (st == TF_OK &&
        (st = tf_cal_window_open(cfg, NET_K, WIN_ROWS, 7, "fetch measurement", &w)) == TF_OK)
        opened = 1;

    for (int r = -1; r < reps && st == TF_OK; r++) {
        for (int i = 0; i < npts; i++) {
            double t0 = 0, t1 = 0;
            /* The executor's start barrier: nobody reads B before its owner
             * has written it. It is not part of the fetch cost. */
            MPI_Barrier(cfg->comm);
            fetch_runs(w.win, w.row, buf, rank, P, &pts[i], req, idx, slot_free, &t0, &t1);
            if (r >= 0) {
                t[(size_t)r * npts + i] = t0;
                te[(size_t)r * npts + i] = t1;
            }
        }
    }
    if (opened)
        tf_cal_window_close(&w);

    if (st == TF_OK) {
        tf_cal_sample_times(cfg->comm, cfg->one_node, t, te, reps * npts);
        double *col = malloc((size_t)reps * sizeof *col);
        if (!col)
            st = tf_fail(TF_ERR_NOMEM, "fetch measurement: out of memory");
        for (int i = 0; i < npts && col; i++) {
            for (int r = 0; r < reps; r++)
                col[r] = t[(size_t)r * npts + i];
            y[i] = tf_median(col, reps);
            x[2 * i] = pts[i].q;
            x[2 * i + 1] = (double)pts[i].q * pts[i].l * (double)rowbytes;
        }
        free(col);
        if (st == TF_OK)
            st = tf_fit_linear(npts, 2, x, y, 1, fit);
        if (st == TF_OK && cfg->log) {
            FILE *f = cfg->log;
            fprintf(f, "one-sided fetch (MPI_Rget of runs in a lock_all epoch, <= %d in flight, "
                       "%d reps, first start to last end, median):\n", TF_CAL_MAX_REQ, reps);
            fprintf(f, "  %8s %6s %10s %11s %11s %11s %7s\n", "requests", "rows", "bytes",
                       "meas_us", "model_us", "us/request", "err");
            for (int i = 0; i < npts; i++) {
                double pred = tf_fit_eval(2, fit->coef, x + 2 * i);
                fprintf(f, "  %8d %6d %10.0f %11.1f %11.1f %11.2f %+6.1f%%\n", pts[i].q, pts[i].l,
                        x[2 * i + 1], 1e6 * y[i], 1e6 * pred, 1e6 * y[i] / pts[i].q,
                        100.0 * (pred - y[i]) / y[i]);
            }
            static const char *const nm[2] = {"alpha_fetch", "beta_fetch"};
            static const char *const un[2] = {"s/request", "s/byte"};
            tf_cal_print_fit(f, "t = alpha_fetch*requests + beta_fetch*bytes", fit, nm, un);
        }
        st = tf_cal_agree(cfg->comm, st);
    }

    free(buf);
    free(req);
    free(idx);
    free(slot_free);
    free(t);
    free(te);
    return st;
}
