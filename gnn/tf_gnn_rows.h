/* Which nodes a rank holds. Every per-node input (features, labels, split)
 * is read as "the rows whose original ids are these", never as a range, so
 * that a plan that renumbers its rows (twoface-plan --partition metis) trains
 * on the same nodes with the same dropout masks as any other plan: the ids
 * come from tf_get_row_ids (the identity row_begin + i when not permuted). */
#ifndef TF_GNN_ROWS_H
#define TF_GNN_ROWS_H

#include "twoface.h"

#include <stdint.h>

/* The original 0-based ids of this rank's rows of A and C, in local order:
 * *ids is malloc'd with max(nrows, 1) entries. */
int tf_gnn_row_ids(const tf_handle *h, int64_t **ids, int64_t *nrows);

/* Global id -> local row (or -1) for n nodes: *map is malloc'd, n entries. */
int tf_gnn_id_map(const int64_t *ids, int64_t nrows, int64_t n, int32_t **map);

#endif
