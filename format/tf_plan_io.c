/* Plan files in HDF5 (docs/plan-format.md is the reference for the layout).
 *
 * Integrity has three layers, so that every byte of a plan is covered:
 *  - HDF5 metadata (object headers, hence every attribute and every compact
 *    dataset) carries HDF5's own checksums: the file is created with at least
 *    the 1.8 format, whose object headers and superblock are checksummed;
 *  - chunked datasets carry Fletcher-32 after shuffle + zstd;
 *  - each rank group carries `checksum`, and the root `summary_checksum`, a
 *    hash of the arrays themselves, which also catches what the first two
 *    cannot see (small unfiltered datasets, a chunk index pointing at the
 *    wrong, intact chunk, a writer bug).
 * On top of that the reader checks every size and index against the header,
 * because a plan can also be valid HDF5 with matching checksums and still be
 * wrong (hand-edited, or written by a buggy tool), and the executor indexes
 * arrays with these numbers without further checks.
 *
 * Hash used by both checksums (H below), with mix64 the splitmix64 finalizer
 * of tf_dense.h:
 *   word(h, w)     = mix64(h ^ w)
 *   array(h, a)    = word(h, number of elements of a), then word(h, w) for
 *                    every little-endian 64-bit word w of a's contents as
 *                    stored in the file (little-endian elements, packed),
 *                    the last word zero-padded.
 *   rank checksum  = start h = mix64(rank + 1); word() of row_begin, nrows,
 *                    brow_begin, nbrows, coll_buf_rows, fetch_buf_rows (as
 *                    two's complement 64-bit); array() of every rank dataset
 *                    in the order of rank_arrays[] below.
 *   summary        = start h = mix64(nranks + 1); array() of row_offsets,
 *                    brow_offsets, stripes/owner, stripes/first, stripes/rows,
 *                    stripes/recipients, stripes/fetchers, rank_stats (each
 *                    element as its fields in order, 8 bytes each). */
#include "tf_plan_io.h"
#include "tf_dense.h"
#include "tf_error.h"
#include "tf_h5zstd.h"
#include "tf_partition.h"

#include <hdf5.h>
#include <zstd.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

/* ------------------------------------------------------------------ */
/* Hashing                                                              */

static uint64_t load_le64(const unsigned char *b)
{
    return (uint64_t)b[0] | (uint64_t)b[1] << 8 | (uint64_t)b[2] << 16 | (uint64_t)b[3] << 24 |
           (uint64_t)b[4] << 32 | (uint64_t)b[5] << 40 | (uint64_t)b[6] << 48 |
           (uint64_t)b[7] << 56;
}

static void hash_word(uint64_t *h, uint64_t w) { *h = tf_mix64(*h ^ w); }

/* array() of the header comment; esize is 4 or 8. */
static void hash_array(uint64_t *h, const void *data, int64_t n, size_t esize)
{
    hash_word(h, (uint64_t)n);
    if (n <= 0)
        return;
    const unsigned char *b = data;
    size_t nbytes = (size_t)n * esize;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    /* The hash is defined on the file's little-endian bytes. */
    unsigned char w[8];
    size_t fill = 0;
    for (size_t e = 0; e < nbytes; e += esize) {
        for (size_t j = 0; j < esize; j++)
            w[fill++] = b[e + esize - 1 - j];
        if (fill == 8) {
            hash_word(h, load_le64(w));
            fill = 0;
        }
    }
    if (fill) {
        memset(w + fill, 0, 8 - fill);
        hash_word(h, load_le64(w));
    }
#else
    size_t i = 0;
    for (; i + 8 <= nbytes; i += 8)
        hash_word(h, load_le64(b + i));
    if (i < nbytes) {
        unsigned char w[8] = {0};
        memcpy(w, b + i, nbytes - i);
        hash_word(h, load_le64(w));
    }
#endif
}

/* ------------------------------------------------------------------ */
/* The rank arrays, in file (and checksum) order                        */

enum { K_I32, K_I64, K_F32 };

/* What the length of an array is: the +1 kinds are pointer arrays over a
 * count stored as an attribute, the others are implied by dataset extents. */
enum { N_ROWS1, N_LOC, N_COLL, N_RECV, N_SEND, N_RUNS, N_FROWS, N_FBUF1, N_FET, N_COUNTS };

static const struct {
    const char *name;
    int kind;
    int count;
} rank_arrays[] = {
    {"local/rowptr", K_I64, N_ROWS1},
    {"local/col", K_I32, N_LOC},
    {"local/val", K_F32, N_LOC},
    {"collective/rowptr", K_I64, N_ROWS1},
    {"collective/col", K_I32, N_COLL},
    {"collective/val", K_F32, N_COLL},
    {"collective/recv_src", K_I32, N_RECV},
    {"collective/recv_first", K_I32, N_RECV},
    {"collective/recv_rows", K_I32, N_RECV},
    {"collective/recv_offset", K_I64, N_RECV},
    {"send/dst", K_I32, N_SEND},
    {"send/first", K_I32, N_SEND},
    {"send/rows", K_I32, N_SEND},
    {"fetch/run_owner", K_I32, N_RUNS},
    {"fetch/run_first", K_I32, N_RUNS},
    {"fetch/run_count", K_I32, N_RUNS},
    {"fetch/run_offset", K_I64, N_RUNS},
    {"fetch/rows_touched", K_I32, N_FROWS},
    {"fetch/colptr", K_I64, N_FBUF1},
    {"fetch/row", K_I32, N_FET},
    {"fetch/val", K_F32, N_FET},
};
#define N_RANK_ARRAYS ((int)(sizeof rank_arrays / sizeof rank_arrays[0]))

static size_t kind_size(int k) { return k == K_I64 ? 8 : 4; }
static hid_t kind_ftype(int k)
{
    return k == K_I64 ? H5T_STD_I64LE : k == K_I32 ? H5T_STD_I32LE : H5T_IEEE_F32LE;
}
static hid_t kind_mtype(int k)
{
    return k == K_I64 ? H5T_NATIVE_INT64 : k == K_I32 ? H5T_NATIVE_INT32 : H5T_NATIVE_FLOAT;
}

static int64_t count_get(const tf_rank_plan *rp, int c)
{
    switch (c) {
    case N_ROWS1: return rp->nrows + 1;
    case N_LOC: return rp->loc_nnz;
    case N_COLL: return rp->coll_nnz;
    case N_RECV: return rp->n_recv;
    case N_SEND: return rp->n_send;
    case N_RUNS: return rp->n_runs;
    case N_FROWS: return rp->n_fetch_rows;
    case N_FBUF1: return rp->fetch_buf_rows + 1;
    default: return rp->fet_nnz;
    }
}

static void count_set(tf_rank_plan *rp, int c, int64_t v)
{
    switch (c) {
    case N_LOC: rp->loc_nnz = v; break;
    case N_COLL: rp->coll_nnz = v; break;
    case N_RECV: rp->n_recv = v; break;
    case N_SEND: rp->n_send = v; break;
    case N_RUNS: rp->n_runs = v; break;
    case N_FROWS: rp->n_fetch_rows = v; break;
    case N_FET: rp->fet_nnz = v; break;
    default: break; /* the +1 counts come from attributes */
    }
}

/* A planner may leave the pointer array of an empty CSR/CSC NULL; it means
 * the same as {0}, which is what gets written, hashed and checked. */
static const int64_t zero_ptr[1] = {0};

static const void *array_get(const tf_rank_plan *rp, int i)
{
    const void *p;
    switch (i) {
    case 0: p = rp->loc_ptr; break;
    case 1: p = rp->loc_idx; break;
    case 2: p = rp->loc_val; break;
    case 3: p = rp->coll_ptr; break;
    case 4: p = rp->coll_idx; break;
    case 5: p = rp->coll_val; break;
    case 6: p = rp->recv_src; break;
    case 7: p = rp->recv_first; break;
    case 8: p = rp->recv_rows; break;
    case 9: p = rp->recv_off; break;
    case 10: p = rp->send_dst; break;
    case 11: p = rp->send_first; break;
    case 12: p = rp->send_rows; break;
    case 13: p = rp->run_owner; break;
    case 14: p = rp->run_first; break;
    case 15: p = rp->run_count; break;
    case 16: p = rp->run_off; break;
    case 17: p = rp->fetch_rows; break;
    case 18: p = rp->fet_ptr; break;
    case 19: p = rp->fet_idx; break;
    default: p = rp->fet_val; break;
    }
    if (!p && count_get(rp, rank_arrays[i].count) == 1 &&
        (rank_arrays[i].count == N_ROWS1 || rank_arrays[i].count == N_FBUF1))
        p = zero_ptr;
    return p;
}

static void array_set(tf_rank_plan *rp, int i, void *p)
{
    switch (i) {
    case 0: rp->loc_ptr = p; break;
    case 1: rp->loc_idx = p; break;
    case 2: rp->loc_val = p; break;
    case 3: rp->coll_ptr = p; break;
    case 4: rp->coll_idx = p; break;
    case 5: rp->coll_val = p; break;
    case 6: rp->recv_src = p; break;
    case 7: rp->recv_first = p; break;
    case 8: rp->recv_rows = p; break;
    case 9: rp->recv_off = p; break;
    case 10: rp->send_dst = p; break;
    case 11: rp->send_first = p; break;
    case 12: rp->send_rows = p; break;
    case 13: rp->run_owner = p; break;
    case 14: rp->run_first = p; break;
    case 15: rp->run_count = p; break;
    case 16: rp->run_off = p; break;
    case 17: rp->fetch_rows = p; break;
    case 18: rp->fet_ptr = p; break;
    case 19: rp->fet_idx = p; break;
    default: rp->fet_val = p; break;
    }
}

