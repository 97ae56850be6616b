/* The training loop: per epoch one Adam step on the full graph (forward and
 * backward with that epoch's dropout masks), then an evaluation forward
 * pass without dropout (validation loss for early stopping, accuracies).
 * Timing is split per epoch into SpMM, Allreduce and dense (everything
 * else: the local products, softmax, Adam), averaged over ranks. */
#ifndef TF_GNN_TRAIN_H
#define TF_GNN_TRAIN_H

#include "tf_gnn_adam.h"
#include "tf_gnn_model.h"
#include "tf_gnn_stop.h"

#include <stdint.h>

typedef struct {
    int64_t epochs; /* at most this many */
    double lr;
    int patience;   /* early stopping, tf_gnn_stop.h; 0 = off */
} tf_gnn_train_opts;

typedef struct {
    int64_t epoch;     /* 1-based */
    double train_loss; /* of the step's forward pass (with dropout) */
    tf_gnn_eval eval;  /* after the step */
    double seconds;    /* wall time of the epoch on this rank */
} tf_gnn_epoch;

typedef struct {
    int64_t epochs;   /* epochs run */
    int stopped;      /* 1: early stopping ended the run */
    tf_gnn_eval eval; /* after the last epoch */
    /* Seconds per epoch, mean over ranks, over the epochs this process ran
     * except its first (which pays one-off costs: first touches, the
     * start-up trial); over that one when only one ran. total = spmm +
     * dense + allreduce. */
    double total, spmm, dense, allreduce;
    /* Median over the same epochs of the slowest rank's epoch time: robust
     * to the spikes of a loaded machine. */
    double median;
} tf_gnn_result;

/* The loop one epoch at a time, so that a caller can interleave several
 * trainings (twoface-gcn --algo twoface,p2p: the same model on each SpMM,
 * epoch by epoch, for a fair comparison on a loaded machine). */
typedef struct {
    tf_gnn_model *m;
    tf_gnn_train_opts o;
    tf_gnn_adam adam;
    tf_gnn_stop stop;
    double acc[2][3]; /* [all epochs, epochs 2..][total, spmm, allreduce] */
    int done;         /* 1: the epochs are used up or early stopping ended the run */
    int64_t start;    /* epochs done before this process (a resumed run), not timed here */
    double *times;    /* this rank's epoch times from epoch start + 1 on, cap entries */
    int64_t cap;
    tf_gnn_result r;
} tf_gnn_trainer;

int tf_gnn_trainer_init(tf_gnn_trainer *t, tf_gnn_model *m, const tf_gnn_train_opts *o);
/* After init, before the first epoch: continue after `epochs` epochs whose
 * weights, Adam and stopping state the caller has put into t (tf_gnn_ckpt.h);
 * stopped: early stopping had ended that run. Local. The caller then
 * evaluates the weights (tf_gnn_model_eval into t->r.eval), so that a run
 * with nothing left to do still has its result: that evaluation is SpMMs
 * and an Allreduce, whose failure only some ranks may see. */
int tf_gnn_trainer_resume(tf_gnn_trainer *t, int64_t epochs, int stopped);
/* Collective: one epoch (only while !t->done); fills *ep. */
int tf_gnn_trainer_epoch(tf_gnn_trainer *t, tf_gnn_epoch *ep);
/* Collective: the result, times averaged over ranks. */
int tf_gnn_trainer_finish(tf_gnn_trainer *t, tf_gnn_result *r);
void tf_gnn_trainer_free(tf_gnn_trainer *t);

/* Called on every rank after each epoch (the caller decides who prints). */
typedef void (*tf_gnn_epoch_fn)(const tf_gnn_epoch *e, void *arg);

/* Collective: the whole loop. */
int tf_gnn_train(tf_gnn_model *m, const tf_gnn_train_opts *o, tf_gnn_epoch_fn fn, void *arg,
                 tf_gnn_result *r);

#endif
