/* Writing a plan built by the distributed planner: one file, the same as
 * tf_plan_write makes of the whole plan. Rank 0 writes; every other rank
 * hands its parts over when rank 0 asks for them, a few at a time (at most
 * 8 parts and 16 MiB in flight, or the one part when it is larger), so no
 * rank holds more than its own parts and those. */
#ifndef TF_DIST_WRITE_H
#define TF_DIST_WRITE_H

#include <mpi.h>

#include "tf_dist_encode.h"
#include "tf_plan.h"

/* Collective. plan (and plan->alt) hold this rank's parts, all_stats and,
 * on rank 0, the stripe table and permutation (tf_dist_plan_build). The
 * status and message are the same on every rank. */
int tf_dist_plan_write(MPI_Comm comm, const char *path, const tf_plan *plan, int zstd_level);

/* The same from parts already encoded (tf_dist_plan_build_enc): enc[0]
 * this rank's parts of plan, enc[1] of plan->alt, encoded for zstd_level;
 * the parts need not hold their arrays any more. */
int tf_dist_plan_write_enc(MPI_Comm comm, const char *path, const tf_plan *plan,
                           const tf_dist_enc enc[2], int zstd_level);

/* The window of parts rank 0 keeps in flight while it writes: at most
 * `parts` (1-8) and `bytes` of them, or the one part when it is larger;
 * 0 or less restores the default, 8 parts and 16 MiB. For tests, which
 * write small plans through narrower windows; the file is the same. */
void tf_dist_write_window(int parts, int64_t bytes);

#endif
