/* Where a distributed matrix's rows are before the plan's bands are known:
 * the reader's bands, balanced by entries and rows, and the bands a matrix
 * is in now. */
#ifndef TF_DIST_BOUNDS_H
#define TF_DIST_BOUNDS_H

#include <mpi.h>
#include <stdint.h>

#define TF_DIST_BOUNDS_BINS 64     /* bins a rank, at most */
#define TF_DIST_BOUNDS_EXCESS 4096 /* weight over a block's share worth moving */

/* Collective. off[0..Q]: bands of m rows over the Q ranks of comm in which
 * every rank holds about the same weight, a row's weight being its entries
 * plus one. row[0..n) are the global rows of the entries this rank holds
 * (any rows; a row's entries may be spread over several ranks). The equal
 * row blocks (tf_dcsr_block) unless one of them weighs more than 1.5 times
 * its share and TF_DIST_BOUNDS_EXCESS over it; otherwise the rows are
 * counted in bins of whole rows (64 a rank), and a band is within one bin's
 * weight of its share. Every rank gets the same off. w: room for
 * TF_DIST_BOUNDS_BINS * Q counts, made by the caller where a failure to
 * allocate is agreed on anyway. */
int tf_dist_balanced_bounds(MPI_Comm comm, int64_t m, const int32_t *row, int64_t n,
                            int64_t *w, int64_t *off);

#endif
