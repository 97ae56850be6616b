/* The plan: immutable data, the contract between twoface-plan and every
 * executor. In memory a plan holds the global header and summaries plus the
 * parts of some ranks: the planner builds all of them, an executor rank loads
 * only its own. docs/plan-format.md describes the file form.
 *
 * Vocabulary. Rows of A and C are split into bands row_off[0..P]; rows of B
 * (= columns of A) into bands brow_off[0..P]. Rank q's B rows are cut into
 * dense stripes of W consecutive rows (the last one of a band may be
 * shorter); dense stripes are numbered globally, owner by owner. The nonzeros
 * of rank p whose column lies in dense stripe s of another rank form the
 * sparse stripe (p, s), classified collective or fetch.
 *
 * "owner-local row" = global B row - brow_off[owner]. */
#ifndef TF_PLAN_H
#define TF_PLAN_H

#include <stdint.h>
#include "tf_coeffs.h"

#define TF_PLAN_FORMAT "twoface-plan"
#define TF_PLAN_VERSION_MAJOR 3
#define TF_PLAN_VERSION_MINOR 3

typedef enum { TF_MODE_TWOFACE = 0, TF_MODE_FETCH = 1, TF_MODE_COLLECTIVE = 2 } tf_mode;
typedef enum { TF_CLASS_COLL = 0, TF_CLASS_FETCH = 1 } tf_stripe_class;
/* What the collective moves of a collective stripe: the runs of rows the
 * recipient needs (spanning gaps <= G, like fetch runs), or all W rows. */
typedef enum { TF_COLL_NEEDED = 0, TF_COLL_STRIPE = 1 } tf_coll_rows;
/* How the planner turned the matrix read from the file into the one it
 * stores (planner/tf_normalize.h, docs/normalization.md). */
typedef enum { TF_NORM_NONE = 0, TF_NORM_GCN = 1, TF_NORM_MEAN = 2 } tf_normalization;

/* What B rows travel as (twoface-plan --comm; format 2.3): the planner's
 * cost model charged this many bytes per element, and the executor uses it
 * unless told otherwise (tf_exec_options.comm). */
typedef enum { TF_PREC_F32 = 0, TF_PREC_BF16 = 1 } tf_precision;

/* Predicted times and counts for one rank (all per SpMM at the planned K). */
typedef struct {
    int64_t nnz_local, nnz_coll, nnz_fetch;
    int64_t stripes_coll, stripes_fetch;  /* sparse stripes received by class */
    int64_t coll_rows_recv, coll_rows_sent; /* B rows through the collective */
    int64_t coll_peers_recv, coll_peers_sent;
    int64_t fetch_rows;     /* B rows fetched, gap rows included */
    int64_t fetch_needed;   /* distinct B rows needed by fetch stripes */
    int64_t fetch_requests; /* runs */
    int64_t remote_distinct; /* distinct remote B rows needed (the minimum) */
    int64_t fetch_peers_recv; /* owners this rank fetches from */
    int64_t fetch_peers_sent; /* ranks fetching from this rank */
    double t_local, t_coll_comm, t_coll_comp, t_fetch_comm, t_fetch_comp;
    double t_sync; /* B-protection handshake with the fetch peers */
    double t_coll_half, t_fetch_half, t_total;
    /* (2.4) Nonzeros of the local / collective part whose B row is not in
     * cache from an earlier use (tf_reuse.h): the rows the CSR kernels load
     * from memory. 0 in older files, whose coefficients have no cache. */
    int64_t nnz_local_miss, nnz_coll_miss;
    /* (3.1) Rows of C the local / collective CSR kernel writes: the local
     * part writes every row of the rank, the collective part adds into the
     * rows that have a collective nonzero (estimated from the rows with a
     * remote one: tf_coll_rows_share). 0 in older files, whose coefficients
     * have no cost per row. */
    int64_t rows_local, rows_coll;
    /* (3.3) Nonzeros of the fetch part whose row of C is neither in cache
     * from an earlier one nor streamed (tf_reuse_csc_misses, over the part
     * in column order): the rows the CSC kernel loads from memory to add
     * into. 0 in older files, whose coefficients have no cached fetch rate. */
    int64_t nnz_fetch_miss;
} tf_rank_stats;

