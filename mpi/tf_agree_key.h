/* Agreement on a failure over a communicator, when the ranks may each have
 * found a different one: the one with the smallest key wins (ties: the
 * lowest rank), so that the outcome does not depend on how the work was
 * split. Readers use the true line number, or the row, as the key, so the
 * message is the one a serial reader would print. */
#ifndef TF_AGREE_KEY_H
#define TF_AGREE_KEY_H

#include <mpi.h>
#include <stdint.h>

/* Key for failures that precede any position in the input (cannot open,
 * wrong type, out of memory): they win over every positioned one. */
#define TF_KEY_FIRST 0

/* Collective. Every rank passes its status (TF_OK or a failure whose message
 * is in tf_error_message()) and the key of that failure. Returns TF_OK on
 * every rank if all passed TF_OK; otherwise, on every rank, the winning
 * status with the winner's message recorded by tf_fail. */
int tf_agree_key(MPI_Comm comm, int status, int64_t key);

#endif
