/* Early stopping as in Kipf & Welling's GCN: stop after epoch e (0-based)
 * when e > patience and the validation loss is above the mean of the
 * previous `patience` epochs' validation losses. patience 0 never stops. */
#ifndef TF_GNN_STOP_H
#define TF_GNN_STOP_H

typedef struct {
    int patience;
    int n;        /* epochs seen */
    double *hist; /* the last `patience` losses, ring buffer */
} tf_gnn_stop;

int tf_gnn_stop_init(tf_gnn_stop *s, int patience);
/* Records this epoch's validation loss; returns 1 when training should stop. */
int tf_gnn_stop_update(tf_gnn_stop *s, double val_loss);
void tf_gnn_stop_free(tf_gnn_stop *s);

#endif
