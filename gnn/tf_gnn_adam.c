#include "tf_gnn_adam.h"
#include "tf_error.h"

#include <math.h>
#include <stdlib.h>

int tf_gnn_adam_init(tf_gnn_adam *a, size_t n, double lr)
{
    a->lr = lr;
    a->beta1 = 0.9;
    a->beta2 = 0.999;
    a->eps = 1e-8;
    a->t = 0;
    a->n = n;
    a->m = calloc(n ? n : 1, sizeof *a->m);
    a->v = calloc(n ? n : 1, sizeof *a->v);
    if (!a->m || !a->v) {
        tf_gnn_adam_free(a);
        return tf_fail(TF_ERR_NOMEM, "out of memory for Adam state (%zu weights)", n);
    }
    return TF_OK;
}

void tf_gnn_adam_step(tf_gnn_adam *a, double *w, const double *grad)
{
    a->t++;
    double c1 = 1 - pow(a->beta1, (double)a->t), c2 = 1 - pow(a->beta2, (double)a->t);
    for (size_t i = 0; i < a->n; i++) {
        a->m[i] = a->beta1 * a->m[i] + (1 - a->beta1) * grad[i];
        a->v[i] = a->beta2 * a->v[i] + (1 - a->beta2) * grad[i] * grad[i];
        w[i] -= a->lr * (a->m[i] / c1) / (sqrt(a->v[i] / c2) + a->eps);
    }
}

void tf_gnn_adam_free(tf_gnn_adam *a)
{
    free(a->m);
    free(a->v);
    a->m = a->v = NULL;
    a->n = 0;
}
