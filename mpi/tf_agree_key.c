#include "tf_agree_key.h"
#include "tf_agree.h"
#include "tf_error.h"
#include "tf_idle.h"

int tf_agree_key(MPI_Comm comm, int status, int64_t key)
{
    status = tf_agree_injected(status);
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (key == INT64_MAX)
        key = INT64_MAX - 1; /* INT64_MAX means "no failure" below */
    int64_t mine = status != TF_OK ? key : INT64_MAX, least = INT64_MAX;
    if (tf_mpi_allreduce_idle(&mine, &least, 1, MPI_INT64_T, MPI_MIN, comm) != MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "MPI_Allreduce failed while agreeing on a status");
    if (least == INT64_MAX)
        return TF_OK;
    int cand = status != TF_OK && key == least ? rank : size, first = size;
    if (tf_mpi_allreduce_idle(&cand, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "MPI_Allreduce failed while agreeing on a status");
    return tf_agree_adopt(comm, first, status);
}
