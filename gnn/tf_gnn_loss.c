#include "tf_gnn_loss.h"
#include "tf_error.h"

#include <math.h>
#include <string.h>

void tf_gnn_xent(const float *z, const tf_gnn_data *d, int64_t ntrain, tf_gnn_sums *s, float *g)
{
    memset(s, 0, sizeof *s);
    const int c = d->classes;
    for (int64_t i = 0; i < d->nrows; i++) {
        const float *zi = z + i * c;
        int sp = d->split[i];
        if (g) {
            memset(g + i * c, 0, (size_t)c * sizeof *g);
        }
        if (sp == TF_GNN_NONE)
            continue;
        int best = 0;
        double mx = zi[0];
        for (int j = 1; j < c; j++)
            if (zi[j] > mx) {
                mx = zi[j];
                best = j;
            }
        double se = 0;
        for (int j = 0; j < c; j++)
            se += exp(zi[j] - mx);
        double lse = mx + log(se);
        int y = d->label[i];
        s->loss[sp] += lse - zi[y];
        s->correct[sp] += best == y;
        if (g && sp == TF_GNN_TRAIN)
            for (int j = 0; j < c; j++)
                g[i * c + j] = (float)((exp(zi[j] - lse) - (j == y)) / (double)ntrain);
    }
}

int tf_gnn_loss_finite(int64_t epoch, double loss)
{
    if (isfinite(loss))
        return TF_OK;
    return tf_fail(TF_ERR_RANGE, "epoch %lld: the training loss is not finite (%s); check the "
                   "features for NaN or Inf, or lower --lr", (long long)epoch,
                   isnan(loss) ? "nan" : loss > 0 ? "inf" : "-inf");
}
