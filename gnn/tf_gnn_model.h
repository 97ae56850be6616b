/* The GCN of Kipf & Welling (ICLR 2017) on distributed rows, with L >= 2
 * layers (their recipe is L = 2); shown for L = 2:
 *
 *   forward   T0 = drop(X).W0            local (sparse X)
 *             H  = A.T0                  SpMM, K = hidden      (forward plan)
 *             R  = drop(ReLU(H))
 *             T1 = R.W1                  local
 *             Z  = A.T1                  SpMM, K = classes     (forward plan)
 *   loss      mean softmax cross-entropy of Z over the train nodes
 *             + weight_decay / 2 * |W0|^2
 *   backward  G   = dloss/dZ             local
 *             dT1 = A^T.G                SpMM, K = classes     (backward plan)
 *             gW1 = R^T.dT1              local, summed over ranks
 *             dH  = (dT1.W1^T) * [R > 0] / (1 - p)   (the ReLU and the same mask)
 *             dT0 = A^T.dH               SpMM, K = hidden      (backward plan)
 *             gW0 = drop(X)^T.dT0 + weight_decay * W0
 *
 * With L > 2, each extra hidden layer l (1 <= l <= L - 2) repeats
 * T_l = R_l.W_l (H x H), H_{l+1} = A.T_l (SpMM, K = hidden), R_{l+1} =
 * drop(ReLU(H_{l+1})) before the last layer, and the backward pass runs
 * the same steps in reverse (SpMM of A^T at K = hidden, gW_l = R_l^T.dT_l).
 *
 * The backward plan is the forward plan itself when A is symmetric, else a
 * plan of A^T whose row bands are the forward plan's B-row bands. The weight
 * gradients and the loss sums are summed over ranks with one MPI_Allreduce
 * per step, in double; weights and Adam state are replicated. Dropout masks
 * are drawn from (seed, epoch, layer, global node, column): hidden layer 1
 * uses the stream TF_GNN_RNG_DROP_HIDDEN, deeper ones tf_gnn_rng_hidden_stream. */
#ifndef TF_GNN_MODEL_H
#define TF_GNN_MODEL_H

#include "tf_gnn_data.h"
#include "tf_gnn_loss.h"
#include "tf_gnn_spmm.h"

#include <mpi.h>
#include <stdint.h>

/* Deepest model: a bound on the per-layer arrays, far above what a GCN
 * trains well (accuracy drops beyond 2-3 layers, docs/gnn.md). */
#define TF_GNN_MAX_LAYERS 32

typedef struct {
    int hidden;          /* 16 */
    double dropout;      /* 0.5 */
    double weight_decay; /* 5e-4, first layer only */
    uint64_t seed;
    int threads;         /* OpenMP threads of an SpMM; 0 = the executor's default */
    int layers;          /* 2..TF_GNN_MAX_LAYERS; 0 = 2 */
    int comm;            /* TF_COMM_*: what the B rows of the forward (activations)
                            and backward (gradients) products travel as; 0 = each
                            plan's choice. Weights, their Allreduce and everything
                            local stay float32 */
} tf_gnn_hparams;

typedef struct {
    const tf_gnn_data *d;
    MPI_Comm comm;
    int layers, hidden, classes;
    int64_t nfeat, ntrain;
    double dropout, weight_decay;
    uint64_t seed;
    /* W0 (nfeat x hidden), W1 .. W_{L-2} (hidden x hidden), W_{L-1}
     * (hidden x classes), one vector for Adam; W_l starts at off[l]. */
    size_t off[TF_GNN_MAX_LAYERS + 1];
    size_t nw0, nw;
    double *w, *grad;
    double *red; /* nw + sums: the Allreduce buffer */
    tf_gnn_spmm fh, fc; /* forward at K = hidden, K = classes */
    tf_gnn_spmm bh, bc; /* backward (unused when bwd_shared) */
    int bwd_shared;
    float *h, *z, *dt1, *dt0;
    float *r[TF_GNN_MAX_LAYERS]; /* R_1 .. R_{L-1}, kept for the backward pass */
    double t_allreduce; /* seconds in MPI_Allreduce, summed */
} tf_gnn_model;

/* Collective over fwd's communicator. bwd is NULL when fwd serves A^T too.
 * d must outlive the model. Weights start Glorot-initialised from hp->seed. */
int tf_gnn_model_create(tf_handle *fwd, tf_handle *bwd, const tf_algo_spec *spec,
                        const tf_gnn_data *d, const tf_gnn_hparams *hp, tf_gnn_model *m);
void tf_gnn_model_free(tf_gnn_model *m);

/* Collective: forward and backward with the dropout masks of `epoch`; fills
 * m->grad (summed over ranks, weight decay included) and *loss (the train
 * loss of that forward pass). */
int tf_gnn_model_grad(tf_gnn_model *m, int64_t epoch, double *loss);
/* Collective: the train loss with the masks of `epoch` (forward only). */
int tf_gnn_model_loss(tf_gnn_model *m, int64_t epoch, double *loss);

typedef struct {
    double loss[TF_GNN_NSPLITS]; /* mean cross-entropy + weight decay term */
    double acc[TF_GNN_NSPLITS];  /* both NaN for a split without nodes */
} tf_gnn_eval;

/* Collective: forward without dropout, loss and accuracy of every split. */
int tf_gnn_model_eval(tf_gnn_model *m, tf_gnn_eval *e);

/* Seconds spent in the SpMMs so far (this rank). */
double tf_gnn_model_spmm_seconds(const tf_gnn_model *m);

#endif
