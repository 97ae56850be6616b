/* Writing plan files: the HDF5 image is built in memory, then written to a
 * temporary file that is fsync'ed and renamed (docs/plan-format.md,
 * docs/reliability.md). */
#include "tf_plan_layout.h"
#include "tf_plan_write_encode.h"
#include "tf_plan_io.h"
#include "tf_error.h"
#include "tf_h5zstd.h"
#include "tf_partition.h"
#include "tf_outpath.h"

#include <hdf5.h>
#include <zstd.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
/* ------------------------------------------------------------------ */
/* Writing                                                              */

/* What the datasets of one file share (docs/plan-format.md, "Storage
 * settings"): the first empty dataset of each file type, by path, to which
 * every later empty dataset of that type is a hard link, and the creation
 * property lists, one per layout and chunk length, made once. */
#define MAX_EMPTY_TYPES 8
#define MAX_DCPLS 24
#define EMPTY_NONE 1 /* link_empty: no empty dataset of that type yet */
typedef struct {
    int n_empty;
    hid_t empty_type[MAX_EMPTY_TYPES];
    char empty_path[MAX_EMPTY_TYPES][96];
    /* The plan's part layout, for the runner-up's links (shared_arrays). */
    int have_root;
    int64_t root_chunk[N_COUNTS], root_extent[N_COUNTS];
    int n_dcpl;
    struct {
        int kind;      /* storage */
        hsize_t chunk; /* 0 unless chunked */
        hid_t id;
    } dcpl[MAX_DCPLS];
} wshared;

typedef struct {
    const char *path;  /* final path, for messages */
    const char *image; /* name of the in-memory file */
    int level;
    const tf_plan_part_source *src; /* NULL: the plan holds every part */
    wshared *sh;
} wctx;

static int write_attr(const wctx *w, hid_t loc, const char *obj, const char *name, hid_t ftype,
                      hid_t mtype, hsize_t n, const void *v)
{
    char det[256] = "";
    hid_t sp = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, NULL);
    hid_t a = sp < 0 ? -1 : H5Acreate2(loc, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT);
    int ok = a >= 0 && H5Awrite(a, mtype, v) >= 0;
    if (!ok)
        tf_pl_h5_detail(det);
    if (a >= 0 && H5Aclose(a) < 0 && ok) {
        ok = 0;
        tf_pl_h5_detail(det);
    }
    tf_pl_close_id(&sp, H5Sclose);
    if (!ok) {
        char what[160];
        snprintf(what, sizeof what, "%s%s%s", obj, obj[0] ? "/" : "", name);
        return tf_pl_h5_fail_d(w->path, "cannot write attribute", what, det);
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
        st = tf_pl_h5_fail(w->path, "cannot make string type for attribute", name);
    else
        st = write_attr(w, loc, "", name, t, t, 1, s);
    tf_pl_close_id(&t, H5Tclose);
    return st;
}

typedef enum { ST_EMPTY, ST_COMPACT, ST_CHUNKED } storage;

/* Root datasets under COMPACT_BYTES are compact; part datasets (chunk > 0)
 * are always chunked, their ranks' slices on chunk boundaries. */
static storage storage_of(int64_t n, size_t esize, int64_t chunk)
{
    if (n <= 0)
        return ST_EMPTY;
    return !chunk && (size_t)n * esize < COMPACT_BYTES ? ST_COMPACT : ST_CHUNKED;
}

/* An empty dataset of type ftype as a hard link to the first one; an empty
 * dataset holds nothing but its type and shape, and a link costs HDF5 a
 * fraction of a dataset's creation. EMPTY_NONE: none of that type yet. */
static int link_empty(const wctx *w, hid_t loc, const char *obj, const char *name, hid_t ftype)
{
    const wshared *e = w->sh;
    for (int i = 0; i < e->n_empty; i++) {
        htri_t same = H5Tequal(e->empty_type[i], ftype);
        if (same < 0)
            break;
        if (same) {
            if (H5Lcreate_hard(loc, e->empty_path[i], loc, name, H5P_DEFAULT, H5P_DEFAULT) >= 0)
                return TF_OK;
            char what[160];
            snprintf(what, sizeof what, "%s%s%s", obj, obj[0] ? "/" : "", name);
            return tf_pl_h5_fail(w->path, "cannot link empty dataset", what);
        }
    }
    return -EMPTY_NONE;
}

/* The creation property list of a dataset of this storage and chunk
 * length, made at its first use and kept in w->sh (HDF5 copies it into each
 * dataset); -1 on failure. */
