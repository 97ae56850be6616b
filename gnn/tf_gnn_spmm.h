/* One SpMM of the training loop: C = A.B at a fixed width K on one plan,
 * run by twoface or by a baseline (baselines/tf_algo.h), with its wall time
 * summed for the report. `twoface` is the plan as given (its own mode);
 * allgather, shift and p2p are the baselines on the plan's rows and
 * partition. */
#ifndef TF_GNN_SPMM_H
#define TF_GNN_SPMM_H

#include "tf_algo.h"
#include "twoface.h"

#include <stdint.h>

typedef struct {
    tf_algo *a;
    int k;
    double seconds; /* wall time inside tf_algo_run, summed */
    int64_t calls;
} tf_gnn_spmm;

/* Parses --algo (twoface, allgather, shift, p2p; fetch and collective too,
 * when the plan was made with that mode) and --replication (shift only;
 * NULL = 1) into one spec for plan h. Local. */
int tf_gnn_algo_parse(const char *algo, const char *replication, const tf_handle *h,
                      tf_algo_spec *spec);

/* Collective over h's communicator. */
/* comm: TF_COMM_* (tf_exec_options.comm), for twoface and the baselines alike. */
int tf_gnn_spmm_create(const tf_algo_spec *spec, tf_handle *h, int k, int threads, int comm,
                       tf_gnn_spmm *op);
/* This rank's rows of B (nrows x k): fill, then run. */
float *tf_gnn_spmm_b(tf_gnn_spmm *op);
/* Collective: c = this rank's rows of A.B. */
int tf_gnn_spmm_run(tf_gnn_spmm *op, float *c);
void tf_gnn_spmm_free(tf_gnn_spmm *op);

#endif
