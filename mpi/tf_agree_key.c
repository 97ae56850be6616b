#include "tf_agree_key.h"
#include "tf_error.h"

#include <stdio.h>
#include <string.h>

#define AGREE_MSG_MAX 1024

int tf_agree_key(MPI_Comm comm, int status, int64_t key)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (key == INT64_MAX)
        key = INT64_MAX - 1; /* INT64_MAX means "no failure" below */
    int64_t mine = status != TF_OK ? key : INT64_MAX, least = INT64_MAX;
    if (MPI_Allreduce(&mine, &least, 1, MPI_INT64_T, MPI_MIN, comm) != MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "MPI_Allreduce failed while agreeing on a status");
    if (least == INT64_MAX)
        return TF_OK;
    int cand = status != TF_OK && key == least ? rank : size, first = size;
    if (MPI_Allreduce(&cand, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "MPI_Allreduce failed while agreeing on a status");
    int st = status;
    char msg[AGREE_MSG_MAX];
    memset(msg, 0, sizeof msg);
    if (rank == first)
        snprintf(msg, sizeof msg, "%s", tf_error_message());
    MPI_Bcast(&st, 1, MPI_INT, first, comm);
    MPI_Bcast(msg, AGREE_MSG_MAX, MPI_CHAR, first, comm);
    msg[AGREE_MSG_MAX - 1] = '\0';
    if (st == TF_OK)
        st = TF_ERR_INTERNAL;
    return tf_fail(st, "%s", msg[0] ? msg : tf_strerror(st));
}
