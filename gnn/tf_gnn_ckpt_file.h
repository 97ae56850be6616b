/* The checkpoint file of twoface-gcn: everything a run needs to continue
 * exactly where it stopped, in one HDF5 file (docs/gnn.md, "Checkpoints").
 * Serial: one process writes it (atomically, tf_gnn_outfile.h) or reads it.
 *
 * Root attributes: format ("twoface-gcn checkpoint"), version; what the state
 * belongs to (fingerprint of the plan's matrix and normalisation, nodes,
 * features, layers, hidden, classes) and the training rule (seed, dropout,
 * lr, weight_decay, patience); the state: epoch (epochs done), stopped (1:
 * early stopping ended the run there), adam_step, stop_seen (validation
 * losses the stopping rule has seen).
 * Datasets (float64): weights, adam_m, adam_v (all the weights, W0 first,
 * as tf_gnn_model.w), stop_history (the stopping rule's last `patience`
 * validation losses, a ring buffer indexed by stop_seen mod patience).
 * The dropout masks are a function of (seed, epoch), so seed and epoch are
 * the whole state of the dropout stream. */
#ifndef TF_GNN_CKPT_FILE_H
#define TF_GNN_CKPT_FILE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t fingerprint;
    int64_t nodes, features, layers, hidden, classes;
    uint64_t seed;
    double dropout, lr, weight_decay;
    int64_t patience;
} tf_gnn_ckpt_id;

typedef struct {
    tf_gnn_ckpt_id id;
    int64_t epoch, stopped, adam_step, stop_seen;
    size_t nw;                     /* number of weights */
    double *w, *adam_m, *adam_v;   /* nw each */
    double *stop_hist;             /* max(patience, 1) */
} tf_gnn_ckpt;

/* Number of weights of a model of this shape (tf_gnn_model.h). */
size_t tf_gnn_ckpt_nweights(const tf_gnn_ckpt_id *id);

/* Writes c to path atomically (the previous file stays whole until the new
 * one is complete). */
int tf_gnn_ckpt_write(const char *path, const tf_gnn_ckpt *c);
/* Reads path into c (arrays malloc'd; tf_gnn_ckpt_free), checking the format,
 * sizes and ranges. */
int tf_gnn_ckpt_read(const char *path, tf_gnn_ckpt *c);
void tf_gnn_ckpt_free(tf_gnn_ckpt *c);

/* TF_OK if a checkpoint made as `saved` may continue a run set up as `now`;
 * else one line naming what differs (graph, model shape, feature width,
 * training rule), with both values. */
int tf_gnn_ckpt_match(const char *path, const tf_gnn_ckpt_id *saved, const tf_gnn_ckpt_id *now);

#endif
