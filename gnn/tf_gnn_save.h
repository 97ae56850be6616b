/* What a finished run leaves for its user (docs/gnn.md, "Output files"):
 *   --save-model FILE.h5   the weights as datasets /W0 .. /W{L-1} (float64,
 *                          rows = inputs of the layer, columns = outputs) and
 *                          the hyper-parameters as root attributes; no
 *                          compression, so plain h5dump reads it;
 *   --predictions FILE     text, line i = node i of the input files (original
 *                          ids, whatever the plan's partition): the predicted
 *                          class and the node's split, "3 test".
 * Both written atomically by rank 0 (tf_gnn_outfile.h); collective, agreed. */
#ifndef TF_GNN_SAVE_H
#define TF_GNN_SAVE_H

#include "tf_gnn_train.h"

#include <stdint.h>

/* t's current weights; fingerprint: the forward plan's (tf_get_fingerprint);
 * normalization: the plan's (tf_get_normalization). */
int tf_gnn_save_model(const tf_gnn_trainer *t, uint64_t fingerprint, const char *normalization,
                      const char *path);

/* Writes every node's argmax class (first on ties, as the accuracy counts
 * it) and split, from the model's last evaluation without dropout: the
 * caller runs tf_gnn_model_eval first (SpMMs and an Allreduce, whose
 * failure only some ranks may see, unlike this function's, which every rank
 * learns). */
int tf_gnn_save_predictions(tf_gnn_model *m, const char *path);

#endif
