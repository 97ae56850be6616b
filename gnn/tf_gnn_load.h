/* Loading a data set for a plan: each rank gets the features, labels and
 * split of its own nodes (tf_gnn_rows.h), from files or from the random
 * generators, the features row-normalised, and every rank learns the
 * global split counts. Collective: a failure on any rank (a malformed
 * line, a missing file) is returned on every rank with the same message. */
#ifndef TF_GNN_LOAD_H
#define TF_GNN_LOAD_H

#include "tf_gnn_data.h"
#include "twoface.h"

#include <stdint.h>

typedef struct {
    const char *features, *labels, *split; /* files; NULL when random */
    int64_t random_features; /* > 0: that many random features per node */
    int random_classes;      /* > 0: random labels in 0..C-1 */
    int random_split;        /* 1: random split (tf_gnn_labels.h) */
    uint64_t seed;
} tf_gnn_inputs;

/* ids: tf_gnn_row_ids(h); must outlive d. */
int tf_gnn_load(const tf_handle *h, const tf_gnn_inputs *in, const int64_t *ids,
                tf_gnn_data *d);

#endif