static hid_t creation_plist(const wctx *w, storage kind, hsize_t chunk)
{
    wshared *sh = w->sh;
    if (kind != ST_CHUNKED)
        chunk = 0;
    for (int i = 0; i < sh->n_dcpl; i++)
        if (sh->dcpl[i].kind == (int)kind && sh->dcpl[i].chunk == chunk)
            return sh->dcpl[i].id;
    if (sh->n_dcpl == MAX_DCPLS) {
        /* More lengths than a plan has kinds of counts: not expected; the
         * oldest list makes room. */
        H5Pclose(sh->dcpl[0].id);
        memmove(sh->dcpl, sh->dcpl + 1, (MAX_DCPLS - 1) * sizeof sh->dcpl[0]);
        sh->n_dcpl--;
    }
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    /* No access and modification times in the object headers: they would
     * only make two writes of the same plan differ, and cost a clock read
     * and header space per dataset. */
    int ok = dcpl >= 0 && H5Pset_obj_track_times(dcpl, 0) >= 0;
    if (ok && kind == ST_COMPACT) {
        ok = H5Pset_layout(dcpl, H5D_COMPACT) >= 0;
    } else if (ok && kind == ST_CHUNKED) {
        /* Zero-length datasets keep the default contiguous layout: a chunk
         * of size 0 is not allowed. */
        unsigned cd[1] = {(unsigned)w->level};
        ok = H5Pset_chunk(dcpl, 1, &chunk) >= 0 &&
             H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0 &&
             (w->level == 0 ||
              (H5Pset_shuffle(dcpl) >= 0 &&
               H5Pset_filter(dcpl, TF_H5Z_FILTER_ZSTD, H5Z_FLAG_MANDATORY, 1, cd) >= 0)) &&
             H5Pset_fletcher32(dcpl) >= 0;
    }
    if (!ok) {
        tf_pl_close_id(&dcpl, H5Pclose);
        return -1;
    }
    sh->dcpl[sh->n_dcpl].kind = (int)kind;
    sh->dcpl[sh->n_dcpl].chunk = chunk;
    sh->dcpl[sh->n_dcpl++].id = dcpl;
    return dcpl;
}

static void wshared_free(wshared *sh)
{
    for (int i = 0; i < sh->n_dcpl; i++)
        H5Pclose(sh->dcpl[i].id);
    sh->n_dcpl = 0;
}

/* Creates dataset `name`: compact, or chunked with the plan's filter
 * pipeline, in chunks of `chunk` elements (0: CHUNK_BYTES or less), and
 * fills it from `data` through HDF5's filters; with data NULL it is left
 * open in *out for the caller's H5Dwrite_chunk. */
