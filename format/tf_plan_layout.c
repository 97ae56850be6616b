/* Plan files in HDF5: what writer, reader and validator share (docs/plan-format.md
 * is the reference for the layout).
 *
 * Integrity has three layers, so that every byte of a plan is covered:
 *  - HDF5 metadata (object headers, hence every attribute and every compact
 *    dataset) carries HDF5's own checksums: the file is created with at least
 *    the 1.8 format, whose object headers and superblock are checksummed;
 *  - chunked datasets carry Fletcher-32 after shuffle + zstd;
 *  - each rank's entry of parts/ranks (2.x: each rank group) carries
 *    `checksum`, and the root `summary_checksum`, a hash of the arrays
 *    themselves, which also catches what the first two cannot see (small
 *    unfiltered datasets, a chunk index pointing at the wrong, intact
 *    chunk, a writer bug).
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
 *                    in the order of tf_pl_rank_arrays[] below.
 *   summary        = start h = mix64(nranks + 1); array() of row_offsets,
 *                    brow_offsets, stripes/owner, stripes/first, stripes/rows,
 *                    stripes/recipients, stripes/fetchers, rank_stats as
 *                    P x 24 words (the 2.3 fields in order), then each later
 *                    version's block of fields (2.4, 3.1, 3.3) as one more
 *                    count-prefixed array only when one of them is not 0
 *                    (tf_pl_summary_checksum below), then,
 *                    in a permuted plan only (2.2), perm and iperm; then,
 *                    in 3.0, array() of parts/ranks (every element as its 14
 *                    fields in order) and of parts/offsets (every element as
 *                    its 9 members in order), so that the per-rank scalars,
 *                    lengths, checksums and slice positions are covered too. */
#include "tf_plan_layout.h"
#include "tf_plan_io.h"
#include "tf_dense.h"
#include "tf_error.h"

#include <hdf5.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* ------------------------------------------------------------------ */
/* Hashing                                                              */

uint64_t tf_pl_load_le64(const unsigned char *b)
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
            hash_word(h, tf_pl_load_le64(w));
            fill = 0;
        }
    }
    if (fill) {
        memset(w + fill, 0, 8 - fill);
        hash_word(h, tf_pl_load_le64(w));
    }
#else
    size_t i = 0;
    for (; i + 8 <= nbytes; i += 8)
        hash_word(h, tf_pl_load_le64(b + i));
    if (i < nbytes) {
        unsigned char w[8] = {0};
        memcpy(w, b + i, nbytes - i);
        hash_word(h, tf_pl_load_le64(w));
    }
#endif
}
/* ------------------------------------------------------------------ */
/* The rank arrays, in file (and checksum) order                        */


const tf_pl_array_desc tf_pl_rank_arrays[] = {
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
_Static_assert(sizeof tf_pl_rank_arrays / sizeof tf_pl_rank_arrays[0] == N_RANK_ARRAYS,
               "update N_RANK_ARRAYS in tf_plan_layout.h");

const char *const tf_pl_count_names[N_COUNTS] = {
    "rowptr", "local", "collective", "recv", "send", "runs", "rows_touched", "colptr", "fetch",
};

size_t tf_pl_kind_size(int k) { return k == K_I64 ? 8 : 4; }
hid_t tf_pl_kind_ftype(int k)
{
    return k == K_I64 ? H5T_STD_I64LE : k == K_I32 ? H5T_STD_I32LE : H5T_IEEE_F32LE;
}
hid_t tf_pl_kind_mtype(int k)
{
    return k == K_I64 ? H5T_NATIVE_INT64 : k == K_I32 ? H5T_NATIVE_INT32 : H5T_NATIVE_FLOAT;
}

int64_t tf_pl_count_get(const tf_rank_plan *rp, int c)
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

void tf_pl_count_set(tf_rank_plan *rp, int c, int64_t v)
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

const void *tf_pl_array_get(const tf_rank_plan *rp, int i)
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
    if (!p && tf_pl_count_get(rp, tf_pl_rank_arrays[i].count) == 1 &&
        (tf_pl_rank_arrays[i].count == N_ROWS1 || tf_pl_rank_arrays[i].count == N_FBUF1))
        p = zero_ptr;
    return p;
}

