/* 1D row partitioning: P contiguous bands, offsets off[0..P]. Band p is
 * rows [off[p], off[p+1]); a band may be empty when P exceeds the rows. */
#ifndef TF_PARTITION_H
#define TF_PARTITION_H

#include <stdint.h>
#include "tf_csr.h"

/* TF_PART_METIS: a graph partition renumbered into bands (planner/
 * tf_partition_metis.h); the plan then carries the permutation (tf_plan_perm.h). */
typedef enum { TF_PART_ROWS = 0, TF_PART_NNZ = 1, TF_PART_METIS = 2 } tf_partition_kind;

/* Equal numbers of rows (the first n % P bands get one more). */
int tf_partition_rows(int64_t n, int nparts, int64_t *off);

/* Bands with about nnz/P nonzeros each: band p ends at the first row whose
 * prefix sum reaches (p+1) * nnz / P. Rows are never split, so one heavy row
 * makes its band heavy; empty bands are allowed. */
int tf_partition_nnz(const tf_csr *a, int nparts, int64_t *off);

/* Owner of row i given offsets (binary search). */
int tf_partition_owner(const int64_t *off, int nparts, int64_t i);

const char *tf_partition_name(int kind);
int tf_partition_parse(const char *s, int *kind);

#endif
