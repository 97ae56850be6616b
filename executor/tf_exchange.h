/* The neighbour exchange behind the collective half of twoface and the p2p
 * baseline: each rank sends blocks to a few destinations and receives blocks
 * from a few sources, once per SpMM, as one non-blocking request.
 *
 * Two implementations, chosen per run, the same on every rank:
 *  - neighbor (default): MPI_Ineighbor_alltoall{v,w} over a distributed-graph
 *    communicator (MPI_Dist_graph_create_adjacent);
 *  - alltoall: MPI_Ialltoall{v,w} over a duplicate of the communicator, with
 *    zero counts for the ranks that are not neighbours. For MPIs without the
 *    MPI-3 neighbourhood collectives: SimGrid SMPI 3.32 aborts in
 *    MPI_Dist_graph_create_adjacent ("Not yet implemented"). The same blocks,
 *    datatypes and buffers, so both compute the same C.
 * TWOFACE_EXCHANGE=neighbor|alltoall selects one at run time; the build
 * default is neighbor unless compiled with -DTF_EXCHANGE_DEFAULT_ALLTOALL
 * (`make smpi`). */
#ifndef TF_EXCHANGE_H
#define TF_EXCHANGE_H

#include <mpi.h>
#include <stdint.h>

enum { TF_XCHG_NEIGHBOR = 0, TF_XCHG_ALLTOALL = 1 };

typedef struct {
    int mode; /* TF_XCHG_* */
    int nranks;
    MPI_Comm comm; /* graph communicator or duplicate; MPI_COMM_NULL before create */
    int borrowed;  /* comm belongs to another tf_xchg (tf_xchg_borrow) */
    int n_src, n_dst;
    int *src, *dst; /* copies of the neighbour lists */
    /* alltoall mode: the per-rank arguments (nranks each), zero outside the
     * neighbours; w: one hindexed type per neighbour holding the block's
     * byte displacement (MPI_Ialltoallw's displacements are int). */
    int *a_scount, *a_rcount, *a_sdispl, *a_rdispl;
    MPI_Datatype *a_stype, *a_rtype;
} tf_xchg;

/* The mode of this run: TWOFACE_EXCHANGE, else the build default. Sets
 * *mode; TF_ERR_ARG with a message for an unknown value. Local. */
int tf_xchg_mode(int *mode);
const char *tf_xchg_mode_name(int mode);

/* Empty exchange (comm = MPI_COMM_NULL), safe to free. */
void tf_xchg_init(tf_xchg *x);
/* Collective over comm: checks that every rank runs the same mode, then
 * creates the communicator. src/dst are copied (may be NULL when empty).
 * Agrees on the outcome. */
int tf_xchg_create(tf_xchg *x, MPI_Comm comm, int mode, int n_src, const int *src, int n_dst,
                   const int *dst);
/* x uses base's communicator and neighbours, with blocks of its own (one
 * communicator serves several block layouts). base must outlive x. Local. */
int tf_xchg_borrow(tf_xchg *x, const tf_xchg *base);
/* One int64 to each destination, one from each source (blocking). */
int tf_xchg_alltoall_i64(tf_xchg *x, const int64_t *send, int64_t *recv);
/* Sets the blocks of start_w, once (alltoall mode builds its arguments and
 * types; neighbor mode keeps nothing). Per destination/source: count,
 * byte displacement from the buffer, type. Local. */
int tf_xchg_prepare_w(tf_xchg *x, const int *scount, const MPI_Aint *sdispl,
                      const MPI_Datatype *stype, const int *rcount, const MPI_Aint *rdispl,
                      const MPI_Datatype *rtype);
int tf_xchg_start_w(tf_xchg *x, const void *sbuf, const int *scount, const MPI_Aint *sdispl,
                    const MPI_Datatype *stype, void *rbuf, const int *rcount,
                    const MPI_Aint *rdispl, const MPI_Datatype *rtype, MPI_Request *req);
/* Counts and displacements in elements of `type` (as MPI_Ineighbor_alltoallv):
 * prepare once, then start per exchange. */
int tf_xchg_prepare_v(tf_xchg *x, const int *scount, const int *sdispl, const int *rcount,
                      const int *rdispl);
int tf_xchg_start_v(tf_xchg *x, const void *sbuf, const int *scount, const int *sdispl,
                    void *rbuf, const int *rcount, const int *rdispl, MPI_Datatype type,
                    MPI_Request *req);
void tf_xchg_free(tf_xchg *x);

#endif
