/* Checkpoints of a training run (--checkpoint, --resume): the trainer's
 * state to and from the file of tf_gnn_ckpt_file.h. Weights, Adam and the
 * stopping rule are replicated, so rank 0 writes what every rank holds and
 * every rank reads the same file. Collective over the model's communicator:
 * a failure on any rank returns the same status on every rank. */
#ifndef TF_GNN_CKPT_H
#define TF_GNN_CKPT_H

#include "tf_gnn_ckpt_file.h"
#include "tf_gnn_train.h"

#include <stdint.h>

/* What a checkpoint of t's run must match: fingerprint is the forward plan's
 * (tf_get_fingerprint: the matrix in original ids and its normalisation, the
 * same for every P and partition). */
void tf_gnn_ckpt_id_of(const tf_gnn_trainer *t, uint64_t fingerprint, tf_gnn_ckpt_id *id);

/* Writes t's state after its last epoch to path (rank 0, atomically). */
int tf_gnn_ckpt_save(const tf_gnn_trainer *t, uint64_t fingerprint, const char *path);

/* Puts the state of path into t (just initialised, before any epoch) and
 * resumes it (tf_gnn_trainer_resume; the caller evaluates it): refused in
 * one line, on every rank, if the checkpoint belongs to another graph, model
 * shape, feature width or training rule. */
int tf_gnn_ckpt_resume(tf_gnn_trainer *t, uint64_t fingerprint, const char *path);

#endif
