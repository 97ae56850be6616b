/* The planner: from a CSR matrix to a complete plan for P ranks.
 * Pure computation (OpenMP inside, no MPI, no files). */
#ifndef TF_PLANNER_H
#define TF_PLANNER_H

#include "tf_coeffs.h"
#include "tf_csr.h"
#include "tf_partition_metis.h"
#include "tf_plan.h"

typedef struct {
    int nranks;       /* P, required */
    int k;            /* dense width optimised for (default 128) */
    int stripe_width; /* W rows per dense stripe (default: TF_DEFAULT_STRIPE_WIDTH) */
    int partition;    /* tf_partition_kind (default rows; twoface-plan's: auto,
                         which the plan records as the nnz or work it chose) */
    tf_metis_options metis; /* for TF_PART_METIS (tf_partition_metis.h) */
    int mode;         /* tf_mode (default twoface) */
    int gap;          /* max gap G spanned by a fetch run; -1 = from the model */
    int coll_rows;    /* tf_coll_rows: what a collective stripe moves */
    int no_pure_check; /* 1: keep the greedy hybrid even when a pure plan is
                          predicted as fast (tests, experiments) */
    int no_alternative; /* 1: never carry a runner-up plan (plan.alt) */
    int comm;         /* tf_precision B rows will travel as (default f32): the
                         model's byte terms use its size; recorded in the plan */
    tf_coeffs coeffs; /* default: tf_coeffs_default */
    /* What the matrix given to tf_plan_build is, recorded in the plan as
     * given (tf_matrix_prepare sets them; tf_plan fields of the same names;
     * default: none, 0, 0, 0). The plan's checksum is salted with the
     * normalisation (tf_fingerprint.h). */
    int normalization;
    int symmetric;
    int transposed;
    uint64_t transpose_of;
    /* Optional fixed bands, P + 1 offsets each (both or neither), used
     * instead of `partition` (`--bands-from`): rows of A from row_off, rows
     * of B from brow_off. */
    const int64_t *row_off;
    const int64_t *brow_off;
    /* Optional given renumbering of a TF_PART_METIS plan (tf_plan_perm.h; n
     * entries each, with row_off/brow_off: --bands-from a METIS plan): the
     * plan is of P A P^T with it, and METIS does not run. */
    const int64_t *perm;
    const int64_t *iperm;
    double *timing;   /* optional out, TF_PLAN_PHASES seconds: partition,
                         analyse, classify, build, and the encoding of the
                         plans for the file within the build (the
                         distributed planner's: tf_dist_encode.h; the
                         single process encodes when it writes), added to
                         what the caller zeroed (every candidate counts) */
    double *auto_ratio; /* optional out, with TF_PART_AUTO: the nonzero bands'
                           heaviest kernel work over the work bands'
                           (tf_partition_auto.h) */
} tf_plan_options;

#define TF_PLAN_PHASES 5

/* A hybrid plan is kept only when predicted more than this fraction faster
 * than both pure plans. Measured on the development machine (bench run of
 * 2026-12-02 15:10): every hybrid predicted within 10% of the best pure plan
 * ran slower than that pure plan (by 4-70%); each half waits for ranks busy
 * with the other half, a coupling the per-rank model does not have. */
#define TF_HYBRID_MARGIN 0.10

/* A twoface plan carries its runner-up (plan.alt) when the runner-up is
 * predicted at most this many times slower: the executor then times both in
 * its first SpMMs and keeps the faster. Measured on the development machine
 * (bench run of 2026-12-02 15:28): the model chose the slower pure plan on
 * 10 of 48 shared-memory cases, all with the two pure plans predicted within
 * 1.4x of each other; its per-graph prediction error reaches +160% on
 * skewed graphs. A
 * wider ratio costs plan size and trial SpMMs of a plan that rarely wins.
 * The runner-up of a hybrid is the faster pure plan; of a pure plan, the
 * other pure plan (a hybrid predicted within TF_HYBRID_MARGIN of a pure plan
 * always ran slower than it). */
#define TF_ALT_RATIO 2.0

#define TF_DEFAULT_STRIPE_WIDTH 32
#define TF_DEFAULT_K 128

void tf_plan_options_default(tf_plan_options *o);

/* The header every plan of an m x n matrix with nnz nonzeros and the given
 * checksum gets from o (counts, options, coefficients with the element size
 * of o->comm, gap, generator, creation date); the rest of *out is zeroed.
 * The serial and the distributed planner both start from it, so that their
 * files agree. */
void tf_plan_header_init(tf_plan *out, int64_t m, int64_t n, int64_t nnz, uint64_t checksum,
                         const tf_plan_options *o);

/* The option checks of tf_plan_build for an m x n matrix. */
int tf_plan_check_options(int64_t m, int64_t n, const tf_plan_options *o);

/* The twoface mode's choice among built candidates 0 (the greedy result,
 * whose classes are greedy_classes), 1 (pure fetch) and 2 (pure collective),
 * of predicted times t where have[i]: the plan to keep, the runner-up to
 * carry (-1: none) and the runner-up's mode. */
void tf_plan_choose(const double t[3], const int have[3], const char *greedy_classes,
                    int no_alternative, int *chosen, int *runner, int *alt_mode);

/* A lower bound of the predicted time of the all-fetch plan on the bands of
 * coll, a built plan whose classes are "collective", without building it:
 * the same local part, every remote nonzero fetched, every owner a rank
 * receives a stripe from in coll one it would fetch from, with at least one
 * request and a handshake on each side (alpha_fetch, alpha_sync), at least
 * the rows coll receives when those are exactly the rows needed, and every
 * other term of the model non-negative. 0 when that cannot be relied on
 * (coefficients negative or not finite, no statistics). */
double tf_plan_fetch_floor(const tf_plan *coll);

/* Whether the pure-fetch candidate could be chosen or carried beside coll
 * (as above): 0 when tf_plan_fetch_floor is above what tf_plan_choose would
 * keep it at (TF_ALT_RATIO x coll's time; 1x with no_alternative), so that
 * the candidate need not be built. */
int tf_plan_fetch_may_count(const tf_plan *coll, int no_alternative);

/* Whether twoface mode builds pure candidate i (1: all-fetch, 2:
 * all-collective) beside the classification's plan greedy: only a pure plan
 * that differs from it (greedy's classes are not "local" or that mode) and
 * could be kept (tf_plan_fetch_may_count) can win. Decided from greedy's
 * header and every rank's statistics, so every planning rank decides alike.
 * Shared by the serial and the distributed planner. */
int tf_plan_pure_wanted(const tf_plan *greedy, int i, int no_alternative);

/* Builds every rank's part. On failure nothing is left allocated in *out. */
int tf_plan_build(const tf_csr *a, const tf_plan_options *o, tf_plan *out);

#endif
