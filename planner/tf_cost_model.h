/* The cost model: predicted time of each half of one SpMM on one rank, from
 * the rank's counts (docs/cost-model.md defines every term). The collective
 * term counts rows the rank *sends* as owner, once per recipient, beside the
 * rows it receives: that is where a dense stripe's recipient count enters. */
#ifndef TF_COST_MODEL_H
#define TF_COST_MODEL_H

#include <stdint.h>
#include "tf_coeffs.h"
#include "tf_plan.h"

/* Fills the t_* fields of s from its counts (nnz_*, coll_*, fetch_*). */
void tf_cost_predict(const tf_coeffs *c, int k, tf_rank_stats *s);

/* The second half of tf_cost_predict: the terms that depend on what the
 * rank sends (coll_rows_sent, coll_peers_sent, fetch_peers_sent) and the
 * total, from s's counts and the receiver's terms (t_local, t_coll_comp,
 * t_fetch_comm, t_fetch_comp) that an earlier tf_cost_predict of the same
 * receiver counts left in s. The classification prices an owner under many
 * changes of what it sends this way: bitwise what tf_cost_predict gives. */
void tf_cost_predict_sends(const tf_coeffs *c, int k, tf_rank_stats *s);

/* Time of one SpMM of rank s by 1.5D dense shifting (the shift baseline,
 * baselines/tf_baseline.h) at the planned K, for the executor's dense face
 * (executor/tf_shift.h): the rank's nonzeros priced as the plan prices
 * them (local, collective and fetch parts), plus the `msgs` messages and
 * `bytes` float32 bytes of B blocks and C partials the rank receives
 * (tf_baseline_predict), priced as the collective's: in a ring a rank sends
 * what it receives. Summed, as the one-thread plan's halves are. */
double tf_cost_shift(const tf_coeffs *c, const tf_rank_stats *s, int64_t bytes, int64_t msgs);

/* Time of the rank: max of the halves when they run on separate thread
 * groups (threads >= 2), their sum otherwise, less the fetched bytes that
 * travel while the rank computes (tf_cost_fetch_hidden). t_fetch_bytes is
 * the per-byte part of t_fetch_comm. */
double tf_cost_rank_time(const tf_coeffs *c, double t_local, double t_coll_comm,
                         double t_coll_comp, double t_fetch_comm, double t_fetch_comp,
                         double t_fetch_bytes);

/* Fetch transfer time that proceeds while a one-thread rank computes:
 * overlap_fetch of the smaller of its compute after the gets are posted
 * (t_compute: the local part and the fetched runs' kernel) and the per-byte
 * part of the transfer (t_fetch_bytes); 0 with two or more threads, whose
 * fetch group waits for its own gets. */
double tf_cost_fetch_hidden(const tf_coeffs *c, double t_compute, double t_fetch_bytes);

/* The per-byte part of a fetch of `rows` B rows: beta_fetch times their
 * bytes at the element size that travels. */
double tf_cost_fetch_bytes(const tf_coeffs *c, int k, int64_t rows);

/* tf_cost_fetch_hidden for a rank whose t_local and t_fetch_comp
 * tf_cost_predict has filled. */
double tf_cost_fetch_hidden_of(const tf_coeffs *c, int k, const tf_rank_stats *s);

/* Time of the fetch part's CSC kernel: nnz nonzeros at K columns, of which
 * miss add into a row of C loaded from memory (gamma_fetch) and the others
 * into one in cache (gamma_fetch_cached). Without that coefficient or a
 * cache (files from before the term) every nonzero pays gamma_fetch. */
double tf_cost_csc(const tf_coeffs *c, int k, int64_t nnz, int64_t miss);

/* Time of a CSR part: nnz nonzeros at K columns, of which miss load their
 * B row from memory (gamma, the kernel's coefficient) and the others find
 * it in cache (gamma_cached). Without a cache in the coefficients
 * (cache_bytes 0: files from before the term) every nonzero pays gamma. */
double tf_cost_csr(const tf_coeffs *c, double gamma, int k, int64_t nnz, int64_t miss);

