/* Softmax cross-entropy over the logits of this rank's rows, per split. */
#ifndef TF_GNN_LOSS_H
#define TF_GNN_LOSS_H

#include "tf_gnn_data.h"

#include <stdint.h>

/* Sums over this rank's nodes of each split: the cross-entropy -log p_label
 * (log-softmax in double) and the count of nodes whose argmax (first on ties)
 * is their label. */
typedef struct {
    double loss[TF_GNN_NSPLITS];
    double correct[TF_GNN_NSPLITS];
} tf_gnn_sums;

/* z: nrows x classes. If g is not NULL, also g = d(mean train loss)/dz:
 * (softmax - onehot) / ntrain on train rows, 0 on every other row. */
void tf_gnn_xent(const float *z, const tf_gnn_data *d, int64_t ntrain, tf_gnn_sums *s, float *g);

/* TF_OK, or TF_ERR_RANGE with "epoch E: the training loss is not finite;
 * ..." when it is NaN or infinite, whatever the cause: training cannot
 * recover from it, and every later epoch would report it again. */
int tf_gnn_loss_finite(int64_t epoch, double loss);

#endif
