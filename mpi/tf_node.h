/* Which ranks of a communicator share this rank's node. */
#ifndef TF_NODE_H
#define TF_NODE_H

#include <mpi.h>

/* Collective over comm: how many of its ranks share this rank's node
 * (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED); 1 when MPI cannot tell. */
int tf_node_ranks(MPI_Comm comm);

/* Collective over comm: 1 when every rank of it is on one node, from each
 * rank's node_ranks (tf_node_ranks); the same on every rank. */
int tf_node_single(MPI_Comm comm, int node_ranks);

#endif
