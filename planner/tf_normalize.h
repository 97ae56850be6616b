/* Normalised adjacency matrices for graph neural networks
 * (docs/normalization.md). Pure computation on a CSR matrix; degrees are
 * summed in double and every value is rounded to float32 once. */
#ifndef TF_NORMALIZE_H
#define TF_NORMALIZE_H

#include "tf_csr.h"

/* Replaces *a by its normalisation (tf_normalization, tf_plan.h):
 *   TF_NORM_NONE  nothing changes;
 *   TF_NORM_GCN   D_out^-1/2 (A + I) D_in^-1/2: a row without a diagonal
 *                 entry gets one of value 1, an existing diagonal entry keeps
 *                 its value; D_out = row sums, D_in = column sums of A + I.
 *                 Needs a square matrix; a negative sum fails (TF_ERR_ARG),
 *                 a zero sum leaves its row (column) zero;
 *   TF_NORM_MEAN  D_out^-1 A (row sums of A; a zero-sum row stays zero).
 * The pattern is kept (zeroed entries stay stored; gcn adds the loops).
 * A value that overflows float32 fails with TF_ERR_RANGE. On failure *a is
 * unchanged. */
int tf_normalize(tf_csr *a, int normalization);

#endif
