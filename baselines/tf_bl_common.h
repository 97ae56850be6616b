/* What the baseline dispatcher (tf_baseline.c) and the algorithms
 * (tf_baseline_allgather.c, tf_baseline_shift.c, tf_baseline_p2p.c) share:
 * the state of a baseline and the helpers they all call. Status agreement
 * and MPI error text are tf_agree.h's. */
#ifndef TF_BL_COMMON_H
#define TF_BL_COMMON_H

#include "tf_baseline.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

struct tf_baseline {
    int algo;
    MPI_Comm comm; /* duplicate of the input communicator */
    int nranks, rank;
    int k;
    int c;         /* replication (shift), else 1 */
    int64_t m, n;
    int64_t nrows, row_begin;
    int64_t nb, brow_begin; /* this rank's B rows */
    int bf16;               /* B rows travel as bfloat16 (tf_bf16.h) */
    size_t es;              /* bytes per travelling element: 4 or 2 */
    MPI_Datatype row_type;  /* K contiguous travelling elements */
    int64_t run_bytes, run_msgs; /* added to the counters by each run */
    int64_t mem_bytes;
    /* This rank's share of the memory its node had available when the
     * baseline was created (tf_meminfo.h), -1 when not known; node_ranks
     * ranks of comm share the node. tf_bl_alloc refuses a large block that
     * would take mem_bytes past it. */
    int64_t mem_budget;
    int node_ranks;
    tf_baseline_counters counters;
    void *impl; /* the algorithm's state */
};

/* calloc-like: count*size bytes, zero-filled (so touched once), never NULL
 * for a zero size; counts into b->mem_bytes. NULL + message on failure,
 * also when a block of TF_BL_MEM_CHECK_BYTES or more would take mem_bytes
 * past mem_budget (the run would not fit in the node's memory). */
#define TF_BL_MEM_CHECK_BYTES ((size_t)64 << 20)
void *tf_bl_alloc(tf_baseline *b, int64_t count, size_t size, const char *what);

/* The setups' variable exchange: counts by MPI_Alltoall over comm, receive
 * displacements from them, a receive buffer (*rbuf, malloc'ed, elem bytes
 * per element, freed by the caller), then MPI_Alltoallv of type. Agrees over
 * b->comm after the allocation and after the exchange, so every rank either
 * gets its data or the same failure. what names the setup and noun the
 * received elements in messages; *nrecv gets their number. */
int tf_bl_exchange(tf_baseline *b, MPI_Comm comm, const void *sbuf, const int *scount,
                   const int *sdispl, int *rcount, int *rdispl, MPI_Datatype type, size_t elem,
                   void **rbuf, int64_t *nrecv, const char *what, const char *noun);

/* C(i,:) = (or +=, when add) sum_e val[e] * B(col[e],:) for the rows
 * [0, nrows) of a CSR. Row-major, K columns. OpenMP over rows when the work
 * is large enough. */
void tf_bl_csr(int64_t nrows, const int64_t *ptr, const int32_t *col, const float *val,
               const float *bmat, int64_t k, float *c, int add);
/* The same for a doubly compressed part: only rows rows[0..nr) are touched;
 * their entries are ptr[j]..ptr[j+1]; always accumulates. */
void tf_bl_dcsr_add(int64_t nr, const int32_t *rows, const int64_t *ptr, const int32_t *col,
                    const float *val, const float *bmat, int64_t k, float *c);

/* The same two with B as bfloat16 (rows received in bf16), widened in the
 * kernels' loads. */
void tf_bl_csr_bf16(int64_t nrows, const int64_t *ptr, const int32_t *col, const float *val,
                    const uint16_t *bmat, int64_t k, float *c, int add);
void tf_bl_dcsr_add_bf16(int64_t nr, const int32_t *rows, const int64_t *ptr,
                         const int32_t *col, const float *val, const uint16_t *bmat, int64_t k,
                         float *c);

/* TF_ERR_ARG unless the replication factor c is at least 1 and divides
 * nranks. */
int tf_bl_check_replication(int c, int nranks);

#endif