void tf_pl_array_set(tf_rank_plan *rp, int i, void *p)
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
        hash_array(&h, tf_pl_array_get(rp, i), tf_pl_count_get(rp, tf_pl_rank_arrays[i].count),
                   tf_pl_kind_size(tf_pl_rank_arrays[i].kind));
    return h;
}

/* ------------------------------------------------------------------ */
/* rank_stats: every field, in struct order                             */

const tf_pl_stats_field tf_pl_stats_fields[] = {
#define I64F(f) {#f, offsetof(tf_rank_stats, f), 0}
#define F64F(f) {#f, offsetof(tf_rank_stats, f), 1}
    I64F(nnz_local),       I64F(nnz_coll),       I64F(nnz_fetch),      I64F(stripes_coll),
    I64F(stripes_fetch),   I64F(coll_rows_recv), I64F(coll_rows_sent), I64F(coll_peers_recv),
    I64F(coll_peers_sent), I64F(fetch_rows),     I64F(fetch_needed),   I64F(fetch_requests),
    I64F(remote_distinct), I64F(fetch_peers_recv), I64F(fetch_peers_sent), F64F(t_local),
    F64F(t_coll_comm),     F64F(t_coll_comp),    F64F(t_fetch_comm),   F64F(t_fetch_comp),
    F64F(t_sync),          F64F(t_coll_half),    F64F(t_fetch_half),   F64F(t_total),
    I64F(nnz_local_miss),  I64F(nnz_coll_miss),  I64F(rows_local),     I64F(rows_coll),
    I64F(nnz_fetch_miss),
#undef I64F
#undef F64F
};
_Static_assert(sizeof tf_pl_stats_fields / sizeof tf_pl_stats_fields[0] == N_STATS_FIELDS,
               "update N_STATS_FIELDS in tf_plan_layout.h");
/* The summary hash and the packed file type both rely on the struct being
 * exactly these 8-byte fields; a new field must be added to the table. */
_Static_assert(sizeof(tf_rank_stats) == 29 * 8, "update tf_pl_stats_fields for tf_rank_stats");

hid_t tf_pl_stats_type(int file)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, file ? (size_t)N_STATS_FIELDS * 8 : sizeof(tf_rank_stats));
    if (t < 0)
        return -1;
    for (int i = 0; i < N_STATS_FIELDS; i++) {
        hid_t ft = tf_pl_stats_fields[i].is_double ? (file ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE)
                                             : (file ? H5T_STD_I64LE : H5T_NATIVE_INT64);
        if (H5Tinsert(t, tf_pl_stats_fields[i].name, file ? (size_t)i * 8 : tf_pl_stats_fields[i].off, ft) <
            0) {
            H5Tclose(t);
            return -1;
        }
    }
    return t;
}

/* ------------------------------------------------------------------ */
/* The part tables of format 3.0                                        */

static const struct {
    const char *name;
    size_t off;
} entry_fields[N_ENTRY_FIELDS] = {
#define EF(f) {#f, offsetof(tf_pl_rank_entry, f)}
    EF(row_begin),      EF(nrows),   EF(brow_begin), EF(nbrows),  EF(coll_buf_rows),
    EF(fetch_buf_rows), EF(loc_nnz), EF(coll_nnz),   EF(n_recv),  EF(n_send),
    EF(n_runs),         EF(n_fetch_rows), EF(fet_nnz), EF(checksum),
#undef EF
};
_Static_assert(sizeof(tf_pl_rank_entry) == N_ENTRY_FIELDS * 8, "update entry_fields");

