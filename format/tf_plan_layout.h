/* Internal to the plan-file code, shared by its three jobs: writing
 * (tf_plan_write.c), reading (tf_plan_read.c) and validating
 * (tf_plan_validate.c). It holds what they must agree on: the table of a
 * rank's arrays in file and checksum order, the rank_stats fields, the
 * checksums, and the HDF5 error plumbing (tf_plan_layout.c). Not part of the
 * public API; the module's interface is tf_plan_io.h.
 *
 * The file layout and the checksum definitions are in docs/plan-format.md
 * and at the top of tf_plan_layout.c. */
#ifndef TF_PLAN_LAYOUT_H
#define TF_PLAN_LAYOUT_H

#include "tf_plan.h"

#include <hdf5.h>

#include <stddef.h>
#include <stdint.h>

/* Chunks well under HDF5's 1 MiB default chunk cache, so a partial read
 * never decompresses a chunk twice; big enough for zstd to find structure. */
#define CHUNK_BYTES (256 * 1024)
/* Below this a dataset is stored compact, inside its object header: one
 * fewer seek per dataset, and the header checksum covers the data. Filters
 * cannot be used on compact data, hence the limit. */
#define COMPACT_BYTES 49152
/* Caps allocations made from numbers read in a file before any data backs
 * them; a real plan has far fewer ranks. */
#define MAX_RANKS (1 << 24)
#define MAX_STRING 4096

/* Format 2.x: one group per rank, read by the 2.x path only. */
#define RANK_GROUP_FMT "rank_%06d"
/* Format 3.0: every rank's arrays of one kind in one dataset,
 * "parts/local/col" and so on, rank p's slice starting on a chunk boundary
 * at parts/offsets[p]; parts/ranks holds each rank's scalars, true lengths
 * and checksum. Why: a dataset costs its creation and its object header,
 * and one group of 21 per rank made the write grow with P
 * (docs/plan-format.md). */
#define PARTS_GROUP "parts"
#define PARTS_RANKS "parts/ranks"
#define PARTS_OFFSETS "parts/offsets"
/* Longest chunk of a part dataset, in elements, whatever their size: then
 * every array of one count kind has the same chunk length and the same
 * offsets (256 KiB of int64, 128 KiB of int32 or float32). */
#define PART_CHUNK_ELEMS 32768
/* The group holding the runner-up plan, same layout as the root. */
#define ALT_GROUP "alternative"

/* Attributes stay in the object header rather than HDF5's "dense" storage
 * (a fractal heap and a B-tree, used by default beyond 8 attributes): read
 * with the header in one go and covered by its checksum. The root has 35
 * (36 with transpose_of): 19 of the header, the TF_NCOEFFS coefficients and
 * summary_checksum. */
#define MAX_COMPACT_ATTRS 64
#define MIN_DENSE_ATTRS 48

/* Element kinds of the rank arrays. */
enum { K_I32, K_I64, K_F32 };

/* What the length of an array is: the +1 kinds are pointer arrays over a
 * count stored as an attribute, the others are implied by dataset extents. */
enum { N_ROWS1, N_LOC, N_COLL, N_RECV, N_SEND, N_RUNS, N_FROWS, N_FBUF1, N_FET, N_COUNTS };

typedef struct {
    const char *name; /* path under parts/ (2.x: inside the rank group) */
    int kind;         /* K_* */
    int count;        /* N_*: what its length is */
} tf_pl_array_desc;

/* Member names of parts/offsets, one per count kind (N_*). */
extern const char *const tf_pl_count_names[N_COUNTS];

#define N_RANK_ARRAYS 21
extern const tf_pl_array_desc tf_pl_rank_arrays[N_RANK_ARRAYS];

typedef struct {
    const char *name;
    size_t off; /* in tf_rank_stats */
    int is_double;
} tf_pl_stats_field;

#define N_STATS_FIELDS 29
/* Fields a 2.3 file has; the later ones may be missing (read as 0). */
#define N_STATS_FIELDS_2_3 24
/* Fields a 2.4 or 3.0 file has. */
#define N_STATS_FIELDS_2_4 26
/* Fields a 3.1 or 3.2 file has. */
#define N_STATS_FIELDS_3_1 28
extern const tf_pl_stats_field tf_pl_stats_fields[N_STATS_FIELDS];

