#include "tf_gnn_init.h"
#include "tf_gnn_rng.h"

#include <math.h>

void tf_gnn_glorot(uint64_t seed, int layer, int64_t rows, int64_t cols, double *w)
{
    double r = sqrt(6.0 / (double)(rows + cols));
    uint64_t key = tf_gnn_rng_key(seed, (uint64_t)layer, TF_GNN_RNG_INIT);
    for (int64_t i = 0; i < rows; i++) {
        uint64_t nk = tf_gnn_rng_node(key, (uint64_t)i);
        for (int64_t j = 0; j < cols; j++)
            w[i * cols + j] = (2 * tf_gnn_rng_u01(nk, (uint64_t)j) - 1) * r;
    }
}