static int write_dset_to(const wctx *w, hid_t loc, const char *obj, const char *name,
                         hid_t ftype, hid_t mtype, size_t esize, int64_t n, const void *data,
                         int64_t chunk_len, hid_t *out)
{
    storage kind = storage_of(n, esize, chunk_len);
    if (kind == ST_EMPTY) {
        int st = link_empty(w, loc, obj, name, ftype);
        if (st != -EMPTY_NONE) {
            if (out)
                *out = -1;
            return st;
        }
    }
    hsize_t dims = (hsize_t)n;
    hid_t sp = H5Screate_simple(1, &dims, NULL);
    int64_t cmax = (int64_t)(CHUNK_BYTES / esize);
    hsize_t chunk = (hsize_t)(chunk_len ? chunk_len : n < cmax ? n : cmax);
    hid_t dcpl = creation_plist(w, kind, chunk);
    hid_t d = -1;
    int ok = sp >= 0 && dcpl >= 0;
    if (ok)
        ok = (d = H5Dcreate2(loc, name, ftype, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0;
    if (ok && kind != ST_EMPTY && data)
        ok = H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0;
    if (ok && kind == ST_EMPTY && w->sh->n_empty < MAX_EMPTY_TYPES) {
        wshared *e = w->sh;
        ssize_t len = H5Iget_name(d, e->empty_path[e->n_empty], sizeof e->empty_path[0]);
        if (len > 0 && (size_t)len < sizeof e->empty_path[0])
            e->empty_type[e->n_empty++] = ftype;
    }
    char det[256] = "";
    if (!ok)
        tf_pl_h5_detail(det);
    if (ok && out) {
        *out = d;
        d = -1;
    }
    if (d >= 0 && H5Dclose(d) < 0 && ok) {
        ok = 0;
        tf_pl_h5_detail(det);
    }
    tf_pl_close_id(&sp, H5Sclose);
    if (!ok) {
        char what[160];
        snprintf(what, sizeof what, "%s%s%s", obj, obj[0] ? "/" : "", name);
        return tf_pl_h5_fail_d(w->path, "cannot write dataset", what, det);
    }
    return TF_OK;
}

static int write_dset(const wctx *w, hid_t loc, const char *obj, const char *name, hid_t ftype,
                      hid_t mtype, size_t esize, int64_t n, const void *data)
{
    return write_dset_to(w, loc, obj, name, ftype, mtype, esize, n, data, 0, NULL);
}

/* Groups are made explicitly, without access times, rather than as the
 * intermediate groups of a dataset path, which would carry times and make
 * two writes of one plan differ. `attrs`: the group holds attributes, kept
 * in its header (MAX_COMPACT_ATTRS). */
static int make_group(const wctx *w, hid_t loc, const char *name, int attrs, hid_t *out)
{
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    *out = -1;
    if (gcpl < 0 || H5Pset_obj_track_times(gcpl, 0) < 0 ||
        (attrs && H5Pset_attr_phase_change(gcpl, MAX_COMPACT_ATTRS, MIN_DENSE_ATTRS) < 0) ||
        (*out = H5Gcreate2(loc, name, H5P_DEFAULT, gcpl, H5P_DEFAULT)) < 0) {
        tf_pl_close_id(&gcpl, H5Pclose);
        return tf_pl_h5_fail(w->path, "cannot create group", name);
    }
    tf_pl_close_id(&gcpl, H5Pclose);
    return TF_OK;
}

/* make_group for a group that is only a folder: closed at once. */
static int make_folder(const wctx *w, hid_t loc, const char *name)
{
    hid_t g;
    int st = make_group(w, loc, name, 0, &g);
    if (st == TF_OK && H5Gclose(g) < 0)
        st = tf_pl_h5_fail(w->path, "cannot close group", name);
    return st;
}

/* `name` in the runner-up's group (loc) as a hard link to the plan's
 * dataset of the same name, at the file's root. */
static int link_to_plan(const wctx *w, hid_t loc, const char *name)
{
    char target[80];
    snprintf(target, sizeof target, "/%s", name);
    if (H5Lcreate_hard(loc, target, loc, name, H5P_DEFAULT, H5P_DEFAULT) < 0)
        return tf_pl_h5_fail(w->path, "cannot link dataset", name);
    return TF_OK;
}

/* A summary dataset of the runner-up that holds what the plan's does (the
 * same bands, most stripe tables): a hard link to the plan's, written
 * first at the file's root. root_data NULL (the plan itself) or different:
 * a dataset of its own. */
static int write_dset_or_link(const wctx *w, hid_t loc, const char *name, hid_t ftype,
                              hid_t mtype, size_t esize, int64_t n, const void *data,
                              const void *root_data, int64_t root_n)
{
    if (root_data && n > 0 && n == root_n && data &&
        memcmp(data, root_data, (size_t)n * esize) == 0)
        return link_to_plan(w, loc, name);
    return write_dset(w, loc, "", name, ftype, mtype, esize, n, data);
}

/* The header of plan p; root: the plan when p is its runner-up, else NULL. */
static int write_header(const wctx *w, hid_t f, const tf_plan *p, const char *date,
                        const tf_rank_stats *stats, const tf_pl_parts *parts, const tf_plan *root)
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
        (st = write_attr_i32(w, f, "", "gap", p->gap)) ||
        (st = write_attr_str(w, f, "normalization", tf_norm_name(p->normalization))) ||
        (st = write_attr_i32(w, f, "", "symmetric", p->symmetric)) ||
        (st = write_attr_i32(w, f, "", "transposed", p->transposed)) ||
        (p->transposed && (st = write_attr_u64(w, f, "", "transpose_of", p->transpose_of))) ||
        (st = write_attr_str(w, f, "comm", tf_prec_name(p->comm))))
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
    if ((st = write_attr_u64(w, f, "", "summary_checksum",
                             tf_pl_summary_checksum(p, stats, parts))))
        return st;

    int64_t P1 = (int64_t)p->nranks + 1, S = p->stripes.n;
    const int64_t S0 = root ? root->stripes.n : -1;
    if ((st = make_folder(w, f, "stripes")) ||
        (st = write_dset_or_link(w, f, "row_offsets", H5T_STD_I64LE, H5T_NATIVE_INT64, 8, P1,
                                 p->row_off, root ? root->row_off : NULL, P1)) ||
        (st = write_dset_or_link(w, f, "brow_offsets", H5T_STD_I64LE, H5T_NATIVE_INT64, 8, P1,
                                 p->brow_off, root ? root->brow_off : NULL, P1)) ||
        (st = write_dset_or_link(w, f, "stripes/owner", H5T_STD_I32LE, H5T_NATIVE_INT32, 4, S,
                                 p->stripes.owner, root ? root->stripes.owner : NULL, S0)) ||
        (st = write_dset_or_link(w, f, "stripes/first", H5T_STD_I64LE, H5T_NATIVE_INT64, 8, S,
                                 p->stripes.first, root ? root->stripes.first : NULL, S0)) ||
        (st = write_dset_or_link(w, f, "stripes/rows", H5T_STD_I32LE, H5T_NATIVE_INT32, 4, S,
                                 p->stripes.rows, root ? root->stripes.rows : NULL, S0)) ||
        (st = write_dset_or_link(w, f, "stripes/recipients", H5T_STD_I32LE, H5T_NATIVE_INT32, 4,
                                 S, p->stripes.recipients,
                                 root ? root->stripes.recipients : NULL, S0)) ||
        (st = write_dset_or_link(w, f, "stripes/fetchers", H5T_STD_I32LE, H5T_NATIVE_INT32, 4, S,
                                 p->stripes.fetchers, root ? root->stripes.fetchers : NULL, S0)))
        return st;
    if (p->perm &&
        ((st = write_dset(w, f, "", "perm", H5T_STD_I64LE, H5T_NATIVE_INT64, 8, p->n, p->perm)) ||
         (st = write_dset(w, f, "", "iperm", H5T_STD_I64LE, H5T_NATIVE_INT64, 8, p->n,
                          p->iperm))))
        return st;
    hid_t ft = tf_pl_stats_type(1), mt = tf_pl_stats_type(0);
    if (ft < 0 || mt < 0)
        st = tf_pl_h5_fail(w->path, "cannot make compound type for", "rank_stats");
    else
        st = write_dset(w, f, "", "rank_stats", ft, mt, (size_t)N_STATS_FIELDS * 8, p->nranks,
                        stats);
    tf_pl_close_id(&ft, H5Tclose);
    tf_pl_close_id(&mt, H5Tclose);
    return st;
}

