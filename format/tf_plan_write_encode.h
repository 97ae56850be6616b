/* A rank's part of a plan, encoded as it will lie in the file (format 3.0):
 * every array is cut into the chunks of its part dataset (every rank's
 * arrays of one kind in one dataset, docs/plan-format.md), the last one
 * padded with zeros, and run through the datasets' filter pipeline
 * (shuffle, zstd, Fletcher-32) here; the writer hands the finished chunks
 * to H5Dwrite_chunk at the rank's offset.
 *
 * Why: the distributed planner's ranks each encode their own parts, in
 * parallel, and rank 0, which writes the one file, only receives the
 * compressed bytes and places them; compressing, checksumming and checking
 * every part on rank 0 grew with P while the SpMM shrank (docs/scale.md,
 * "Planning at scale"). The bytes are those HDF5's own pipeline would
 * store, so the file is an ordinary HDF5 file.
 *
 * Internal to libtwoface (the plan writer and planner/tf_dist_write.c). */
#ifndef TF_PLAN_WRITE_ENCODE_H
#define TF_PLAN_WRITE_ENCODE_H

#include "tf_plan_layout.h"

#include <stdint.h>

/* Everything of a part but its arrays' bytes: fixed size, so it travels
 * between ranks as one message. */
typedef struct tf_pl_enc_head {
    int64_t rank, row_begin, nrows, brow_begin, nbrows, coll_buf_rows, fetch_buf_rows;
    int64_t counts[N_COUNTS];       /* tf_pl_count_get of every count kind */
    int64_t chunk[N_COUNTS];        /* elements per chunk of every count kind */
    int64_t nchunks[N_RANK_ARRAYS]; /* 0: empty */
    int64_t n_sizes;                /* chunks in all, the length of sizes[] */
    int64_t n_bytes;                /* length of bytes[] */
    uint64_t checksum;              /* tf_plan_rank_checksum of the part */
    tf_rank_stats stats;
} tf_pl_enc_head;

typedef struct tf_pl_enc_part {
    tf_pl_enc_head h;
    uint32_t *sizes;      /* filtered size of each chunk, arrays in tf_pl_rank_arrays order */
    unsigned char *bytes; /* the chunks, one after the other */
} tf_pl_enc_part;

/* Checks part rp against plan (tf_plan_validate_rank, and its stats against
 * plan->all_stats when present), then encodes it in chunks of chunk[c]
 * elements for its arrays of count kind c (the same on every rank:
 * tf_pl_chunks_of the longest slices) for zstd `level` (0: no shuffle and
 * no zstd, only Fletcher-32). *out is overwritten; free it with
 * tf_pl_enc_part_free, also after a failure. */
int tf_pl_encode_part(const tf_plan *plan, const tf_rank_plan *rp, int level,
                      const int64_t chunk[N_COUNTS], tf_pl_enc_part *out);
/* The same for a part the caller has already validated and hashed
 * (checksum = tf_plan_rank_checksum(rp)): the serial writer does both for
 * its part tables, and the hash is one multiplication chain over every
 * byte of the part, the slowest step of the write. */
int tf_pl_encode_checked_part(const tf_plan *plan, const tf_rank_plan *rp, uint64_t checksum,
                              int level, const int64_t chunk[N_COUNTS], tf_pl_enc_part *out);
void tf_pl_enc_part_free(tf_pl_enc_part *e);

/* Checks that an encoded part's chunk counts and byte counts agree with its
 * counts and chunk lengths, so that the writer can walk its bytes (a part
 * received from another rank). TF_OK or TF_ERR_INTERNAL naming the part. */
int tf_pl_enc_check(const tf_pl_enc_part *e);

/* The part's scalars and counts back in a tf_rank_plan without arrays, for
 * the checks the writer makes on a part it did not encode itself. */
void tf_pl_enc_scalars(const tf_pl_enc_head *h, tf_rank_plan *rp);

/* One chunk: m elements of esize bytes from src, padded with zeros to c,
 * through the pipeline for `level`, into dst[cap] (cap >= ZSTD_compressBound
 * of c * esize, plus 4); plain and shuf are scratch buffers of c * esize
 * bytes. *len is the chunk's stored size, Fletcher-32 included. */
int tf_pl_encode_chunk(unsigned char *dst, size_t cap, unsigned char *plain,
                       unsigned char *shuf, const void *src, int64_t m, int64_t c, size_t esize,
                       int level, size_t *len);

/* Fletcher-32 as HDF5's filter computes it (16-bit big-endian words). */
uint32_t tf_pl_fletcher32(const void *data, size_t n);

#endif
