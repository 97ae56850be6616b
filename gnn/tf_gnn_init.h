/* Glorot-uniform initialisation (Glorot & Bengio, AISTATS 2010): entries
 * uniform in [-r, r], r = sqrt(6 / (rows + cols)), each drawn from
 * (seed, layer, row, column), so every rank computes the same weights. */
#ifndef TF_GNN_INIT_H
#define TF_GNN_INIT_H

#include <stdint.h>

void tf_gnn_glorot(uint64_t seed, int layer, int64_t rows, int64_t cols, double *w);

#endif
