#include "tf_dense.h"


static inline float value_from_row_hash(uint64_t h1, int64_t k)
{
    uint64_t h2 = tf_mix64(h1 ^ (0xBF58476D1CE4E5B9ULL * (uint64_t)(k + 1)));
    return (float)((double)(h2 >> 40) * (1.0 / 8388608.0) - 1.0);
}

float tf_dense_value(uint64_t seed, int64_t j, int64_t k)
{
    uint64_t h1 = tf_mix64(seed + 0x9E3779B97F4A7C15ULL * (uint64_t)(j + 1));
    return value_from_row_hash(h1, k);
}

void tf_dense_fill(float *b, uint64_t seed, int64_t row_begin, int64_t nrows, int64_t k)
{
    for (int64_t r = 0; r < nrows; r++) {
        uint64_t h1 = tf_mix64(seed + 0x9E3779B97F4A7C15ULL * (uint64_t)(row_begin + r + 1));
        float *row = b + r * k;
        for (int64_t c = 0; c < k; c++)
            row[c] = value_from_row_hash(h1, c);
    }
}
