/* --partition auto (twoface-plan's default): bands of equal nonzeros, or of
 * equal kernel work (tf_work_bands.h) where the nonzero bands would leave
 * one rank's kernels clearly the heaviest. Both band sets are weighed with
 * the work weights of the plan's coefficients (a row of C, a nonzero whose
 * B row comes from memory, one from cache: tf_cost_work_weights) and work
 * is chosen when the nonzero bands' heaviest band weighs more than
 * TF_AUTO_WORK_NUM / TF_AUTO_WORK_DEN times the work bands' heaviest.
 * Integer weights and an integer comparison: the same choice at every
 * number of planning ranks (docs/partition.md). */
#ifndef TF_PARTITION_AUTO_H
#define TF_PARTITION_AUTO_H

#include <stdint.h>

#include "tf_coeffs.h"
#include "tf_csr.h"

/* 6 / 5: the share of an SpMM the balance line of --explain calls
 * imbalanced (TF_IMBALANCE_FLAG, tf_balance.h), here of the kernels alone.
 * Below it the kernels' gain is within what the exchanges, which work bands
 * move as well, were measured to take back (docs/partition.md). */
#define TF_AUTO_WORK_NUM 6
#define TF_AUTO_WORK_DEN 5

/* The choice from the work prefix at the two band sets' offsets:
 * w_nnz[p] = W(off_nnz[p]) and w_work[p] = W(off_work[p]), p = 0..P, W the
 * global prefix of the rows' work weights. Returns TF_PART_WORK or
 * TF_PART_NNZ; *ratio (optional) gets the nonzero bands' heaviest weight
 * over the work bands' (1 when both are 0). */
int tf_partition_auto_pick(const int64_t *w_nnz, const int64_t *w_work, int P, double *ratio);

/* The whole matrix on one process: the work weights of coefficients c at
 * dense width k, both band sets for P ranks, then tf_partition_auto_pick.
 * off[0..P] gets the bands chosen, *kind TF_PART_NNZ or TF_PART_WORK,
 * *ratio (optional) the ratio. Fails (TF_ERR_NOMEM, TF_ERR_RANGE) with a
 * message. */
int tf_partition_auto(const tf_csr *a, const tf_coeffs *c, int k, int P, int64_t *off,
                      int *kind, double *ratio);

#endif