/* Everything rank `rank` needs to run one SpMM, in plain arrays. */
typedef struct {
    int32_t rank;
    int64_t row_begin, nrows;   /* A/C rows owned */
    int64_t brow_begin, nbrows; /* B rows owned */

    /* Local part, CSR over nrows rows; columns are owner-local B rows. */
    int64_t loc_nnz;
    int64_t *loc_ptr; /* nrows + 1 */
    int32_t *loc_idx;
    float *loc_val;

    /* Collective receive schedule: dense stripes landing in the collective
     * buffer, ordered by source rank then first row; stripe r occupies buffer
     * rows [recv_off[r], recv_off[r] + recv_rows[r]). */
    int64_t n_recv;
    int32_t *recv_src;
    int32_t *recv_first; /* owner-local first row at the source */
    int32_t *recv_rows;
    int64_t *recv_off;
    int64_t coll_buf_rows;

    /* Collective part, CSR over nrows rows; columns are collective buffer rows. */
    int64_t coll_nnz;
    int64_t *coll_ptr;
    int32_t *coll_idx;
    float *coll_val;

    /* Multicast send schedule: (recipient, owned stripe) pairs this rank sends,
     * ordered by recipient then first row. */
    int64_t n_send;
    int32_t *send_dst;
    int32_t *send_first; /* owner-local first row (this rank's B) */
    int32_t *send_rows;

    /* Fetch runs: run r gets rows [run_first, run_first + run_count) of
     * run_owner's B into fetch buffer rows [run_off[r], run_off[r] + run_count). */
    int64_t n_runs;
    int32_t *run_owner;
    int32_t *run_first; /* owner-local */
    int32_t *run_count;
    int64_t *run_off;
    int64_t fetch_buf_rows;

    /* Rows of C the fetch part touches, ascending local row numbers; the fetch
     * kernel accumulates into a compact buffer indexed like this list. */
    int64_t n_fetch_rows;
    int32_t *fetch_rows;

    /* Fetch part, CSC over fetch_buf_rows columns (buffer rows, run order);
     * row indices are positions in fetch_rows. */
    int64_t fet_nnz;
    int64_t *fet_ptr; /* fetch_buf_rows + 1 */
    int32_t *fet_idx;
    float *fet_val;

    tf_rank_stats stats;
} tf_rank_plan;

/* Global per-dense-stripe summary, for inspection. */
typedef struct {
    int64_t n;
    int32_t *owner;
    int64_t *first;      /* global B row */
    int32_t *rows;
    int32_t *recipients; /* ranks receiving it by the collective */
    int32_t *fetchers;   /* ranks fetching some of its rows */
} tf_stripe_table;

