/* The synchronisation an SpMM pays that the cost model has no term for:
 * when some rank fetches, the executor brackets every SpMM with two
 * MPI_Ibarrier rounds (nobody reads B before its owner wrote it; nobody
 * leaves while others still read). Measured only to be reported beside the
 * coefficients: it explains the floor under small graphs' SpMM times,
 * and tells whether a constant per-SpMM term would be worth adding. */
#include "tf_calibrate.h"
#include "tf_error.h"

#include <stdlib.h>

int tf_measure_sync(const tf_cal_config *cfg, double *barrier_s)
{
    const int reps = cfg->quick ? 100 : 500;
    double *t = calloc((size_t)reps, sizeof *t), *te = calloc((size_t)reps, sizeof *te);
    int st = t && te ? TF_OK : tf_fail(TF_ERR_NOMEM, "barrier measurement: out of memory");
    st = tf_cal_agree(cfg->comm, st);
    if (st) {
        free(t);
        free(te);
        return st;
    }
    for (int r = -1; r < reps; r++) {
        /* Align first, as the SpMM loop's own barrier does, then time one
         * round the way the executor runs it (non-blocking, then wait). */
        MPI_Barrier(cfg->comm);
        MPI_Request req;
        double t0 = tf_cal_now();
        MPI_Ibarrier(cfg->comm, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (r >= 0) {
            t[r] = t0;
            te[r] = tf_cal_now();
        }
    }
    tf_cal_sample_times(cfg->comm, cfg->one_node, t, te, reps);
    *barrier_s = tf_cal_median(t, reps);
    if (cfg->log)
        fprintf(cfg->log, "barrier (MPI_Ibarrier + MPI_Wait, %d reps, first start to last end, median): "
                          "%.1f us; an SpMM with fetches runs two, which the model does not "
                          "count\n",
                reps, 1e6 * *barrier_s);
    free(t);
    free(te);
    return TF_OK;
}