uint64_t tf_plan_rank_checksum(const tf_rank_plan *rp)
{
    uint64_t h = tf_mix64((uint64_t)(int64_t)rp->rank + 1);
    const int64_t scalars[] = {rp->row_begin, rp->nrows, rp->brow_begin,
                               rp->nbrows, rp->coll_buf_rows, rp->fetch_buf_rows};
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++)
        hash_word(&h, (uint64_t)scalars[i]);
    for (int i = 0; i < N_RANK_ARRAYS; i++)
        hash_array(&h, array_get(rp, i), count_get(rp, rank_arrays[i].count),
                   kind_size(rank_arrays[i].kind));
    return h;
}

/* ------------------------------------------------------------------ */
/* rank_stats: every field, in struct order                             */

static const struct {
    const char *name;
    size_t off;
    int is_double;
} stats_fields[] = {
#define I64F(f) {#f, offsetof(tf_rank_stats, f), 0}
#define F64F(f) {#f, offsetof(tf_rank_stats, f), 1}
    I64F(nnz_local),       I64F(nnz_coll),       I64F(nnz_fetch),      I64F(stripes_coll),
    I64F(stripes_fetch),   I64F(coll_rows_recv), I64F(coll_rows_sent), I64F(coll_peers_recv),
    I64F(coll_peers_sent), I64F(fetch_rows),     I64F(fetch_needed),   I64F(fetch_requests),
    I64F(remote_distinct), I64F(fetch_peers_recv), I64F(fetch_peers_sent), F64F(t_local),
    F64F(t_coll_comm),     F64F(t_coll_comp),    F64F(t_fetch_comm),   F64F(t_fetch_comp),
    F64F(t_sync),          F64F(t_coll_half),    F64F(t_fetch_half),   F64F(t_total),
#undef I64F
#undef F64F
};
#define N_STATS_FIELDS ((int)(sizeof stats_fields / sizeof stats_fields[0]))

/* The summary hash and the packed file type both rely on the struct being
 * exactly these 8-byte fields; a new field must be added to the table. */
_Static_assert(sizeof(tf_rank_stats) == 24 * 8, "update stats_fields for tf_rank_stats");

static hid_t stats_type(int file)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, file ? (size_t)N_STATS_FIELDS * 8 : sizeof(tf_rank_stats));
    if (t < 0)
        return -1;
    for (int i = 0; i < N_STATS_FIELDS; i++) {
        hid_t ft = stats_fields[i].is_double ? (file ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE)
                                             : (file ? H5T_STD_I64LE : H5T_NATIVE_INT64);
        if (H5Tinsert(t, stats_fields[i].name, file ? (size_t)i * 8 : stats_fields[i].off, ft) <
            0) {
            H5Tclose(t);
            return -1;
        }
    }
    return t;
}

static uint64_t summary_checksum(const tf_plan *p, const tf_rank_stats *stats)
{
    uint64_t h = tf_mix64((uint64_t)(int64_t)p->nranks + 1);
    hash_array(&h, p->row_off, p->nranks + 1, 8);
    hash_array(&h, p->brow_off, p->nranks + 1, 8);
    hash_array(&h, p->stripes.owner, p->stripes.n, 4);
    hash_array(&h, p->stripes.first, p->stripes.n, 8);
    hash_array(&h, p->stripes.rows, p->stripes.n, 4);
    hash_array(&h, p->stripes.recipients, p->stripes.n, 4);
    hash_array(&h, p->stripes.fetchers, p->stripes.n, 4);
    hash_array(&h, stats, (int64_t)p->nranks * N_STATS_FIELDS, 8);
    return h;
}

/* ------------------------------------------------------------------ */
/* Validation, shared by writer and reader                              */

static int check_offsets(const int64_t *off, int nranks, int64_t total, const char *name)
{
    if (!off)
        return tf_fail(TF_ERR_FORMAT, "%s is missing", name);
    if (off[0] != 0)
        return tf_fail(TF_ERR_FORMAT, "%s[0] = %lld, expected 0", name, (long long)off[0]);
    for (int p = 0; p < nranks; p++)
        if (off[p + 1] < off[p] || off[p + 1] - off[p] > INT32_MAX)
            return tf_fail(TF_ERR_FORMAT, "%s[%d..%d] = %lld..%lld is not a valid band", name, p,
                           p + 1, (long long)off[p], (long long)off[p + 1]);
    if (off[nranks] != total)
        return tf_fail(TF_ERR_FORMAT, "%s[%d] = %lld, expected %lld", name, nranks,
                       (long long)off[nranks], (long long)total);
    return TF_OK;
}

/* Header and global summaries: everything but the parts. */
static int validate_header(const tf_plan *p)
{
    if (p->nranks < 1 || p->nranks > MAX_RANKS)
        return tf_fail(TF_ERR_FORMAT, "nranks = %d is out of range", p->nranks);
    if (p->m < 0 || p->n < 0 || p->nnz < 0)
        return tf_fail(TF_ERR_FORMAT, "negative matrix size %lld x %lld, %lld nonzeros",
                       (long long)p->m, (long long)p->n, (long long)p->nnz);
    if (p->partition != TF_PART_ROWS && p->partition != TF_PART_NNZ)
        return tf_fail(TF_ERR_FORMAT, "unknown partition kind %d", p->partition);
    if (p->mode < TF_MODE_TWOFACE || p->mode > TF_MODE_COLLECTIVE)
        return tf_fail(TF_ERR_FORMAT, "unknown mode %d", p->mode);
    int st = check_offsets(p->row_off, p->nranks, p->m, "row_offsets");
    if (st == TF_OK)
        st = check_offsets(p->brow_off, p->nranks, p->n, "brow_offsets");
    if (st != TF_OK)
        return st;
    const tf_stripe_table *s = &p->stripes;
    if (s->n < 0)
        return tf_fail(TF_ERR_FORMAT, "negative stripe count %lld", (long long)s->n);
    if (s->n > 0 && (!s->owner || !s->first || !s->rows || !s->recipients || !s->fetchers))
        return tf_fail(TF_ERR_FORMAT, "stripe table arrays missing");
    for (int64_t i = 0; i < s->n; i++) {
        int32_t q = s->owner[i];
        if (q < 0 || q >= p->nranks)
            return tf_fail(TF_ERR_FORMAT, "stripes/owner[%lld] = %d is not a rank", (long long)i,
                           q);
        if (s->rows[i] < 0 || s->first[i] < p->brow_off[q] ||
            s->first[i] > p->brow_off[q + 1] - s->rows[i])
            return tf_fail(TF_ERR_FORMAT,
                           "stripe %lld (rows %lld + %d) is outside rank %d's B rows [%lld, %lld)",
                           (long long)i, (long long)s->first[i], s->rows[i], q,
                           (long long)p->brow_off[q], (long long)p->brow_off[q + 1]);
        if (s->recipients[i] < 0 || s->recipients[i] > p->nranks || s->fetchers[i] < 0 ||
            s->fetchers[i] > p->nranks)
            return tf_fail(TF_ERR_FORMAT, "stripe %lld: recipients %d / fetchers %d out of range",
                           (long long)i, s->recipients[i], s->fetchers[i]);
    }
    return TF_OK;
}

/* The scalars of a part against the header: checked before any array is
 * read, since they size the arrays. */
static int check_rank_scalars(const tf_plan *p, const tf_rank_plan *rp)
{
    int r = rp->rank;
    if (r < 0 || r >= p->nranks)
        return tf_fail(TF_ERR_FORMAT, "rank %d is out of range (plan has %d ranks)", r,
                       p->nranks);
    if (rp->row_begin != p->row_off[r] || rp->nrows != p->row_off[r + 1] - p->row_off[r])
        return tf_fail(TF_ERR_FORMAT, "rank %d: rows %lld + %lld do not match row_offsets", r,
                       (long long)rp->row_begin, (long long)rp->nrows);
    if (rp->brow_begin != p->brow_off[r] || rp->nbrows != p->brow_off[r + 1] - p->brow_off[r])
        return tf_fail(TF_ERR_FORMAT, "rank %d: B rows %lld + %lld do not match brow_offsets", r,
                       (long long)rp->brow_begin, (long long)rp->nbrows);
    /* Each buffer holds distinct B rows of other ranks. */
    if (rp->coll_buf_rows < 0 || rp->coll_buf_rows > p->n)
        return tf_fail(TF_ERR_FORMAT, "rank %d: coll_buf_rows = %lld is outside [0, %lld]", r,
                       (long long)rp->coll_buf_rows, (long long)p->n);
    if (rp->fetch_buf_rows < 0 || rp->fetch_buf_rows > p->n)
        return tf_fail(TF_ERR_FORMAT, "rank %d: fetch_buf_rows = %lld is outside [0, %lld]", r,
                       (long long)rp->fetch_buf_rows, (long long)p->n);
    return TF_OK;
}

/* Upper bound of an extent-defined count, so that a file cannot make the
 * reader allocate more than the header's matrix could need. */
static int64_t count_bound(const tf_plan *p, const tf_rank_plan *rp, int c)
{
    switch (c) {
    case N_LOC:
    case N_COLL:
    case N_FET: return p->nnz;
    case N_SEND: return (int64_t)p->nranks * (rp->nbrows + 1);
    case N_FROWS: return rp->nrows;
    default: return p->n + p->nranks; /* N_RECV, N_RUNS: at most one per stripe */
    }
}

static int check_ptr(const int64_t *ptr, int64_t n, int64_t nnz, int r, const char *name)
{
    if (ptr[0] != 0)
        return tf_fail(TF_ERR_FORMAT, "rank %d: %s[0] = %lld, expected 0", r, name,
                       (long long)ptr[0]);
    for (int64_t i = 0; i < n; i++)
        if (ptr[i + 1] < ptr[i])
            return tf_fail(TF_ERR_FORMAT, "rank %d: %s decreases at %lld", r, name,
                           (long long)i);
    if (ptr[n] != nnz)
        return tf_fail(TF_ERR_FORMAT, "rank %d: %s ends at %lld, expected %lld nonzeros", r,
                       name, (long long)ptr[n], (long long)nnz);
    return TF_OK;
}

