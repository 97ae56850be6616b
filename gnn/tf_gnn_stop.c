#include "tf_gnn_stop.h"
#include "tf_error.h"

#include <stdlib.h>

int tf_gnn_stop_init(tf_gnn_stop *s, int patience)
{
    s->patience = patience;
    s->n = 0;
    s->hist = calloc((size_t)(patience > 0 ? patience : 1), sizeof *s->hist);
    return s->hist ? TF_OK : tf_fail(TF_ERR_NOMEM, "out of memory");
}

int tf_gnn_stop_update(tf_gnn_stop *s, double val_loss)
{
    int p = s->patience, stop = 0;
    if (p <= 0)
        return 0;
    if (s->n > p) {
        double mean = 0;
        for (int i = 0; i < p; i++)
            mean += s->hist[i];
        stop = val_loss > mean / p;
    }
    s->hist[s->n % p] = val_loss;
    s->n++;
    return stop;
}

void tf_gnn_stop_free(tf_gnn_stop *s)
{
    free(s->hist);
    s->hist = NULL;
}