typedef struct tf_plan {
    /* Matrix fingerprint */
    int64_t m, n, nnz;
    uint64_t checksum; /* tf_fingerprint.h, salted with the normalisation */

    /* What the stored matrix is (format 2.2; a 2.1 file reads as none, 0, 0). */
    int32_t normalization; /* tf_normalization of the matrix read */
    int32_t symmetric;     /* 1: the stored matrix equals its transpose (pattern
                              and float32 bits); 0: it does not, or unknown */
    int32_t transposed;    /* 1: the stored matrix is the transpose of the
                              (normalised) matrix read (--transpose) */
    uint64_t transpose_of; /* when transposed: the checksum a plan of the
                              untransposed matrix has (its forward plan); else 0 */
    int32_t comm;          /* tf_precision (format 2.3; older files: TF_PREC_F32) */

    int32_t nranks;
    int32_t k_planned;
    int32_t stripe_width;
    int32_t partition; /* tf_partition_kind */
    int32_t mode;      /* tf_mode */
    int32_t gap;       /* max gap G spanned by a fetch run */
    int32_t coll_rows; /* tf_coll_rows */
    tf_coeffs coeffs;
    char generated_by[64];
    char creation_date[32];

    int64_t *row_off;  /* nranks + 1 */
    int64_t *brow_off; /* nranks + 1 */

    /* The renumbering of a --partition metis plan (tf_plan_perm.h), m = n entries
     * each, or NULL for the identity: the plan is of P A P^T, perm[i] is the
     * original id of row (and B row) i, iperm its inverse. The root plan
     * holds it; an alternative (alt) has none of its own and uses the root's. */
    int64_t *perm, *iperm;

    tf_stripe_table stripes;

    /* Parts: parts[i] holds rank first_rank + i; n_parts is nranks for a plan
     * just built, 1 for a plan loaded by an executor rank, 0 for a header. */
    int32_t first_rank;
    int32_t n_parts;
    tf_rank_plan *parts;
    tf_rank_stats *all_stats; /* nranks entries, always present */

    /* The runner-up plan, or NULL: same matrix, ranks and partitions, other
     * classes (a pure plan beside a hybrid, or the other pure plan), holding
     * the same parts as this one. The planner carries it when its predicted
     * time is close enough to this plan's that the model cannot be trusted
     * to rank them (TF_ALT_RATIO, tf_planner.h); the executor times both in
     * its first SpMMs and keeps the faster (docs/executor.md). Never nested. */
    struct tf_plan *alt;
} tf_plan;

/* Frees every array of part rp and sets its pointer to NULL; its counts and
 * statistics stay (a shell, once the part's arrays are encoded for the
 * file: tf_dist_encode.h). */
void tf_rank_plan_drop(tf_rank_plan *rp);
void tf_rank_plan_free(tf_rank_plan *rp);
void tf_plan_free(tf_plan *plan); /* and its alternative */
/* Checks that `alt` can stand in for `plan`: same matrix (size, nonzeros,
 * fingerprint, normalisation, symmetry, transposition), ranks, partition,
 * row and B-row bands, planned K, parts
 * [first_rank, first_rank + n_parts), and no alternative of its own.
 * TF_ERR_FORMAT naming the first difference. */
int tf_plan_check_alt(const tf_plan *plan, const tf_plan *alt);
/* What a plan's classes are, from its parts' schedules (which ranks receive
 * by the collective, which fetch) and every rank's statistics: "hybrid",
 * "fetch", "collective" or "local" (nothing remote). */
const char *tf_plan_classes(const tf_plan *plan);
/* The predicted time of one SpMM: the slowest rank's t_total (all_stats). */
double tf_plan_predicted_time(const tf_plan *plan);
/* The local part's share of a pass that computes nl local and n2
 * collective nonzeros of the same rows together (the executor's fused pass),
 * at the prices the plan's model gave this rank's two parts (s->t_local per
 * local nonzero, s->t_coll_comp per collective one), so that the timing
 * buckets split such a pass as the model would; by nonzeros when the stats
 * do not price both parts (s NULL, a part empty or unpriced). 1 when the
 * pass has no nonzero. */
double tf_stats_fused_local_share(const tf_rank_stats *s, double nl, double n2);
const char *tf_mode_name(int mode);
int tf_mode_parse(const char *s, int *mode);
const char *tf_coll_rows_name(int coll_rows);
int tf_coll_rows_parse(const char *s, int *coll_rows);
/* "none", "gcn" or "mean"; parse refuses anything else (TF_ERR_ARG). */
const char *tf_norm_name(int normalization);
int tf_norm_parse(const char *s, int *normalization);
/* "f32" or "bf16"; parse refuses anything else (TF_ERR_ARG). */
const char *tf_prec_name(int prec);
int tf_prec_parse(const char *s, int *prec);
/* Bytes of one travelling element: 4 or 2. */
int tf_prec_bytes(int prec);

#endif