/* parts/: the tables, the folders and the 21 part datasets, left open in
 * d[] for the chunks; for the runner-up, the arrays in `shared` whose
 * layout is the plan's are hard links to the plan's datasets instead (d[i]
 * = -1: their chunks are in the file already). */
static int write_part_tables(const wctx *w, hid_t loc, const tf_pl_parts *t, uint32_t shared,
                             hid_t d[N_RANK_ARRAYS])
{
    int st;
    if ((st = make_folder(w, loc, PARTS_GROUP)))
        return st;
    hid_t ft = tf_pl_entry_type(1), mt = tf_pl_entry_type(0);
    if (ft < 0 || mt < 0)
        st = tf_pl_h5_fail(w->path, "cannot make compound type for", PARTS_RANKS);
    else
        st = write_dset(w, loc, "", PARTS_RANKS, ft, mt, sizeof(tf_pl_rank_entry), t->nranks,
                        t->rank);
    tf_pl_close_id(&ft, H5Tclose);
    tf_pl_close_id(&mt, H5Tclose);
    if (st)
        return st;
    ft = tf_pl_offsets_type(1);
    mt = tf_pl_offsets_type(0);
    if (ft < 0 || mt < 0)
        st = tf_pl_h5_fail(w->path, "cannot make compound type for", PARTS_OFFSETS);
    else
        st = write_dset(w, loc, "", PARTS_OFFSETS, ft, mt, N_COUNTS * 8,
                        (int64_t)t->nranks + 1, t->off);
    tf_pl_close_id(&ft, H5Tclose);
    tf_pl_close_id(&mt, H5Tclose);
    /* The folders of the array paths ("local/col": "parts/local"), in table order. */
    char folder[64] = "";
    for (int i = 0; i < N_RANK_ARRAYS && st == TF_OK; i++) {
        const char *name = tf_pl_rank_arrays[i].name, *slash = strchr(name, '/');
        int len = slash ? (int)(slash - name) : 0;
        char want[64];
        snprintf(want, sizeof want, "%s/%.*s", PARTS_GROUP, len, name);
        if (len && strcmp(folder, want) != 0) {
            snprintf(folder, sizeof folder, "%s", want);
            st = make_folder(w, loc, folder);
        }
    }
    const int64_t *extent = &t->off[(size_t)t->nranks * N_COUNTS];
    for (int i = 0; i < N_RANK_ARRAYS && st == TF_OK; i++) {
        int k = tf_pl_rank_arrays[i].kind, c = tf_pl_rank_arrays[i].count;
        char name[64];
        snprintf(name, sizeof name, "%s/%s", PARTS_GROUP, tf_pl_rank_arrays[i].name);
        if ((shared >> i & 1u) && w->sh->have_root && extent[c] > 0 &&
            extent[c] == w->sh->root_extent[c] && t->chunk[c] == w->sh->root_chunk[c]) {
            /* The same chunks at the same offsets: the plan's dataset. */
            st = link_to_plan(w, loc, name);
            d[i] = -1;
            continue;
        }
        st = write_dset_to(w, loc, "", name, tf_pl_kind_ftype(k), tf_pl_kind_mtype(k),
                           tf_pl_kind_size(k), extent[c], NULL, t->chunk[c] ? t->chunk[c] : 1,
                           &d[i]);
    }
    if (st == TF_OK && !w->sh->have_root) {
        w->sh->have_root = 1;
        memcpy(w->sh->root_chunk, t->chunk, sizeof w->sh->root_chunk);
        memcpy(w->sh->root_extent, extent, sizeof w->sh->root_extent);
    }
    return st;
}

