/* Moving the rows of a distributed matrix between ranks: to other bands
 * (whole rows, order kept), and to the bands of its transpose. */
#ifndef TF_DIST_ROWS_H
#define TF_DIST_ROWS_H

#include "tf_dcsr.h"

/* Fills off[0..Q] with the block distribution of m rows. */
void tf_dist_block_bounds(int64_t m, int Q, int64_t *off);

/* Every rank's rows move to the rank whose band [off[r], off[r+1]) holds
 * them. *in is freed (its memory goes before the result's is complete
 * where possible); on failure both are empty. Collective. status: this
 * rank's step before, not yet agreed on; the exchange of the counts
 * carries the agreement (tf_agree_carry.h), and off is not read on a rank
 * that failed. Returns an agreed status. */
int tf_dist_redistribute(MPI_Comm comm, int status, tf_dcsr *in, const int64_t *off,
                         tf_dcsr *out);

/* Collective. off[0..Q] = the bands the rows of a are in now, rank r's
 * [off[r], off[r + 1]) (the same on every rank), from the ranks' row0 (one
 * that holds no rows has the next band's start). status: this rank's step
 * before, not yet agreed on: the gathering carries the agreement
 * (tf_agree_carry.h), and a rank that failed may pass off = NULL. Returns
 * that agreed failure, or the check of the bands, which fails on bands
 * that do not follow one another in rank order; that failure may be one
 * rank's, so callers agree on the status. */
int tf_dist_row_bounds(MPI_Comm comm, int status, const tf_dcsr *a, int64_t *off);

/* Collective. Moves the rows of *a into the block distribution
 * (tf_dcsr_block) if they are in other bands. On failure *a is empty. */
int tf_dist_to_blocks(MPI_Comm comm, tf_dcsr *a);

/* out = the transpose of in: for a square matrix in the bands of in's rows
 * (tf_dist_row_bounds), otherwise in the block distribution of its rows
 * (in's columns). Each row of out lists its columns ascending, so the values of
 * column j of in are visited in row order, as a serial transpose does.
 * Collective; the status is agreed. */
int tf_dist_transpose(MPI_Comm comm, const tf_dcsr *in, tf_dcsr *out);

/* The same, returning this rank's status of its last step (after the
 * exchange): the caller's next collective must carry the agreement on it
 * (tf_agree_carry.h). On failure *out is empty. */
int tf_dist_transpose_carried(MPI_Comm comm, const tf_dcsr *in, tf_dcsr *out);

#endif
