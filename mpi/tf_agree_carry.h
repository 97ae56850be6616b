/* Agreements carried by a collective the step makes anyway. An agreement
 * (tf_agree.h) is an all-reduce: log2(P) latencies, and a point where every
 * rank waits for the slowest. Where a step agrees on its status and then
 * exchanges counts or sums, the exchange can carry the status instead: a
 * sum or maximum gets one more element, a rank's failure; an all-to-all or
 * all-gather of values that are never negative gets -1 from a failed rank.
 * When every rank succeeded that is one collective instead of two; when one
 * failed, every rank sees it in the same collective and they agree as
 * tf_agree does (the lowest failing rank's status and message).
 *
 * Each call is an agreement for TF_FAULT_AGREE (tf_agree_injected): the
 * fault walk of tests/e2e_agree_faults.sh reaches these too. A failed rank
 * may pass NULL buffers: it takes part with buffers of its own. */
#ifndef TF_AGREE_CARRY_H
#define TF_AGREE_CARRY_H

#include <mpi.h>
#include <stdint.h>

/* Up to this many values an all-reduce's buffer is on the stack; more
 * take one allocation (a failed rank's: a reserve, or the heap). */
#define TF_AGREE_CARRY_SMALL 15

/* In place over v[0 .. n): op (MPI_SUM, MPI_MAX or MPI_MIN) of type
 * (MPI_INT64_T or MPI_UINT64_T; sums wrap with MPI_UINT64_T) over the
 * ranks, and the agreement on status. v is defined only on TF_OK. */
int tf_agree_allreduce(MPI_Comm comm, int status, void *v, int n, MPI_Datatype type, MPI_Op op);

/* recv[q * n + i] = what rank q passed as send[me * n + i]: MPI_Alltoall of n
 * int64 per rank pair, values >= 0, and the agreement on status. */
int tf_agree_alltoall_i64(MPI_Comm comm, int status, const int64_t *send, int64_t *recv, int n);

/* recv[q * n + i] = rank q's send[i]: MPI_Allgather of n int64 per rank,
 * values >= 0, and the agreement on status. */
int tf_agree_allgather_i64(MPI_Comm comm, int status, const int64_t *send, int64_t *recv, int n);

#endif
