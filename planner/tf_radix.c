#include "tf_radix.h"

#include <string.h>

/* 11-bit digits: the counting table (2049 x 8 bytes) stays small enough for
 * OpenMP thread stacks and L1, and three passes cover 32-bit keys. */
#define DIGIT_BITS 11
#define DIGITS (1 << DIGIT_BITS)

static void pass(const uint32_t *ki, const uint32_t *pi, uint32_t *ko, uint32_t *po, int64_t n,
                 int shift)
{
    int64_t cnt[DIGITS + 1];
    memset(cnt, 0, sizeof cnt);
    for (int64_t i = 0; i < n; i++)
        cnt[((ki[i] >> shift) & (DIGITS - 1)) + 1]++;
    for (int b = 0; b < DIGITS; b++)
        cnt[b + 1] += cnt[b];
    for (int64_t i = 0; i < n; i++) {
        int64_t d = cnt[(ki[i] >> shift) & (DIGITS - 1)]++;
        ko[d] = ki[i];
        if (pi)
            po[d] = pi[i];
    }
}

void tf_radix_sort_u32(uint32_t *keys, uint32_t *payload, int64_t n, uint32_t *tmp_keys,
                       uint32_t *tmp_payload)
{
    if (n < 2)
        return;
    uint32_t maxk = 0;
    for (int64_t i = 0; i < n; i++)
        if (keys[i] > maxk)
            maxk = keys[i];
    uint32_t *k0 = keys, *p0 = payload, *k1 = tmp_keys, *p1 = payload ? tmp_payload : NULL;
    int swapped = 0;
    for (int shift = 0; shift < 32 && (shift == 0 || (maxk >> shift)); shift += DIGIT_BITS) {
        pass(k0, p0, k1, p1, n, shift);
        uint32_t *t = k0;
        k0 = k1;
        k1 = t;
        t = p0;
        p0 = p1;
        p1 = t;
        swapped = !swapped;
    }
    if (swapped) {
        memcpy(keys, k0, (size_t)n * sizeof *keys);
        if (payload)
            memcpy(payload, p0, (size_t)n * sizeof *payload);
    }
}