/* Places rank p's encoded chunks at its offsets. */
static int write_rank_chunks(const wctx *w, const tf_pl_parts *t, hid_t d[N_RANK_ARRAYS],
                             const tf_pl_enc_part *e)
{
    const tf_pl_enc_head *h = &e->h;
    const unsigned char *b = e->bytes;
    const uint32_t *sz = e->sizes;
    for (int i = 0; i < N_RANK_ARRAYS; i++) {
        int c = tf_pl_rank_arrays[i].count;
        hsize_t at = (hsize_t)t->off[(size_t)h->rank * N_COUNTS + c];
        for (int64_t j = 0; j < h->nchunks[i]; j++, at += (hsize_t)t->chunk[c]) {
            if (d[i] >= 0 && H5Dwrite_chunk(d[i], H5P_DEFAULT, 0, &at, *sz, b) < 0) {
                char name[64];
                snprintf(name, sizeof name, "%s/%s", PARTS_GROUP, tf_pl_rank_arrays[i].name);
                return tf_pl_h5_fail(w->path, "cannot write a chunk of dataset", name);
            }
            b += *sz++;
        }
    }
    return TF_OK;
}

/* A part that comes encoded (the distributed planner's ranks encode their
 * own): its scalars are checked against the plan again. */
static int check_head(const wctx *w, const tf_plan *plan, const tf_rank_stats *stats, int i,
                      const tf_pl_enc_head *h)
{
    tf_rank_plan rp;
    tf_pl_enc_scalars(h, &rp);
    int st;
    if (rp.rank != i)
        return tf_fail(TF_ERR_INTERNAL, "%s: part %d handed over as rank %d", w->path, i, rp.rank);
    if ((st = tf_pl_check_rank_scalars(plan, &rp)) != TF_OK)
        return tf_fail_prefix(TF_ERR_INTERNAL, "%s: refusing to write an invalid plan", w->path);
    if (memcmp(&rp.stats, &stats[i], sizeof(tf_rank_stats)) != 0)
        return tf_fail(TF_ERR_INTERNAL, "%s: refusing to write: rank %d's stats differ from "
                                        "all_stats", w->path, i);
    for (int c = 0; c < N_COUNTS; c++)
        if (tf_pl_count_get(&rp, c) != h->counts[c])
            return tf_fail(TF_ERR_INTERNAL, "%s: part %d: %s length %lld, its scalars say %lld",
                           w->path, i, tf_pl_count_names[c], (long long)h->counts[c],
                           (long long)tf_pl_count_get(&rp, c));
    return TF_OK;
}

/* The part tables of `plan`: from its parts (each checked, and hashed for
 * its checksum) or from the heads the source hands over. */
