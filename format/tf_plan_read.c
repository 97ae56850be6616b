/* Reading plan files: header, summaries, one rank's part (or all), and the
 * runner-up plan; every size, index and checksum is checked (docs/plan-format.md). */
#include "tf_plan_layout.h"
#include "tf_plan_io.h"
#include "tf_error.h"
#include "tf_h5zstd.h"
#include "tf_partition.h"

#include <hdf5.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
/* ------------------------------------------------------------------ */
/* Reading                                                              */

typedef struct {
    const char *path; /* for messages: the file, "(alternative)" inside that group */
    hid_t file;
    hid_t root;       /* the file, or the alternative plan's group */
    int major;        /* format version: 2 (a group per rank) or 3 (parts/) */
    tf_pl_parts parts; /* 3.0: the part tables, read with the header */
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
        st = tf_fail(TF_ERR_HDF5, "%s: cannot open %s (HDF5: %s)", c->path, where, tf_pl_h5_detail(d));
    } else if (H5Tget_class(t) != cls) {
        st = tf_fail(TF_ERR_FORMAT, "%s: %s is not of %s type", c->path, where, class_name(cls));
    } else if (H5Sget_simple_extent_npoints(s) != n) {
        st = tf_fail(TF_ERR_FORMAT, "%s: %s has %lld values, expected %lld", c->path, where,
                     (long long)H5Sget_simple_extent_npoints(s), (long long)n);
    }
    tf_pl_close_id(&s, H5Sclose);
    if (st != TF_OK) {
        tf_pl_close_id(&t, H5Tclose);
        tf_pl_close_id(&a, H5Aclose);
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
        st = tf_fail(TF_ERR_HDF5, "%s: cannot read %s (HDF5: %s)", c->path, where, tf_pl_h5_detail(d));
    }
    tf_pl_close_id(&t, H5Tclose);
    tf_pl_close_id(&a, H5Aclose);
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
                     "%s: cannot read attribute '%s' (HDF5: %s)", c->path, name, tf_pl_h5_detail(d));
    }
done:
    if (vbuf)
        H5free_memory(vbuf);
    free(buf);
    tf_pl_close_id(&m, H5Tclose);
    tf_pl_close_id(&t, H5Tclose);
    tf_pl_close_id(&a, H5Aclose);
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

/* Opens dataset `name` below loc into *d; `shown` is its name in messages.
 * A missing dataset is TF_ERR_FORMAT, damaged metadata TF_ERR_HDF5. */
static int open_dset(const rctx *c, hid_t loc, const char *name, const char *shown, hid_t *d)
{
    *d = -1;
    int ex = link_exists(loc, name);
    if (ex < 0)
        return tf_pl_h5_fail(c->path, "cannot look up dataset", shown);
    if (ex == 0)
        return tf_fail(TF_ERR_FORMAT, "%s: dataset '%s' is missing", c->path, shown);
    if ((*d = H5Dopen2(loc, name, H5P_DEFAULT)) < 0)
        return tf_pl_h5_fail(c->path, "cannot open dataset", shown);
    return TF_OK;
}

/* Refuses a chunk of elements start..start+count-1 of the 1-D dataset d
 * whose filter mask is not 0. twoface writes every chunk through its whole
 * pipeline, so a set bit can only be damage, and HDF5 1.10 trusts it: it
 * skips that filter and copies a full chunk out of the smaller stored
 * buffer, reading past its end, before any checksum of ours can look. The
 * mask sits in the chunk index (a v1 B-tree node has no checksum), so it is
 * read from there before H5Dread. Only the chunks of the slice are looked
 * up: one B-tree search each, and a rank reads only its own slice. */
