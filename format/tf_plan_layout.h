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
#define COMPACT_BYTES 4096
/* Caps allocations made from numbers read in a file before any data backs
 * them; a real plan has far fewer ranks. */
#define MAX_RANKS (1 << 24)
#define MAX_STRING 4096

#define RANK_GROUP_FMT "rank_%06d"
/* The group holding the runner-up plan, same layout as the root. */
#define ALT_GROUP "alternative"

/* Attributes stay in the object header rather than HDF5's "dense" storage
 * (a fractal heap and a B-tree, used by default beyond 8 attributes): read
 * with the header in one go and covered by its checksum. The root has 23. */
#define MAX_COMPACT_ATTRS 64
#define MIN_DENSE_ATTRS 48

/* Element kinds of the rank arrays. */
enum { K_I32, K_I64, K_F32 };

/* What the length of an array is: the +1 kinds are pointer arrays over a
 * count stored as an attribute, the others are implied by dataset extents. */
enum { N_ROWS1, N_LOC, N_COLL, N_RECV, N_SEND, N_RUNS, N_FROWS, N_FBUF1, N_FET, N_COUNTS };

typedef struct {
    const char *name; /* path inside the rank group */
    int kind;         /* K_* */
    int count;        /* N_*: what its length is */
} tf_pl_array_desc;

#define N_RANK_ARRAYS 21
extern const tf_pl_array_desc tf_pl_rank_arrays[N_RANK_ARRAYS];

typedef struct {
    const char *name;
    size_t off; /* in tf_rank_stats */
    int is_double;
} tf_pl_stats_field;

#define N_STATS_FIELDS 28
/* Fields a 2.3 file has; the later ones may be missing (read as 0). */
#define N_STATS_FIELDS_2_3 24
/* Fields a 2.4 file has. */
#define N_STATS_FIELDS_2_4 26
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
uint64_t tf_pl_summary_checksum(const tf_plan *p, const tf_rank_stats *stats);

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