static int make_tables(const wctx *w, const tf_plan *plan, const tf_rank_stats *stats, int alt,
                       tf_pl_parts *t)
{
    memset(t, 0, sizeof *t);
    t->nranks = plan->nranks;
    t->rank = calloc((size_t)plan->nranks, sizeof *t->rank);
    if (!t->rank)
        return tf_fail(TF_ERR_NOMEM, "%s: out of memory for %d ranks", w->path, plan->nranks);
    const tf_pl_enc_head *heads = NULL;
    int st = TF_OK;
    if (w->src && (st = w->src->heads(w->src->ctx, alt, &heads)) != TF_OK)
        return st;
    for (int i = 0; st == TF_OK && i < plan->nranks; i++) {
        if (heads) {
            const tf_pl_enc_head *h = &heads[i];
            if ((st = check_head(w, plan, stats, i, h)) == TF_OK) {
                tf_rank_plan rp;
                tf_pl_enc_scalars(h, &rp);
                tf_pl_entry_of(&rp, h->checksum, &t->rank[i]);
            }
        } else {
            const tf_rank_plan *rp = &plan->parts[i];
            if ((st = tf_plan_validate_rank(plan, rp)) != TF_OK)
                st = tf_fail_prefix(TF_ERR_INTERNAL, "%s: refusing to write an invalid plan",
                                    w->path);
            else
                tf_pl_entry_of(rp, tf_plan_rank_checksum(rp), &t->rank[i]);
        }
    }
    if (st == TF_OK && (st = tf_pl_parts_layout(t)) != TF_OK)
        st = tf_fail_prefix(st, "%s", w->path);
    for (int i = 0; heads && st == TF_OK && i < plan->nranks; i++)
        for (int c = 0; c < N_COUNTS; c++)
            if (heads[i].chunk[c] != t->chunk[c] && heads[i].counts[c] > 0) {
                st = tf_fail(TF_ERR_INTERNAL, "%s: part %d encoded in chunks of %lld for %s, "
                                              "expected %lld", w->path, i,
                             (long long)heads[i].chunk[c], tf_pl_count_names[c],
                             (long long)t->chunk[c]);
                break;
            }
    return st;
}

/* Rank i's part: encoded here from the plan, or handed over encoded by the
 * source; it must be what the tables say. */
static int write_part(const wctx *w, const tf_plan *plan, const tf_pl_parts *t,
                      hid_t d[N_RANK_ARRAYS], int alt, int i)
{
    if (!w->src) {
        tf_pl_enc_part e;
        /* make_tables validated and hashed the part. */
        int st = tf_pl_encode_checked_part(plan, &plan->parts[i], t->rank[i].checksum, w->level,
                                           t->chunk, &e);
        if (st != TF_OK)
            st = tf_fail_prefix(st, "%s", w->path);
        else
            st = write_rank_chunks(w, t, d, &e);
        tf_pl_enc_part_free(&e);
        return st;
    }
    const tf_pl_enc_part *e = NULL;
    const tf_pl_enc_head *heads = NULL;
    int st = w->src->get(w->src->ctx, alt, i, &e);
    if (st == TF_OK)
        st = w->src->heads(w->src->ctx, alt, &heads);
    if (st == TF_OK && (st = tf_pl_enc_check(e)) != TF_OK)
        st = tf_fail_prefix(st, "%s", w->path);
    if (st == TF_OK && memcmp(&e->h, &heads[i], sizeof e->h) != 0)
        st = tf_fail(TF_ERR_INTERNAL, "%s: part %d differs from what its rank announced",
                     w->path, i);
    if (st == TF_OK)
        st = write_rank_chunks(w, t, d, e);
    if (e)
        w->src->release(w->src->ctx, alt, i);
    return st;
}

/* The arrays (bit i: tf_pl_rank_arrays[i]) whose slices are the same in
 * the runner-up `alt` as in `root` on every rank. From the source, its
 * holders compare the encoded chunks; here, holding every part, the arrays:
 * with the same chunk length, which write_part_tables also requires, the
 * two agree (the pipeline is lossless and deterministic), so the file does
 * not depend on who wrote it. */
static uint32_t shared_arrays(const wctx *w, const tf_plan *root, const tf_plan *alt)
{
    if (w->src)
        return w->src->shared ? w->src->shared(w->src->ctx) : 0;
    uint32_t m = (uint32_t)((1ull << N_RANK_ARRAYS) - 1);
    for (int p = 0; p < alt->nranks && m; p++) {
        const tf_rank_plan *a = &root->parts[p], *b = &alt->parts[p];
        for (int i = 0; i < N_RANK_ARRAYS; i++) {
            int c = tf_pl_rank_arrays[i].count;
            int64_t n = tf_pl_count_get(a, c);
            if ((m >> i & 1u) &&
                (n != tf_pl_count_get(b, c) ||
                 (n > 0 && memcmp(tf_pl_array_get(a, i), tf_pl_array_get(b, i),
                                  (size_t)n * tf_pl_kind_size(tf_pl_rank_arrays[i].kind)))))
                m &= ~(1u << i);
        }
    }
    return m;
}

/* One plan (the root's, or the runner-up's in its group, root then being
 * the plan): header, tables, part datasets and every part's chunks. */