static int check_idx(const int32_t *idx, int64_t n, int64_t bound, int r, const char *name,
                     const char *what)
{
    for (int64_t i = 0; i < n; i++)
        if (idx[i] < 0 || idx[i] >= bound)
            return tf_fail(TF_ERR_FORMAT, "rank %d: %s[%lld] = %d is outside [0, %lld) (%s)", r,
                           name, (long long)i, idx[i], (long long)bound, what);
    return TF_OK;
}

/* Row ranges [first, first + cnt) of rank q's B band and their buffer slots
 * [off, off + cnt) within a buffer of buf_rows rows (off may be NULL). */
static int check_ranges(const tf_plan *p, int r, int64_t n, const int32_t *rank_of, int32_t self,
                        const int32_t *first, const int32_t *cnt, const int64_t *off,
                        int64_t buf_rows, const char *name)
{
    for (int64_t i = 0; i < n; i++) {
        int32_t q = rank_of ? rank_of[i] : self;
        if (q < 0 || q >= p->nranks)
            return tf_fail(TF_ERR_FORMAT, "rank %d: %s[%lld]: rank %d is out of range", r, name,
                           (long long)i, q);
        int64_t band = p->brow_off[q + 1] - p->brow_off[q];
        if (first[i] < 0 || cnt[i] < 0 || (int64_t)first[i] + cnt[i] > band)
            return tf_fail(TF_ERR_FORMAT,
                           "rank %d: %s[%lld]: rows %d + %d are outside rank %d's %lld B rows", r,
                           name, (long long)i, first[i], cnt[i], q, (long long)band);
        if (off && (off[i] < 0 || off[i] > buf_rows - cnt[i]))
            return tf_fail(TF_ERR_FORMAT,
                           "rank %d: %s[%lld]: buffer rows %lld + %d exceed the %lld-row buffer",
                           r, name, (long long)i, (long long)off[i], cnt[i], (long long)buf_rows);
    }
    return TF_OK;
}

int tf_plan_validate_rank(const tf_plan *p, const tf_rank_plan *rp)
{
    int st = check_rank_scalars(p, rp);
    if (st != TF_OK)
        return st;
    int r = rp->rank;
    for (int i = 0; i < N_RANK_ARRAYS; i++) {
        int64_t n = count_get(rp, rank_arrays[i].count);
        if (n < 0)
            return tf_fail(TF_ERR_FORMAT, "rank %d: %s has negative length %lld", r,
                           rank_arrays[i].name, (long long)n);
        if (n > 0 && !array_get(rp, i))
            return tf_fail(TF_ERR_FORMAT, "rank %d: %s is missing (%lld elements)", r,
                           rank_arrays[i].name, (long long)n);
    }
    if (rp->loc_nnz > p->nnz || rp->coll_nnz > p->nnz - rp->loc_nnz ||
        rp->fet_nnz > p->nnz - rp->loc_nnz - rp->coll_nnz)
        return tf_fail(TF_ERR_FORMAT, "rank %d: %lld + %lld + %lld nonzeros exceed the matrix's %lld",
                       r, (long long)rp->loc_nnz, (long long)rp->coll_nnz, (long long)rp->fet_nnz,
                       (long long)p->nnz);
    if (rp->n_fetch_rows > rp->nrows)
        return tf_fail(TF_ERR_FORMAT, "rank %d: %lld fetch rows but only %lld rows", r,
                       (long long)rp->n_fetch_rows, (long long)rp->nrows);
    const int64_t *loc_ptr = array_get(rp, 0), *coll_ptr = array_get(rp, 3),
                  *fet_ptr = array_get(rp, 18);
    if ((st = check_ptr(loc_ptr, rp->nrows, rp->loc_nnz, r, "local/rowptr")) ||
        (st = check_idx(rp->loc_idx, rp->loc_nnz, rp->nbrows, r, "local/col", "own B rows")) ||
        (st = check_ptr(coll_ptr, rp->nrows, rp->coll_nnz, r, "collective/rowptr")) ||
        (st = check_idx(rp->coll_idx, rp->coll_nnz, rp->coll_buf_rows, r, "collective/col",
                        "collective buffer rows")) ||
        (st = check_ranges(p, r, rp->n_recv, rp->recv_src, 0, rp->recv_first, rp->recv_rows,
                           rp->recv_off, rp->coll_buf_rows, "collective/recv")) ||
        (st = check_ranges(p, r, rp->n_send, NULL, r, rp->send_first, rp->send_rows, NULL, 0,
                           "send")) ||
        (st = check_idx(rp->send_dst, rp->n_send, p->nranks, r, "send/dst", "ranks")) ||
        (st = check_ranges(p, r, rp->n_runs, rp->run_owner, 0, rp->run_first, rp->run_count,
                           rp->run_off, rp->fetch_buf_rows, "fetch/run")) ||
        (st = check_idx(rp->fetch_rows, rp->n_fetch_rows, rp->nrows, r, "fetch/rows_touched",
                        "own rows")) ||
        (st = check_ptr(fet_ptr, rp->fetch_buf_rows, rp->fet_nnz, r, "fetch/colptr")) ||
        (st = check_idx(rp->fet_idx, rp->fet_nnz, rp->n_fetch_rows, r, "fetch/row",
                        "positions in fetch/rows_touched")))
        return st;
    for (int64_t i = 1; i < rp->n_fetch_rows; i++)
        if (rp->fetch_rows[i] <= rp->fetch_rows[i - 1])
            return tf_fail(TF_ERR_FORMAT, "rank %d: fetch/rows_touched is not increasing at %lld",
                           r, (long long)i);
    return TF_OK;
}

/* ------------------------------------------------------------------ */
/* HDF5 error plumbing                                                  */

/* Library errors are not printed (the caller gets one line instead), but
 * whoever called us keeps their own setting. */
typedef struct {
    H5E_auto2_t func;
    void *data;
} quiet_state;

static void quiet_begin(quiet_state *q)
{
    if (H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data) < 0) {
        q->func = NULL;
        q->data = NULL;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void quiet_end(const quiet_state *q) { H5Eset_auto2(H5E_DEFAULT, q->func, q->data); }

static herr_t innermost_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    if (n == 0 && e->desc && e->desc[0])
        snprintf(data, 256, "%s", e->desc);
    return 0;
}

/* The most specific message on HDF5's error stack ("data error detected by
 * Fletcher32 checksum", "truncated file: ..."), which is the useful one. */
static const char *h5_detail(char buf[256])
{
    buf[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_cb, buf);
    H5Eclear2(H5E_DEFAULT);
    return buf[0] ? buf : "no detail from HDF5";
}

/* HDF5 clears its error stack on entry to every API call, so callers that
 * must close things first take the detail right at the failing call and
 * pass it here; det == NULL means "take it now". */
static int h5_fail_d(const char *path, const char *what, const char *obj, const char *det)
{
    char d[256];
    if (!det || !det[0])
        det = h5_detail(d);
    return tf_fail(TF_ERR_HDF5, "%s: %s '%s' (HDF5: %s)", path, what, obj, det);
}

static int h5_fail(const char *path, const char *what, const char *obj)
{
    return h5_fail_d(path, what, obj, NULL);
}

static void close_id(hid_t *id, herr_t (*fn)(hid_t))
{
    if (*id >= 0)
        fn(*id);
    *id = -1;
}

/* ------------------------------------------------------------------ */
/* Writing                                                              */

typedef struct {
    const char *path;  /* final path, for messages */
    const char *image; /* name of the in-memory file */
    int level;
} wctx;

static int write_attr(const wctx *w, hid_t loc, const char *obj, const char *name, hid_t ftype,
                      hid_t mtype, hsize_t n, const void *v)
{
    char det[256] = "";
    hid_t sp = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, NULL);
    hid_t a = sp < 0 ? -1 : H5Acreate2(loc, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT);
    int ok = a >= 0 && H5Awrite(a, mtype, v) >= 0;
    if (!ok)
        h5_detail(det);
    if (a >= 0 && H5Aclose(a) < 0 && ok) {
        ok = 0;
        h5_detail(det);
    }
    close_id(&sp, H5Sclose);
    if (!ok) {
        char what[160];
        snprintf(what, sizeof what, "%s%s%s", obj, obj[0] ? "/" : "", name);
        return h5_fail_d(w->path, "cannot write attribute", what, det);
    }
    return TF_OK;
}

static int write_attr_i64(const wctx *w, hid_t loc, const char *obj, const char *name, int64_t v)
{
    return write_attr(w, loc, obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, 1, &v);
}

static int write_attr_i32(const wctx *w, hid_t loc, const char *obj, const char *name, int32_t v)
{
    return write_attr(w, loc, obj, name, H5T_STD_I32LE, H5T_NATIVE_INT32, 1, &v);
}

static int write_attr_u64(const wctx *w, hid_t loc, const char *obj, const char *name, uint64_t v)
{
    return write_attr(w, loc, obj, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, 1, &v);
}

/* Fixed-length, NUL-terminated ASCII: readable as a plain string by h5dump
 * and h5py alike, with no variable-length heap to reclaim. */
static int write_attr_str(const wctx *w, hid_t loc, const char *name, const char *s)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    int st;
    if (t < 0 || H5Tset_size(t, strlen(s) + 1) < 0 || H5Tset_strpad(t, H5T_STR_NULLTERM) < 0 ||
        H5Tset_cset(t, H5T_CSET_ASCII) < 0)
        st = h5_fail(w->path, "cannot make string type for attribute", name);
    else
        st = write_attr(w, loc, "", name, t, t, 1, s);
    close_id(&t, H5Tclose);
    return st;
}

