/* alpha_sync: the B-protection handshake an SpMM with fetches pays. At entry
 * an owner sends READY to every rank fetching from it; a fetcher sends DONE
 * to every owner when its gets from that owner completed; nobody returns
 * before its handshakes are complete (executor/tf_spmm.c). This times that
 * pattern with every rank a fetcher and an owner of every other rank, so
 * each rank has 2 (P - 1) fetch peers, the count the model charges
 * alpha_sync for. The in-situ run of the executor later scales it, since
 * inside an SpMM the partner may be busy computing. */
#include "tf_calibrate.h"
#include "tf_error.h"
#include "tf_exec.h"

#include <stdlib.h>

static void handshake(MPI_Comm comm, int me, int P, MPI_Request *rq, char *token)
{
    for (int round = 0; round < 2; round++) {
        int n = 0;
        for (int d = 1; d < P; d++) {
            int peer = (me + d) % P;
            MPI_Irecv(&token[1], 0, MPI_CHAR, peer, 7 + round, comm, &rq[n++]);
        }
        for (int d = 1; d < P; d++) {
            int peer = (me + P - d) % P;
            MPI_Isend(&token[0], 0, MPI_CHAR, peer, 7 + round, comm, &rq[n++]);
        }
        /* A failed handshake leaves its peers waiting for this rank's
         * next round: no agreeing (tf_cal_abort). */
        if (MPI_Waitall(n, rq, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            tf_cal_abort(comm, "sync measurement: MPI_Waitall of the READY/DONE handshake failed");
    }
}

int tf_measure_sync(const tf_cal_config *cfg, double *alpha_sync, double *barrier_s)
{
    int me, P;
    MPI_Comm_rank(cfg->comm, &me);
    MPI_Comm_size(cfg->comm, &P);
    const int reps = tf_cal_reps(cfg, 100, 500);
    double *t = calloc((size_t)reps, sizeof *t), *te = calloc((size_t)reps, sizeof *te);
    double *b = calloc((size_t)reps, sizeof *b), *be = calloc((size_t)reps, sizeof *be);
    MPI_Request *rq = malloc((size_t)(2 * P) * sizeof *rq);
    char token[2] = {0, 0};
    int st = t && te && b && be && rq ? TF_OK
                                      : tf_fail(TF_ERR_NOMEM, "sync measurement: out of memory");
    st = tf_cal_agree(cfg->comm, st);
    for (int r = -1; !st && r < reps; r++) {
        /* Align first, as the SpMM loop's own barrier does. */
        MPI_Barrier(cfg->comm);
        double t0 = tf_cal_now();
        handshake(cfg->comm, me, P, rq, token);
        double t1 = tf_cal_now();
        MPI_Barrier(cfg->comm);
        MPI_Request req;
        double t2 = tf_cal_now();
        MPI_Ibarrier(cfg->comm, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (r >= 0) {
            t[r] = t0;
            te[r] = t1;
            b[r] = t2;
            be[r] = tf_cal_now();
        }
    }
    if (!st) {
        tf_cal_sample_times(cfg->comm, cfg->one_node, t, te, reps);
        tf_cal_sample_times(cfg->comm, cfg->one_node, b, be, reps);
        double round = tf_median(t, reps);
        *barrier_s = tf_median(b, reps);
        *alpha_sync = P > 1 ? round / (2.0 * (P - 1)) : 0.0;
        if (cfg->log)
            fprintf(cfg->log,
                    "READY/DONE handshake with all %d peers (%d reps, first start to last end, "
                    "median): %.1f us -> alpha_sync = %.3g s per fetch peer; one barrier: "
                    "%.1f us\n",
                    P - 1, reps, 1e6 * round, *alpha_sync, 1e6 * *barrier_s);
    }
    free(t);
    free(te);
    free(b);
    free(be);
    free(rq);
    return st;
}