int64_t tf_pl_entry_count(const tf_pl_rank_entry *e, int c)
{
    switch (c) {
    case N_ROWS1: return e->nrows + 1;
    case N_LOC: return e->loc_nnz;
    case N_COLL: return e->coll_nnz;
    case N_RECV: return e->n_recv;
    case N_SEND: return e->n_send;
    case N_RUNS: return e->n_runs;
    case N_FROWS: return e->n_fetch_rows;
    case N_FBUF1: return e->fetch_buf_rows + 1;
    default: return e->fet_nnz;
    }
}

void tf_pl_entry_of(const tf_rank_plan *rp, uint64_t checksum, tf_pl_rank_entry *e)
{
    *e = (tf_pl_rank_entry){rp->row_begin,      rp->nrows,   rp->brow_begin, rp->nbrows,
                            rp->coll_buf_rows,  rp->fetch_buf_rows,
                            rp->loc_nnz,        rp->coll_nnz, rp->n_recv,    rp->n_send,
                            rp->n_runs,         rp->n_fetch_rows, rp->fet_nnz,
                            checksum};
}

void tf_pl_chunks_of(const int64_t maxlen[N_COUNTS], int64_t chunk[N_COUNTS])
{
    for (int c = 0; c < N_COUNTS; c++)
        chunk[c] = maxlen[c] <= 0 ? 0 : maxlen[c] < PART_CHUNK_ELEMS ? maxlen[c] : PART_CHUNK_ELEMS;
}

int tf_pl_parts_layout(tf_pl_parts *t)
{
    int64_t maxlen[N_COUNTS] = {0};
    for (int p = 0; p < t->nranks; p++)
        for (int c = 0; c < N_COUNTS; c++) {
            int64_t n = tf_pl_entry_count(&t->rank[p], c);
            if (n > maxlen[c])
                maxlen[c] = n;
        }
    tf_pl_chunks_of(maxlen, t->chunk);
    t->off = calloc(((size_t)t->nranks + 1) * N_COUNTS, sizeof *t->off);
    if (!t->off)
        return tf_fail(TF_ERR_NOMEM, "out of memory for the offsets of %d ranks", t->nranks);
    for (int p = 0; p < t->nranks; p++)
        for (int c = 0; c < N_COUNTS; c++) {
            int64_t n = tf_pl_entry_count(&t->rank[p], c), k = t->chunk[c];
            t->off[(size_t)(p + 1) * N_COUNTS + c] =
                t->off[(size_t)p * N_COUNTS + c] + (n > 0 ? (n + k - 1) / k * k : 0);
        }
    return TF_OK;
}

int tf_pl_parts_of_plan(const tf_plan *p, tf_pl_parts *t)
{
    memset(t, 0, sizeof *t);
    if (p->n_parts != p->nranks || p->first_rank != 0)
        return tf_fail(TF_ERR_ARG, "the part tables need every part");
    t->nranks = p->nranks;
    t->rank = calloc((size_t)p->nranks, sizeof *t->rank);
    if (!t->rank)
        return tf_fail(TF_ERR_NOMEM, "out of memory for %d ranks", p->nranks);
    for (int i = 0; i < p->nranks; i++)
        tf_pl_entry_of(&p->parts[i], tf_plan_rank_checksum(&p->parts[i]), &t->rank[i]);
    int st = tf_pl_parts_layout(t);
    if (st != TF_OK)
        tf_pl_parts_free(t);
    return st;
}

void tf_pl_parts_free(tf_pl_parts *t)
{
    free(t->rank);
    free(t->off);
    t->rank = NULL;
    t->off = NULL;
}

hid_t tf_pl_entry_type(int file)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(tf_pl_rank_entry));
    for (int i = 0; t >= 0 && i < N_ENTRY_FIELDS; i++) {
        int u = i == N_ENTRY_FIELDS - 1;
        hid_t ft = file ? (u ? H5T_STD_U64LE : H5T_STD_I64LE)
                        : (u ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64);
        size_t at = file ? (size_t)i * 8 : entry_fields[i].off;
        if (H5Tinsert(t, entry_fields[i].name, at, ft) < 0) {
            H5Tclose(t);
            return -1;
        }
    }
    return t;
}

