/* Node features of this rank's nodes (tf_gnn_data.x, raw, not normalised).
 *
 *   FILE.mtx, .mtx.zst, .mtx.gz  Matrix Market `coordinate real general`,
 *                                row = node, column = feature (format/tf_mm_read.h:
 *                                every malformed line is FILE:LINE: ...). Matrix
 *                                Market has no index, so every rank parses the
 *                                text and keeps only its own rows.
 *   FILE.h5:/dataset             a dense 2-D float32 dataset, nodes x features, as
 *                                twoface-exec's --b reads it (executor/tf_dense_h5.h):
 *                                each rank reads only its own rows; zeros are not
 *                                stored.
 * Local calls: the caller agrees on the outcome over the communicator. */
#ifndef TF_GNN_FEATURES_H
#define TF_GNN_FEATURES_H

#include "tf_gnn_data.h"

#include <stddef.h>
#include <stdint.h>

/* d->n, d->nrows and d->ids must be set. Fails unless the file has d->n rows. */
int tf_gnn_features_read(const char *spec, tf_gnn_data *d);

/* "FILE.h5:/path" (also .hdf5): 1 with FILE in file[cap] and *dset at the
 * path, split at the colon after the extension; 0 for any other spec (and
 * for a FILE longer than cap). */
int tf_gnn_features_split(const char *spec, char *file, size_t cap, const char **dset);

/* Dense random features in [0, 1), nfeat per node, drawn per (seed, global
 * node, column): the same values at any number of ranks. */
int tf_gnn_features_random(uint64_t seed, int64_t nfeat, tf_gnn_data *d);

#endif
