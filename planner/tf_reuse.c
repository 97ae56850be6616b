#include "tf_reuse.h"

int64_t tf_reuse_misses_sorted(const uint32_t *cols, const uint32_t *pos, int64_t n,
                               int64_t window)
{
    if (window <= 0 || n >= (int64_t)UINT32_MAX)
        return n;
    /* Sorted, every row's reads are side by side in order: each read's
     * distance from the previous one is one subtraction. */
    int64_t miss = 0;
    for (int64_t e = 0; e < n; e++)
        if (e == 0 || cols[e] != cols[e - 1] || (int64_t)(pos[e] - pos[e - 1]) > window)
            miss++;
    return miss;
}

/* Both one-pass counts keep each row's last read in last[]; UINT32_MAX
 * marks a row not read yet, so positions stop below it. */
static void forget(uint32_t *last, int64_t nrows)
{
    for (int64_t r = 0; r < nrows; r++)
        last[r] = UINT32_MAX;
}

/* Whether row r was read within the last `window` reads before read e;
 * records read e. */
static int recent(uint32_t *last, uint32_t r, int64_t e, int64_t window)
{
    int hit = last[r] != UINT32_MAX && (int64_t)((uint32_t)e - last[r]) <= window;
    last[r] = (uint32_t)e;
    return hit;
}

int64_t tf_reuse_misses_band(const uint32_t *cols, int64_t n, int64_t window, uint32_t base,
                             uint32_t *last, int64_t nrows)
{
    if (window <= 0 || n >= (int64_t)UINT32_MAX)
        return n;
    forget(last, nrows);
    int64_t miss = 0;
    for (int64_t e = 0; e < n; e++)
        miss += !recent(last, cols[e] - base, e, window);
    return miss;
}

int64_t tf_reuse_csc_misses(const uint32_t *cols, const uint32_t *rows, int64_t n,
                            int64_t window, uint32_t stride, uint32_t *last, int64_t nrows)
{
    if (window <= 0 || n >= (int64_t)UINT32_MAX)
        return n;
    forget(last, nrows);
    int64_t miss = 0;
    for (int64_t e = 0; e < n; e++) {
        uint32_t r = rows[e];
        int streamed = e > 0 && cols[e] == cols[e - 1] && r > rows[e - 1] &&
                       r - rows[e - 1] <= stride;
        int reused = recent(last, r, e, window);
        miss += !streamed && !reused;
    }
    return miss;
}

void tf_reuse_row_misses(const int64_t *rowptr, const int32_t *col, int64_t nrows,
                         const int32_t *halo, int64_t nhalo, int64_t window, uint32_t *last,
                         int64_t ncols, int64_t *miss)
{
    int64_t n = rowptr[nrows] - rowptr[0];
    if (window <= 0 || nhalo + n >= (int64_t)UINT32_MAX) {
        for (int64_t i = 0; i < nrows; i++)
            miss[i] = rowptr[i + 1] - rowptr[i];
        return;
    }
    forget(last, ncols);
    for (int64_t e = 0; e < nhalo; e++)
        last[halo[e]] = (uint32_t)e;
    int64_t e = nhalo;
    for (int64_t i = 0; i < nrows; i++) {
        int64_t m = 0;
        for (int64_t x = rowptr[i]; x < rowptr[i + 1]; x++, e++)
            m += !recent(last, (uint32_t)col[x], e, window);
        miss[i] = m;
    }
}
