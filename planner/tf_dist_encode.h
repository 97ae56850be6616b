/* This rank's parts of a plan built by the distributed planner, encoded as
 * they will lie in the file (tf_plan_write_encode.h): chunked with the
 * chunk lengths all ranks agree on, checked, checksummed and compressed.
 *
 * Why: a part's compressed chunks are a fraction of its arrays (about a
 * fifth on R-MAT), so a planner that encodes each plan as soon as it is
 * built and frees its arrays holds one plan's arrays at a time, not the
 * plan's and the runner-up's until the write (docs/planning.md, "Where the
 * memory goes"). The bytes are those the write would make of the arrays. */
#ifndef TF_DIST_ENCODE_H
#define TF_DIST_ENCODE_H

#include <mpi.h>

#include "tf_plan.h"
#include "tf_plan_write_encode.h"

typedef struct tf_dist_enc {
    int64_t chunk[N_COUNTS]; /* elements per chunk of every count kind, agreed */
    int n_parts;             /* the plan's n_parts on this rank */
    tf_pl_enc_part *parts;   /* n_parts of them, in the plan's order */
} tf_dist_enc;

/* Collective. Agrees on the chunk lengths of pl's part datasets (from the
 * longest slice of every count kind over all ranks), then encodes this
 * rank's parts of pl for zstd `level`. pl needs its parts' arrays and
 * all_stats. *out is overwritten; free it with tf_dist_enc_free, also
 * after a failure. The status and message are the same on every rank. */
int tf_dist_encode(MPI_Comm comm, const tf_plan *pl, int level, tf_dist_enc *out);

/* tf_dist_encode, freeing each part's arrays, schedules and runs as soon
 * as it is encoded (tf_rank_plan_drop), also after a failure: the
 * parts become shells with their counts and statistics, and the choice
 * between candidates needs only all_stats. status: the caller's step
 * before, not yet agreed on: the agreement on the chunk lengths carries
 * it (tf_agree_carry.h), and a rank that failed does not touch pl. */
int tf_dist_encode_drop(MPI_Comm comm, int status, tf_plan *pl, int level, tf_dist_enc *out);
void tf_dist_enc_free(tf_dist_enc *e);

/* Bytes this rank holds in *e (chunk sizes and chunks). */
int64_t tf_dist_enc_bytes(const tf_dist_enc *e);

#endif
