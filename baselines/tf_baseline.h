/* The three baseline SpMM algorithms twoface is benchmarked against, as a
 * self-contained module twoface-exec (through tf_algo.h), the benchmarks and
 * the tests call:
 *
 *   allgather  MPI_Allgatherv of every rank's B band into a full n x K copy,
 *              then a local CSR multiply.
 *   shift      1.5D dense shifting with replication factor c: a (P/c) x c
 *              grid of ranks; B sub-blocks travel around rings of P/c ranks
 *              (double-buffered Isend/Irecv overlapping the multiply), the
 *              c partial results of a team are summed by MPI_Reduce_scatter.
 *   p2p        the sparsity-aware two-sided exchange PETSc uses: each owner
 *              sends exactly the distinct B rows a rank needs, in one message
 *              per pair, through MPI_Ineighbor_alltoallv on one
 *              distributed-graph communicator.
 *
 * A and C use the same 1D row partition as the executor (row_off); B its own
 * row partition (brow_off). docs/baselines.md gives the volume formulas.
 *
 * Collective calls (tf_baseline_create, tf_baseline_run, tf_baseline_free)
 * must be made by every rank of the input communicator, in the same order.
 * tf_baseline_create agrees on the outcome: if any rank fails, every rank
 * returns the same status with the same message, and none hangs.
 * tf_baseline_run allocates nothing; an MPI failure inside it is not
 * recoverable (TF_ERR_MPI; the caller should MPI_Abort). MPI calls are made
 * by the calling thread only; the compute loops may use OpenMP threads. */
#ifndef TF_BASELINE_H
#define TF_BASELINE_H

#include <mpi.h>

#include <stdint.h>

typedef enum { TF_BASE_ALLGATHER = 1, TF_BASE_SHIFT = 2, TF_BASE_P2P = 3 } tf_baseline_algo;

typedef struct {
    MPI_Comm comm;           /* the executor's communicator (duplicated inside) */
    int nranks, rank;        /* must match comm */
    int64_t m, n;            /* A is m x n, B is n x K */
    const int64_t *row_off;  /* nranks+1: rank p owns A/C rows [row_off[p], row_off[p+1]) */
    const int64_t *brow_off; /* nranks+1: rank p owns B rows [brow_off[p], brow_off[p+1]) */
    int64_t nrows;           /* = row_off[rank+1] - row_off[rank] */
    const int64_t *rowptr;   /* this rank's rows of A as CSR (nrows+1, rowptr[0] = 0) ... */
    const int32_t *col;      /* ... with GLOBAL column indices, ascending per row */
    const float *val;
    int k;                   /* dense width, >= 1 */
    int replication;         /* shift only: c, must divide nranks; 0 = 1 */
    int bf16;                /* 1: B rows travel as bfloat16, as twoface's with
                                TF_COMM_BF16 (each rank's own rows stay float32);
                                must be the same on every rank */
} tf_baseline_input;

/* Per SpMM, accumulated over tf_baseline_run calls until reset. Times in
 * seconds. bytes_received/messages follow the volume model of
 * docs/baselines.md (what this rank receives), not MPI internals. */
typedef struct {
    int64_t bytes_received, messages;
    double comm_wait; /* in blocking MPI calls and waits */
    double compute;   /* in the multiply loops (and packing/zeroing) */
} tf_baseline_counters;

typedef struct tf_baseline tf_baseline;

/* Collective over in->comm. Checks the inputs, duplicates the communicator,
 * builds the algorithm's communicators and index structures, allocates and
 * touches every buffer an SpMM needs once. The input arrays are not
 * referenced after it returns (everything needed is copied). On failure
 * *out is NULL on every rank. */
int tf_baseline_create(int algo, const tf_baseline_input *in, tf_baseline **out);

/* Collective. b_rows: this rank's B rows (brow_off[rank+1]-brow_off[rank]
 * rows of K floats, row-major; may be NULL when there are none). c: this
 * rank's C rows, nrows x K floats, every entry written (may be NULL when
 * nrows is 0). When it returns, no rank reads b_rows any more. */
int tf_baseline_run(tf_baseline *b, const float *b_rows, float *c);

const tf_baseline_counters *tf_baseline_counters_get(const tf_baseline *b);
void tf_baseline_counters_reset(tf_baseline *b);

/* Bytes of buffers and index structures held by this rank (for reports). */
int64_t tf_baseline_memory(const tf_baseline *b);

int tf_baseline_algo_of(const tf_baseline *b);
/* Replication factor actually used (1 for allgather and p2p). */
int tf_baseline_replication(const tf_baseline *b);

/* Collective; b may be NULL (then on every rank). Always returns 0. */
int tf_baseline_free(tf_baseline *b);

/* "allgather", "shift", "p2p" ("?" for anything else). */
const char *tf_baseline_name(int algo);
/* Inverse of tf_baseline_name; TF_ERR_ARG with a message otherwise. */
int tf_baseline_parse(const char *s, int *algo);

/* Volume model for reports at scales we cannot run: bytes received and
 * messages per SpMM of rank `rank` for dense width k, from the partitions
 * alone (no communication). Exactly what tf_baseline_run adds to the
 * counters. Only allgather and shift (p2p depends on the sparsity pattern:
 * TF_ERR_ARG). replication as in tf_baseline_input (0 = 1); TF_ERR_ARG if it
 * does not divide nranks. */
int tf_baseline_predict(int algo, int nranks, int rank, const int64_t *row_off,
                        const int64_t *brow_off, int replication, int k,
                        int64_t *bytes_received, int64_t *messages);

#endif