static int write_dset(const wctx *w, hid_t loc, const char *obj, const char *name, hid_t ftype,
                      hid_t mtype, size_t esize, int64_t n, const void *data)
{
    hsize_t dims = (hsize_t)n;
    hid_t sp = H5Screate_simple(1, &dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    hid_t d = -1;
    int ok = sp >= 0 && dcpl >= 0 && lcpl >= 0 && H5Pset_create_intermediate_group(lcpl, 1) >= 0;
    size_t bytes = (size_t)n * esize;
    if (ok && n > 0 && bytes < COMPACT_BYTES) {
        ok = H5Pset_layout(dcpl, H5D_COMPACT) >= 0;
    } else if (ok && n > 0) {
        /* Zero-length datasets keep the default contiguous layout: a chunk
         * of size 0 is not allowed. */
        hsize_t chunk = CHUNK_BYTES / esize;
        if (chunk > dims)
            chunk = dims;
        unsigned cd[1] = {(unsigned)w->level};
        ok = H5Pset_chunk(dcpl, 1, &chunk) >= 0 &&
             H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0 &&
             (w->level == 0 ||
              (H5Pset_shuffle(dcpl) >= 0 &&
               H5Pset_filter(dcpl, TF_H5Z_FILTER_ZSTD, H5Z_FLAG_MANDATORY, 1, cd) >= 0)) &&
             H5Pset_fletcher32(dcpl) >= 0;
    }
    if (ok)
        ok = (d = H5Dcreate2(loc, name, ftype, sp, lcpl, dcpl, H5P_DEFAULT)) >= 0;
    if (ok && n > 0)
        ok = H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0;
    char det[256] = "";
    if (!ok)
        h5_detail(det);
    if (d >= 0 && H5Dclose(d) < 0 && ok) {
        ok = 0;
        h5_detail(det);
    }
    close_id(&lcpl, H5Pclose);
    close_id(&dcpl, H5Pclose);
    close_id(&sp, H5Sclose);
    if (!ok) {
        char what[160];
        snprintf(what, sizeof what, "%s%s%s", obj, obj[0] ? "/" : "", name);
        return h5_fail_d(w->path, "cannot write dataset", what, det);
    }
    return TF_OK;
}

static int write_header(const wctx *w, hid_t f, const tf_plan *p, const char *date,
                        const tf_rank_stats *stats)
{
    char gen[sizeof p->generated_by];
    memcpy(gen, p->generated_by, sizeof gen);
    gen[sizeof gen - 1] = '\0';
    const int32_t version[2] = {TF_PLAN_VERSION_MAJOR, TF_PLAN_VERSION_MINOR};
    int st;
    if ((st = write_attr_str(w, f, "format", TF_PLAN_FORMAT)) ||
        (st = write_attr(w, f, "", "format_version", H5T_STD_I32LE, H5T_NATIVE_INT32, 2,
                         version)) ||
        (st = write_attr_str(w, f, "generated_by", gen)) ||
        (st = write_attr_str(w, f, "creation_date", date)) ||
        (st = write_attr_i64(w, f, "", "rows", p->m)) ||
        (st = write_attr_i64(w, f, "", "cols", p->n)) ||
        (st = write_attr_i64(w, f, "", "nnz", p->nnz)) ||
        (st = write_attr_u64(w, f, "", "checksum", p->checksum)) ||
        (st = write_attr_i32(w, f, "", "nranks", p->nranks)) ||
        (st = write_attr_i32(w, f, "", "k_planned", p->k_planned)) ||
        (st = write_attr_i32(w, f, "", "stripe_width", p->stripe_width)) ||
        (st = write_attr_str(w, f, "partition", tf_partition_name(p->partition))) ||
        (st = write_attr_str(w, f, "mode", tf_mode_name(p->mode))) ||
        (st = write_attr_str(w, f, "collective_rows", tf_coll_rows_name(p->coll_rows))) ||
        (st = write_attr_i32(w, f, "", "gap", p->gap)))
        return st;
    for (int i = 0; i < TF_NCOEFFS; i++) {
        if (strcmp(tf_coeff_names[i], "threads") == 0)
            st = write_attr_i32(w, f, "", tf_coeff_names[i], p->coeffs.threads);
        else {
            double v = tf_coeffs_get(&p->coeffs, i);
            st = write_attr(w, f, "", tf_coeff_names[i], H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, &v);
        }
        if (st)
            return st;
    }
    if ((st = write_attr_u64(w, f, "", "summary_checksum", summary_checksum(p, stats))))
        return st;

    int64_t P1 = (int64_t)p->nranks + 1, S = p->stripes.n;
    if ((st = write_dset(w, f, "", "row_offsets", H5T_STD_I64LE, H5T_NATIVE_INT64, 8, P1,
                         p->row_off)) ||
        (st = write_dset(w, f, "", "brow_offsets", H5T_STD_I64LE, H5T_NATIVE_INT64, 8, P1,
                         p->brow_off)) ||
        (st = write_dset(w, f, "", "stripes/owner", H5T_STD_I32LE, H5T_NATIVE_INT32, 4, S,
                         p->stripes.owner)) ||
        (st = write_dset(w, f, "", "stripes/first", H5T_STD_I64LE, H5T_NATIVE_INT64, 8, S,
                         p->stripes.first)) ||
        (st = write_dset(w, f, "", "stripes/rows", H5T_STD_I32LE, H5T_NATIVE_INT32, 4, S,
                         p->stripes.rows)) ||
        (st = write_dset(w, f, "", "stripes/recipients", H5T_STD_I32LE, H5T_NATIVE_INT32, 4, S,
                         p->stripes.recipients)) ||
        (st = write_dset(w, f, "", "stripes/fetchers", H5T_STD_I32LE, H5T_NATIVE_INT32, 4, S,
                         p->stripes.fetchers)))
        return st;
    hid_t ft = stats_type(1), mt = stats_type(0);
    if (ft < 0 || mt < 0)
        st = h5_fail(w->path, "cannot make compound type for", "rank_stats");
    else
        st = write_dset(w, f, "", "rank_stats", ft, mt, (size_t)N_STATS_FIELDS * 8, p->nranks,
                        stats);
    close_id(&ft, H5Tclose);
    close_id(&mt, H5Tclose);
    return st;
}

static int write_rank(const wctx *w, hid_t f, const tf_rank_plan *rp)
{
    char gname[32];
    snprintf(gname, sizeof gname, RANK_GROUP_FMT, (int)rp->rank);
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE), g = -1;
    if (gcpl < 0 || H5Pset_attr_phase_change(gcpl, MAX_COMPACT_ATTRS, MIN_DENSE_ATTRS) < 0 ||
        (g = H5Gcreate2(f, gname, H5P_DEFAULT, gcpl, H5P_DEFAULT)) < 0) {
        int st = h5_fail(w->path, "cannot create group", gname);
        close_id(&gcpl, H5Pclose);
        return st;
    }
    close_id(&gcpl, H5Pclose);
    int st;
    if ((st = write_attr_i32(w, g, gname, "rank", rp->rank)) ||
        (st = write_attr_i64(w, g, gname, "row_begin", rp->row_begin)) ||
        (st = write_attr_i64(w, g, gname, "nrows", rp->nrows)) ||
        (st = write_attr_i64(w, g, gname, "brow_begin", rp->brow_begin)) ||
        (st = write_attr_i64(w, g, gname, "nbrows", rp->nbrows)) ||
        (st = write_attr_i64(w, g, gname, "coll_buf_rows", rp->coll_buf_rows)) ||
        (st = write_attr_i64(w, g, gname, "fetch_buf_rows", rp->fetch_buf_rows)) ||
        (st = write_attr_u64(w, g, gname, "checksum", tf_plan_rank_checksum(rp))))
        goto done;
    for (int i = 0; i < N_RANK_ARRAYS && st == TF_OK; i++) {
        int k = rank_arrays[i].kind;
        st = write_dset(w, g, gname, rank_arrays[i].name, kind_ftype(k), kind_mtype(k),
                        kind_size(k), count_get(rp, rank_arrays[i].count), array_get(rp, i));
    }
done:
    if (H5Gclose(g) < 0 && st == TF_OK)
        st = h5_fail(w->path, "cannot close group", gname);
    return st;
}

/* --- the temporary file and the signals that must not orphan it --- */

static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
/* Written before the handlers are armed and only read by them: a handler
 * may only call async-signal-safe functions, so everything it needs is
 * prepared here. */
static char sig_tmp_path[PATH_MAX + 32];
static volatile sig_atomic_t sig_armed;
static struct sigaction sig_dfl, old_int, old_term, old_xfsz;

static void on_fatal_signal(int sig)
{
    if (sig_armed)
        unlink(sig_tmp_path);
    /* Die of the same signal, so the parent sees the usual status. */
    sigaction(sig, &sig_dfl, NULL);
    raise(sig);
}

static void signals_arm(const char *tmp)
{
    snprintf(sig_tmp_path, sizeof sig_tmp_path, "%s", tmp);
    memset(&sig_dfl, 0, sizeof sig_dfl);
    sig_dfl.sa_handler = SIG_DFL;
    sigemptyset(&sig_dfl.sa_mask);
    sig_armed = 1;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    /* A signal the process ignores (nohup, a background job) stays ignored. */
    sigaction(SIGINT, NULL, &old_int);
    if (old_int.sa_handler != SIG_IGN)
        sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, NULL, &old_term);
    if (old_term.sa_handler != SIG_IGN)
        sigaction(SIGTERM, &sa, NULL);
    /* Past RLIMIT_FSIZE the kernel would kill us with SIGXFSZ, leaving the
     * temporary file; ignored, write() fails with EFBIG and we clean up. */
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGXFSZ, &ign, &old_xfsz);
}

static void signals_disarm(void)
{
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGXFSZ, &old_xfsz, NULL);
    sig_armed = 0;
}

