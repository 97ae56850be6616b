#include "tf_gnn_train.h"
#include "tf_error.h"
#include "tf_gnn_adam.h"
#include "tf_gnn_stop.h"

#include <mpi.h>
#include <string.h>

int tf_gnn_train(tf_gnn_model *m, const tf_gnn_train_opts *o, tf_gnn_epoch_fn fn, void *arg,
                 tf_gnn_result *r)
{
    memset(r, 0, sizeof *r);
    tf_gnn_adam adam;
    tf_gnn_stop stop;
    int st = tf_gnn_adam_init(&adam, m->nw, o->lr);
    if (st)
        return st;
    if ((st = tf_gnn_stop_init(&stop, o->patience))) {
        tf_gnn_adam_free(&adam);
        return st;
    }
    /* [0]: all epochs, [1]: epochs 2.. ; each total, spmm, allreduce. */
    double acc[2][3] = {{0}};
    for (int64_t e = 0; e < o->epochs && !st; e++) {
        double t0 = MPI_Wtime(), s0 = tf_gnn_model_spmm_seconds(m), a0 = m->t_allreduce;
        tf_gnn_epoch ep;
        memset(&ep, 0, sizeof ep);
        ep.epoch = e + 1;
        st = tf_gnn_model_grad(m, e, &ep.train_loss);
        if (!st) {
            tf_gnn_adam_step(&adam, m->w, m->grad);
            st = tf_gnn_model_eval(m, &ep.eval);
        }
        if (st)
            break;
        ep.seconds = MPI_Wtime() - t0;
        double d[3] = {ep.seconds, tf_gnn_model_spmm_seconds(m) - s0, m->t_allreduce - a0};
        for (int i = 0; i < 3; i++) {
            acc[0][i] += d[i];
            if (e > 0)
                acc[1][i] += d[i];
        }
        r->epochs = e + 1;
        r->eval = ep.eval;
        if (fn)
            fn(&ep, arg);
        if (tf_gnn_stop_update(&stop, ep.eval.loss[TF_GNN_VAL])) {
            r->stopped = 1;
            break;
        }
    }
    tf_gnn_stop_free(&stop);
    tf_gnn_adam_free(&adam);
    if (st)
        return st;
    int which = r->epochs > 1;
    double per[3], n = (double)(r->epochs - which);
    int P;
    MPI_Comm_size(m->comm, &P);
    for (int i = 0; i < 3; i++)
        per[i] = n > 0 ? acc[which][i] / n / P : 0;
    MPI_Allreduce(MPI_IN_PLACE, per, 3, MPI_DOUBLE, MPI_SUM, m->comm);
    r->total = per[0];
    r->spmm = per[1];
    r->allreduce = per[2];
    r->dense = per[0] - per[1] - per[2];
    return TF_OK;
}
