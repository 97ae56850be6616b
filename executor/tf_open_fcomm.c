/* tf_open for callers that cannot name a C MPI_Comm: Python (mpi4py's
 * Comm.py2f()), Fortran. MPI_Comm is an opaque C type whose layout differs
 * between MPI libraries (a pointer in Open MPI, an int in MPICH), so a foreign
 * function interface cannot build one portably; the Fortran handle is an
 * integer in every MPI and MPI_Comm_f2c converts it. */
#include "twoface.h"
#include "tf_error.h"

#include <limits.h>

int tf_open_fcomm(const char *plan_path, int64_t fortran_comm, tf_handle **h)
{
    if (!h)
        return tf_fail(TF_ERR_ARG, "tf_open_fcomm: NULL handle pointer");
    *h = NULL;
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin) /* MPI_Comm_f2c is undefined outside MPI */
        return tf_fail(TF_ERR_MPI, "tf_open_fcomm: MPI is not initialised");
    if (fortran_comm < INT_MIN || fortran_comm > INT_MAX)
        return tf_fail(TF_ERR_ARG, "tf_open_fcomm: Fortran communicator handle %lld out of range",
                       (long long)fortran_comm);
    /* Open MPI returns NULL (not MPI_COMM_NULL) for an unknown handle. */
    MPI_Comm comm = MPI_Comm_f2c((MPI_Fint)fortran_comm);
    if (comm == MPI_COMM_NULL || !comm)
        return tf_fail(TF_ERR_ARG, "tf_open_fcomm: %lld is not a valid communicator handle",
                       (long long)fortran_comm);
    return tf_open(plan_path, comm, h);
}