/* The file is fsync'ed before the rename and its directory after it: a
 * crash then leaves either the old plan or the complete new one. */
static int fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return -1;
    int r = fsync(fd);
    /* Some file systems cannot sync directories; that is not our failure. */
    if (r < 0 && (errno == EINVAL || errno == EROFS))
        r = 0;
    int e = errno;
    close(fd);
    errno = e;
    return r;
}

static void utc_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, n, "1970-01-01T00:00:00Z");
}

static int check_plan_to_write(const char *path, const tf_plan *p, const tf_rank_stats **stats,
                               tf_rank_stats **owned)
{
    int st = validate_header(p);
    if (st == TF_OK && (p->first_rank != 0 || p->n_parts != p->nranks || !p->parts))
        st = tf_fail(TF_ERR_ARG, "plan holds parts %d..%d of %d ranks; a plan file needs all",
                     p->first_rank, p->first_rank + p->n_parts - 1, p->nranks);
    for (int i = 0; st == TF_OK && i < p->n_parts; i++) {
        if (p->parts[i].rank != i)
            st = tf_fail(TF_ERR_FORMAT, "parts[%d] is rank %d", i, p->parts[i].rank);
        else
            st = tf_plan_validate_rank(p, &p->parts[i]);
    }
    if (st != TF_OK)
        return tf_fail_prefix(st == TF_ERR_ARG ? st : TF_ERR_INTERNAL,
                              "%s: refusing to write an invalid plan", path);
    /* rank_stats is written from all_stats; the parts' copies must agree or
     * a reader would see different numbers depending on what it loads. */
    *owned = NULL;
    if (p->all_stats) {
        *stats = p->all_stats;
        for (int i = 0; i < p->n_parts; i++)
            if (memcmp(&p->parts[i].stats, &p->all_stats[i], sizeof(tf_rank_stats)) != 0)
                return tf_fail(TF_ERR_INTERNAL,
                               "%s: refusing to write: rank %d's stats differ from all_stats",
                               path, i);
    } else {
        *owned = malloc((size_t)p->nranks * sizeof **owned);
        if (!*owned)
            return tf_fail(TF_ERR_NOMEM, "%s: out of memory", path);
        for (int i = 0; i < p->nranks; i++)
            (*owned)[i] = p->parts[i].stats;
        *stats = *owned;
    }
    return TF_OK;
}

/* The memory image of the core driver is handed over to us when HDF5 closes
 * the file (image_free with OP_FILE_CLOSE), instead of being freed: the
 * image is then complete, closing flags included, and never copied.
 * (H5Fget_file_image of an open 1.8-format file yields a superblock whose
 * checksum no longer matches, in HDF5 1.10.8.) */
typedef struct {
    void *image;
} image_keeper;

static void *image_malloc(size_t n, H5FD_file_image_op_t op, void *u)
{
    (void)op, (void)u;
    return malloc(n ? n : 1);
}
static void *image_memcpy(void *d, const void *s, size_t n, H5FD_file_image_op_t op, void *u)
{
    (void)op, (void)u;
    return memcpy(d, s, n);
}
static void *image_realloc(void *p, size_t n, H5FD_file_image_op_t op, void *u)
{
    (void)op, (void)u;
    return realloc(p, n ? n : 1);
}
static herr_t image_free(void *p, H5FD_file_image_op_t op, void *u)
{
    if (op == H5FD_FILE_IMAGE_OP_FILE_CLOSE)
        ((image_keeper *)u)->image = p;
    else
        free(p);
    return 0;
}
/* Property lists copy udata; every copy must point at the same keeper. */
static void *image_udata_copy(void *u) { return u; }
static herr_t image_udata_free(void *u)
{
    (void)u;
    return 0;
}

/* The closing of the file releases free space and may move the end of the
 * file down; the superblock (version 2 or 3, which our 1.8+ format bound
 * guarantees) then records the true end, and what lies beyond is garbage
 * that would only make truncation harmless to detect. */
static size_t image_eof(const unsigned char *img, size_t n)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    if (n < 48 || memcmp(img, sig, 8) != 0 || (img[8] != 2 && img[8] != 3) || img[9] != 8)
        return n;
    uint64_t base = load_le64(img + 12), eof = load_le64(img + 28);
    return base == 0 && eof > 0 && eof <= n ? (size_t)eof : n;
}

/* Builds the whole file in memory with the core driver and returns its
 * image (malloc'ed). Why not let HDF5 write to disk: when a write fails
 * (full disk, RLIMIT_FSIZE) HDF5 1.10 cannot close the file any more, the
 * handle stays open and the library loops and crashes in its exit handler.
 * In memory the only possible failure is allocation, after which the file
 * closes cleanly; the disk I/O is then ours, with plain errno handling. The
 * price is the compressed file held in memory until it is written. */
static int build_image(const wctx *w, const tf_plan *plan, const char *date,
                       const tf_rank_stats *stats, const tf_rank_stats *alt_stats, void **image,
                       size_t *size)
{
    *image = NULL;
    *size = 0;
    image_keeper keep = {NULL};
    H5FD_file_image_callbacks_t cb = {image_malloc,     image_memcpy,     image_realloc, image_free,
                                      image_udata_copy, image_udata_free, &keep};
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    /* 1.8 format at least: checksummed superblock and object headers. STRONG
     * close so that even a leaked handle cannot keep the file open. */
    if (fapl < 0 || H5Pset_fapl_core(fapl, 4u << 20, 0) < 0 ||
        H5Pset_file_image_callbacks(fapl, &cb) < 0 ||
        H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST) < 0 ||
        H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0) {
        int st = h5_fail(w->path, "cannot set up file access for", w->path);
        close_id(&fapl, H5Pclose);
        return st;
    }
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), f = -1;
    if (fcpl < 0 || H5Pset_attr_phase_change(fcpl, MAX_COMPACT_ATTRS, MIN_DENSE_ATTRS) < 0 ||
        (f = H5Fcreate(w->image, H5F_ACC_TRUNC, fcpl, fapl)) < 0) {
        int st = h5_fail(w->path, "cannot create in memory", w->path);
        close_id(&fcpl, H5Pclose);
        close_id(&fapl, H5Pclose);
        return st;
    }
    close_id(&fcpl, H5Pclose);
    close_id(&fapl, H5Pclose);
    int st = write_header(w, f, plan, date, stats);
    for (int i = 0; st == TF_OK && i < plan->n_parts; i++)
        st = write_rank(w, f, &plan->parts[i]);
    if (st == TF_OK && plan->alt) {
        char where[PATH_MAX + 32];
        snprintf(where, sizeof where, "%s (group '%s')", w->path, ALT_GROUP);
        wctx wa = {where, w->image, w->level};
        hid_t g = H5Gcreate2(f, ALT_GROUP, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (g < 0)
            st = h5_fail(w->path, "cannot create group", ALT_GROUP);
        if (st == TF_OK)
            st = write_header(&wa, g, plan->alt, date, alt_stats);
        for (int i = 0; st == TF_OK && i < plan->alt->n_parts; i++)
            st = write_rank(&wa, g, &plan->alt->parts[i]);
        if (g >= 0 && H5Gclose(g) < 0 && st == TF_OK)
            st = h5_fail(w->path, "cannot close group", ALT_GROUP);
    }
    /* The image size, from the end of allocated space after a flush; the
     * close that follows only rewrites metadata in place. */
    ssize_t n = -1;
    if (st == TF_OK &&
        (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0 || (n = H5Fget_file_image(f, NULL, 0)) <= 0))
        st = h5_fail(w->path, "cannot finish", w->path);
    if (H5Fclose(f) < 0 && st == TF_OK)
        st = h5_fail(w->path, "cannot close", w->path);
    if (st == TF_OK && !keep.image)
        st = tf_fail(TF_ERR_HDF5, "%s: HDF5 did not hand over the file image", w->path);
    if (st != TF_OK) {
        free(keep.image);
        return st;
    }
    *image = keep.image;
    *size = image_eof(keep.image, (size_t)n);
    return TF_OK;
}

