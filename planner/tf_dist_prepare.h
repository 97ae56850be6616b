/* tf_matrix_prepare for a matrix distributed in block rows (tf_dcsr.h):
 * normalisation, the transpose of a backward plan, the symmetry test and
 * the fingerprint, each computed from the ranks' own rows and exchanges,
 * and bitwise equal to the serial result (sums are added in the same
 * order: a column's sum is its transpose row's sum). */
#ifndef TF_DIST_PREPARE_H
#define TF_DIST_PREPARE_H

#include "tf_dcsr.h"
#include "tf_planner.h"

/* The plan checksum of a distributed matrix (tf_plan_fingerprint). */
uint64_t tf_dist_fingerprint(MPI_Comm comm, const tf_dcsr *a, int normalization);

/* The same, carrying the agreement on this rank's status (its step
 * before, not yet agreed on; tf_agree_carry.h): *fp on TF_OK. Returns the
 * agreed status; a rank that failed does not read a. */
int tf_dist_fingerprint_agree(MPI_Comm comm, int status, const tf_dcsr *a, int normalization,
                              uint64_t *fp);

/* As tf_matrix_prepare; *a must be in the block distribution and stays in
 * it. Collective; the status and message are the same on every rank. */
int tf_dist_prepare(MPI_Comm comm, tf_dcsr *a, int normalization, int transpose,
                    tf_plan_options *o);

#endif
