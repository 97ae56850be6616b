/* The training loop: per epoch one Adam step on the full graph (forward and
 * backward with that epoch's dropout masks), then an evaluation forward
 * pass without dropout (validation loss for early stopping, accuracies).
 * Timing is split per epoch into SpMM, Allreduce and dense (everything
 * else: the local products, softmax, Adam), averaged over ranks. */
#ifndef TF_GNN_TRAIN_H
#define TF_GNN_TRAIN_H

#include "tf_gnn_model.h"

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
    /* Seconds per epoch, mean over ranks, over epochs 2.. (the first pays
     * one-off costs: first touches, the start-up trial); over epoch 1 when
     * only one ran. total = spmm + dense + allreduce. */
    double total, spmm, dense, allreduce;
} tf_gnn_result;

/* Called on every rank after each epoch (the caller decides who prints). */
typedef void (*tf_gnn_epoch_fn)(const tf_gnn_epoch *e, void *arg);

/* Collective. */
int tf_gnn_train(tf_gnn_model *m, const tf_gnn_train_opts *o, tf_gnn_epoch_fn fn, void *arg,
                 tf_gnn_result *r);

#endif