static int write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t k = write(fd, p, n > (1u << 30) ? (1u << 30) : n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                errno = EIO;
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int tf_plan_write(const char *path, const tf_plan *plan, int zstd_level)
{
    if (!path || !path[0] || !plan)
        return tf_fail(TF_ERR_ARG, "tf_plan_write: no path or no plan");
    if (zstd_level < 0 || zstd_level > ZSTD_maxCLevel())
        return tf_fail(TF_ERR_ARG, "%s: zstd level %d is outside 0..%d", path, zstd_level,
                       ZSTD_maxCLevel());
    const tf_rank_stats *stats = NULL, *alt_stats = NULL;
    tf_rank_stats *owned = NULL, *alt_owned = NULL;
    int st = check_plan_to_write(path, plan, &stats, &owned);
    if (st != TF_OK)
        return st;
    if (plan->alt) {
        st = check_plan_to_write(path, plan->alt, &alt_stats, &alt_owned);
        if (st == TF_OK && (st = tf_plan_check_alt(plan, plan->alt)) != TF_OK)
            st = tf_fail_prefix(TF_ERR_INTERNAL, "%s: refusing to write", path);
        if (st != TF_OK) {
            free(owned);
            free(alt_owned);
            return st;
        }
    }
    char tmp[sizeof sig_tmp_path];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp) {
        free(owned);
        free(alt_owned);
        return tf_fail(TF_ERR_ARG, "%s: path too long", path);
    }
    char date[sizeof plan->creation_date];
    if (plan->creation_date[0]) {
        memcpy(date, plan->creation_date, sizeof date);
        date[sizeof date - 1] = '\0';
    } else {
        utc_now(date, sizeof date);
    }
    if ((st = tf_h5zstd_register()) != TF_OK) {
        free(owned);
        free(alt_owned);
        return st;
    }

    pthread_mutex_lock(&write_lock);
    signals_arm(tmp);
    /* The temporary file is created first, so that an unusable directory
     * is reported before the work of encoding, with errno's own words. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) {
        st = tf_fail(TF_ERR_IO, "%s: cannot create %s: %s", path, tmp, strerror(errno));
    } else {
        quiet_state q;
        quiet_begin(&q);
        /* The core driver reads an existing file of the name it is given
         * into memory (and HDF5 1.10.8 then leaks that copy), so it gets a
         * name that exists nowhere. */
        char image_name[sizeof tmp + 8];
        snprintf(image_name, sizeof image_name, "%s.image", tmp);
        wctx w = {path, image_name, zstd_level};
        void *image = NULL;
        size_t size = 0;
        st = build_image(&w, plan, date, stats, alt_stats, &image, &size);
        quiet_end(&q);
        if (st == TF_OK && write_all(fd, image, size) < 0)
            st = tf_fail(TF_ERR_IO, "%s: cannot write %s: %s", path, tmp, strerror(errno));
        free(image);
        if (st == TF_OK && fsync(fd) < 0)
            st = tf_fail(TF_ERR_IO, "%s: cannot sync %s: %s", path, tmp, strerror(errno));
        /* close() can report a delayed write error (NFS): check it too. */
        if (close(fd) < 0 && st == TF_OK)
            st = tf_fail(TF_ERR_IO, "%s: cannot close %s: %s", path, tmp, strerror(errno));
        if (st == TF_OK && rename(tmp, path) < 0)
            st = tf_fail(TF_ERR_IO, "%s: cannot rename %s to it: %s", path, tmp,
                         strerror(errno));
        if (st != TF_OK) {
            unlink(tmp);
        } else {
            char dir[sizeof tmp];
            snprintf(dir, sizeof dir, "%s", path);
            char *slash = strrchr(dir, '/');
            if (slash == dir)
                slash[1] = '\0';
            else if (slash)
                *slash = '\0';
            else
                snprintf(dir, sizeof dir, ".");
            if (fsync_dir(dir) < 0)
                st = tf_fail(TF_ERR_IO, "%s: written, but cannot sync directory %s: %s", path,
                             dir, strerror(errno));
        }
    }
    signals_disarm();
    pthread_mutex_unlock(&write_lock);
    free(owned);
    free(alt_owned);
    return st;
}

/* ------------------------------------------------------------------ */
/* Reading                                                              */

typedef struct {
    const char *path; /* for messages: the file, "(alternative)" inside that group */
    hid_t file;
    hid_t root; /* the file, or the alternative plan's group */
} rctx;

/* "where" strings for messages: attribute 'x' / attribute 'rank_000001/x'. */
static void where_attr(char *buf, size_t n, const char *obj, const char *name)
{
    snprintf(buf, n, "attribute '%s%s%s'", obj, obj[0] ? "/" : "", name);
}

static const char *class_name(H5T_class_t c)
{
    switch (c) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "floating point";
    case H5T_STRING: return "string";
    case H5T_COMPOUND: return "compound";
    default: return "other";
    }
}

/* Opens attribute `name` of `loc` and checks its class and element count. */
static int attr_open(const rctx *c, hid_t loc, const char *obj, const char *name,
                     H5T_class_t cls, hssize_t n, hid_t *a_out, hid_t *t_out)
{
    char where[192];
    where_attr(where, sizeof where, obj, name);
    *a_out = *t_out = -1;
    htri_t ex = H5Aexists(loc, name);
    if (ex == 0)
        return tf_fail(TF_ERR_FORMAT, "%s: %s is missing", c->path, where);
    hid_t a = -1, t = -1, s = -1;
    int st = TF_OK;
    if (ex < 0 || (a = H5Aopen(loc, name, H5P_DEFAULT)) < 0 || (t = H5Aget_type(a)) < 0 ||
        (s = H5Aget_space(a)) < 0) {
        char d[256];
        st = tf_fail(TF_ERR_HDF5, "%s: cannot open %s (HDF5: %s)", c->path, where, h5_detail(d));
    } else if (H5Tget_class(t) != cls) {
        st = tf_fail(TF_ERR_FORMAT, "%s: %s is not of %s type", c->path, where, class_name(cls));
    } else if (H5Sget_simple_extent_npoints(s) != n) {
        st = tf_fail(TF_ERR_FORMAT, "%s: %s has %lld values, expected %lld", c->path, where,
                     (long long)H5Sget_simple_extent_npoints(s), (long long)n);
    }
    close_id(&s, H5Sclose);
    if (st != TF_OK) {
        close_id(&t, H5Tclose);
        close_id(&a, H5Aclose);
        return st;
    }
    *a_out = a;
    *t_out = t;
    return TF_OK;
}

static int read_attr(const rctx *c, hid_t loc, const char *obj, const char *name,
                     H5T_class_t cls, hid_t mtype, hssize_t n, void *buf)
{
    hid_t a, t;
    int st = attr_open(c, loc, obj, name, cls, n, &a, &t);
    if (st != TF_OK)
        return st;
    if (H5Aread(a, mtype, buf) < 0) {
        char where[192], d[256];
        where_attr(where, sizeof where, obj, name);
        st = tf_fail(TF_ERR_HDF5, "%s: cannot read %s (HDF5: %s)", c->path, where, h5_detail(d));
    }
    close_id(&t, H5Tclose);
    close_id(&a, H5Aclose);
    return st;
}

static int read_attr_i64(const rctx *c, hid_t loc, const char *obj, const char *name, int64_t *v)
{
    return read_attr(c, loc, obj, name, H5T_INTEGER, H5T_NATIVE_INT64, 1, v);
}

static int read_attr_i32(const rctx *c, hid_t loc, const char *obj, const char *name, int32_t *v)
{
    int64_t x;
    int st = read_attr_i64(c, loc, obj, name, &x);
    if (st == TF_OK && (x < INT32_MIN || x > INT32_MAX)) {
        char where[192];
        where_attr(where, sizeof where, obj, name);
        return tf_fail(TF_ERR_FORMAT, "%s: %s = %lld does not fit 32 bits", c->path, where,
                       (long long)x);
    }
    if (st == TF_OK)
        *v = (int32_t)x;
    return st;
}

/* Any string attribute, fixed or variable length, into out[n]. */
static int read_attr_str(const rctx *c, hid_t loc, const char *name, char *out, size_t n)
{
    hid_t a, t, m = -1;
    int st = attr_open(c, loc, "", name, H5T_STRING, 1, &a, &t);
    if (st != TF_OK)
        return st;
    char *buf = NULL, *vbuf = NULL;
    int ok;
    if (H5Tis_variable_str(t) > 0) {
        ok = (m = H5Tcopy(H5T_C_S1)) >= 0 && H5Tset_size(m, H5T_VARIABLE) >= 0 &&
             H5Aread(a, m, &vbuf) >= 0;
        if (ok)
            snprintf(out, n, "%s", vbuf ? vbuf : "");
    } else {
        size_t size = H5Tget_size(t);
        if (size == 0 || size > MAX_STRING) {
            st = tf_fail(TF_ERR_FORMAT, "%s: attribute '%s' is a %zu-byte string", c->path, name,
                         size);
            goto done;
        }
        /* Read as NULL-padded: conversion fills the tail with NULs whatever
         * padding the file uses. */
        buf = calloc(size + 1, 1);
        ok = buf && (m = H5Tcopy(H5T_C_S1)) >= 0 && H5Tset_size(m, size) >= 0 &&
             H5Tset_strpad(m, H5T_STR_NULLPAD) >= 0 && H5Aread(a, m, buf) >= 0;
        if (ok)
            snprintf(out, n, "%s", buf);
    }
    if (!ok) {
        char d[256];
        st = tf_fail(buf || vbuf || m >= 0 ? TF_ERR_HDF5 : TF_ERR_NOMEM,
                     "%s: cannot read attribute '%s' (HDF5: %s)", c->path, name, h5_detail(d));
    }
done:
    if (vbuf)
        H5free_memory(vbuf);
    free(buf);
    close_id(&m, H5Tclose);
    close_id(&t, H5Tclose);
    close_id(&a, H5Aclose);
    return st;
}

/* 1 if every component of the relative path `name` exists below loc, 0 if
 * one is missing, -1 if HDF5 cannot tell (damaged metadata). Component by
 * component because H5Lexists fails, rather than answering no, when an
 * intermediate group is missing. */
