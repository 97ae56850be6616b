/* Turns a classified analysis into every rank's plan part: the CSR/CSC
 * arrays with renumbered columns, the fetch runs, the multicast schedule,
 * the stripe table and the predicted statistics. */
#ifndef TF_BUILD_H
#define TF_BUILD_H

#include "tf_analysis.h"
#include "tf_csr.h"
#include "tf_plan.h"

/* plan must already hold the header fields (nranks, offsets, coeffs, k,
 * gap); fills stripes, parts and all_stats. */
int tf_build_parts(const tf_csr *a, const tf_analysis *an, tf_plan *plan);

/* Builds the parts of ranks p0 <= p < p1 only (first_rank p0, n_parts
 * p1 - p0), from their rows held in `a` with row row_base as its row 0, and
 * the stripe table's counts of the sparse stripes in `an`: everything but
 * the send schedules and statistics, which need the other ranks' parts
 * (the distributed planner exchanges them, tf_dist_planner.c). */
int tf_build_parts_range(const tf_csr *a, int64_t row_base, int p0, int p1,
                         const tf_analysis *an, tf_plan *plan);

/* tf_build_parts and tf_build_parts_range without the parts' arrays (local, collective and fetch CSR/CSC
 * and fetch_rows, left NULL): each part's are freed as soon as it is
 * built, so a candidate plan can be predicted, and compared with others,
 * in the memory of its schedules and statistics. Such a plan is only for
 * tf_plan_predicted_time and tf_plan_free; building it again in full
 * gives the same schedules and statistics. */
int tf_build_parts_lean(const tf_csr *a, const tf_analysis *an, tf_plan *plan);
int tf_build_parts_range_lean(const tf_csr *a, int64_t row_base, int p0, int p1,
                              const tf_analysis *an, tf_plan *plan);

/* Frees part rp's arrays (local, collective and fetch CSR/CSC and
 * fetch_rows) and keeps what a lean part keeps: its counts, schedules,
 * runs and statistics. */
void tf_build_drop_arrays(tf_rank_plan *rp);

/* The owner side of rank part rq's statistics, from its send schedule
 * (rows sent, peers sent to), then its predicted times: the last step of
 * a part, once its send schedule and fetch_peers_sent are known. */
void tf_build_send_stats(const tf_plan *plan, tf_rank_plan *rq);

#endif
