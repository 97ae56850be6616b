/* A matrix distributed by rows over the ranks of a communicator: each rank
 * holds a contiguous band of global rows [row0, row0 + nrows) in CSR form,
 * with global column indices. The distributed planner's in-memory form of A
 * (docs/planning.md). */
#ifndef TF_DCSR_H
#define TF_DCSR_H

#include <mpi.h>
#include <stdint.h>

#include "tf_csr.h"

typedef struct {
    int64_t m, n;         /* global dimensions */
    int64_t nnz_total;    /* global nonzeros */
    int64_t row0, nrows;  /* this rank's rows */
    tf_csr loc;           /* nrows x n, rowptr[0] = 0, global columns, sorted
                             and unique within a row */
    int mirrored;         /* 1 when the reader added the mirror of every
                             off-diagonal entry of a symmetric Matrix Market
                             file: with tf_prepare_symmetric_as_read, whether
                             the prepared matrix equals its transpose without
                             the test (tf_dist_prepare); every other maker of
                             a tf_dcsr leaves it 0 */
} tf_dcsr;

/* The block distribution of m rows over Q ranks: rank r owns
 * [tf_dcsr_block(m, Q, r), tf_dcsr_block(m, Q, r + 1)). */
static inline int64_t tf_dcsr_block(int64_t m, int Q, int r)
{
    /* m r < 2^62 for any m a tf_csr can have (TF_MAX_DIM): no 128-bit
     * division, which costs a call per entry where owners are looked up. */
    return m <= INT32_MAX ? m * r / Q : (int64_t)((__int128)m * r / Q);
}

void tf_dcsr_free(tf_dcsr *d);

#endif
