/* overlap_fetch: does a one-sided get travel while the rank that posted it
 * computes? The one-thread executor posts its gets between chunks of the
 * local part (executor/tf_spmm.c), so the answer decides whether the
 * model adds a rank's fetch transfer to its compute or hides it behind it.
 * With the shared-memory component an MPI_Rget is a copy made inside the
 * call, and where a get needs its target inside MPI (osc pt2pt) nothing
 * moves while both sides compute: 0. Where the network carries the data
 * alone (RDMA, or the simulated cluster) it is near 1.
 *
 * Each repetition times, on every rank at once after a barrier: the gets
 * alone (post, wait), a compute loop alone, and both (post, compute,
 * wait), interleaved. The gets are long runs, as a plan's are (tens to
 * hundreds of rows: gaps are spanned), so that their bytes dominate; the
 * model hides only the per-byte part (the per-request part is the caller's
 * own work), so the share is taken of the gets' time less
 * requests * alpha_fetch. The loop is sized to take about as long.
 * overlap = (t_gets + t_compute - t_both) / min(t_gets - Q alpha_fetch,
 * t_compute), from the medians summed over ranks, clamped to 0-1. */
#include "tf_calibrate.h"
#include "tf_dense.h"
#include "tf_error.h"
#include "tf_median.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define OV_K 128
#define OV_WIN_ROWS 8192 /* rows of B per rank: 4 MiB */
#define OV_RUNS 32       /* gets, all in flight at once (the executor allows 512) */
#define OV_RUN_ROWS 256  /* rows per get (128 KiB): 4 MiB in all */
#define OV_BUSY 16384    /* floats the compute loop walks per pass */
#define OV_MAX_REPS 64

/* The compute: passes over a small array, kept from being optimised away
 * by the sink. No MPI call inside, as in a kernel. */
static volatile float ov_sink;

static void busy(float *a, long passes)
{
    for (long p = 0; p < passes; p++)
        for (int i = 0; i < OV_BUSY; i++)
            a[i] = a[i] * 0.999f + 0.001f;
    ov_sink = a[OV_BUSY / 2];
}

static void post(MPI_Win win, MPI_Datatype row, float *buf, int rank, int P, MPI_Request *req)
{
    for (int r = 0; r < OV_RUNS; r++) {
        int target = (rank + 1 + r % (P - 1)) % P;
        uint64_t h = tf_mix64((uint64_t)rank * 1000003u + (uint64_t)r * 7919u);
        MPI_Aint first = (MPI_Aint)(h % (uint64_t)(OV_WIN_ROWS - OV_RUN_ROWS + 1));
        if (MPI_Rget(buf + (size_t)r * OV_RUN_ROWS * OV_K, OV_RUN_ROWS, row, target,
                     first * OV_K, OV_RUN_ROWS, row, win, &req[r]) != MPI_SUCCESS)
            tf_cal_abort(MPI_COMM_WORLD, "overlap measurement: MPI_Rget failed");
    }
}

