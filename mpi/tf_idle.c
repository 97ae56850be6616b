/* Open MPI's blocking calls poll: a rank that waits seconds for rank 0 to
 * finish writing the plan spins a core for all of them (with
 * mpi_yield_when_idle it yields, but the time still counts as its CPU time
 * and takes a core from whatever else runs there). Planning on 4 ranks of
 * R-MAT 22 summed 35 CPU seconds for 26 on one rank, the difference mostly
 * three ranks spinning through rank 0's 2.8 s write. Sleeping between tests
 * costs at most one nap of latency per wait; the first millisecond is
 * tested without sleeping, so a quick answer costs nothing. */
#include "tf_idle.h"

#include <time.h>

#define SPIN_S 1e-3
#define NAP_NS 100000L

int tf_mpi_wait_idle(MPI_Request *req, MPI_Status *status)
{
#ifdef TF_MPI_WAIT_BLOCKING
    return MPI_Wait(req, status);
#else
    const double t0 = MPI_Wtime();
    for (;;) {
        int done = 0;
        int err = MPI_Test(req, &done, status);
        if (err != MPI_SUCCESS || done)
            return err;
        if (MPI_Wtime() - t0 > SPIN_S) {
            struct timespec nap = {0, NAP_NS};
            nanosleep(&nap, NULL);
        }
    }
#endif
}

int tf_mpi_allreduce_idle(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                          MPI_Comm comm)
{
#ifdef TF_MPI_WAIT_BLOCKING
    /* Where waiting blocks anyway (the simulated cluster), the blocking
     * collective: SMPI runs its tuned algorithms for it, while its
     * nonblocking collectives are plain point-to-point rounds. */
    return MPI_Allreduce(send, recv, count, type, op, comm);
#else
    MPI_Request rq;
    int err = MPI_Iallreduce(send, recv, count, type, op, comm, &rq);
    return err != MPI_SUCCESS ? err : tf_mpi_wait_idle(&rq, MPI_STATUS_IGNORE);
#endif
}

int tf_mpi_alltoall_idle(const void *send, int scount, MPI_Datatype stype, void *recv,
                         int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
#ifdef TF_MPI_WAIT_BLOCKING
    return MPI_Alltoall(send, scount, stype, recv, rcount, rtype, comm);
#else
    MPI_Request rq;
    int err = MPI_Ialltoall(send, scount, stype, recv, rcount, rtype, comm, &rq);
    return err != MPI_SUCCESS ? err : tf_mpi_wait_idle(&rq, MPI_STATUS_IGNORE);
#endif
}