static int check_chunk_masks(const rctx *c, hid_t d, const char *name, hsize_t start,
                             hsize_t count)
{
    if (count == 0)
        return TF_OK;
    hid_t dcpl = H5Dget_create_plist(d);
    if (dcpl < 0)
        return tf_pl_h5_fail(c->path, "cannot inspect dataset", name);
    H5D_layout_t lay = H5Pget_layout(dcpl);
    hsize_t cdim = 0;
    int nd = lay == H5D_CHUNKED ? H5Pget_chunk(dcpl, 1, &cdim) : 0;
    H5Pclose(dcpl);
    if (lay < 0 || nd < 0)
        return tf_pl_h5_fail(c->path, "cannot inspect dataset", name);
    if (lay != H5D_CHUNKED)
        return TF_OK;
    if (nd != 1 || cdim == 0)
        return tf_fail(TF_ERR_FORMAT, "%s: dataset '%s' has %d-dimensional chunks, expected 1",
                       c->path, name, nd);
    for (hsize_t at = start / cdim * cdim; at < start + count; at += cdim) {
        unsigned mask = 0;
        haddr_t addr = 0;
        hsize_t size = 0;
        if (H5Dget_chunk_info_by_coord(d, &at, &mask, &addr, &size) < 0)
            return tf_pl_h5_fail(c->path, "cannot look up a chunk of dataset", name);
        if (mask != 0)
            return tf_fail(TF_ERR_FORMAT,
                           "%s: dataset '%s': the chunk at element %llu skips filters (mask "
                           "0x%x), which twoface never writes: the file is damaged",
                           c->path, name, (unsigned long long)at, mask);
    }
    return TF_OK;
}

/* The one-dimensional dataset d of `kind` (`shown` in messages): checks
 * its element type and rank, gives its length in *n and leaves its
 * dataspace open in *space (-1 on failure) for a selection. */
static int dset_shape(const rctx *c, hid_t d, const char *shown, int kind, hid_t *space,
                      int64_t *n)
{
    hid_t t = -1;
    hsize_t dims[1] = {0};
    int st = TF_OK;
    *space = -1;
    if ((t = H5Dget_type(d)) < 0 || (*space = H5Dget_space(d)) < 0) {
        st = tf_pl_h5_fail(c->path, "cannot inspect dataset", shown);
        goto done;
    }
    H5T_class_t want = kind == K_F32 ? H5T_FLOAT : H5T_INTEGER;
    if (H5Tget_class(t) != want || H5Tget_size(t) != tf_pl_kind_size(kind) ||
        (want == H5T_INTEGER && H5Tget_sign(t) != H5T_SGN_2)) {
        st = tf_fail(TF_ERR_FORMAT, "%s: dataset '%s' is not %s", c->path, shown,
                     kind == K_F32   ? "32-bit floating point"
                     : kind == K_I32 ? "32-bit signed integer"
                                     : "64-bit signed integer");
        goto done;
    }
    if (H5Sget_simple_extent_ndims(*space) != 1 ||
        H5Sget_simple_extent_dims(*space, dims, NULL) != 1) {
        st = tf_fail(TF_ERR_FORMAT, "%s: dataset '%s' is not one-dimensional", c->path, shown);
        goto done;
    }
    *n = dims[0] > (hsize_t)INT64_MAX ? INT64_MAX : (int64_t)dims[0];
done:
    tf_pl_close_id(&t, H5Tclose);
    if (st != TF_OK)
        tf_pl_close_id(space, H5Sclose);
    return st;
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
    hid_t d;
    int st = open_dset(c, loc, name, full, &d);
    if (st != TF_OK)
        return st;
    hid_t s = -1;
    int64_t n = 0;
    if ((st = dset_shape(c, d, full, kind, &s, &n)) != TF_OK)
        goto done;
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
        if ((uint64_t)n > SIZE_MAX / tf_pl_kind_size(kind) ||
            !(*data = malloc((size_t)n * tf_pl_kind_size(kind)))) {
            st = tf_fail(TF_ERR_NOMEM, "%s: dataset '%s': cannot allocate %lld elements",
                         c->path, full, (long long)n);
            goto done;
        }
        if ((st = check_chunk_masks(c, d, full, 0, (hsize_t)n)) != TF_OK) {
            free(*data);
            *data = NULL;
        } else if (H5Dread(d, tf_pl_kind_mtype(kind), H5S_ALL, H5S_ALL, H5P_DEFAULT, *data) < 0) {
            free(*data);
            *data = NULL;
            st = tf_pl_h5_fail(c->path, "cannot read dataset", full);
        }
    }
done:
    tf_pl_close_id(&s, H5Sclose);
    tf_pl_close_id(&d, H5Dclose);
    return st;
}

