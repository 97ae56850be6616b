/* --partition work with B-row reuse: each row of A weighs its row of C plus
 * its nonzeros, a nonzero less when its B row is still in cache from a read
 * within the kernel's window (tf_cost_work_weights). A band of a web graph
 * in URL order reuses most of its rows and runs several times faster per
 * nonzero than a band that reuses few, so bands of equal nonzeros leave the
 * low-reuse bands slowest (docs/partition.md). The reuse is counted over the
 * whole matrix in row order, before any band exists, so the weights, and
 * the bands, do not depend on how many ranks plan. */
#ifndef TF_WORK_BANDS_H
#define TF_WORK_BANDS_H

#include <stdint.h>

#include "tf_cost_model.h"
#include "tf_csr.h"

/* prefix[0..a->nrows] of the rows' weights, prefix[0] = 0, the reuse
 * window starting with the nhalo columns halo[] read before a's rows (the
 * end of the stream before them; NULL when nhalo is 0). Columns < ncols.
 * Fails (TF_ERR_NOMEM, TF_ERR_RANGE when a prefix passes 2^62) with a
 * message. */
int tf_work_prefix(const tf_csr *a, int64_t ncols, const int32_t *halo, int64_t nhalo,
                   const tf_work_weights *w, int64_t *prefix);

/* --partition work's bands from prefix[], the rows' weights
 * (tf_work_prefix): with the reuse term (w->window > 0) the cut of the
 * prefix; without it tf_partition_work's cut of rows and nonzeros, the
 * same weights, which differs from the prefix's cut only where rows weigh
 * nothing, and which reads no prefix (NULL will do). The one place that
 * says which cut a mode takes: --partition work and auto both come here. */
int tf_work_bands_cut(const tf_csr *a, const tf_work_weights *w, const int64_t *prefix,
                      int nparts, int64_t *off);

/* The bands of a whole matrix (one planning process): tf_work_prefix where
 * the cut reads it, then tf_work_bands_cut. */
int tf_work_bands(const tf_csr *a, const tf_work_weights *w, int nparts, int64_t *off);

#endif