/* Time a CSR kernel spends per row of C it writes, whatever the row's
 * nonzeros: rows times gamma_row times K (0 without the coefficient). */
double tf_cost_rows(const tf_coeffs *c, int k, int64_t rows);

/* The cost of a row of C in nonzeros, for --partition work, as num / den
 * (den = TF_ROW_WEIGHT_DEN): gamma_row / gamma_local, both per column of B,
 * so K cancels. Coefficients without gamma_row (the built-in set, and files
 * from before the term) get TF_ROW_WEIGHT_BUILTIN / TF_ROW_WEIGHT_DEN, the
 * ratio measured on the development machine (docs/cost-model.md, "The cost
 * of a row of C against a nonzero"). Capped at TF_ROW_WEIGHT_MAX nonzeros.
 * Returns 1 when the weight comes from the coefficients, 0 for the built-in. */
int tf_cost_row_weight(const tf_coeffs *c, int64_t *num, int64_t *den);

/* The weights of --partition work, in sixteenths of a nonzero whose B row
 * comes from memory (integers, so that bands do not depend on how the
 * prefix sums are summed): a row of C weighs `row` (tf_cost_row_weight), a
 * nonzero `miss` (= TF_ROW_WEIGHT_DEN) when its B row was not read within
 * the last `window` nonzeros of the row-order stream (tf_cost_reuse_window
 * at K), `hit` (gamma_cached / gamma_local, at least 1) when it was. A
 * kernel reading a row again from cache is several times faster (web
 * graphs in URL order reuse most rows), so bands of equal nonzeros leave
 * the ranks with the fewest reuses slowest. Without the reuse term in the
 * coefficients (no cache_bytes or gamma_cached) window is 0 and every
 * nonzero weighs `miss`. */
typedef struct {
    int64_t row, miss, hit, window;
} tf_work_weights;

void tf_cost_work_weights(const tf_coeffs *c, int k, tf_work_weights *w);

#define TF_ROW_WEIGHT_DEN 16
#define TF_ROW_WEIGHT_BUILTIN 32 /* 2 nonzeros */
#define TF_ROW_WEIGHT_MAX 1024

/* Nonzeros within which a B row read again is still in cache: the rows of
 * K float32 values the cache holds. 0 without a cache. */
int64_t tf_cost_reuse_window(const tf_coeffs *c, int k);

/* The window for the fetch kernel's rows of C: the same rows of K float32
 * values, 0 when the coefficients have no cached fetch rate (the planner
 * then skips the count). */
int64_t tf_cost_fetch_window(const tf_coeffs *c, int k);

/* bf16 (elem_bytes 2): the rounding of the rows that travel, added to the
 * rank's time before both halves (nothing is sent or fetched before it);
 * 0 for float32. docs/cost-model.md, "Precision of what travels". */
double tf_cost_round(const tf_coeffs *c, int k, const tf_rank_stats *s);

/* Per-SpMM synchronisation of a rank with fetch_peers fetch peers (owners it
 * fetches from plus ranks fetching from it). */
double tf_cost_sync(const tf_coeffs *c, int64_t fetch_peers);

/* Cost of a set of rows as a fetch: requests, rows moved, nonzeros. */
double tf_cost_fetch(const tf_coeffs *c, int k, int64_t requests, int64_t rows, int64_t nnz);

/* Largest gap G of unwanted rows worth spanning in one fetch run: a gap of g
 * rows costs g*K*e bytes of extra transfer (e: 4 bytes per value, 2 for a
 * bf16 plan), a separate run costs one more request, so
 * G = floor(alpha_fetch / (beta_fetch * K * e)), capped. */
int tf_cost_gap(const tf_coeffs *c, int k);

#define TF_MAX_GAP 256

/* Largest gap spanned by a block of the collective's datatype when it moves
 * needed rows: a block costs the datatype engine about as much as copying
 * 64 bytes, so gaps of up to 64 bytes of B are sent rather than cut:
 * floor(16 / K) rows (0 for K >= 17). */
int tf_cost_coll_gap(int k);

#endif
