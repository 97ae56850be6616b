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

/* The pieces of the normalisations, shared with the distributed planner
 * (tf_dist_prepare.c), whose rows of A are a band: row r of `a` is global
 * row row0 + r, and messages name global rows (1-based).
 *   tf_norm_add_loops   out = a + I (the loop of row r is column row0 + r);
 *   tf_norm_row_sum     row r's sum in double, in ascending column order;
 *   tf_norm_inv_sqrt    1/sqrt(d), 0 for d = 0;
 *   tf_norm_store       *dst = (float)v, TF_ERR_RANGE naming entry (i, j)
 *                       (0-based here) when that overflows;
 *   tf_norm_mean_rows   TF_NORM_MEAN of these rows, in place. */
int tf_norm_add_loops(const tf_csr *a, int64_t row0, tf_csr *out);
double tf_norm_row_sum(const tf_csr *a, int64_t r);
double tf_norm_inv_sqrt(double d);
int tf_norm_store(float *dst, double v, int64_t i, int32_t j);
int tf_norm_mean_rows(tf_csr *a, int64_t row0);

#endif