static int write_plan(const wctx *w, hid_t loc, const tf_plan *plan, const char *date,
                      const tf_rank_stats *stats, const tf_plan *root)
{
    const int alt = root != NULL;
    tf_pl_parts t;
    hid_t d[N_RANK_ARRAYS];
    for (int i = 0; i < N_RANK_ARRAYS; i++)
        d[i] = -1;
    int st = make_tables(w, plan, stats, alt, &t);
    if (st == TF_OK)
        st = write_header(w, loc, plan, date, stats, &t, root);
    if (st == TF_OK)
        st = write_part_tables(w, loc, &t, alt ? shared_arrays(w, root, plan) : 0, d);
    for (int i = 0; st == TF_OK && i < plan->nranks; i++)
        st = write_part(w, plan, &t, d, alt, i);
    for (int i = 0; i < N_RANK_ARRAYS; i++)
        if (d[i] >= 0 && H5Dclose(d[i]) < 0 && st == TF_OK)
            st = tf_pl_h5_fail(w->path, "cannot close dataset", tf_pl_rank_arrays[i].name);
    tf_pl_parts_free(&t);
    return st;
}

/* --- the temporary file and the signals that must not orphan it --- */

static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
/* Written before the handlers are armed and only read by them: a handler
 * may only call async-signal-safe functions, so everything it needs is
 * prepared here. */
static char sig_tmp_path[sizeof(((tf_outpath *)0)->tmp)];
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

static void utc_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, n, "1970-01-01T00:00:00Z");
}

static int check_plan_to_write(const char *path, const tf_plan *p, const tf_rank_stats **stats,
                               tf_rank_stats **owned, int from_source)
{
    int st = tf_pl_validate_header(p);
    if (st == TF_OK && from_source) {
        /* The parts come one at a time; their heads are checked first (make_tables). */
        if (!p->all_stats)
            return tf_fail(TF_ERR_ARG, "%s: a plan written part by part needs all_stats", path);
        *owned = NULL;
        *stats = p->all_stats;
        return TF_OK;
    }
    if (st == TF_OK && (p->first_rank != 0 || p->n_parts != p->nranks || !p->parts))
        st = tf_fail(TF_ERR_ARG, "plan holds parts %d..%d of %d ranks; a plan file needs all",
                     p->first_rank, p->first_rank + p->n_parts - 1, p->nranks);
    /* Each part's contents are checked before the tables are made (make_tables). */
    for (int i = 0; st == TF_OK && i < p->n_parts; i++)
        if (p->parts[i].rank != i)
            st = tf_fail(TF_ERR_FORMAT, "parts[%d] is rank %d", i, p->parts[i].rank);
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
    uint64_t base = tf_pl_load_le64(img + 12), eof = tf_pl_load_le64(img + 28);
    return base == 0 && eof > 0 && eof <= n ? (size_t)eof : n;
}

/* The core driver grows its image by whole increments and zero-fills
 * each; 4 MiB at once cost the writing rank more than a small plan's whole
 * write (page faults). From encoded parts the data's size is known: the
 * increment is that plus room for the metadata (object headers, chunk
 * indexes), so that one allocation usually holds the file. */
static size_t image_increment(const tf_plan *plan, const tf_plan_part_source *src)
{
    const size_t most = (size_t)4 << 20, least = (size_t)64 << 10;
    if (!src)
        return most;
    double bytes = 0, chunks = 0;
    for (int alt = 0; alt < 2; alt++) {
        const tf_plan *pl = alt ? plan->alt : plan;
        const tf_pl_enc_head *h = NULL;
        if (!pl)
            continue;
        if (src->heads(src->ctx, alt, &h) != TF_OK || !h)
            return most;
        for (int p = 0; p < pl->nranks; p++) {
            bytes += (double)h[p].n_bytes;
            chunks += (double)h[p].n_sizes;
        }
    }
    double want = bytes + 48.0 * chunks + 4096.0 * (double)plan->nranks + (double)least;
    return want >= (double)most ? most : (size_t)want;
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
    if (fapl < 0 || H5Pset_fapl_core(fapl, image_increment(plan, w->src), 0) < 0 ||
        H5Pset_file_image_callbacks(fapl, &cb) < 0 ||
        H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST) < 0 ||
        H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0) {
        int st = tf_pl_h5_fail(w->path, "cannot set up file access for", w->path);
        tf_pl_close_id(&fapl, H5Pclose);
        return st;
    }
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), f = -1;
    if (fcpl < 0 || H5Pset_attr_phase_change(fcpl, MAX_COMPACT_ATTRS, MIN_DENSE_ATTRS) < 0 ||
        H5Pset_obj_track_times(fcpl, 0) < 0 ||
        (f = H5Fcreate(w->image, H5F_ACC_TRUNC, fcpl, fapl)) < 0) {
        int st = tf_pl_h5_fail(w->path, "cannot create in memory", w->path);
        tf_pl_close_id(&fcpl, H5Pclose);
        tf_pl_close_id(&fapl, H5Pclose);
        return st;
    }
    tf_pl_close_id(&fcpl, H5Pclose);
    tf_pl_close_id(&fapl, H5Pclose);
    int st = write_plan(w, f, plan, date, stats, NULL);
    if (st == TF_OK && plan->alt) {
        char where[PATH_MAX + 32];
        snprintf(where, sizeof where, "%s (group '%s')", w->path, ALT_GROUP);
        wctx wa = {where, w->image, w->level, w->src, w->sh};
        hid_t g;
        st = make_group(w, f, ALT_GROUP, 1, &g);
        if (st == TF_OK)
            st = write_plan(&wa, g, plan->alt, date, alt_stats, plan);
        if (g >= 0 && H5Gclose(g) < 0 && st == TF_OK)
            st = tf_pl_h5_fail(w->path, "cannot close group", ALT_GROUP);
    }
    /* The image size, from the end of allocated space after a flush; the
     * close that follows only rewrites metadata in place. */
    ssize_t n = -1;
    if (st == TF_OK &&
        (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0 || (n = H5Fget_file_image(f, NULL, 0)) <= 0))
        st = tf_pl_h5_fail(w->path, "cannot finish", w->path);
    if (H5Fclose(f) < 0 && st == TF_OK)
        st = tf_pl_h5_fail(w->path, "cannot close", w->path);
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
    return tf_plan_write_source(path, plan, zstd_level, NULL);
}