hid_t tf_pl_offsets_type(int file)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, N_COUNTS * 8);
    for (int c = 0; t >= 0 && c < N_COUNTS; c++)
        if (H5Tinsert(t, tf_pl_count_names[c], (size_t)c * 8,
                      file ? H5T_STD_I64LE : H5T_NATIVE_INT64) < 0) {
            H5Tclose(t);
            return -1;
        }
    return t;
}

int tf_pl_check_parts(const tf_pl_parts *t)
{
    for (int p = 0; p < t->nranks; p++) {
        /* Every member but the checksum is a size: never negative, and far
         * from overflowing when offsets are added to it. */
        for (int i = 0; i < N_ENTRY_FIELDS - 1; i++) {
            int64_t v;
            memcpy(&v, (const char *)&t->rank[p] + entry_fields[i].off, sizeof v);
            if (v < 0 || v > INT64_MAX / 2)
                return tf_fail(TF_ERR_FORMAT, "dataset '%s': %s[%d] = %lld is out of range",
                               PARTS_RANKS, entry_fields[i].name, p, (long long)v);
        }
    }
    for (int c = 0; c < N_COUNTS; c++) {
        const char *k = tf_pl_count_names[c];
        if (t->off[c] != 0)
            return tf_fail(TF_ERR_FORMAT, "dataset '%s': %s[0] = %lld, expected 0", PARTS_OFFSETS,
                           k, (long long)t->off[c]);
        for (int p = 0; p < t->nranks; p++) {
            int64_t a = t->off[(size_t)p * N_COUNTS + c];
            int64_t b = t->off[(size_t)(p + 1) * N_COUNTS + c];
            int64_t n = tf_pl_entry_count(&t->rank[p], c);
            if (b < a)
                return tf_fail(TF_ERR_FORMAT,
                               "dataset '%s': %s[%d] = %lld is below %s[%d] = %lld (offsets "
                               "must not decrease)",
                               PARTS_OFFSETS, k, p + 1, (long long)b, k, p, (long long)a);
            if (n > b - a)
                return tf_fail(TF_ERR_FORMAT,
                               "dataset '%s': rank %d's '%s' slice of %lld elements does not fit "
                               "in [%lld, %lld)",
                               PARTS_OFFSETS, p, k, (long long)n, (long long)a, (long long)b);
        }
    }
    return TF_OK;
}

uint64_t tf_pl_summary_checksum(const tf_plan *p, const tf_rank_stats *stats,
                                const tf_pl_parts *parts)
{
    uint64_t h = tf_mix64((uint64_t)(int64_t)p->nranks + 1);
    hash_array(&h, p->row_off, p->nranks + 1, 8);
    hash_array(&h, p->brow_off, p->nranks + 1, 8);
    hash_array(&h, p->stripes.owner, p->stripes.n, 4);
    hash_array(&h, p->stripes.first, p->stripes.n, 8);
    hash_array(&h, p->stripes.rows, p->stripes.n, 4);
    hash_array(&h, p->stripes.recipients, p->stripes.n, 4);
    hash_array(&h, p->stripes.fetchers, p->stripes.n, 4);
    /* The 2.3 fields as one array, word by word as hash_array takes 8-byte
     * values, then each later version's fields as a block only when one of
     * them is set: an older file (they read as 0) keeps the sum it was
     * written with. */
    hash_word(&h, (uint64_t)((int64_t)p->nranks * N_STATS_FIELDS_2_3));
    for (int r = 0; r < p->nranks; r++)
        for (int i = 0; i < N_STATS_FIELDS_2_3; i++) {
            uint64_t w;
            memcpy(&w, (const char *)&stats[r] + tf_pl_stats_fields[i].off, 8);
            hash_word(&h, w);
        }
    static const int block[][2] = {{N_STATS_FIELDS_2_3, N_STATS_FIELDS_2_4},
                                   {N_STATS_FIELDS_2_4, N_STATS_FIELDS_3_1},
                                   {N_STATS_FIELDS_3_1, N_STATS_FIELDS}};
    for (size_t b = 0; b < sizeof block / sizeof block[0]; b++) {
        int any_new = 0;
        for (int r = 0; r < p->nranks; r++)
            for (int i = block[b][0]; i < block[b][1]; i++) {
                uint64_t w;
                memcpy(&w, (const char *)&stats[r] + tf_pl_stats_fields[i].off, 8);
                any_new |= w != 0;
            }
        if (!any_new)
            continue;
        hash_word(&h, (uint64_t)((int64_t)p->nranks * (block[b][1] - block[b][0])));
        for (int r = 0; r < p->nranks; r++)
            for (int i = block[b][0]; i < block[b][1]; i++) {
                uint64_t w;
                memcpy(&w, (const char *)&stats[r] + tf_pl_stats_fields[i].off, 8);
                hash_word(&h, w);
            }
    }
    /* n > 0: a 0 x 0 matrix's permutation is empty, and the reader returns
     * empty arrays as NULL; the writer's empty allocation must hash alike. */
    if (p->perm && p->n > 0) {
        hash_array(&h, p->perm, p->n, 8);
        hash_array(&h, p->iperm, p->n, 8);
    }
    if (parts) {
        hash_array(&h, parts->rank, (int64_t)parts->nranks * N_ENTRY_FIELDS, 8);
        hash_array(&h, parts->off, ((int64_t)parts->nranks + 1) * N_COUNTS, 8);
    }
    return h;
}

