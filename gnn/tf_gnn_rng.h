/* Counter-based random numbers for training: every draw is a pure function
 * of (seed, epoch, layer, global node, column), with no generator state, so
 * a rank can draw the numbers of its own nodes in any order and the same
 * seed gives the same dropout masks, initial weights and random inputs at
 * any number of ranks (the run is P-invariant up to floating-point sums).
 *
 * The mixer is SplitMix64's finaliser (Steele, Lea & Flood, OOPSLA 2014),
 * applied once per key component: cheap, and every output bit depends on
 * every input bit. A draw costs two mixes once the (seed, epoch, layer) key
 * and the node key are formed. */
#ifndef TF_GNN_RNG_H
#define TF_GNN_RNG_H

#include <stdint.h>

/* Layers (streams) of the generator: one per use, so no two uses share draws. */
enum {
    TF_GNN_RNG_DROP_INPUT = 0, /* dropout on the input features */
    TF_GNN_RNG_DROP_HIDDEN,    /* dropout on the hidden layer */
    TF_GNN_RNG_INIT,           /* Glorot initialisation (node = weight row) */
    TF_GNN_RNG_FEATURES,       /* --random-features */
    TF_GNN_RNG_LABELS,         /* --random-classes */
    TF_GNN_RNG_SPLIT,          /* --random-split */
    /* Dropout on hidden layer l >= 2 of a deeper model: stream
     * TF_GNN_RNG_DROP_DEEP + l, clear of the streams above. */
    TF_GNN_RNG_DROP_DEEP = 64
};

/* The dropout stream of hidden layer l >= 1 (the output of SpMM l). */
static inline uint64_t tf_gnn_rng_hidden_stream(int l)
{
    return l == 1 ? TF_GNN_RNG_DROP_HIDDEN : TF_GNN_RNG_DROP_DEEP + (uint64_t)l;
}

/* Inline: a dropout mask costs one draw per feature entry, in the inner
 * loops of the dense products. */
static inline uint64_t tf_gnn_rng_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Key of (seed, epoch, layer): computed once per use. */
static inline uint64_t tf_gnn_rng_key(uint64_t seed, uint64_t epoch, uint64_t layer)
{
    return tf_gnn_rng_mix(tf_gnn_rng_mix(tf_gnn_rng_mix(seed) ^ epoch) ^ layer);
}

/* Key of one node under a (seed, epoch, layer) key. */
static inline uint64_t tf_gnn_rng_node(uint64_t key, uint64_t node)
{
    return tf_gnn_rng_mix(key ^ node);
}

/* 64 random bits for one column of a node key. */
static inline uint64_t tf_gnn_rng_bits(uint64_t node_key, uint64_t column)
{
    return tf_gnn_rng_mix(node_key ^ column);
}

/* Uniform double in [0, 1) for one column of a node key (53 random bits). */
static inline double tf_gnn_rng_u01(uint64_t node_key, uint64_t column)
{
    return (double)(tf_gnn_rng_bits(node_key, column) >> 11) * 0x1.0p-53;
}

#endif