int tf_plan_write_source(const char *path, const tf_plan *plan, int zstd_level,
                         const tf_plan_part_source *src)
{
    if (!path || !path[0] || !plan)
        return tf_fail(TF_ERR_ARG, "tf_plan_write: no path or no plan");
    if (zstd_level < 0 || zstd_level > ZSTD_maxCLevel())
        return tf_fail(TF_ERR_ARG, "%s: zstd level %d is outside 0..%d", path, zstd_level,
                       ZSTD_maxCLevel());
    const tf_rank_stats *stats = NULL, *alt_stats = NULL;
    tf_rank_stats *owned = NULL, *alt_owned = NULL;
    int st = check_plan_to_write(path, plan, &stats, &owned, src != NULL);
    /* The root carries a metis plan's permutation; an alternative uses it. */
    if (st == TF_OK && plan->partition == TF_PART_METIS && !plan->perm && plan->n > 0)
        st = tf_fail(TF_ERR_INTERNAL,
                     "%s: refusing to write an invalid plan: a metis plan without its "
                     "permutation (perm, iperm)",
                     path);
    if (st != TF_OK)
        return st;
    if (plan->alt) {
        st = check_plan_to_write(path, plan->alt, &alt_stats, &alt_owned, src != NULL);
        if (st == TF_OK && (st = tf_plan_check_alt(plan, plan->alt)) != TF_OK)
            st = tf_fail_prefix(TF_ERR_INTERNAL, "%s: refusing to write", path);
        if (st != TF_OK) {
            free(owned);
            free(alt_owned);
            return st;
        }
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
    /* The temporary file is created first, so that an unusable path is
     * reported before the work of encoding. Its name is known only once it
     * exists: signals wait until the handlers know it. */
    sigset_t block, old_mask;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old_mask);
    tf_outpath out;
    st = tf_outpath_open(&out, path);
    if (st == TF_OK)
        signals_arm(out.tmp);
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    if (st == TF_OK) {
        const char *tmp = out.tmp;
        tf_pl_quiet_state q;
        tf_pl_quiet_begin(&q);
        /* The core driver reads an existing file of the name it is given
         * into memory (and HDF5 1.10.8 then leaks that copy), so it gets a
         * name that exists nowhere. */
        char image_name[sizeof out.tmp + 8];
        snprintf(image_name, sizeof image_name, "%s.image", tmp);
        wshared sh = {0};
        wctx w = {path, image_name, zstd_level, src, &sh};
        void *image = NULL;
        size_t size = 0;
        st = build_image(&w, plan, date, stats, alt_stats, &image, &size);
        wshared_free(&sh);
        tf_pl_quiet_end(&q);
        if (st == TF_OK && write_all(out.fd, image, size) < 0)
            st = tf_fail(TF_ERR_IO, "%s: cannot write %s: %s", path, tmp, strerror(errno));
        free(image);
        if (src && src->gate)
            st = src->gate(src->ctx, st);
        if (st == TF_OK)
            st = tf_outpath_commit(&out);
        else
            tf_outpath_abort(&out);
    }
    signals_disarm();
    pthread_mutex_unlock(&write_lock);
    free(owned);
    free(alt_owned);
    return st;
}
