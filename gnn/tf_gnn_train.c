#include "tf_gnn_train.h"
#include "tf_error.h"
#include "tf_median.h"
#include "tf_gnn_loss.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

int tf_gnn_trainer_init(tf_gnn_trainer *t, tf_gnn_model *m, const tf_gnn_train_opts *o)
{
    memset(t, 0, sizeof *t);
    t->m = m;
    t->o = *o;
    int st = tf_gnn_adam_init(&t->adam, m->nw, o->lr);
    if (!st && (st = tf_gnn_stop_init(&t->stop, o->patience)))
        tf_gnn_adam_free(&t->adam);
    t->done = o->epochs < 1;
    return st;
}

int tf_gnn_trainer_resume(tf_gnn_trainer *t, int64_t epochs, int stopped)
{
    t->start = t->r.epochs = epochs;
    t->r.stopped = stopped;
    t->done = stopped || epochs >= t->o.epochs;
    return TF_OK;
}

int tf_gnn_trainer_epoch(tf_gnn_trainer *t, tf_gnn_epoch *ep)
{
    tf_gnn_model *m = t->m;
    int64_t e = t->r.epochs;
    double t0 = MPI_Wtime(), s0 = tf_gnn_model_spmm_seconds(m), a0 = m->t_allreduce;
    memset(ep, 0, sizeof *ep);
    ep->epoch = e + 1;
    int st = tf_gnn_model_grad(m, e, &ep->train_loss);
    if (!st)
        st = tf_gnn_loss_finite(ep->epoch, ep->train_loss);
    if (!st) {
        tf_gnn_adam_step(&t->adam, m->w, m->grad);
        st = tf_gnn_model_eval(m, &ep->eval);
    }
    if (st)
        return st;
    ep->seconds = MPI_Wtime() - t0;
    int64_t k = e - t->start; /* epochs this process ran before this one */
    if (k >= t->cap) {
        int64_t cap = t->cap ? 2 * t->cap : 256;
        double *p = realloc(t->times, (size_t)cap * sizeof *p);
        if (!p)
            return tf_fail(TF_ERR_NOMEM, "out of memory for %lld epoch times", (long long)cap);
        t->times = p;
        t->cap = cap;
    }
    t->times[k] = ep->seconds;
    double d[3] = {ep->seconds, tf_gnn_model_spmm_seconds(m) - s0, m->t_allreduce - a0};
    for (int i = 0; i < 3; i++) {
        t->acc[0][i] += d[i];
        if (k > 0)
            t->acc[1][i] += d[i];
    }
    t->r.epochs = e + 1;
    t->r.eval = ep->eval;
    if (tf_gnn_stop_update(&t->stop, ep->eval.loss[TF_GNN_VAL]))
        t->r.stopped = 1;
    t->done = t->r.stopped || t->r.epochs >= t->o.epochs;
    return TF_OK;
}

int tf_gnn_trainer_finish(tf_gnn_trainer *t, tf_gnn_result *r)
{
    *r = t->r;
    int64_t ran = r->epochs - t->start;
    int which = ran > 1;
    double per[3], n = (double)(ran - which);
    int P;
    MPI_Comm_size(t->m->comm, &P);
    for (int i = 0; i < 3; i++)
        per[i] = n > 0 ? t->acc[which][i] / n / P : 0;
    if (MPI_Allreduce(MPI_IN_PLACE, per, 3, MPI_DOUBLE, MPI_SUM, t->m->comm) != MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "MPI_Allreduce of the epoch times failed");
    r->total = per[0];
    r->spmm = per[1];
    r->allreduce = per[2];
    r->dense = per[0] - per[1] - per[2];
    int64_t first = which, cnt = ran - first;
    if (cnt > 0 && MPI_Allreduce(MPI_IN_PLACE, t->times + first, (int)cnt, MPI_DOUBLE, MPI_MAX,
                                 t->m->comm) != MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "MPI_Allreduce of the epoch times failed");
    r->median = cnt > 0 ? tf_median(t->times + first, (int)cnt) : 0;
    return TF_OK;
}

void tf_gnn_trainer_free(tf_gnn_trainer *t)
{
    tf_gnn_stop_free(&t->stop);
    tf_gnn_adam_free(&t->adam);
    free(t->times);
    t->times = NULL;
}

int tf_gnn_train(tf_gnn_model *m, const tf_gnn_train_opts *o, tf_gnn_epoch_fn fn, void *arg,
                 tf_gnn_result *r)
{
    tf_gnn_trainer t;
    int st = tf_gnn_trainer_init(&t, m, o);
    if (st)
        return st;
    while (!st && !t.done) {
        tf_gnn_epoch ep;
        st = tf_gnn_trainer_epoch(&t, &ep);
        if (!st && fn)
            fn(&ep, arg);
    }
    if (!st)
        st = tf_gnn_trainer_finish(&t, r);
    tf_gnn_trainer_free(&t);
    return st;
}
