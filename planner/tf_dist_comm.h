/* Communication helpers of the distributed planner: an all-to-all whose
 * counts are 64-bit byte counts (a rank pair may exchange more than 2^31
 * bytes of a large graph), and sums over the ranks. Status agreement is
 * mpi/tf_agree.h's, included here because every caller of these needs it. */
#ifndef TF_DIST_COMM_H
#define TF_DIST_COMM_H

#include <mpi.h>
#include <stdint.h>

#include "tf_agree.h"

/* Exchanges bytes: send[q] bytes from sendbuf + sdispl[q] go to rank q,
 * recv[q] bytes from rank q land at recvbuf + rdispl[q]. Counts must match
 * pairwise (the caller exchanged them, e.g. with tf_dist_counts). Messages
 * are cut into pieces of at most 1 GiB. */
int tf_dist_alltoallv(MPI_Comm comm, const void *sendbuf, const int64_t *send,
                      const int64_t *sdispl, void *recvbuf, const int64_t *recv,
                      const int64_t *rdispl);

/* The same exchange without a request per message: P steps of one
 * MPI_Sendrecv per piece. tf_dist_alltoallv falls back on it when its
 * requests do not fit in memory; it pairs with ranks running either. */
int tf_dist_alltoallv_pairwise(MPI_Comm comm, const void *sendbuf, const int64_t *send,
                               const int64_t *sdispl, void *recvbuf, const int64_t *recv,
                               const int64_t *rdispl);

/* recv[q] = what rank q passed as send[me]; also fills displacements from
 * the counts (element counts or bytes alike) and returns the totals. */
int tf_dist_counts(MPI_Comm comm, const int64_t *send, int64_t *recv, int64_t *sdispl,
                   int64_t *rdispl, int64_t *send_total, int64_t *recv_total);

/* tf_dist_counts carrying the agreement on this rank's status
 * (tf_agree_carry.h): for a step that would agree and then exchange its
 * counts. A failed rank may pass NULL arrays. Returns the agreed status. */
int tf_dist_counts_agree(MPI_Comm comm, int status, const int64_t *send, int64_t *recv,
                         int64_t *sdispl, int64_t *rdispl, int64_t *send_total,
                         int64_t *recv_total);

/* Sum of a 64-bit unsigned value over the ranks, mod 2^64. */
uint64_t tf_dist_sum_u64(MPI_Comm comm, uint64_t v);
int64_t tf_dist_sum_i64(MPI_Comm comm, int64_t v);
/* Sum of v over the ranks before this one (0 on rank 0, where MPI_Exscan
 * leaves it undefined). */
int64_t tf_dist_exscan_i64(MPI_Comm comm, int64_t v);

#endif
