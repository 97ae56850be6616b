#include "tf_reuse.h"
#include "tf_radix.h"

#include <string.h>

int64_t tf_reuse_misses(const uint32_t *cols, int64_t n, int64_t window, uint32_t *keys,
                        uint32_t *pay, uint32_t *tmp_keys, uint32_t *tmp_pay)
{
    /* Positions travel as 32-bit payloads; a rank with more nonzeros than
     * that is charged as if nothing were reused. */
    if (window <= 0 || n <= 1 || n > (int64_t)UINT32_MAX)
        return n;
    /* Sorting (row, position) pairs by row, stably, lines up every row's
     * reads in order: one pass then sees each read's distance from the
     * previous one. O(n), like the rest of the stripe analysis. */
    memcpy(keys, cols, (size_t)n * sizeof *keys);
    for (int64_t e = 0; e < n; e++)
        pay[e] = (uint32_t)e;
    tf_radix_sort_u32(keys, pay, n, tmp_keys, tmp_pay);
    int64_t miss = 0;
    for (int64_t e = 0; e < n; e++)
        if (e == 0 || keys[e] != keys[e - 1] || (int64_t)(pay[e] - pay[e - 1]) > window)
            miss++;
    return miss;
}