static int link_exists(hid_t loc, const char *name)
{
    char buf[256];
    if (snprintf(buf, sizeof buf, "%s", name) >= (int)sizeof buf)
        return 0;
    for (char *s = buf; (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        htri_t ex = H5Lexists(loc, buf, H5P_DEFAULT);
        *s = '/';
        if (ex <= 0)
            return ex < 0 ? -1 : 0;
    }
    htri_t ex = H5Lexists(loc, buf, H5P_DEFAULT);
    return ex < 0 ? -1 : ex > 0;
}

/* Reads a 1-D dataset of `kind` with exactly `expect` elements, or, if
 * expect < 0, with any number up to `max` (returned in *count). A dataset
 * of zero elements gives *data = NULL. */
static int read_dset(const rctx *c, hid_t loc, const char *obj, const char *name, int kind,
                     int64_t expect, int64_t max, void **data, int64_t *count)
{
    char full[192];
    snprintf(full, sizeof full, "%s%s%s", obj, obj[0] ? "/" : "", name);
    *data = NULL;
    int ex = link_exists(loc, name);
    if (ex < 0)
        return h5_fail(c->path, "cannot look up dataset", full);
    if (ex == 0)
        return tf_fail(TF_ERR_FORMAT, "%s: dataset '%s' is missing", c->path, full);
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    if (d < 0)
        return h5_fail(c->path, "cannot open dataset", full);
    hid_t t = -1, s = -1;
    int st = TF_OK;
    hsize_t dims[1] = {0};
    if ((t = H5Dget_type(d)) < 0 || (s = H5Dget_space(d)) < 0) {
        st = h5_fail(c->path, "cannot inspect dataset", full);
        goto done;
    }
    H5T_class_t want = kind == K_F32 ? H5T_FLOAT : H5T_INTEGER;
    if (H5Tget_class(t) != want || H5Tget_size(t) != kind_size(kind) ||
        (want == H5T_INTEGER && H5Tget_sign(t) != H5T_SGN_2)) {
        st = tf_fail(TF_ERR_FORMAT, "%s: dataset '%s' is not %s", c->path, full,
                     kind == K_F32   ? "32-bit floating point"
                     : kind == K_I32 ? "32-bit signed integer"
                                     : "64-bit signed integer");
        goto done;
    }
    if (H5Sget_simple_extent_ndims(s) != 1 || H5Sget_simple_extent_dims(s, dims, NULL) != 1) {
        st = tf_fail(TF_ERR_FORMAT, "%s: dataset '%s' is not one-dimensional", c->path, full);
        goto done;
    }
    int64_t n = dims[0] > (hsize_t)INT64_MAX ? INT64_MAX : (int64_t)dims[0];
    if (expect >= 0 && n != expect) {
        st = tf_fail(TF_ERR_FORMAT, "%s: dataset '%s' has %lld elements, expected %lld", c->path,
                     full, (long long)n, (long long)expect);
        goto done;
    }
    if (expect < 0 && n > max) {
        st = tf_fail(TF_ERR_FORMAT,
                     "%s: dataset '%s' has %lld elements, more than the %lld the header allows",
                     c->path, full, (long long)n, (long long)max);
        goto done;
    }
    *count = n;
    if (n > 0) {
        if ((uint64_t)n > SIZE_MAX / kind_size(kind) ||
            !(*data = malloc((size_t)n * kind_size(kind)))) {
            st = tf_fail(TF_ERR_NOMEM, "%s: dataset '%s': cannot allocate %lld elements",
                         c->path, full, (long long)n);
            goto done;
        }
        if (H5Dread(d, kind_mtype(kind), H5S_ALL, H5S_ALL, H5P_DEFAULT, *data) < 0) {
            free(*data);
            *data = NULL;
            st = h5_fail(c->path, "cannot read dataset", full);
        }
    }
done:
    close_id(&s, H5Sclose);
    close_id(&t, H5Tclose);
    close_id(&d, H5Dclose);
    return st;
}

static int read_stats(const rctx *c, tf_plan *p)
{
    const char *name = "rank_stats";
    int ex = link_exists(c->root, name);
    if (ex < 0)
        return h5_fail(c->path, "cannot look up dataset", name);
    if (ex == 0)
        return tf_fail(TF_ERR_FORMAT, "%s: dataset '%s' is missing", c->path, name);
    hid_t d = H5Dopen2(c->root, name, H5P_DEFAULT);
    if (d < 0)
        return h5_fail(c->path, "cannot open dataset", name);
    hid_t t = -1, s = -1, mt = -1;
    int st = TF_OK;
    if ((t = H5Dget_type(d)) < 0 || (s = H5Dget_space(d)) < 0) {
        st = h5_fail(c->path, "cannot inspect dataset", name);
        goto done;
    }
    if (H5Tget_class(t) != H5T_COMPOUND) {
        st = tf_fail(TF_ERR_FORMAT, "%s: dataset '%s' is not compound", c->path, name);
        goto done;
    }
    /* HDF5 matches compound members by name and would leave a missing one
     * untouched, so check them all. */
    for (int i = 0; i < N_STATS_FIELDS; i++) {
        int idx = H5Tget_member_index(t, stats_fields[i].name);
        H5T_class_t want = stats_fields[i].is_double ? H5T_FLOAT : H5T_INTEGER;
        if (idx < 0 || H5Tget_member_class(t, (unsigned)idx) != want) {
            H5Eclear2(H5E_DEFAULT);
            st = tf_fail(TF_ERR_FORMAT, "%s: dataset '%s' lacks %s member '%s'", c->path, name,
                         class_name(want), stats_fields[i].name);
            goto done;
        }
    }
    if (H5Sget_simple_extent_ndims(s) != 1 || H5Sget_simple_extent_npoints(s) != p->nranks) {
        st = tf_fail(TF_ERR_FORMAT, "%s: dataset '%s' has %lld elements, expected %d", c->path,
                     name, (long long)H5Sget_simple_extent_npoints(s), p->nranks);
        goto done;
    }
    p->all_stats = calloc((size_t)p->nranks, sizeof *p->all_stats);
    if (!p->all_stats) {
        st = tf_fail(TF_ERR_NOMEM, "%s: out of memory for rank_stats", c->path);
        goto done;
    }
    if ((mt = stats_type(0)) < 0 ||
        H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, p->all_stats) < 0)
        st = h5_fail(c->path, "cannot read dataset", name);
done:
    close_id(&mt, H5Tclose);
    close_id(&s, H5Sclose);
    close_id(&t, H5Tclose);
    close_id(&d, H5Dclose);
    return st;
}

static int read_header(const rctx *c, tf_plan *p)
{
    hid_t f = c->root;
    char buf[64];
    htri_t has = H5Aexists(f, "format");
    if (has < 0)
        return h5_fail(c->path, "cannot read the attributes of the root group", "/");
    if (has == 0)
        return tf_fail(TF_ERR_FORMAT, "%s: not a twoface plan (no 'format' attribute)", c->path);
    int st = read_attr_str(c, f, "format", buf, sizeof buf);
    if (st != TF_OK || strcmp(buf, TF_PLAN_FORMAT) != 0)
        return tf_fail(TF_ERR_FORMAT, "%s: not a twoface plan (format is not '%s')", c->path,
                       TF_PLAN_FORMAT);
    int32_t ver[2];
    if ((st = read_attr(c, f, "", "format_version", H5T_INTEGER, H5T_NATIVE_INT32, 2, ver)))
        return st;
    if (ver[0] > TF_PLAN_VERSION_MAJOR)
        return tf_fail(TF_ERR_FORMAT,
                       "%s: plan format version %d.%d is newer than this twoface (%d.x); "
                       "re-plan or upgrade",
                       c->path, ver[0], ver[1], TF_PLAN_VERSION_MAJOR);
    if (ver[0] < TF_PLAN_VERSION_MAJOR)
        return tf_fail(TF_ERR_FORMAT,
                       "%s: plan format version %d.%d is older than this twoface (%d.x) reads; "
                       "re-plan",
                       c->path, ver[0], ver[1], TF_PLAN_VERSION_MAJOR);
    /* A newer minor version only adds things, which we ignore. */
    char part[16], mode[16], crows[16];
    if ((st = read_attr_str(c, f, "generated_by", p->generated_by, sizeof p->generated_by)) ||
        (st = read_attr_str(c, f, "creation_date", p->creation_date, sizeof p->creation_date)) ||
        (st = read_attr_i64(c, f, "", "rows", &p->m)) ||
        (st = read_attr_i64(c, f, "", "cols", &p->n)) ||
        (st = read_attr_i64(c, f, "", "nnz", &p->nnz)) ||
        (st = read_attr(c, f, "", "checksum", H5T_INTEGER, H5T_NATIVE_UINT64, 1, &p->checksum)) ||
        (st = read_attr_i32(c, f, "", "nranks", &p->nranks)) ||
        (st = read_attr_i32(c, f, "", "k_planned", &p->k_planned)) ||
        (st = read_attr_i32(c, f, "", "stripe_width", &p->stripe_width)) ||
        (st = read_attr_str(c, f, "partition", part, sizeof part)) ||
        (st = read_attr_str(c, f, "mode", mode, sizeof mode)) ||
        (st = read_attr_str(c, f, "collective_rows", crows, sizeof crows)) ||
        (st = read_attr_i32(c, f, "", "gap", &p->gap)))
        return st;
    int kind;
    if (tf_partition_parse(part, &kind) != TF_OK)
        return tf_fail(TF_ERR_FORMAT, "%s: attribute 'partition' = '%s' is not rows or nnz",
                       c->path, part);
    p->partition = kind;
    if (tf_mode_parse(mode, &kind) != TF_OK)
        return tf_fail(TF_ERR_FORMAT,
                       "%s: attribute 'mode' = '%s' is not twoface, fetch or collective", c->path,
                       mode);
    p->mode = kind;
    if (tf_coll_rows_parse(crows, &kind) != TF_OK)
        return tf_fail(TF_ERR_FORMAT, "%s: attribute 'collective_rows' = '%s' is not needed or stripe",
                       c->path, crows);
    p->coll_rows = kind;
    for (int i = 0; i < TF_NCOEFFS; i++) {
        if (strcmp(tf_coeff_names[i], "threads") == 0) {
            int32_t th;
            st = read_attr_i32(c, f, "", tf_coeff_names[i], &th);
            p->coeffs.threads = th;
        } else {
            double v = 0;
            st = read_attr(c, f, "", tf_coeff_names[i], H5T_FLOAT, H5T_NATIVE_DOUBLE, 1, &v);
            tf_coeffs_set(&p->coeffs, i, v);
        }
        if (st)
            return st;
    }
    if (p->nranks < 1 || p->nranks > MAX_RANKS)
        return tf_fail(TF_ERR_FORMAT, "%s: nranks = %d is out of range", c->path, p->nranks);
    uint64_t stored;
    if ((st = read_attr(c, f, "", "summary_checksum", H5T_INTEGER, H5T_NATIVE_UINT64, 1,
                        &stored)))
        return st;

    int64_t P1 = (int64_t)p->nranks + 1, S = -1, n;
    /* Each B row belongs to at most one stripe, and a band adds at most one
     * short stripe: a bound for the stripe table before reading it. */
    int64_t smax = p->n + p->nranks;
    static const struct {
        const char *name;
        int kind;
    } ds[] = {
        {"row_offsets", K_I64},   {"brow_offsets", K_I64},       {"stripes/owner", K_I32},
        {"stripes/first", K_I64}, {"stripes/rows", K_I32},       {"stripes/recipients", K_I32},
        {"stripes/fetchers", K_I32},
    };
    for (int i = 0; i < (int)(sizeof ds / sizeof ds[0]); i++) {
        void *v = NULL;
        int64_t expect = i < 2 ? P1 : S; /* the first stripe array fixes S */
        st = read_dset(c, f, "", ds[i].name, ds[i].kind, expect, smax, &v, &n);
        switch (i) {
        case 0: p->row_off = v; break;
        case 1: p->brow_off = v; break;
        case 2: p->stripes.owner = v; break;
        case 3: p->stripes.first = v; break;
        case 4: p->stripes.rows = v; break;
        case 5: p->stripes.recipients = v; break;
        default: p->stripes.fetchers = v; break;
        }
        if (st != TF_OK)
            return st;
        if (i == 2)
            S = p->stripes.n = n;
    }
    if ((st = read_stats(c, p)) != TF_OK)
        return st;
    uint64_t h = summary_checksum(p, p->all_stats);
    if (h != stored)
        return tf_fail(TF_ERR_FORMAT,
                       "%s: summary checksum mismatch (stored %016llx, computed %016llx): the "
                       "file is damaged",
                       c->path, (unsigned long long)stored, (unsigned long long)h);
    if ((st = validate_header(p)) != TF_OK)
        return tf_fail_prefix(st, "%s", c->path);
    return TF_OK;
}

