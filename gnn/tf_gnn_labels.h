/* Labels and split of this rank's nodes, from plain text: one line per node,
 * line i (1-based) for original node id i - 1.
 *   labels: a whole number 0 .. TF_GNN_MAX_CLASSES - 1 (the class);
 *   split:  train, val, test or none.
 * Spaces, tabs and a CR at either end of a line are ignored; nothing else is
 * (a blank line is a missing node; blank lines after the last node are
 * ignored). An HDF5 file is named as such; bytes that are not printable ASCII
 * are quoted as \xHH. Every rank checks every line, so all
 * ranks find the same first error: "FILE:LINE: expected ..., got '...'".
 * Local calls; the caller agrees on the outcome. */
#ifndef TF_GNN_LABELS_H
#define TF_GNN_LABELS_H

#include "tf_gnn_data.h"

#include <stdint.h>

/* d->n, d->nrows, d->ids must be set; map = tf_gnn_id_map of them. Fills
 * d->label and sets d->classes to the largest label in the file + 1. */
int tf_gnn_labels_read(const char *path, const int32_t *map, tf_gnn_data *d);
/* Fills d->split (counts are left to the caller, who sums over ranks). */
int tf_gnn_split_read(const char *path, const int32_t *map, tf_gnn_data *d);

/* --random-classes C: label of a node drawn from (seed, node), uniform. */
int tf_gnn_labels_random(uint64_t seed, int classes, tf_gnn_data *d);
/* --random-split: per node from (seed, node): 10 % train, 10 % val, 20 %
 * test, the rest none. */
int tf_gnn_split_random(uint64_t seed, tf_gnn_data *d);

#endif
