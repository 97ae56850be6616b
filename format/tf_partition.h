/* 1D row partitioning: P contiguous bands, offsets off[0..P]. Band p is
 * rows [off[p], off[p+1]); a band may be empty when P exceeds the rows. */
#ifndef TF_PARTITION_H
#define TF_PARTITION_H

#include <stdint.h>
#include "tf_csr.h"

/* TF_PART_METIS: a graph partition renumbered into bands (planner/
 * tf_partition_metis.h); the plan then carries the permutation (tf_plan_perm.h). */
/* TF_PART_WORK: bands of equal predicted kernel work, nonzeros plus a cost
 * per row (tf_partition_work; the planner takes the row's weight from the
 * cost model: tf_cost_row_weight). */
typedef enum {
    TF_PART_ROWS = 0,
    TF_PART_NNZ = 1,
    TF_PART_METIS = 2,
    TF_PART_WORK = 3,
    /* An option, never in a plan: the planner resolves it to nnz or work
     * (planner/tf_partition_auto.h) and the plan records what it chose. */
    TF_PART_AUTO = 4
} tf_partition_kind;

/* Equal numbers of rows (the first n % P bands get one more). */
int tf_partition_rows(int64_t n, int nparts, int64_t *off);

/* Bands with about nnz/P nonzeros each: band p ends at the first row whose
 * prefix sum reaches (p+1) * nnz / P. Rows are never split, so one heavy row
 * makes its band heavy; empty bands are allowed. */
int tf_partition_nnz(const tf_csr *a, int nparts, int64_t *off);

/* Bands of about equal work, row i weighing nnz_i + num / den (a row of C
 * costs num / den nonzeros): band p ends at the first row i whose prefix
 * W(i) = rowptr[i] * den + i * num reaches (p + 1) * W(n) / P. Integer
 * weights, so the cut does not depend on how the prefix sums are summed
 * (the distributed planner gets the same bands at every number of planning
 * ranks). num = 0 gives tf_partition_nnz's bands; a matrix of zero total
 * weight is split by rows. den >= 1, num >= 0, and W(n) must fit in 63 bits
 * (tf_partition_work_total). */
int tf_partition_work(const tf_csr *a, int nparts, int64_t num, int64_t den, int64_t *off);

/* Bands from integer row weights given as their prefix: prefix[0] = 0,
 * prefix[i + 1] - prefix[i] >= 0 the weight of row i. Band p ends at the
 * first row i with prefix[i] >= floor((p + 1) prefix[nrows] / P), the cut of
 * tf_partition_work; a total of 0 is split by rows. */
int tf_partition_prefix(const int64_t *prefix, int64_t nrows, int nparts, int64_t *off);

/* The total weight W(n) = nnz * den + rows * num of a matrix, after checking
 * den >= 1, num >= 0 and that it fits in int64; with num = 0 it sets *den
 * to 1 first, so that the cut is exactly the nnz bands'. Every band cutter
 * (this one and the distributed planner's) starts here. */
int tf_partition_work_total(int64_t nnz, int64_t rows, int64_t num, int64_t *den,
                            int64_t *total);

/* Owner of row i given offsets (binary search). */
int tf_partition_owner(const int64_t *off, int nparts, int64_t i);

const char *tf_partition_name(int kind);
int tf_partition_parse(const char *s, int *kind);

#endif
