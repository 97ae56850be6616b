/* Plan files: one HDF5 file per plan, written once by twoface-plan and read
 * by every executor rank (each reading only its own part). The layout, the
 * versioning rules and the checksums are described in docs/plan-format.md.
 *
 * Both directions validate: the writer refuses a plan that the reader would
 * reject, and the reader checks every size, every index and a per-rank
 * checksum, so that neither a damaged file nor a hand-edited one can make the
 * executor index out of bounds. Failures return a tf_status with a one-line
 * message naming the file and the dataset (tf_error_message()). */
#ifndef TF_PLAN_IO_H
#define TF_PLAN_IO_H

#include <stdint.h>
#include "tf_plan.h"

/* zstd levels for tf_plan_write: 1..22, or 0 for no compression (the file is
 * then readable by tools without the zstd plugin). 3 is the measured sweet
 * spot: ~3.4x on index arrays at ~0.7 GB/s. */
#define TF_PLAN_ZSTD_DEFAULT 3

/* Special `rank` arguments of tf_plan_read. */
#define TF_PLAN_READ_HEADER (-1) /* header and global summaries, no part */
#define TF_PLAN_READ_ALL (-2)    /* every rank's part */

/* Writes a complete plan (first_rank 0, n_parts == nranks) to `path`,
 * atomically through tf_outpath (tf_outpath.h: links followed, anything but a
 * regular file refused): the data goes to a uniquely named temporary file in
 * the target's directory, which is closed, fsync'ed and renamed over the
 * target only when everything succeeded.
 * On any failure (including a full disk or RLIMIT_FSIZE) and on SIGINT or
 * SIGTERM during the write, the temporary file is removed and `path` is left
 * untouched. An empty plan->creation_date is replaced by the current UTC time
 * in the file. Calls from several threads are serialised (the signal
 * handlers are process-wide). */
int tf_plan_write(const char *path, const tf_plan *plan, int zstd_level);

/* Where tf_plan_write_source gets the parts: heads(ctx, alt, &h) hands
 * over the heads of every rank's encoded part of the plan (alt = 0) or of
 * its runner-up (alt = 1), nranks of them in rank order, valid until the
 * write returns; get(ctx, alt, p, &e) hands over rank p's part, already
 * encoded (tf_pl_encode_part, format/tf_plan_write_encode.h: checked,
 * checksummed and compressed by whoever holds it, in the chunk lengths
 * tf_pl_chunks_of gives for the longest slices), valid until
 * release(ctx, alt, p). Parts are asked for in rank order, the plan's
 * first, then the runner-up's. gate (may be NULL) is called at most once,
 * with the status of the temporary file (written, or not), just before it
 * would be synced and renamed over `path`: what it returns decides whether
 * it is, so that ranks that handed over the parts can still fail the
 * write; it is not called when the write fails before there is a
 * temporary file. shared (may be NULL: none) returns the arrays, bit i for
 * tf_pl_rank_arrays[i], whose encoded chunks are the same bytes in the
 * runner-up's part as in the plan's, on every rank: the runner-up's dataset
 * of such an array is a hard link to the plan's, when their chunk lengths
 * agree too. */
struct tf_pl_enc_part;
struct tf_pl_enc_head;
typedef struct {
    int (*heads)(void *ctx, int alt, const struct tf_pl_enc_head **h);
    int (*get)(void *ctx, int alt, int p, const struct tf_pl_enc_part **e);
    void (*release)(void *ctx, int alt, int p);
    void *ctx;
    int (*gate)(void *ctx, int status);
    uint32_t (*shared)(void *ctx);
} tf_plan_part_source;

/* tf_plan_write for a plan (and runner-up) holding the header, summaries
 * and all_stats but not necessarily the parts, which come from `src` one at
 * a time (src NULL: from the plan). The same file as tf_plan_write. */
int tf_plan_write_source(const char *path, const tf_plan *plan, int zstd_level,
                         const tf_plan_part_source *src);

/* Reads a plan into *out (overwritten; free with tf_plan_free):
 *   rank >= 0             header, summaries and that rank's part
 *                         (n_parts 1, first_rank rank),
 *   TF_PLAN_READ_HEADER   header and summaries only (n_parts 0),
 *   TF_PLAN_READ_ALL      everything (n_parts nranks).
 * Arrays of length zero are returned as NULL. On failure *out is empty. */
int tf_plan_read(const char *path, int rank, tf_plan *out);

/* The per-rank checksum stored in parts/ranks (2.x: in each rank group);
 * definition in tf_plan_layout.c and docs/plan-format.md. Exposed for tests
 * and tools. */
uint64_t tf_plan_rank_checksum(const tf_rank_plan *rp);

/* A hash of what every rank of a job must hold alike: the header's
 * scalars, the global tables, every rank's statistics, the permutation and
 * the runner-up's the same way (not the parts, which each rank reads
 * alone). Ranks that opened different files, or two versions of one (each
 * node its own copy), get different values. */
uint64_t tf_plan_identity(const tf_plan *p);

/* Checks that rank part `rp` is consistent with the plan header `plan`
 * (row_off, brow_off, nranks, m, n, nnz) and that every index lies in its
 * range. TF_OK or TF_ERR_FORMAT with a message naming the array. */
int tf_plan_validate_rank(const tf_plan *plan, const tf_rank_plan *rp);

#endif