size_t tf_pl_kind_size(int k);
hid_t tf_pl_kind_ftype(int k); /* file type */
hid_t tf_pl_kind_mtype(int k); /* memory type */
/* Length of a rank array of count kind c, and setting the extent-defined ones. */
int64_t tf_pl_count_get(const tf_rank_plan *rp, int c);
void tf_pl_count_set(tf_rank_plan *rp, int c, int64_t v);
/* Rank array i of tf_pl_rank_arrays (an absent empty pointer array reads as {0}). */
const void *tf_pl_array_get(const tf_rank_plan *rp, int i);
void tf_pl_array_set(tf_rank_plan *rp, int i, void *p);

uint64_t tf_pl_load_le64(const unsigned char *b);
/* Compound type of rank_stats: packed file layout (file = 1) or the struct. */
hid_t tf_pl_stats_type(int file);

/* One element of parts/ranks (3.0): a rank's scalars, the lengths of its
 * arrays that are not implied by them, and its checksum; the file order. */
typedef struct {
    int64_t row_begin, nrows, brow_begin, nbrows, coll_buf_rows, fetch_buf_rows;
    int64_t loc_nnz, coll_nnz, n_recv, n_send, n_runs, n_fetch_rows, fet_nnz;
    uint64_t checksum;
} tf_pl_rank_entry;
#define N_ENTRY_FIELDS 14

/* The part tables of a 3.0 plan: what parts/ranks and parts/offsets hold,
 * and the chunk length of every count kind (0 where all slices are empty). */
typedef struct {
    int nranks;
    tf_pl_rank_entry *rank;  /* nranks */
    int64_t *off;            /* (nranks + 1) x N_COUNTS, row p: where rank p's slices start */
    int64_t chunk[N_COUNTS]; /* elements per chunk */
} tf_pl_parts;

/* Length of count kind c in a parts/ranks entry. */
int64_t tf_pl_entry_count(const tf_pl_rank_entry *e, int c);
void tf_pl_entry_of(const tf_rank_plan *rp, uint64_t checksum, tf_pl_rank_entry *e);
/* t->rank and t->nranks set: the chunk lengths, min(PART_CHUNK_ELEMS, the
 * longest slice), and the offsets, each slice starting on a chunk boundary
 * (allocates t->off). TF_OK or TF_ERR_NOMEM. */
int tf_pl_parts_layout(tf_pl_parts *t);
void tf_pl_parts_free(tf_pl_parts *t);
/* The tables of a plan holding every part (checksums computed here). */
int tf_pl_parts_of_plan(const tf_plan *p, tf_pl_parts *t);
/* Chunk lengths from the longest slice of every count kind. */
void tf_pl_chunks_of(const int64_t maxlen[N_COUNTS], int64_t chunk[N_COUNTS]);
/* Compound types of parts/ranks and parts/offsets: file (1) or memory. */
hid_t tf_pl_entry_type(int file);
hid_t tf_pl_offsets_type(int file);
/* Checks the tables read from a file against each other: lengths not
 * negative, offsets from 0 and not decreasing, every slice within its room.
 * TF_ERR_FORMAT naming the table, the kind and the rank. */
int tf_pl_check_parts(const tf_pl_parts *t);

/* parts: the 3.0 part tables, hashed after everything else; NULL for 2.x. */
uint64_t tf_pl_summary_checksum(const tf_plan *p, const tf_rank_stats *stats,
                                const tf_pl_parts *parts);

/* Validation shared by writer and reader (tf_plan_validate.c). */
int tf_pl_validate_header(const tf_plan *p);
int tf_pl_check_rank_scalars(const tf_plan *p, const tf_rank_plan *rp);
int64_t tf_pl_count_bound(const tf_plan *p, const tf_rank_plan *rp, int c);

/* HDF5 error plumbing. */
typedef struct {
    H5E_auto2_t func;
    void *data;
} tf_pl_quiet_state;
void tf_pl_quiet_begin(tf_pl_quiet_state *q);
void tf_pl_quiet_end(const tf_pl_quiet_state *q);
const char *tf_pl_h5_detail(char buf[256]);
int tf_pl_h5_fail_d(const char *path, const char *what, const char *obj, const char *det);
int tf_pl_h5_fail(const char *path, const char *what, const char *obj);
void tf_pl_close_id(hid_t *id, herr_t (*fn)(hid_t));

#endif