uint64_t tf_plan_identity(const tf_plan *p)
{
    uint64_t h = tf_pl_summary_checksum(p, p->all_stats, NULL);
    const int64_t scalars[] = {p->m,         p->n,         p->nnz,          (int64_t)p->checksum,
                               p->normalization, p->symmetric, p->transposed,
                               (int64_t)p->transpose_of, p->comm, p->k_planned,
                               p->stripe_width, p->partition, p->mode, p->gap, p->coll_rows};
    hash_array(&h, scalars, (int64_t)(sizeof scalars / sizeof scalars[0]), 8);
    hash_array(&h, p->perm, p->perm ? p->n : 0, 8);
    hash_word(&h, p->alt ? tf_plan_identity(p->alt) : 0);
    return h;
}
/* ------------------------------------------------------------------ */
/* HDF5 error plumbing                                                  */

/* Library errors are not printed (the caller gets one line instead), but
 * whoever called us keeps their own setting. */

void tf_pl_quiet_begin(tf_pl_quiet_state *q)
{
    if (H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data) < 0) {
        q->func = NULL;
        q->data = NULL;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void tf_pl_quiet_end(const tf_pl_quiet_state *q) { H5Eset_auto2(H5E_DEFAULT, q->func, q->data); }

static herr_t innermost_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    if (n == 0 && e->desc && e->desc[0])
        snprintf(data, 256, "%s", e->desc);
    return 0;
}

/* The most specific message on HDF5's error stack ("data error detected by
 * Fletcher32 checksum", "truncated file: ..."), which is the useful one. */
const char *tf_pl_h5_detail(char buf[256])
{
    buf[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_cb, buf);
    H5Eclear2(H5E_DEFAULT);
    return buf[0] ? buf : "no detail from HDF5";
}

/* HDF5 clears its error stack on entry to every API call, so callers that
 * must close things first take the detail right at the failing call and
 * pass it here; det == NULL means "take it now". */
int tf_pl_h5_fail_d(const char *path, const char *what, const char *obj, const char *det)
{
    char d[256];
    if (!det || !det[0])
        det = tf_pl_h5_detail(d);
    return tf_fail(TF_ERR_HDF5, "%s: %s '%s' (HDF5: %s)", path, what, obj, det);
}

int tf_pl_h5_fail(const char *path, const char *what, const char *obj)
{
    return tf_pl_h5_fail_d(path, what, obj, NULL);
}

void tf_pl_close_id(hid_t *id, herr_t (*fn)(hid_t))
{
    if (*id >= 0)
        fn(*id);
    *id = -1;
}
