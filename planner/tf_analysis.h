/* Stripe analysis: for every rank, its nonzeros split into the local part and
 * sparse stripes (rank, dense stripe), with the counts the cost model needs.
 * This is the planner's view before classification; it is discarded once the
 * plan is built. */
#ifndef TF_ANALYSIS_H
#define TF_ANALYSIS_H

#include <math.h>
#include <stdint.h>
#include "tf_csr.h"

typedef struct {
    int nranks;
    int width;        /* W */
    int gap;          /* G used to count runs per stripe */
    const int64_t *row_off, *brow_off; /* borrowed, nranks + 1 */

    /* Dense stripes, numbered owner by owner. */
    int64_t nstripes;
    int64_t *stripe_base; /* nranks + 1: first stripe of each owner */
    int32_t *st_owner;
    int64_t *st_first; /* global B row */
    int32_t *st_rows;

    /* Sparse stripes of rank p: entries ss_off[p] .. ss_off[p+1], ascending
     * stripe id (so owner-major). */
    int64_t *ss_off;
    int32_t *ss_stripe;
    int64_t *ss_nnz;
    int32_t *ss_distinct;
    int32_t *ss_runs; /* runs covering the distinct rows with gaps <= G */
    int32_t *ss_run_rows; /* rows those runs cover, gaps included */
    uint8_t *ss_class; /* tf_stripe_class, set by classification */

    /* Set by the planner before classification: 1 = a collective stripe
     * moves only its needed rows, 0 = all of its W rows. */
    int coll_needed;

    int64_t *nnz_local;       /* per rank */
    int64_t *remote_distinct; /* per rank: distinct remote B rows needed */
    /* Per rank: nonzeros whose B row is not in cache from an earlier use
     * (tf_reuse.h) in the local part, and in all remote nonzeros read in
     * row order (the collective kernel's order); remote_nnz, their count. */
    int64_t *local_miss, *remote_miss, *remote_nnz;
    /* Per rank: its rows with at least one remote nonzero. */
    int64_t *remote_rows;
    /* Per rank: remote nonzeros whose row of C is neither in cache from an
     * earlier one nor streamed when all of them are read column by column
     * (the fetch kernel's order, tf_reuse_csc_misses); remote_nnz when the
     * misses are not counted. */
    int64_t *fetch_miss;
} tf_analysis;

/* Nonzeros of rank p's collective part (nnz_coll of its remote ones) that
 * load their B row from memory: the rank's remote miss share, since the
 * part is a subset of the remote stream the counts were taken on. */
static inline int64_t tf_coll_miss(int64_t nnz_coll, int64_t remote_miss, int64_t remote_nnz)
{
    if (remote_nnz <= 0)
        return nnz_coll;
    return (int64_t)((double)nnz_coll * (double)remote_miss / (double)remote_nnz + 0.5);
}

static inline int64_t tf_coll_miss_of(const tf_analysis *an, int p, int64_t nnz_coll)
{
    return tf_coll_miss(nnz_coll, an->remote_miss[p], an->remote_nnz[p]);
}

/* The same share for the fetch part (nnz_fetch of the remote nonzeros),
 * from the C-row misses in column order. */
static inline int64_t tf_fetch_miss_of(const tf_analysis *an, int p, int64_t nnz_fetch)
{
    return tf_coll_miss(nnz_fetch, an->fetch_miss[p], an->remote_nnz[p]);
}

/* Rows of C rank p's collective part adds into, for nnz_coll of its
 * remote nonzeros: a row keeps its collective pass while any of its remote
 * nonzeros is collective, so with a share s of them collective and d per
 * row on average, 1 - (1 - s)^d of the rows with a remote nonzero (exact
 * when all or none are collective, which every plan at P >= 16 on the
 * graphs measured is). A linear share would promise a saving per stripe
 * converted to fetch that only comes once a row's last stripe goes, and
 * tip plans into hybrids that measure slower. */
static inline int64_t tf_coll_rows_share(int64_t nnz_coll, int64_t remote_rows,
                                         int64_t remote_nnz)
{
    if (remote_nnz <= 0 || remote_rows <= 0 || nnz_coll >= remote_nnz)
        return remote_rows;
    if (nnz_coll <= 0)
        return 0;
    double s = (double)nnz_coll / (double)remote_nnz;
    double d = (double)remote_nnz / (double)remote_rows;
    return (int64_t)((double)remote_rows * (1.0 - pow(1.0 - s, d)) + 0.5);
}

static inline int64_t tf_coll_rows_share_of(const tf_analysis *an, int p, int64_t nnz_coll)
{
    return tf_coll_rows_share(nnz_coll, an->remote_rows[p], an->remote_nnz[p]);
}

/* Global stripe containing global B row j of owner q. */
static inline int64_t tf_stripe_of(const tf_analysis *an, int q, int64_t j)
{
    return an->stripe_base[q] + (j - an->brow_off[q]) / an->width;
}

/* B rows the collective moves for sparse stripe e (entry index): its
 * distinct needed rows (the collective's own gaps are at most 16 / K rows,
 * not counted), or the whole stripe. */
static inline int64_t tf_coll_rows_of(const tf_analysis *an, int64_t e)
{
    return an->coll_needed ? an->ss_distinct[e] : an->st_rows[an->ss_stripe[e]];
}

/* reuse_window: nonzeros within which a B row read again is still in cache
 * (tf_cost_reuse_window); 0 counts every nonzero as a miss. fetch_window:
 * the same for the fetch kernel's rows of C (tf_cost_fetch_window); 0 counts
 * every fetched nonzero as a miss and skips the count. */
int tf_analysis_run(const tf_csr *a, int nranks, const int64_t *row_off,
                    const int64_t *brow_off, int width, int gap, int64_t reuse_window,
                    int64_t fetch_window, tf_analysis *an);
/* The same for receivers p0 <= p < p1 only, from the rows
 * [row_off[p0], row_off[p1]) held in `a` with row row_base as its row 0 (a
 * rank of the distributed planner): the other receivers get no sparse
 * stripes, and their nnz_local and remote_distinct stay 0. */
int tf_analysis_run_part(const tf_csr *a, int64_t row_base, int p0, int p1, int nranks,
                         const int64_t *row_off, const int64_t *brow_off, int width, int gap,
                         int64_t reuse_window, int64_t fetch_window, tf_analysis *an);
void tf_analysis_free(tf_analysis *an);

#endif
