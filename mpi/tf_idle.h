/* Waiting for a request without keeping a core busy: for ranks that have
 * nothing to do while another rank works alone (rank 0 writing the plan
 * file while the others wait to be asked for their parts), or that reach a
 * phase's collective of counts before a slower rank. */
#ifndef TF_IDLE_H
#define TF_IDLE_H

#include <mpi.h>

/* MPI_Wait(req, status), but after the first millisecond the request is
 * tested every 100 microseconds with the thread asleep in between. Returns
 * MPI's error code, like MPI_Wait. A build with TF_MPI_WAIT_BLOCKING (the
 * SMPI build, where a host sleep would count as simulated compute) calls
 * MPI_Wait. */
int tf_mpi_wait_idle(MPI_Request *req, MPI_Status *status);

/* MPI_Allreduce, waited for with tf_mpi_wait_idle. Returns MPI's error code. */
int tf_mpi_allreduce_idle(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                          MPI_Comm comm);

/* MPI_Alltoall, waited for with tf_mpi_wait_idle. Returns MPI's error code.
 * For counts and other small blocks only: the wait is for the last rank to
 * arrive, and the data cross in one eager message each. A large exchange
 * needs the receiver's progress for every fragment, which the naps would
 * slow down, so bulk data keeps MPI's own wait. */
int tf_mpi_alltoall_idle(const void *send, int scount, MPI_Datatype stype, void *recv,
                         int rcount, MPI_Datatype rtype, MPI_Comm comm);

#endif
