#include "tf_fingerprint.h"
#include "tf_dense.h"

#include <stdint.h>
#include <string.h>

uint64_t tf_row_hash(int64_t row, const int32_t *cols, const float *vals, int64_t len)
{
    uint64_t h = tf_mix64((uint64_t)row + 1);
    for (int64_t e = 0; e < len; e++) {
        uint32_t bits;
        memcpy(&bits, &vals[e], sizeof bits);
        h = tf_mix64(h ^ ((uint64_t)cols[e] + 1));
        h = tf_mix64(h ^ (uint64_t)bits);
    }
    return tf_mix64(h ^ (uint64_t)len);
}

/* One entry's two steps of a row's hash. */
static inline uint64_t entry_step(uint64_t h, int32_t col, float val)
{
    uint32_t bits;
    memcpy(&bits, &val, sizeof bits);
    return tf_mix64(tf_mix64(h ^ ((uint64_t)col + 1)) ^ (uint64_t)bits);
}

/* Rows [r0, r1) hashed in four lanes side by side: a row's hash is one
 * chain of multiplications, bound by their latency, and independent
 * chains keep the multiplier busy. A lane that finishes its row takes the
 * next one, so a long row (a hub) does not leave the others idle. Each
 * row's steps are tf_row_hash's, so the bits are the same. */
#define LANES 4
/* A lane takes row r: its hash's first step and its entries. */
static inline void start_row(const int64_t *rowptr, int64_t row_begin, int64_t r, uint64_t *h,
                             int64_t *e, int64_t *end, int64_t *len)
{
    *h = tf_mix64((uint64_t)(row_begin + r) + 1);
    *e = rowptr[r];
    *end = rowptr[r + 1];
    *len = *end - *e;
}

static uint64_t rows_in_lanes(const int64_t *rowptr, const int32_t *col, const float *val,
                              int64_t row_begin, int64_t r0, int64_t r1)
{
    uint64_t sum = 0, h[LANES];
    int64_t e[LANES], end[LANES], len[LANES]; /* len < 0: the lane is idle */
    int64_t next = r0;
    int full = 1;
    for (int i = 0; i < LANES; i++) {
        len[i] = -1;
        e[i] = end[i] = 0;
        if (next < r1)
            start_row(rowptr, row_begin, next++, &h[i], &e[i], &end[i], &len[i]);
        else
            full = 0;
    }
    while (full) {
        for (int i = 0; i < LANES; i++)
            if (e[i] < end[i]) {
                h[i] = entry_step(h[i], col[e[i]], val[e[i]]);
                e[i]++;
            }
        for (int i = 0; i < LANES; i++) {
            if (e[i] < end[i] || len[i] < 0)
                continue;
            sum += tf_mix64(h[i] ^ (uint64_t)len[i]);
            len[i] = -1;
            if (next < r1)
                start_row(rowptr, row_begin, next++, &h[i], &e[i], &end[i], &len[i]);
            else
                full = 0;
        }
    }
    /* Out of rows: the lanes still busy finish one by one. */
    for (int i = 0; i < LANES; i++) {
        if (len[i] < 0)
            continue;
        for (; e[i] < end[i]; e[i]++)
            h[i] = entry_step(h[i], col[e[i]], val[e[i]]);
        sum += tf_mix64(h[i] ^ (uint64_t)len[i]);
    }
    return sum;
}
#undef LANES

uint64_t tf_fingerprint_rows(const int64_t *rowptr, const int32_t *col, const float *val,
                             int64_t row_begin, int64_t nrows)
{
    /* A sum modulo 2^64 does not depend on its order: any split over
     * threads gives the same fingerprint. */
    uint64_t sum = 0;
    const int64_t chunk = 4096;
#pragma omp parallel for reduction(+ : sum) schedule(static) if (nrows > 65536)
    for (int64_t r = 0; r < nrows; r += chunk)
        sum += rows_in_lanes(rowptr, col, val, row_begin, r, r + chunk < nrows ? r + chunk : nrows);
    return sum;
}

uint64_t tf_fingerprint_salt(const char *normalization)
{
    if (!normalization || strcmp(normalization, "none") == 0)
        return 0;
    uint64_t h = tf_mix64(0x6e6f726dULL); /* "norm" */
    size_t len = strlen(normalization);
    for (size_t i = 0; i < len; i++)
        h = tf_mix64(h ^ (uint64_t)(unsigned char)normalization[i]);
    return tf_mix64(h ^ (uint64_t)len);
}
