/* Adam (Kingma & Ba, ICLR 2015) on a flat double vector: every rank holds
 * the same weights, gradients (already summed over ranks) and moments, and
 * takes the same step. */
#ifndef TF_GNN_ADAM_H
#define TF_GNN_ADAM_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    double lr, beta1, beta2, eps;
    int64_t t;
    size_t n;
    double *m, *v;
} tf_gnn_adam;

/* lr with the usual beta1 0.9, beta2 0.999, eps 1e-8; moments zeroed. */
int tf_gnn_adam_init(tf_gnn_adam *a, size_t n, double lr);
void tf_gnn_adam_step(tf_gnn_adam *a, double *w, const double *grad);
void tf_gnn_adam_free(tf_gnn_adam *a);

#endif
