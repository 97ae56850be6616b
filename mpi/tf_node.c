/* Ranks on this rank's node: tf_node.h. */
#include "tf_node.h"

int tf_node_ranks(MPI_Comm comm)
{
    int n = 1;
    MPI_Comm node = MPI_COMM_NULL;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
            MPI_SUCCESS &&
        node != MPI_COMM_NULL) {
        MPI_Comm_size(node, &n);
        MPI_Comm_free(&node);
    }
    return n;
}

int tf_node_single(MPI_Comm comm, int node_ranks)
{
    int size = 1;
    MPI_Comm_size(comm, &size);
    int one = node_ranks == size;
    MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_INT, MPI_MIN, comm);
    return one;
}