static int read_rank(const rctx *c, const tf_plan *p, int rank, tf_rank_plan *rp)
{
    char g[32];
    snprintf(g, sizeof g, RANK_GROUP_FMT, rank);
    htri_t ex = H5Lexists(c->root, g, H5P_DEFAULT);
    if (ex < 0)
        return h5_fail(c->path, "cannot look up group", g);
    if (ex == 0)
        return tf_fail(TF_ERR_FORMAT, "%s: group '%s' (the part of rank %d) is missing", c->path,
                       g, rank);
    hid_t gid = H5Gopen2(c->root, g, H5P_DEFAULT);
    if (gid < 0)
        return h5_fail(c->path, "cannot open group", g);
    uint64_t stored = 0;
    int st;
    if ((st = read_attr_i32(c, gid, g, "rank", &rp->rank)) ||
        (st = read_attr_i64(c, gid, g, "row_begin", &rp->row_begin)) ||
        (st = read_attr_i64(c, gid, g, "nrows", &rp->nrows)) ||
        (st = read_attr_i64(c, gid, g, "brow_begin", &rp->brow_begin)) ||
        (st = read_attr_i64(c, gid, g, "nbrows", &rp->nbrows)) ||
        (st = read_attr_i64(c, gid, g, "coll_buf_rows", &rp->coll_buf_rows)) ||
        (st = read_attr_i64(c, gid, g, "fetch_buf_rows", &rp->fetch_buf_rows)) ||
        (st = read_attr(c, gid, g, "checksum", H5T_INTEGER, H5T_NATIVE_UINT64, 1, &stored)))
        goto done;
    if (rp->rank != rank) {
        st = tf_fail(TF_ERR_FORMAT, "%s: group '%s' holds rank %d", c->path, g, rp->rank);
        goto done;
    }
    if ((st = check_rank_scalars(p, rp)) != TF_OK) {
        st = tf_fail_prefix(st, "%s", c->path);
        goto done;
    }
    /* Arrays sharing a count must agree: the first one read fixes it. */
    int known[N_COUNTS] = {0};
    known[N_ROWS1] = known[N_FBUF1] = 1;
    for (int i = 0; i < N_RANK_ARRAYS; i++) {
        int cnt = rank_arrays[i].count;
        int64_t expect = known[cnt] ? count_get(rp, cnt) : -1, n = 0;
        void *v;
        st = read_dset(c, gid, g, rank_arrays[i].name, rank_arrays[i].kind, expect,
                       count_bound(p, rp, cnt), &v, &n);
        if (st != TF_OK)
            goto done;
        array_set(rp, i, v);
        if (!known[cnt]) {
            count_set(rp, cnt, n);
            known[cnt] = 1;
        }
    }
    uint64_t h = tf_plan_rank_checksum(rp);
    if (h != stored) {
        st = tf_fail(TF_ERR_FORMAT,
                     "%s: group '%s': checksum mismatch (stored %016llx, computed %016llx): the "
                     "file is damaged",
                     c->path, g, (unsigned long long)stored, (unsigned long long)h);
        goto done;
    }
    if ((st = tf_plan_validate_rank(p, rp)) != TF_OK) {
        st = tf_fail_prefix(st, "%s: group '%s'", c->path, g);
        goto done;
    }
    rp->stats = p->all_stats[rank];
done:
    close_id(&gid, H5Gclose);
    return st;
}

/* The parts `rank` asks for (tf_plan_read), after the header. */
static int read_parts(const rctx *c, tf_plan *out, int rank)
{
    int first = rank >= 0 ? rank : 0;
    int nparts = rank >= 0 ? 1 : rank == TF_PLAN_READ_ALL ? out->nranks : 0;
    out->first_rank = first;
    if (nparts == 0)
        return TF_OK;
    out->parts = calloc((size_t)nparts, sizeof *out->parts);
    if (!out->parts)
        return tf_fail(TF_ERR_NOMEM, "%s: out of memory", c->path);
    out->n_parts = nparts; /* so that tf_plan_free sees partial parts */
    int st = TF_OK;
    for (int i = 0; i < nparts && st == TF_OK; i++)
        st = read_rank(c, out, first + i, &out->parts[i]);
    return st;
}

/* The runner-up plan in group ALT_GROUP: the same checks as the root plan,
 * then tf_plan_check_alt against it. */
static int read_alt(const rctx *c, tf_plan *out, int rank)
{
    char where[PATH_MAX + 32];
    snprintf(where, sizeof where, "%s (group '%s')", c->path, ALT_GROUP);
    rctx a = {where, c->file, -1};
    if ((a.root = H5Gopen2(c->file, ALT_GROUP, H5P_DEFAULT)) < 0)
        return h5_fail(c->path, "cannot open group", ALT_GROUP);
    int st = TF_OK;
    out->alt = calloc(1, sizeof *out->alt);
    if (!out->alt)
        st = tf_fail(TF_ERR_NOMEM, "%s: out of memory", where);
    if (st == TF_OK)
        st = read_header(&a, out->alt);
    if (st == TF_OK)
        st = read_parts(&a, out->alt, rank);
    if (st == TF_OK && (st = tf_plan_check_alt(out, out->alt)) != TF_OK)
        st = tf_fail_prefix(st, "%s", c->path);
    close_id(&a.root, H5Gclose);
    return st;
}

/* The HDF5 signature sits at offset 0, or 512, 1024, 2048 ... after a user
 * block. Checked here rather than with H5Fis_hdf5, which opens the file
 * with locking and so fails, as if the file were not HDF5, on file systems
 * without flock(). */
static int has_hdf5_signature(int fd, off_t size)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    unsigned char b[8];
    for (off_t at = 0; at + 8 <= size; at = at ? 2 * at : 512)
        if (pread(fd, b, 8, at) == 8 && memcmp(b, sig, 8) == 0)
            return 1;
    return 0;
}

int tf_plan_read(const char *path, int rank, tf_plan *out)
{
    if (!out)
        return tf_fail(TF_ERR_ARG, "tf_plan_read: no output plan");
    memset(out, 0, sizeof *out);
    if (!path || rank < TF_PLAN_READ_ALL)
        return tf_fail(TF_ERR_ARG, "tf_plan_read: bad path or rank %d", rank);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return tf_fail(TF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    int isdir = fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode);
    int hdf5 = !isdir && has_hdf5_signature(fd, sb.st_size);
    close(fd);
    if (isdir)
        return tf_fail(TF_ERR_IO, "%s: is a directory, not a plan file", path);
    if (!hdf5)
        return tf_fail(TF_ERR_FORMAT, "%s: not an HDF5 file", path);
    int st = tf_h5zstd_register();
    if (st != TF_OK)
        return st;

    quiet_state q;
    quiet_begin(&q);
    rctx c = {path, -1, -1};
    hid_t fapl = -1;
    /* No file locking: a plan never changes once renamed into place, and
     * parallel file systems without flock() would make every rank fail. */
    if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0 ||
        H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0 ||
        H5Pset_file_locking(fapl, 0, 1) < 0 ||
        (c.file = H5Fopen(path, H5F_ACC_RDONLY, fapl)) < 0) {
        char d[256];
        st = tf_fail(TF_ERR_FORMAT, "%s: cannot open as HDF5, the file is damaged (HDF5: %s)",
                     path, h5_detail(d));
        goto done;
    }
    c.root = c.file;
    if ((st = read_header(&c, out)) != TF_OK)
        goto done;
    if (rank >= out->nranks) {
        st = tf_fail(TF_ERR_ARG, "%s: no rank %d in a plan for %d ranks", path, rank,
                     out->nranks);
        goto done;
    }
    if ((st = read_parts(&c, out, rank)) != TF_OK)
        goto done;
    int has_alt = link_exists(c.file, ALT_GROUP);
    if (has_alt < 0)
        st = h5_fail(path, "cannot look up group", ALT_GROUP);
    else if (has_alt)
        st = read_alt(&c, out, rank);
done:
    if (c.file >= 0 && H5Fclose(c.file) < 0 && st == TF_OK)
        st = h5_fail(path, "cannot close", path);
    close_id(&fapl, H5Pclose);
    H5Eclear2(H5E_DEFAULT);
    quiet_end(&q);
    if (st != TF_OK)
        tf_plan_free(out);
    return st;
}
