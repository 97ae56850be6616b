/* Agreements carried by counts and sums (tf_agree_carry.h). */
#include "tf_agree_carry.h"
#include "tf_agree.h"
#include "tf_error.h"
#include "tf_idle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A failed rank's buffers when its own are missing: its failure is often a
 * failed allocation, so a small exchange must not need another. */
#define RESERVE 4096
static int64_t reserve[RESERVE];

static int64_t *failed_buffers(MPI_Comm comm, size_t n, int64_t **owned)
{
    *owned = NULL;
    if (n <= RESERVE)
        return reserve;
    if ((*owned = malloc(n * sizeof **owned)))
        return *owned;
    /* Without buffers this rank cannot take part, and the others would
     * wait for it: end the job, saying why. */
    int me;
    MPI_Comm_rank(comm, &me);
    fprintf(stderr, "twoface: rank %d: %s; and out of memory (%zu bytes) telling the other "
                    "ranks\n", me, tf_error_message(), n * sizeof **owned);
    MPI_Abort(comm, 1);
    return NULL;
}

int tf_agree_allreduce(MPI_Comm comm, int status, void *v, int n, MPI_Datatype type, MPI_Op op)
{
    status = tf_agree_injected(status);
    uint64_t small[TF_AGREE_CARRY_SMALL + 1], *b = small;
    int64_t *owned = NULL;
    if (n > TF_AGREE_CARRY_SMALL) {
        if (status == TF_OK && !(owned = malloc(((size_t)n + 1) * sizeof *owned)))
            status = tf_fail(TF_ERR_NOMEM, "out of memory for %d values of an agreement", n);
        b = (uint64_t *)(owned ? owned : failed_buffers(comm, (size_t)n + 1, &owned));
    }
    /* A failed rank's values do not matter: every rank learns of the
     * failure and drops the result. */
    if (n > 0 && status == TF_OK)
        memcpy(b, v, (size_t)n * sizeof *b);
    else if (n > 0)
        memset(b, 0, (size_t)n * sizeof *b);
    /* The flag of a failure under op: any failure makes the result differ
     * from `none` (a count under MPI_SUM, 1 under MPI_MAX, 0 under
     * MPI_MIN). */
    const uint64_t none = op == MPI_MIN ? 1 : 0, failed = 1 - none;
    b[n] = status != TF_OK ? failed : none;
    int rc = tf_mpi_allreduce_idle(MPI_IN_PLACE, b, n + 1, type, op, comm);
    int any = b[n] != none;
    if (rc == MPI_SUCCESS && !any && n > 0)
        memcpy(v, b, (size_t)n * sizeof *b);
    free(owned);
    if (rc != MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "MPI_Allreduce failed while agreeing on a status");
    return any ? tf_agree_settle(comm, status) : TF_OK;
}

/* Whether a rank sent -1: every rank received one from each rank. */
static int any_failed(const int64_t *recv, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (recv[i] < 0)
            return 1;
    return 0;
}

/* An all-to-all (all_to_all) or all-gather of n counts a rank: a failed
 * rank sends -1 from buffers of its own. */
static int exchange(MPI_Comm comm, int status, const int64_t *send, int64_t *recv, int n,
                    int all_to_all)
{
    status = tf_agree_injected(status);
    int Q;
    MPI_Comm_size(comm, &Q);
    size_t len = (size_t)Q * (size_t)n, nsend = all_to_all ? len : (size_t)n;
    int64_t *owned = NULL;
    if (status != TF_OK) {
        int64_t *b = failed_buffers(comm, nsend + len, &owned);
        for (size_t i = 0; i < nsend; i++)
            b[i] = -1;
        send = b;
        recv = b + nsend;
    }
    int rc = all_to_all ? tf_mpi_alltoall_idle(send, n, MPI_INT64_T, recv, n, MPI_INT64_T, comm)
                        : MPI_Allgather(send, n, MPI_INT64_T, recv, n, MPI_INT64_T, comm);
    int failed = any_failed(recv, len);
    free(owned);
    if (rc != MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "MPI_%s failed while agreeing on a status",
                       all_to_all ? "Alltoall" : "Allgather");
    return failed ? tf_agree_settle(comm, status) : TF_OK;
}

int tf_agree_alltoall_i64(MPI_Comm comm, int status, const int64_t *send, int64_t *recv, int n)
{
    return exchange(comm, status, send, recv, n, 1);
}

int tf_agree_allgather_i64(MPI_Comm comm, int status, const int64_t *send, int64_t *recv, int n)
{
    return exchange(comm, status, send, recv, n, 0);
}
