#include "tf_gnn_rng.h"

static inline uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t tf_gnn_rng_key(uint64_t seed, uint64_t epoch, uint64_t layer)
{
    return mix(mix(mix(seed) ^ epoch) ^ layer);
}

uint64_t tf_gnn_rng_node(uint64_t key, uint64_t node) { return mix(key ^ node); }

uint64_t tf_gnn_rng_bits(uint64_t node_key, uint64_t column) { return mix(node_key ^ column); }

double tf_gnn_rng_u01(uint64_t node_key, uint64_t column)
{
    return (double)(tf_gnn_rng_bits(node_key, column) >> 11) * 0x1.0p-53;
}