static int read_stats(const rctx *c, tf_plan *p)
{
    const char *name = "rank_stats";
    hid_t d;
    int st = open_dset(c, c->root, name, name, &d);
    if (st != TF_OK)
        return st;
    hid_t t = -1, s = -1, mt = -1;
    if ((t = H5Dget_type(d)) < 0 || (s = H5Dget_space(d)) < 0) {
        st = tf_pl_h5_fail(c->path, "cannot inspect dataset", name);
        goto done;
    }
    if (H5Tget_class(t) != H5T_COMPOUND) {
        st = tf_fail(TF_ERR_FORMAT, "%s: dataset '%s' is not compound", c->path, name);
        goto done;
    }
    /* HDF5 matches compound members by name and would leave a missing one
     * untouched, so check them all; only those added after 2.3 may be
     * missing, and they stay 0 (calloc). */
    for (int i = 0; i < N_STATS_FIELDS; i++) {
        int idx = H5Tget_member_index(t, tf_pl_stats_fields[i].name);
        H5T_class_t want = tf_pl_stats_fields[i].is_double ? H5T_FLOAT : H5T_INTEGER;
        if (idx < 0 && i >= N_STATS_FIELDS_2_3) {
            H5Eclear2(H5E_DEFAULT);
            continue;
        }
        if (idx < 0 || H5Tget_member_class(t, (unsigned)idx) != want) {
            H5Eclear2(H5E_DEFAULT);
            st = tf_fail(TF_ERR_FORMAT, "%s: dataset '%s' lacks %s member '%s'", c->path, name,
                         class_name(want), tf_pl_stats_fields[i].name);
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
    if ((st = check_chunk_masks(c, d, name, 0, (hsize_t)p->nranks)) != TF_OK)
        goto done;
    if ((mt = tf_pl_stats_type(0)) < 0 ||
        H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, p->all_stats) < 0)
        st = tf_pl_h5_fail(c->path, "cannot read dataset", name);
done:
    tf_pl_close_id(&mt, H5Tclose);
    tf_pl_close_id(&s, H5Sclose);
    tf_pl_close_id(&t, H5Tclose);
    tf_pl_close_id(&d, H5Dclose);
    return st;
}

/* A 1-D compound dataset of exactly n elements into buf, through memory
 * type mt (its members matched by name, every one required). */
static int read_table(const rctx *c, const char *name, hid_t mt, int64_t n, void *buf)
{
    hid_t d;
    int st = open_dset(c, c->root, name, name, &d);
    if (st != TF_OK)
        return st;
    hid_t t = -1, s = -1;
    if ((t = H5Dget_type(d)) < 0 || (s = H5Dget_space(d)) < 0) {
        st = tf_pl_h5_fail(c->path, "cannot inspect dataset", name);
        goto done;
    }
    if (H5Tget_class(t) != H5T_COMPOUND) {
        st = tf_fail(TF_ERR_FORMAT, "%s: dataset '%s' is not compound", c->path, name);
        goto done;
    }
    for (int i = 0; i < H5Tget_nmembers(mt); i++) {
        char *m = H5Tget_member_name(mt, (unsigned)i);
        int idx = m ? H5Tget_member_index(t, m) : -1;
        if (idx < 0 || H5Tget_member_class(t, (unsigned)idx) != H5T_INTEGER) {
            H5Eclear2(H5E_DEFAULT);
            st = tf_fail(TF_ERR_FORMAT, "%s: dataset '%s' lacks integer member '%s'", c->path,
                         name, m ? m : "?");
        }
        if (m)
            H5free_memory(m);
        if (st != TF_OK)
            goto done;
    }
    if (H5Sget_simple_extent_ndims(s) != 1 || H5Sget_simple_extent_npoints(s) != n) {
        st = tf_fail(TF_ERR_FORMAT, "%s: dataset '%s' has %lld elements, expected %lld (nranks%s)",
                     c->path, name, (long long)H5Sget_simple_extent_npoints(s), (long long)n,
                     strcmp(name, PARTS_OFFSETS) == 0 ? " + 1" : "");
        goto done;
    }
    if ((st = check_chunk_masks(c, d, name, 0, (hsize_t)n)) != TF_OK)
        goto done;
    if (H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        st = tf_pl_h5_fail(c->path, "cannot read dataset", name);
done:
    tf_pl_close_id(&s, H5Sclose);
    tf_pl_close_id(&t, H5Tclose);
    tf_pl_close_id(&d, H5Dclose);
    return st;
}

/* Format 3.0: parts/ranks and parts/offsets, checked against each other. */
static int read_part_tables(rctx *c, int nranks)
{
    tf_pl_parts *t = &c->parts;
    t->nranks = nranks;
    t->rank = calloc((size_t)nranks, sizeof *t->rank);
    t->off = calloc(((size_t)nranks + 1) * N_COUNTS, sizeof *t->off);
    if (!t->rank || !t->off)
        return tf_fail(TF_ERR_NOMEM, "%s: out of memory for the tables of %d ranks", c->path,
                       nranks);
    hid_t mt = tf_pl_entry_type(0);
    int st = mt < 0 ? tf_pl_h5_fail(c->path, "cannot make compound type for", PARTS_RANKS)
                    : read_table(c, PARTS_RANKS, mt, nranks, t->rank);
    tf_pl_close_id(&mt, H5Tclose);
    if (st == TF_OK) {
        mt = tf_pl_offsets_type(0);
        st = mt < 0 ? tf_pl_h5_fail(c->path, "cannot make compound type for", PARTS_OFFSETS)
                    : read_table(c, PARTS_OFFSETS, mt, (int64_t)nranks + 1, t->off);
        tf_pl_close_id(&mt, H5Tclose);
    }
    if (st == TF_OK && (st = tf_pl_check_parts(t)) != TF_OK)
        st = tf_fail_prefix(st, "%s", c->path);
    return st;
}

/* Format 2.2: how the stored matrix relates to the matrix read (tf_plan.h).
 * A 2.1 file has none of it: normalisation none, symmetry unknown (0), not
 * transposed. */
static int read_matrix_kind(const rctx *c, hid_t f, int minor, tf_plan *p)
{
    p->normalization = TF_NORM_NONE;
    p->symmetric = p->transposed = 0;
    p->transpose_of = 0;
    if (minor < 2)
        return TF_OK;
    char norm[16];
    int kind;
    int st;
    if ((st = read_attr_str(c, f, "normalization", norm, sizeof norm)) ||
        (st = read_attr_i32(c, f, "", "symmetric", &p->symmetric)) ||
        (st = read_attr_i32(c, f, "", "transposed", &p->transposed)))
        return st;
    if (tf_norm_parse(norm, &kind) != TF_OK)
        return tf_fail(TF_ERR_FORMAT,
                       "%s: attribute 'normalization' = '%s' is not none, gcn or mean", c->path,
                       norm);
    p->normalization = kind;
    /* Values other than 0 and 1, and symmetry of a rectangular matrix, are
     * tf_pl_validate_header's to refuse. */
    if (p->transposed == 1)
        st = read_attr(c, f, "", "transpose_of", H5T_INTEGER, H5T_NATIVE_UINT64, 1,
                       &p->transpose_of);
    return st;
}

/* Format 2.3: what B rows travel as (twoface-plan --comm). Older files
 * were all planned for float32. */
static int read_comm(const rctx *c, hid_t f, int minor, tf_plan *p)
{
    p->comm = TF_PREC_F32;
    if (minor < 3)
        return TF_OK;
    char buf[16];
    int st = read_attr_str(c, f, "comm", buf, sizeof buf);
    if (st == TF_OK && tf_prec_parse(buf, &p->comm) != TF_OK)
        st = tf_fail(TF_ERR_FORMAT, "%s: attribute 'comm' = '%s' is not f32 or bf16", c->path,
                     buf);
    return st;
}

static int read_header(rctx *c, tf_plan *p)
{
    hid_t f = c->root;
    char buf[64];
    htri_t has = H5Aexists(f, "format");
    if (has < 0)
        return tf_pl_h5_fail(c->path, "cannot read the attributes of the root group", "/");
    if (has == 0)
        return tf_fail(TF_ERR_FORMAT, "%s: not a twoface plan (no 'format' attribute)", c->path);
    int st = read_attr_str(c, f, "format", buf, sizeof buf);
    if (st != TF_OK || strcmp(buf, TF_PLAN_FORMAT) != 0)
        return tf_fail(TF_ERR_FORMAT, "%s: not a twoface plan (format is not '%s')", c->path,
                       TF_PLAN_FORMAT);
    int32_t ver[2];
    if ((st = read_attr(c, f, "", "format_version", H5T_INTEGER, H5T_NATIVE_INT32, 2, ver)))
        return st;
    /* 3.0 changed the layout of the parts only: it has everything 2.4 has. */
    int minor = ver[0] == 2 ? ver[1] : 4;
    c->major = ver[0];
    if (ver[0] > TF_PLAN_VERSION_MAJOR)
        return tf_fail(TF_ERR_FORMAT,
                       "%s: plan format version %d.%d is newer than this twoface (%d.x); "
                       "re-plan or upgrade",
                       c->path, ver[0], ver[1], TF_PLAN_VERSION_MAJOR);
    if (ver[0] < 2)
        return tf_fail(TF_ERR_FORMAT,
                       "%s: plan format version %d.%d is older than this twoface (2.x, %d.x) "
                       "reads; re-plan",
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
    /* "auto" names an option, not bands: no plan has it. */
    if (tf_partition_parse(part, &kind) != TF_OK || kind == TF_PART_AUTO)
        return tf_fail(TF_ERR_FORMAT, "%s: attribute 'partition' = '%s' is not rows, nnz, work or metis",
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
    if ((st = read_matrix_kind(c, f, minor, p)) || (st = read_comm(c, f, minor, p)))
        return st;
    p->coeffs.elem_bytes = tf_prec_bytes(p->comm); /* the model the plan was made with */
    for (int i = 0; i < TF_NCOEFFS; i++) {
        if (strcmp(tf_coeff_names[i], "threads") == 0) {
            int32_t th;
            st = read_attr_i32(c, f, "", tf_coeff_names[i], &th);
            p->coeffs.threads = th;
        } else {
            double v = 0;
            /* Plans from before a coefficient existed were made without
             * its term, i.e. with 0. */
            if (!tf_coeff_optional(i) || H5Aexists(f, tf_coeff_names[i]) > 0)
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
    /* The permutation of a metis plan (2.2) sits at the root only: the
     * alternative (c->root is then its group) uses the root's. */
    if (p->partition == TF_PART_METIS && c->root == c->file) {
        void *v = NULL;
        if (p->n != p->m)
            return tf_fail(TF_ERR_FORMAT, "%s: a metis plan must be square, this one is %lld x %lld",
                           c->path, (long long)p->m, (long long)p->n);
        st = read_dset(c, f, "", "perm", K_I64, p->n, p->n, &v, &n);
        p->perm = v;
        if (st == TF_OK) {
            v = NULL;
            st = read_dset(c, f, "", "iperm", K_I64, p->n, p->n, &v, &n);
            p->iperm = v;
        }
        if (st != TF_OK)
            return st;
    }
    if (c->major >= 3 && (st = read_part_tables(c, p->nranks)) != TF_OK)
        return st;
    uint64_t h = tf_pl_summary_checksum(p, p->all_stats, c->major >= 3 ? &c->parts : NULL);
    if (h != stored)
        return tf_fail(TF_ERR_FORMAT,
                       "%s: summary checksum mismatch (stored %016llx, computed %016llx): the "
                       "file is damaged",
                       c->path, (unsigned long long)stored, (unsigned long long)h);
    if ((st = tf_pl_validate_header(p)) != TF_OK)
        return tf_fail_prefix(st, "%s", c->path);
    return TF_OK;
}

static int read_rank(const rctx *c, const tf_plan *p, int rank, tf_rank_plan *rp)
{
    char g[32];
    snprintf(g, sizeof g, RANK_GROUP_FMT, rank);
    htri_t ex = H5Lexists(c->root, g, H5P_DEFAULT);
    if (ex < 0)
        return tf_pl_h5_fail(c->path, "cannot look up group", g);
    if (ex == 0)
        return tf_fail(TF_ERR_FORMAT, "%s: group '%s' (the part of rank %d) is missing", c->path,
                       g, rank);
    hid_t gid = H5Gopen2(c->root, g, H5P_DEFAULT);
    if (gid < 0)
        return tf_pl_h5_fail(c->path, "cannot open group", g);
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
    if ((st = tf_pl_check_rank_scalars(p, rp)) != TF_OK) {
        st = tf_fail_prefix(st, "%s", c->path);
        goto done;
    }
    /* Arrays sharing a count must agree: the first one read fixes it. */
    int known[N_COUNTS] = {0};
    known[N_ROWS1] = known[N_FBUF1] = 1;
    for (int i = 0; i < N_RANK_ARRAYS; i++) {
        int cnt = tf_pl_rank_arrays[i].count;
        int64_t expect = known[cnt] ? tf_pl_count_get(rp, cnt) : -1, n = 0;
        void *v;
        st = read_dset(c, gid, g, tf_pl_rank_arrays[i].name, tf_pl_rank_arrays[i].kind, expect,
                       tf_pl_count_bound(p, rp, cnt), &v, &n);
        if (st != TF_OK)
            goto done;
        tf_pl_array_set(rp, i, v);
        if (!known[cnt]) {
            tf_pl_count_set(rp, cnt, n);
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
    tf_pl_close_id(&gid, H5Gclose);
    return st;
}

/* Format 3.0: rank p's slice of part dataset `name` of count kind cnt,
 * which must hold exactly what the offsets say: their last entry. */
static int read_slice(const rctx *c, int rank, int i, void **data)
{
    const tf_pl_parts *t = &c->parts;
    int kind = tf_pl_rank_arrays[i].kind, cnt = tf_pl_rank_arrays[i].count;
    int64_t at = t->off[(size_t)rank * N_COUNTS + cnt];
    int64_t end = t->off[(size_t)t->nranks * N_COUNTS + cnt];
    int64_t n = tf_pl_entry_count(&t->rank[rank], cnt);
    size_t es = tf_pl_kind_size(kind);
    char name[64];
    snprintf(name, sizeof name, "%s/%s", PARTS_GROUP, tf_pl_rank_arrays[i].name);
    *data = NULL;
    hid_t d;
    int st = open_dset(c, c->root, name, name, &d);
    if (st != TF_OK)
        return st;
    hid_t s = -1, ms = -1;
    int64_t len = 0;
    if ((st = dset_shape(c, d, name, kind, &s, &len)) != TF_OK)
        goto done;
    if (len != end) {
        st = tf_fail(TF_ERR_FORMAT,
                     "%s: dataset '%s' has %lld elements, but %s/%s[%d] = %lld says where it ends",
                     c->path, name, (long long)len, PARTS_OFFSETS, tf_pl_count_names[cnt],
                     t->nranks, (long long)end);
        goto done;
    }
    if (n == 0)
        goto done;
    if ((uint64_t)n > SIZE_MAX / es || !(*data = malloc((size_t)n * es))) {
        st = tf_fail(TF_ERR_NOMEM, "%s: dataset '%s': cannot allocate %lld elements for rank %d",
                     c->path, name, (long long)n, rank);
        goto done;
    }
    hsize_t start = (hsize_t)at, count = (hsize_t)n;
    if ((st = check_chunk_masks(c, d, name, start, count)) != TF_OK) {
        free(*data);
        *data = NULL;
        goto done;
    }
    if (H5Sselect_hyperslab(s, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0 ||
        (ms = H5Screate_simple(1, &count, NULL)) < 0 ||
        H5Dread(d, tf_pl_kind_mtype(kind), ms, s, H5P_DEFAULT, *data) < 0) {
        char det[256];
        tf_pl_h5_detail(det);
        st = tf_fail(TF_ERR_HDF5,
                     "%s: cannot read dataset '%s', rank %d's slice %lld..%lld (HDF5: %s)",
                     c->path, name, rank, (long long)at, (long long)(at + n - 1), det);
        free(*data);
        *data = NULL;
    }
done:
    tf_pl_close_id(&ms, H5Sclose);
    tf_pl_close_id(&s, H5Sclose);
    tf_pl_close_id(&d, H5Dclose);
    return st;
}

static int read_rank3(const rctx *c, const tf_plan *p, int rank, tf_rank_plan *rp)
{
    const tf_pl_rank_entry *e = &c->parts.rank[rank];
    rp->rank = rank;
    rp->row_begin = e->row_begin;
    rp->nrows = e->nrows;
    rp->brow_begin = e->brow_begin;
    rp->nbrows = e->nbrows;
    rp->coll_buf_rows = e->coll_buf_rows;
    rp->fetch_buf_rows = e->fetch_buf_rows;
    for (int k = 0; k < N_COUNTS; k++)
        tf_pl_count_set(rp, k, tf_pl_entry_count(e, k));
    int st = tf_pl_check_rank_scalars(p, rp);
    if (st != TF_OK)
        return tf_fail_prefix(st, "%s: %s[%d]", c->path, PARTS_RANKS, rank);
    /* The +1 kinds follow from the scalars, checked above. */
    for (int k = 0; k < N_COUNTS; k++)
        if (k != N_ROWS1 && k != N_FBUF1 && tf_pl_entry_count(e, k) > tf_pl_count_bound(p, rp, k))
            return tf_fail(TF_ERR_FORMAT,
                           "%s: %s[%d]: %s length %lld, more than the %lld the header allows",
                           c->path, PARTS_RANKS, rank, tf_pl_count_names[k],
                           (long long)tf_pl_entry_count(e, k),
                           (long long)tf_pl_count_bound(p, rp, k));
    for (int i = 0; i < N_RANK_ARRAYS; i++) {
        void *v;
        if ((st = read_slice(c, rank, i, &v)) != TF_OK)
            return st;
        tf_pl_array_set(rp, i, v);
    }
    uint64_t h = tf_plan_rank_checksum(rp);
    if (h != e->checksum)
        return tf_fail(TF_ERR_FORMAT,
                       "%s: rank %d's part: checksum mismatch (stored %016llx, computed %016llx): "
                       "the file is damaged",
                       c->path, rank, (unsigned long long)e->checksum, (unsigned long long)h);
    if ((st = tf_plan_validate_rank(p, rp)) != TF_OK)
        return tf_fail_prefix(st, "%s: rank %d's part", c->path, rank);
    rp->stats = p->all_stats[rank];
    return TF_OK;
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
        st = c->major >= 3 ? read_rank3(c, out, first + i, &out->parts[i])
                           : read_rank(c, out, first + i, &out->parts[i]);
    return st;
}

/* The runner-up plan in group ALT_GROUP: the same checks as the root plan,
 * then tf_plan_check_alt against it. */
static int read_alt(const rctx *c, tf_plan *out, int rank)
{
    char where[PATH_MAX + 32];
    snprintf(where, sizeof where, "%s (group '%s')", c->path, ALT_GROUP);
    rctx a = {where, c->file, -1, 0, {0, NULL, NULL, {0}}};
    if ((a.root = H5Gopen2(c->file, ALT_GROUP, H5P_DEFAULT)) < 0)
        return tf_pl_h5_fail(c->path, "cannot open group", ALT_GROUP);
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
    tf_pl_close_id(&a.root, H5Gclose);
    tf_pl_parts_free(&a.parts);
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
    /* A named pipe would block open() until a writer comes, while the other
     * ranks wait for this one; HDF5 cannot read one anyway (it seeks). */
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISFIFO(sb.st_mode))
        return tf_fail(TF_ERR_IO, "%s: a named pipe, not a plan file", path);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return tf_fail(TF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
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

    tf_pl_quiet_state q;
    tf_pl_quiet_begin(&q);
    rctx c = {path, -1, -1, 0, {0, NULL, NULL, {0}}};
    hid_t fapl = -1;
    /* No file locking: a plan never changes once renamed into place, and
     * parallel file systems without flock() would make every rank fail. */
    if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0 ||
        H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0 ||
        H5Pset_file_locking(fapl, 0, 1) < 0 ||
        (c.file = H5Fopen(path, H5F_ACC_RDONLY, fapl)) < 0) {
        char d[256];
        st = tf_fail(TF_ERR_FORMAT, "%s: cannot open as HDF5, the file is damaged (HDF5: %s)",
                     path, tf_pl_h5_detail(d));
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
        st = tf_pl_h5_fail(path, "cannot look up group", ALT_GROUP);
    else if (has_alt)
        st = read_alt(&c, out, rank);
done:
    if (c.file >= 0 && H5Fclose(c.file) < 0 && st == TF_OK)
        st = tf_pl_h5_fail(path, "cannot close", path);
    tf_pl_close_id(&fapl, H5Pclose);
    tf_pl_parts_free(&c.parts);
    H5Eclear2(H5E_DEFAULT);
    tf_pl_quiet_end(&q);
    if (st != TF_OK)
        tf_plan_free(out);
    return st;
}
