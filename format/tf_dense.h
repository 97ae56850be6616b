/* The deterministic dense generator.
 *
 * B(j, k) depends only on (seed, global row j, column k), so every rank can
 * make any row of B, and a test can make the whole of B, without
 * communication, and the value of column k does not depend on K:
 *
 *   h1 = mix64(seed + 0x9E3779B97F4A7C15 * (j + 1))
 *   h2 = mix64(h1 ^ (0xBF58476D1CE4E5B9 * (k + 1)))
 *   B(j, k) = (h2 >> 40) * 2^-23 - 1          in [-1, 1), a multiple of 2^-23
 *
 * where mix64 is the splitmix64 finalizer (x ^= x >> 30; x *= 0xBF58476D1CE4E5B9;
 * x ^= x >> 27; x *= 0x94D049BB133111EB; x ^= x >> 31). Values are exact in
 * float32. */
#ifndef TF_DENSE_H
#define TF_DENSE_H

#include <stdint.h>

/* Inline: the plan's fingerprint, the symmetry test and the checksums call it
 * two to six times per nonzero, and a call per step kept the compiler from
 * overlapping independent chains. */
static inline uint64_t tf_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    x ^= x >> 31;
    return x;
}
float tf_dense_value(uint64_t seed, int64_t j, int64_t k);

/* Fills rows [row_begin, row_begin + nrows) of B, row-major with K columns. */
void tf_dense_fill(float *b, uint64_t seed, int64_t row_begin, int64_t nrows, int64_t k);

#endif
