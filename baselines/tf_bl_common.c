/* What the baselines share: allocation that counts memory, the setups'
 * variable exchange, the replication check and the multiply loops
 * (tf_bl_common.h). */
#include "tf_bl_common.h"
#include "tf_agree.h"
#include "tf_error.h"
#include "tf_kernels.h"

#include <limits.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Below this many multiply-adds a compute loop stays on one thread: the
 * parallel region would cost more than it saves (and ranks are often
 * oversubscribed in tests). */
#define BL_OMP_MIN_WORK ((int64_t)1 << 16)

/* ---- Setup helpers ------------------------------------------------------ */

int tf_bl_exchange(tf_baseline *b, MPI_Comm comm, const void *sbuf, const int *scount,
                   const int *sdispl, int *rcount, int *rdispl, MPI_Datatype type, size_t elem,
                   void **rbuf, int64_t *nrecv, const char *what, const char *noun)
{
    int st = TF_OK, n;
    MPI_Comm_size(comm, &n);
    int err = MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm);
    int64_t total = 0;
    *rbuf = NULL;
    if (err != MPI_SUCCESS) {
        st = tf_mpi_fail(err, "MPI_Alltoall");
    } else {
        for (int d = 0; d < n; d++) {
            rdispl[d] = (int)total;
            total += rcount[d];
        }
        if (total > INT_MAX)
            st = tf_fail(TF_ERR_RANGE, "rank %d: %s: %lld %s to receive exceed an MPI count",
                         b->rank, what, (long long)total, noun);
        else if (!(*rbuf = malloc((size_t)(total > 0 ? total : 1) * elem)))
            st = tf_fail(TF_ERR_NOMEM, "rank %d: %s: cannot allocate %lld %s", b->rank, what,
                         (long long)total, noun);
    }
    *nrecv = total;
    st = tf_agree(b->comm, st);
    if (st != TF_OK)
        return st;
    err = MPI_Alltoallv(sbuf, scount, sdispl, type, *rbuf, rcount, rdispl, type, comm);
    if (err != MPI_SUCCESS)
        st = tf_mpi_fail(err, "MPI_Alltoallv");
    return tf_agree(b->comm, st);
}

void *tf_bl_alloc(tf_baseline *b, int64_t count, size_t size, const char *what)
{
    if (count < 0 || (size && (uint64_t)count > SIZE_MAX / size)) {
        tf_fail(TF_ERR_RANGE, "rank %d: %s: %lld x %zu bytes does not fit in memory",
                b->rank, what, (long long)count, size);
        return NULL;
    }
    size_t bytes = (size_t)count * size;
    /* Linux grants a block it cannot back and kills the process when it is
     * touched (below): refuse first, while a message can still be given.
     * Only large blocks: the whole copies of B and C that allgather and
     * shift keep are what outgrows a node (shift with c = 1, 2 and 4 side
     * by side took 4.4 GB per rank at K = 512 on a 3.2 M-nonzero graph). */
    if (bytes >= TF_BL_MEM_CHECK_BYTES && b->mem_budget >= 0 &&
        (int64_t)bytes > b->mem_budget - b->mem_bytes) {
        tf_fail(TF_ERR_NOMEM,
                "rank %d: %s: %lld MiB would take this strategy to %lld MiB, more than this "
                "rank's share of the memory its node had available (%lld MiB for %d rank%s); "
                "run fewer strategies at once or a smaller K (TWOFACE_MEM_AVAILABLE_MIB sets "
                "the node's figure)",
                b->rank, what, (long long)(bytes >> 20),
                (long long)((b->mem_bytes + (int64_t)bytes) >> 20),
                (long long)((b->mem_budget * b->node_ranks) >> 20), b->node_ranks,
                b->node_ranks == 1 ? "" : "s");
        return NULL;
    }
    /* On cache lines, as the engine's buffers: B rows and C rows of a
     * whole number of lines then fill them (tf_kern_alloc_rows). */
    void *p = tf_kern_alloc_rows((int64_t)bytes, 1, 1); /* at least one byte */
    if (!p) {
        tf_fail(TF_ERR_NOMEM, "rank %d: %s: cannot allocate %zu bytes", b->rank, what, bytes);
        return NULL;
    }
    /* tf_kern_alloc_rows wrote its zeros: the first SpMM does not pay the
     * page faults of fresh pages. */
    b->mem_bytes += (int64_t)bytes;
    return p;
}

/* ---- Kernels ------------------------------------------------------------ */

/* The baselines multiply with the executor's own dispatched kernels
 * (tf_kernels.h), so that a comparison of strategies measures how B rows
 * move, not which loop computes. */

void tf_bl_csr(int64_t nrows, const int64_t *ptr, const int32_t *col, const float *val,
               const float *bmat, int64_t k, float *c, int add)
{
    if (nrows <= 0)
        return;
    int64_t work = (ptr[nrows] - ptr[0] + nrows) * k;
    /* Overwriting C: the engine's choice of stores for a C of this size. */
    if (!add)
        add = tf_kern_c_mode(nrows * k * (int64_t)sizeof(float));
#pragma omp parallel if (work > BL_OMP_MIN_WORK)
    {
        int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        tf_kern_csr(nrows * t / nt, nrows * (t + 1) / nt, ptr, col, val, bmat, k, c, add);
    }
}

void tf_bl_dcsr_add(int64_t nr, const int32_t *rows, const int64_t *ptr, const int32_t *col,
                    const float *val, const float *bmat, int64_t k, float *c)
{
    if (nr <= 0)
        return;
    int64_t work = (ptr[nr] - ptr[0] + nr) * k;
#pragma omp parallel for schedule(static) if (work > BL_OMP_MIN_WORK)
    for (int64_t j = 0; j < nr; j++)
        tf_kern_csr(0, 1, ptr + j, col, val, bmat, k, c + (int64_t)rows[j] * k, 1);
}

void tf_bl_csr_bf16(int64_t nrows, const int64_t *ptr, const int32_t *col, const float *val,
                    const uint16_t *bmat, int64_t k, float *c, int add)
{
    if (nrows <= 0)
        return;
    int64_t work = (ptr[nrows] - ptr[0] + nrows) * k;
    if (!add)
        add = tf_kern_c_mode(nrows * k * (int64_t)sizeof(float));
#pragma omp parallel if (work > BL_OMP_MIN_WORK)
    {
        int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        tf_kern_csr_bf16(nrows * t / nt, nrows * (t + 1) / nt, ptr, col, val, bmat, k, c, add);
    }
}

void tf_bl_dcsr_add_bf16(int64_t nr, const int32_t *rows, const int64_t *ptr,
                         const int32_t *col, const float *val, const uint16_t *bmat, int64_t k,
                         float *c)
{
    if (nr <= 0)
        return;
    int64_t work = (ptr[nr] - ptr[0] + nr) * k;
#pragma omp parallel for schedule(static) if (work > BL_OMP_MIN_WORK)
    for (int64_t j = 0; j < nr; j++)
        tf_kern_csr_bf16(0, 1, ptr + j, col, val, bmat, k, c + (int64_t)rows[j] * k, 1);
}

int tf_bl_check_replication(int c, int nranks)
{
    if (c < 1 || nranks % c != 0)
        return tf_fail(TF_ERR_ARG, "--replication %d does not divide %d ranks", c, nranks);
    return TF_OK;
}
