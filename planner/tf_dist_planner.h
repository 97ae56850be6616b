/* The planner on the job's own ranks: tf_plan_build for a matrix
 * distributed in row bands over a communicator of Q ranks, planning for P
 * ranks (any P >= 1, any Q). Planning rank r builds the parts of plan ranks
 * [r P / Q, (r + 1) P / Q) from their rows, which it alone holds; the plan
 * is the one tf_plan_build makes of the whole matrix, whatever Q is
 * (docs/planning.md says which phases are gathered on rank 0). */
#ifndef TF_DIST_PLANNER_H
#define TF_DIST_PLANNER_H

#include "tf_dcsr.h"
#include "tf_dist_encode.h"
#include "tf_planner.h"

/* First plan rank built by planning rank r. */
static inline int tf_dist_first_part(int P, int Q, int r)
{
    return (int)((int64_t)P * r / Q);
}

/* Builds this rank's share of the plan of *a (consumed: its rows move to
 * the bands they are planned in, and are freed). The plan gets the header,
 * all_stats and, on rank 0, the stripe table and the permutation of a
 * metis plan; parts [first_rank, first_rank + n_parts) are this rank's.
 * o->timing, when set, gets the phases' seconds as tf_plan_build's.
 * Collective; the status and message are the same on every rank. */
int tf_dist_plan_build(MPI_Comm comm, tf_dcsr *a, const tf_plan_options *o, tf_plan *out);

/* tf_dist_plan_build for the file: each candidate plan is encoded for zstd
 * `zstd_level` (tf_dist_encode) as soon as it is built, and its parts'
 * arrays are freed, so a rank holds one candidate's arrays at a time
 * besides its rows; A and the analysis go before the last candidate is
 * encoded. enc[0] gets this rank's encoded parts of *out, enc[1] those of
 * out->alt (empty without one): what tf_dist_plan_write_enc writes. The
 * parts of *out keep their counts, schedules and statistics, not their
 * arrays. Free enc with tf_dist_enc_free. tf_dist_plan_build keeps every
 * candidate's arrays until the choice: for callers that need the arrays. */
int tf_dist_plan_build_enc(MPI_Comm comm, tf_dcsr *a, const tf_plan_options *o, int zstd_level,
                           tf_plan *out, tf_dist_enc enc[2]);

#endif
