#include "tf_dist_comm.h"
#include "tf_error.h"
#include "tf_agree.h"
#include "tf_agree_carry.h"
#include "tf_idle.h"

#include <stdlib.h>

#define PIECE ((int64_t)1 << 30)

int tf_dist_alltoallv(MPI_Comm comm, const void *sendbuf, const int64_t *send,
                      const int64_t *sdispl, void *recvbuf, const int64_t *recv,
                      const int64_t *rdispl)
{
    int Q, me;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    int64_t nreq = 0;
    for (int q = 0; q < Q; q++)
        nreq += (send[q] + PIECE - 1) / PIECE + (recv[q] + PIECE - 1) / PIECE;
    MPI_Request *req = malloc((size_t)(nreq ? nreq : 1) * sizeof *req);
    /* The other ranks have posted their part already: a rank that cannot
     * hold its requests exchanges without them rather than leave them
     * waiting. */
    if (!req)
        return tf_dist_alltoallv_pairwise(comm, sendbuf, send, sdispl, recvbuf, recv, rdispl);
    int64_t r = 0;
    int rc = MPI_SUCCESS;
    /* Receives first, then sends starting at the next rank, so that no
     * rank is every sender's first target at once. */
    for (int q = 0; q < Q && rc == MPI_SUCCESS; q++)
        for (int64_t off = 0; off < recv[q] && rc == MPI_SUCCESS; off += PIECE) {
            int64_t n = recv[q] - off < PIECE ? recv[q] - off : PIECE;
            rc = MPI_Irecv((char *)recvbuf + rdispl[q] + off, (int)n, MPI_BYTE, q,
                           (int)(off / PIECE), comm, &req[r++]);
        }
    for (int i = 0; i < Q && rc == MPI_SUCCESS; i++) {
        int q = (me + i) % Q;
        for (int64_t off = 0; off < send[q] && rc == MPI_SUCCESS; off += PIECE) {
            int64_t n = send[q] - off < PIECE ? send[q] - off : PIECE;
            rc = MPI_Isend((const char *)sendbuf + sdispl[q] + off, (int)n, MPI_BYTE, q,
                           (int)(off / PIECE), comm, &req[r++]);
        }
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Waitall((int)r, req, MPI_STATUSES_IGNORE);
    free(req);
    return rc == MPI_SUCCESS ? TF_OK : tf_fail(TF_ERR_MPI, "an all-to-all exchange failed");
}

int tf_dist_alltoallv_pairwise(MPI_Comm comm, const void *sendbuf, const int64_t *send,
                               const int64_t *sdispl, void *recvbuf, const int64_t *recv,
                               const int64_t *rdispl)
{
    int Q, me;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    /* Step i sends to me + i and receives from me - i, so that in every
     * step the ranks exchanging this way pair off among themselves, and
     * the others have every message posted: no cycle of waits. The
     * pieces and tags are those of tf_dist_alltoallv. */
    for (int i = 0; i < Q; i++) {
        int to = (me + i) % Q, from = (me - i + Q) % Q;
        for (int64_t off = 0; off < send[to] || off < recv[from]; off += PIECE) {
            int64_t ns = send[to] - off < PIECE ? send[to] - off : PIECE;
            int64_t nr = recv[from] - off < PIECE ? recv[from] - off : PIECE;
            int tag = (int)(off / PIECE);
            const char *sp = ns > 0 ? (const char *)sendbuf + sdispl[to] + off : NULL;
            char *rp = nr > 0 ? (char *)recvbuf + rdispl[from] + off : NULL;
            if (MPI_Sendrecv(sp, ns > 0 ? (int)ns : 0, MPI_BYTE, ns > 0 ? to : MPI_PROC_NULL, tag,
                             rp, nr > 0 ? (int)nr : 0, MPI_BYTE, nr > 0 ? from : MPI_PROC_NULL,
                             tag, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                return tf_fail(TF_ERR_MPI, "an all-to-all exchange failed");
        }
    }
    return TF_OK;
}

/* Displacements and totals of exchanged counts. */
static void displacements(int Q, const int64_t *send, const int64_t *recv, int64_t *sdispl,
                          int64_t *rdispl, int64_t *send_total, int64_t *recv_total)
{
    int64_t s = 0, t = 0;
    for (int q = 0; q < Q; q++) {
        if (sdispl)
            sdispl[q] = s;
        if (rdispl)
            rdispl[q] = t;
        s += send[q];
        t += recv[q];
    }
    if (send_total)
        *send_total = s;
    if (recv_total)
        *recv_total = t;
}

int tf_dist_counts(MPI_Comm comm, const int64_t *send, int64_t *recv, int64_t *sdispl,
                   int64_t *rdispl, int64_t *send_total, int64_t *recv_total)
{
    int Q;
    MPI_Comm_size(comm, &Q);
    if (tf_mpi_alltoall_idle(send, 1, MPI_INT64_T, recv, 1, MPI_INT64_T, comm) != MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "MPI_Alltoall of counts failed");
    displacements(Q, send, recv, sdispl, rdispl, send_total, recv_total);
    return TF_OK;
}

int tf_dist_counts_agree(MPI_Comm comm, int status, const int64_t *send, int64_t *recv,
                         int64_t *sdispl, int64_t *rdispl, int64_t *send_total,
                         int64_t *recv_total)
{
    int Q;
    MPI_Comm_size(comm, &Q);
    int st = tf_agree_alltoall_i64(comm, status, send, recv, 1);
    if (st == TF_OK)
        displacements(Q, send, recv, sdispl, rdispl, send_total, recv_total);
    return st;
}

uint64_t tf_dist_sum_u64(MPI_Comm comm, uint64_t v)
{
    uint64_t t = 0;
    tf_mpi_allreduce_idle(&v, &t, 1, MPI_UINT64_T, MPI_SUM, comm);
    return t;
}

int64_t tf_dist_sum_i64(MPI_Comm comm, int64_t v)
{
    int64_t t = 0;
    tf_mpi_allreduce_idle(&v, &t, 1, MPI_INT64_T, MPI_SUM, comm);
    return t;
}

int64_t tf_dist_exscan_i64(MPI_Comm comm, int64_t v)
{
    int64_t before = 0;
    int rank;
    MPI_Exscan(&v, &before, 1, MPI_INT64_T, MPI_SUM, comm);
    MPI_Comm_rank(comm, &rank);
    return rank == 0 ? 0 : before;
}