static void wait_all(MPI_Request *req)
{
    if (MPI_Waitall(OV_RUNS, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
        tf_cal_abort(MPI_COMM_WORLD, "overlap measurement: MPI_Waitall failed");
}

/* One timed sample of what (0 gets, 1 compute, 2 both), after a barrier. */
static void sample(int what, MPI_Win win, MPI_Datatype row, float *buf, float *a, long passes,
                   const tf_cal_config *cfg, MPI_Request *req, double *t)
{
    MPI_Barrier(cfg->comm);
    double t0 = tf_cal_now();
    if (what != 1)
        post(win, row, buf, cfg->rank, cfg->nranks, req);
    if (what != 0)
        busy(a, passes);
    if (what != 1)
        wait_all(req);
    *t = tf_cal_now() - t0;
}

int tf_measure_overlap(const tf_cal_config *cfg, double alpha_fetch, double *overlap)
{
    *overlap = 0.0;
    if (cfg->nranks < 2)
        return TF_OK;
    const int reps = tf_cal_reps(cfg, 9, 30);
    _Static_assert(30 <= OV_MAX_REPS, "overlap repetitions exceed the sample buffer");
    const MPI_Aint rowbytes = (MPI_Aint)OV_K * (MPI_Aint)sizeof(float);
    tf_cal_window cw;
    memset(&cw, 0, sizeof cw);
    int st = TF_OK, opened = 0;
    float *buf = malloc((size_t)OV_RUNS * OV_RUN_ROWS * (size_t)rowbytes);
    float *a = malloc(OV_BUSY * sizeof *a);
    MPI_Request *req = malloc(OV_RUNS * sizeof *req);
    if (!buf || !a || !req)
        st = tf_fail(TF_ERR_NOMEM, "overlap measurement: out of memory");
    else {
        memset(buf, 0, (size_t)OV_RUNS * OV_RUN_ROWS * (size_t)rowbytes);
        for (int i = 0; i < OV_BUSY; i++)
            a[i] = (float)i / OV_BUSY;
    }
    st = tf_cal_agree(cfg->comm, st);
    if (st == TF_OK &&
        (st = tf_cal_window_open(cfg, OV_K, OV_WIN_ROWS, 11, "overlap measurement", &cw)) == TF_OK)
        opened = 1;

    /* Size the loop: the gets' and one pass's time, medians of a few, the
     * largest over ranks so that every rank runs the same loop. */
    double col[3][OV_MAX_REPS];
    long passes = 1;
    if (st == TF_OK) {
        const int n0 = 5;
        for (int r = 0; r < n0; r++) {
            sample(0, cw.win, cw.row, buf, a, 1, cfg, req, &col[0][r]);
            sample(1, cw.win, cw.row, buf, a, 1, cfg, req, &col[1][r]);
        }
        double v[2] = {tf_median(col[0], n0), tf_median(col[1], n0)}, m[2];
        MPI_Allreduce(v, m, 2, MPI_DOUBLE, MPI_MAX, cfg->comm);
        double p = m[1] > 0 ? m[0] / m[1] : 1.0;
        passes = p < 1 ? 1 : p > 1e6 ? 1000000 : (long)llround(p);
    }
    for (int r = -1; r < reps && st == TF_OK; r++) {
        for (int w = 0; w < 3; w++) {
            double t;
            sample(w, cw.win, cw.row, buf, a, passes, cfg, req, &t);
            if (r >= 0)
                col[w][r] = t;
        }
    }
    if (opened)
        tf_cal_window_close(&cw);

    if (st == TF_OK) {
        double v[3], s[3];
        for (int w = 0; w < 3; w++)
            v[w] = tf_median(col[w], reps);
        MPI_Allreduce(v, s, 3, MPI_DOUBLE, MPI_SUM, cfg->comm);
        double bytes = s[0] - cfg->nranks * OV_RUNS * alpha_fetch;
        double lo = fmin(bytes > 0 ? bytes : s[0], s[1]);
        double ov = lo > 0 ? (s[0] + s[1] - s[2]) / lo : 0.0;
        *overlap = isfinite(ov) ? fmin(1.0, fmax(0.0, ov)) : 0.0;
        if (cfg->log) {
            FILE *f = cfg->log;
            fprintf(f, "fetch transfer behind compute (%d gets of %d rows of %d floats posted, "
                       "a compute loop, then waited for; %d reps, median, mean over ranks):\n",
                    OV_RUNS, OV_RUN_ROWS, OV_K, reps);
            fprintf(f, "  gets alone %.1f us (%.1f us of it per request, alpha_fetch), compute "
                       "alone %.1f us (%ld passes), both %.1f us\n",
                    1e6 * s[0] / cfg->nranks, 1e6 * OV_RUNS * alpha_fetch,
                    1e6 * s[1] / cfg->nranks, passes, 1e6 * s[2] / cfg->nranks);
            fprintf(f, "  overlap_fetch = %.3f (raw %.3f; 0: the gets wait for the compute, "
                       "1: they travel behind it)\n", *overlap, ov);
        }
    }
    st = tf_cal_agree(cfg->comm, st);
    free(buf);
    free(a);
    free(req);
    return st;
}
