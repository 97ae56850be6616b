/* B-row reuse in a CSR kernel: which nonzeros find their B row still in
 * cache from an earlier use, and which load it from memory. The kernels'
 * time per nonzero differs several times between the two (docs/cost-model.md,
 * "Kernels: rows from cache or from memory"), and graphs differ in the
 * share: a web graph in URL order reads most rows again within a few
 * thousand nonzeros, a random graph almost none. */
#ifndef TF_REUSE_H
#define TF_REUSE_H

#include <stdint.h>

/* The reuse count. cols[0..n): the B rows a kernel reads, in the order it
 * reads them. A nonzero misses when its row was not read before, or when
 * more than `window` nonzeros came between it and the previous read of the
 * row (more than that many rows may have passed through the cache since:
 * an upper bound, so the count errs towards misses). window <= 0, or n of
 * 2^32 - 1 or more (positions are 32-bit): every nonzero misses.
 *
 * For reads confined to nrows B rows, cols[e] - base < nrows (a rank's
 * local band): one pass with each row's last read in last[0..nrows), which
 * is scratch; cols is left as it is. */
int64_t tf_reuse_misses_band(const uint32_t *cols, int64_t n, int64_t window, uint32_t base,
                             uint32_t *last, int64_t nrows);

/* The same count for reads already sorted by row, stably (the remote
 * columns, which the stripe analysis sorts anyway: tf_radix_sort_u32 with
 * the positions as payload): cols ascending, pos the read positions,
 * ascending within a row. */
int64_t tf_reuse_misses_sorted(const uint32_t *cols, const uint32_t *pos, int64_t n,
                               int64_t window);

/* The fetch CSC kernel's misses: nonzeros in the kernel's order (column by
 * column, rows ascending within a column: cols[e], rows[e]) whose row of C
 * is neither reused - read within the last `window` nonzeros - nor
 * streamed - at most `stride` rows past the previous nonzero's row in the
 * same column, which the hardware prefetcher has on its way (a web graph's
 * hub column updates runs of neighbouring rows: 97% of a cnr-2000 rank's
 * fetched nonzeros at P = 16 are within 4 rows of the one before). last
 * is scratch of nrows entries (rows[e] < nrows). window <= 0 or more than
 * 2^32 - 2 nonzeros: every nonzero misses. */
int64_t tf_reuse_csc_misses(const uint32_t *cols, const uint32_t *rows, int64_t n,
                            int64_t window, uint32_t stride, uint32_t *last, int64_t nrows);

/* The same count row by row, for bands of equal work (--partition work):
 * a CSR kernel over rows [0, nrows) of (rowptr, col) reads col[rowptr[0]..
 * rowptr[nrows]) in order, after the nhalo reads halo[] (the end of the
 * stream before these rows: another rank's band; NULL when nhalo is 0).
 * miss[i] = how many of row i's nonzeros miss. last: scratch of ncols
 * entries (col and halo entries < ncols). window <= 0, or 2^32 - 1 reads or
 * more in all: every nonzero misses. */
void tf_reuse_row_misses(const int64_t *rowptr, const int32_t *col, int64_t nrows,
                         const int32_t *halo, int64_t nhalo, int64_t window, uint32_t *last,
                         int64_t ncols, int64_t *miss);

/* The stride the planner and the calibration count as streamed: 4 rows,
 * 2 KiB at K = 128 (hardware prefetchers follow steps within a page). */
#define TF_REUSE_STREAM_ROWS 4

#endif
