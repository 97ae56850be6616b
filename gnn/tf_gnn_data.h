/* One rank's share of a node-classification data set: the features,
 * labels and split of the nodes whose rows of A (and of C) this rank owns,
 * in the plan's local row order, plus the global counts every rank agrees on.
 * Filled by tf_gnn_features.h and tf_gnn_labels.h (files) or by their
 * random generators (timing runs on graphs without features). */
#ifndef TF_GNN_DATA_H
#define TF_GNN_DATA_H

#include "tf_csr.h"

#include <stdint.h>

/* Split of a node (the words of the split file). */
enum { TF_GNN_NONE = 0, TF_GNN_TRAIN, TF_GNN_VAL, TF_GNN_TEST, TF_GNN_NSPLITS };

/* Labels are 0 .. TF_GNN_MAX_CLASSES - 1: the logits are nrows x classes
 * dense, so a label in the millions is a broken file, not a data set. */
#define TF_GNN_MAX_CLASSES 4096

typedef struct {
    int64_t n;            /* nodes of the graph (rows of the plan) */
    int64_t nrows;        /* this rank's nodes */
    const int64_t *ids;   /* their original (file) 0-based ids, nrows (owned by the caller) */
    tf_csr x;             /* nrows x nfeat features, row-normalised after loading */
    int32_t *label;       /* nrows */
    int8_t *split;        /* nrows, TF_GNN_* */
    int classes;          /* max label over all nodes + 1 */
    int64_t count[TF_GNN_NSPLITS]; /* nodes per split, over all ranks */
} tf_gnn_data;

void tf_gnn_data_free(tf_gnn_data *d);

/* Divides every row of x by its sum (in double); an all-zero row stays zero. */
void tf_gnn_row_normalise(tf_csr *x);

#endif
