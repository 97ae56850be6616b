#include "tf_reuse.h"
#include "tf_radix.h"

int64_t tf_reuse_misses_sort(uint32_t *cols, int64_t n, int64_t window, uint32_t *pos,
                             uint32_t *tmp_cols, uint32_t *tmp_pos)
{
    /* Positions travel as 32-bit payloads. */
    if (window <= 0 || n <= 1 || n > (int64_t)UINT32_MAX)
        return n;
    /* Sorting (row, position) pairs by row, stably, lines up every row's
     * reads in order: one pass then sees each read's distance from the
     * previous one. O(n), like the rest of the stripe analysis. */
    for (int64_t e = 0; e < n; e++)
        pos[e] = (uint32_t)e;
    tf_radix_sort_u32(cols, pos, n, tmp_cols, tmp_pos);
    int64_t miss = 0;
    for (int64_t e = 0; e < n; e++)
        if (e == 0 || cols[e] != cols[e - 1] || (int64_t)(pos[e] - pos[e - 1]) > window)
            miss++;
    return miss;
}
