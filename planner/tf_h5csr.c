/* HDF5 CSR input. Every reader opens the file read-only with the serial
 * library and reads hyperslabs of its own rows, which is what serial HDF5
 * supports for concurrent readers of one file. Integers of either width are
 * read through HDF5's conversion into int64, values into double. */
#include "tf_h5csr.h"
#include "tf_dcsr.h"
#include "tf_agree_key.h"
#include "tf_error.h"
#include "tf_meminfo.h"

#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const unsigned char h5_magic[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

int tf_h5csr_sniff(const char *path, int *is_h5)
{
    *is_h5 = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return tf_fail(TF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f); /* a pipe: peeking would eat bytes the text reader needs */
        return TF_OK;
    }
    unsigned char b[8];
    size_t got = fread(b, 1, sizeof b, f);
    int err = ferror(f);
    fclose(f);
    if (err)
        return tf_fail(TF_ERR_IO, "%s: cannot read", path);
    *is_h5 = got == sizeof b && memcmp(b, h5_magic, sizeof b) == 0;
    return TF_OK;
}

/* ---- reading ------------------------------------------------------------ */

typedef struct {
    const char *path;
    hid_t file;
    hid_t ds[3]; /* indptr, indices, data (data may be absent: -1) */
    int64_t len[3];
} h5in;

enum { D_INDPTR, D_INDICES, D_DATA };
static const char *const ds_name[3] = {"indptr", "indices", "data"};

static const char *type_name(hid_t t)
{
    H5T_class_t c = H5Tget_class(t);
    size_t s = H5Tget_size(t);
    if (c == H5T_INTEGER) {
        int u = H5Tget_sign(t) == H5T_SGN_NONE;
        switch (s) {
        case 1: return u ? "uint8" : "int8";
        case 2: return u ? "uint16" : "int16";
        case 4: return u ? "uint32" : "int32";
        case 8: return u ? "uint64" : "int64";
        default: return "an integer of unusual width";
        }
    }
    if (c == H5T_FLOAT)
        return s == 2 ? "float16" : s == 4 ? "float32" : s == 8 ? "float64" : "a float of unusual width";
    if (c == H5T_STRING)
        return "a string";
    if (c == H5T_COMPOUND)
        return "a compound type";
    return "a non-numeric type";
}

/* Signed 32/64-bit integers (indptr, indices) or 32/64-bit floats (data). */
static int check_type(const h5in *f, int which)
{
    hid_t t = H5Dget_type(f->ds[which]);
    if (t < 0)
        return tf_fail(TF_ERR_HDF5, "%s: cannot read the type of dataset '%s'", f->path,
                       ds_name[which]);
    H5T_class_t c = H5Tget_class(t);
    size_t s = H5Tget_size(t);
    int ok = which == D_DATA ? c == H5T_FLOAT && (s == 4 || s == 8)
                             : c == H5T_INTEGER && (s == 4 || s == 8) &&
                                   H5Tget_sign(t) == H5T_SGN_2;
    int st = TF_OK;
    if (!ok)
        st = tf_fail(TF_ERR_FORMAT, "%s: dataset '%s' holds %s, expected %s", f->path,
                     ds_name[which], type_name(t),
                     which == D_DATA      ? "float32 or float64"
                     : which == D_INDICES ? "int32 or int64"
                                          : "int64 (or int32)");
    H5Tclose(t);
    return st;
}

static int open_dataset(h5in *f, int which)
{
    f->ds[which] = -1;
    htri_t ex = H5Lexists(f->file, ds_name[which], H5P_DEFAULT);
    if (ex <= 0) {
        if (which == D_DATA)
            return TF_OK; /* a pattern matrix */
        return tf_fail(TF_ERR_FORMAT, "%s: no dataset '%s' (an HDF5 CSR file has indptr, "
                       "indices, optional data, and a 'shape' attribute)", f->path,
                       ds_name[which]);
    }
    f->ds[which] = H5Dopen2(f->file, ds_name[which], H5P_DEFAULT);
    if (f->ds[which] < 0)
        return tf_fail(TF_ERR_FORMAT, "%s: '%s' is not a dataset", f->path, ds_name[which]);
    int st = check_type(f, which);
    if (st)
        return st;
    hid_t sp = H5Dget_space(f->ds[which]);
    int rank = H5Sget_simple_extent_ndims(sp);
    hsize_t d = 0;
    if (rank == 1)
        H5Sget_simple_extent_dims(sp, &d, NULL);
    H5Sclose(sp);
    if (rank != 1)
        return tf_fail(TF_ERR_FORMAT, "%s: dataset '%s' has %d dimensions, expected 1", f->path,
                       ds_name[which], rank);
    f->len[which] = (int64_t)d;
    return TF_OK;
}

/* One 'shape' object: the root attribute (is_attr) or the root dataset. */
static int read_shape_from(h5in *f, int is_attr, int64_t dims[2])
{
    hid_t obj = is_attr ? H5Aopen(f->file, "shape", H5P_DEFAULT)
                        : H5Dopen2(f->file, "shape", H5P_DEFAULT);
    if (obj < 0)
        return tf_fail(TF_ERR_FORMAT, "%s: cannot open 'shape'", f->path);
    hid_t sp = is_attr ? H5Aget_space(obj) : H5Dget_space(obj);
    hid_t t = is_attr ? H5Aget_type(obj) : H5Dget_type(obj);
    int st = TF_OK;
    if (H5Tget_class(t) != H5T_INTEGER || H5Sget_simple_extent_npoints(sp) != 2)
        st = tf_fail(TF_ERR_FORMAT, "%s: 'shape' must be 2 integers (rows, columns)", f->path);
    else if ((is_attr ? H5Aread(obj, H5T_NATIVE_INT64, dims)
                      : H5Dread(obj, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, dims)) < 0)
        st = tf_fail(TF_ERR_HDF5, "%s: cannot read 'shape'", f->path);
    else if (dims[0] < 0 || dims[1] < 0 || dims[0] > TF_MAX_DIM || dims[1] > TF_MAX_DIM)
        st = tf_fail(TF_ERR_RANGE, "%s: shape %lld x %lld out of range 0..%d", f->path,
                     (long long)dims[0], (long long)dims[1], TF_MAX_DIM);
    H5Tclose(t);
    H5Sclose(sp);
    if (is_attr)
        H5Aclose(obj);
    else
        H5Dclose(obj);
    return st;
}

/* The shape: a root attribute as h5py's f.attrs['shape'] = A.shape writes
 * it, or a root dataset of the same two integers. A file with both must
 * say the same in both: which one a writer meant cannot be told. */
static int read_shape(h5in *f, int64_t dims[2])
{
    int has_attr = H5Aexists(f->file, "shape") > 0;
    int has_ds = H5Lexists(f->file, "shape", H5P_DEFAULT) > 0;
    if (!has_attr && !has_ds)
        return tf_fail(TF_ERR_FORMAT, "%s: no 'shape' attribute on the root group "
                       "(2 integers: rows, columns)", f->path);
    int st = read_shape_from(f, has_attr, dims);
    if (st == TF_OK && has_attr && has_ds) {
        int64_t d2[2];
        st = read_shape_from(f, 0, d2);
        if (st == TF_OK && (d2[0] != dims[0] || d2[1] != dims[1]))
            st = tf_fail(TF_ERR_FORMAT,
                         "%s: the 'shape' attribute (%lld x %lld) and the 'shape' dataset "
                         "(%lld x %lld) disagree",
                         f->path, (long long)dims[0], (long long)dims[1], (long long)d2[0],
                         (long long)d2[1]);
    }
    return st;
}

/* count elements of a 1-D dataset from `start`, converted to `mem`. */
static int read_slice(const h5in *f, int which, int64_t start, int64_t count, hid_t mem, void *buf)
{
    if (count == 0)
        return TF_OK;
    hid_t fs = H5Dget_space(f->ds[which]);
    hsize_t st0 = (hsize_t)start, cnt = (hsize_t)count;
    hid_t ms = H5Screate_simple(1, &cnt, NULL);
    herr_t e = fs < 0 || ms < 0 ? -1 : H5Sselect_hyperslab(fs, H5S_SELECT_SET, &st0, NULL, &cnt, NULL);
    if (e >= 0)
        e = H5Dread(f->ds[which], mem, ms, fs, H5P_DEFAULT, buf);
    if (ms >= 0)
        H5Sclose(ms);
    if (fs >= 0)
        H5Sclose(fs);
    if (e < 0)
        return tf_fail(TF_ERR_HDF5, "%s: cannot read %lld entries of '%s' from %lld", f->path,
                       (long long)count, ds_name[which], (long long)start);
    return TF_OK;
}

static void h5in_close(h5in *f)
{
    for (int k = 0; k < 3; k++)
        if (f->ds[k] >= 0)
            H5Dclose(f->ds[k]);
    if (f->file >= 0)
        H5Fclose(f->file);
}

/* The checks of the whole file, which every reader makes alike. */
static int open_file(h5in *f, int64_t dims[2])
{
    int st = TF_OK;
    H5E_BEGIN_TRY
    {
        f->file = H5Fopen(f->path, H5F_ACC_RDONLY, H5P_DEFAULT);
        if (f->file < 0)
            st = tf_fail(TF_ERR_IO, "%s: cannot open as an HDF5 file", f->path);
        for (int k = 0; k < 3 && !st; k++)
            st = open_dataset(f, k);
        if (!st)
            st = read_shape(f, dims);
    }
    H5E_END_TRY;
    if (st)
        return st;
    if (f->len[D_INDPTR] != dims[0] + 1)
        return tf_fail(TF_ERR_FORMAT, "%s: 'indptr' has %lld entries, expected rows + 1 = %lld",
                       f->path, (long long)f->len[D_INDPTR], (long long)dims[0] + 1);
    if (f->ds[D_DATA] >= 0 && f->len[D_DATA] != f->len[D_INDICES])
        return tf_fail(TF_ERR_FORMAT, "%s: 'data' has %lld entries but 'indices' has %lld",
                       f->path, (long long)f->len[D_DATA], (long long)f->len[D_INDICES]);
    int64_t ends[2];
    st = read_slice(f, D_INDPTR, 0, 1, H5T_NATIVE_INT64, &ends[0]);
    if (!st)
        st = read_slice(f, D_INDPTR, dims[0], 1, H5T_NATIVE_INT64, &ends[1]);
    if (st)
        return st;
    if (ends[0] != 0)
        return tf_fail(TF_ERR_FORMAT, "%s: indptr[0] is %lld, expected 0", f->path,
                       (long long)ends[0]);
    if (ends[1] != f->len[D_INDICES])
        return tf_fail(TF_ERR_FORMAT, "%s: indptr[%lld] is %lld, expected the length of "
                       "'indices', %lld", f->path, (long long)dims[0], (long long)ends[1],
                       (long long)f->len[D_INDICES]);
    return TF_OK;
}

/* Bytes an entry of the part holds at the peak of read_rows: its index and
 * value as read (8 + 8), the triplet (4 + 4 + 8) and the CSR it becomes
 * (4 + 4), with room for the build's scratch. */
#define ENTRY_BYTES 48

static int read_rows(h5in *f, const int64_t dims[2], int64_t r0, int64_t r1, tf_csr *loc,
                     int64_t *err_key, int64_t max_memory, int sharers)
{
    int64_t nr = r1 - r0, L = f->len[D_INDICES];
    int64_t *ptr = malloc((size_t)(nr + 1) * sizeof *ptr);
    if (!ptr)
        return tf_fail(TF_ERR_NOMEM, "%s: cannot allocate %lld row pointers", f->path,
                       (long long)nr + 1);
    int st = read_slice(f, D_INDPTR, r0, nr + 1, H5T_NATIVE_INT64, ptr);
    for (int64_t i = 0; i < nr && !st; i++) {
        /* Neighbouring parts share a pointer, so together they check every
         * step; the bounds keep a bad pointer from selecting outside. */
        if (ptr[i + 1] < ptr[i]) {
            *err_key = 1 + r0 + i;
            st = tf_fail(TF_ERR_FORMAT, "%s: indptr[%lld] = %lld < indptr[%lld] = %lld "
                         "(row %lld): indptr must be non-decreasing",
                         f->path, (long long)(r0 + i + 1), (long long)ptr[i + 1],
                         (long long)(r0 + i), (long long)ptr[i], (long long)(r0 + i));
        } else if (ptr[i + 1] > L) {
            *err_key = 1 + r0 + i;
            st = tf_fail(TF_ERR_FORMAT, "%s: indptr[%lld] = %lld (row %lld) is past the end "
                         "of 'indices', %lld entries",
                         f->path, (long long)(r0 + i + 1), (long long)ptr[i + 1],
                         (long long)(r0 + i), (long long)L);
        }
    }
    if (st) {
        free(ptr);
        return st;
    }
    int64_t k0 = ptr[0], cnt = ptr[nr] - ptr[0];
    /* The entries follow indptr, not the file's bytes: a chunked 'indices'
     * that was never written holds 2^31 entries in a few hundred bytes. */
    st = tf_mem_check(cnt > INT64_MAX / ENTRY_BYTES / (sharers > 1 ? sharers : 1)
                          ? INT64_MAX
                          : cnt * ENTRY_BYTES * (sharers > 1 ? sharers : 1),
                      max_memory);
    if (st) {
        free(ptr);
        return tf_fail_prefix(st, "%s: rows %lld..%lld hold %lld entries (%d bytes each while "
                              "read)", f->path, (long long)r0, (long long)r1 - 1, (long long)cnt,
                              ENTRY_BYTES);
    }
    tf_coo coo;
    memset(&coo, 0, sizeof coo);
    st = tf_coo_init(&coo, nr, dims[1], cnt);
    int64_t *idx = NULL;
    double *val = NULL;
    if (!st) {
        idx = malloc((size_t)(cnt ? cnt : 1) * sizeof *idx);
        val = f->ds[D_DATA] >= 0 ? malloc((size_t)(cnt ? cnt : 1) * sizeof *val) : NULL;
        if (!idx || (f->ds[D_DATA] >= 0 && !val))
            st = tf_fail(TF_ERR_NOMEM, "%s: cannot allocate %lld entries", f->path,
                         (long long)cnt);
    }
    if (!st)
        st = read_slice(f, D_INDICES, k0, cnt, H5T_NATIVE_INT64, idx);
    if (!st && val)
        st = read_slice(f, D_DATA, k0, cnt, H5T_NATIVE_DOUBLE, val);
    for (int64_t i = 0; i < nr && !st; i++) {
        for (int64_t k = ptr[i]; k < ptr[i + 1]; k++) {
            int64_t j = idx[k - k0];
            double v = val ? val[k - k0] : 1.0;
            if (j < 0 || j >= dims[1]) {
                *err_key = 1 + r0 + i;
                st = tf_fail(TF_ERR_FORMAT, "%s: indices[%lld] = %lld (row %lld) is outside "
                             "0..%lld", f->path, (long long)k, (long long)j,
                             (long long)(r0 + i), (long long)dims[1] - 1);
                break;
            }
            if (!isfinite(v) || fabs(v) >= 0x1.ffffffp127) {
                *err_key = 1 + r0 + i;
                st = tf_fail(TF_ERR_RANGE, "%s: data[%lld] = %g (row %lld) is not a finite "
                             "float32 value", f->path, (long long)k, v, (long long)(r0 + i));
                break;
            }
            coo.row[coo.n] = (int32_t)i;
            coo.col[coo.n] = (int32_t)j;
            coo.val[coo.n] = v;
            coo.n++;
        }
    }
    free(idx);
    free(val);
    free(ptr);
    if (!st) {
        st = tf_csr_from_coo_take(loc, &coo, r0);
        if (st) {
            *err_key = 1 + r0;
            tf_fail_prefix(st, "%s", f->path);
        }
    }
    if (coo.row)
        tf_coo_free(&coo);
    return st;
}

/* The first row of part k of nparts in bands of equal weight (entries plus
 * rows): the smallest r with indptr[r] + r >= k (nnz + m) / nparts, by a
 * binary search over indptr, a few dozen reads of one entry. Every reader
 * finds the same rows, even in a file whose indptr decreases somewhere,
 * which read_rows then reports from the part that holds the step: two
 * searches share their path until they part, the larger target to the
 * right, so part k + 1 never starts before part k and the parts cover
 * every row once. */
static int band_start(const h5in *f, int64_t m, int nparts, int k, int64_t *r)
{
    *r = k <= 0 ? 0 : m;
    if (k <= 0 || k >= nparts)
        return TF_OK;
    int64_t want = (int64_t)((__int128)(f->len[D_INDICES] + m) * k / nparts);
    int64_t lo = 0, hi = m;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2, v = 0;
        int st = read_slice(f, D_INDPTR, mid, 1, H5T_NATIVE_INT64, &v);
        if (st)
            return st;
        if (v > INT64_MAX - mid || v + mid >= want)
            hi = mid;
        else
            lo = mid + 1;
    }
    *r = lo;
    return TF_OK;
}

int tf_h5csr_read_part(const char *path, int nparts, int part, int64_t max_memory, int sharers,
                       tf_csr *loc, int64_t *m, int64_t *n, int64_t *row0, int64_t *err_key)
{
    memset(loc, 0, sizeof *loc);
    *err_key = TF_KEY_FIRST;
    h5in f = {.path = path, .file = -1, .ds = {-1, -1, -1}};
    int64_t dims[2] = {0, 0};
    int st = open_file(&f, dims);
    int64_t r0 = 0, r1 = 0;
    /* Bands of equal weight rather than rows: a graph numbered by degree
     * puts most of its entries in the first rows (docs/planning.md,
     * "Bands of the read"). */
    if (!st) {
        H5E_BEGIN_TRY
        {
            st = band_start(&f, dims[0], nparts, part, &r0);
            if (!st)
                st = band_start(&f, dims[0], nparts, part + 1, &r1);
        }
        H5E_END_TRY;
    }
    if (!st) {
        /* indptr's slice, then the CSR build's row arrays. */
        int64_t row_bytes = (int64_t)sizeof(int64_t) + TF_CSR_BUILD_ROW_BYTES;
        st = tf_mem_check((r1 - r0 + 1) * row_bytes * (sharers > 1 ? sharers : 1), max_memory);
        if (st && nparts > 1)
            tf_fail_prefix(st, "%s: rows %lld..%lld of a %lld x %lld matrix (%lld bytes a row, "
                           "%d parts read on this node)", path, (long long)r0,
                           (long long)r1 - 1, (long long)dims[0], (long long)dims[1],
                           (long long)row_bytes, sharers > 1 ? sharers : 1);
        else if (st)
            tf_fail_prefix(st, "%s: a %lld x %lld matrix's row arrays (%lld bytes a row)", path,
                           (long long)dims[0], (long long)dims[1], (long long)row_bytes);
        if (!st) {
            H5E_BEGIN_TRY { st = read_rows(&f, dims, r0, r1, loc, err_key, max_memory, sharers); }
            H5E_END_TRY;
        }
        *row0 = r0;
    }
    h5in_close(&f);
    *m = dims[0];
    *n = dims[1];
    return st;
}

int tf_h5csr_read(const char *path, tf_csr *out)
{
    int64_t m, n, row0, key;
    return tf_h5csr_read_part(path, 1, 0, 0, 1, out, &m, &n, &row0, &key);
}

/* ---- writing ------------------------------------------------------------ */

static int write_1d(hid_t file, const char *name, hid_t ftype, hid_t mtype, int64_t len,
                    const void *buf)
{
    hsize_t d = (hsize_t)len;
    hid_t sp = H5Screate_simple(1, &d, NULL);
    hid_t ds = sp < 0 ? -1
                      : H5Dcreate2(file, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t e = ds < 0 ? -1 : len ? H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) : 0;
    if (ds >= 0)
        H5Dclose(ds);
    if (sp >= 0)
        H5Sclose(sp);
    return e < 0 ? tf_fail(TF_ERR_HDF5, "cannot write dataset '%s'", name) : TF_OK;
}

static int check_arrays(int64_t m, int64_t n, const int64_t *indptr, const void *indices,
                        int index_bytes)
{
    if (m < 0 || n < 0 || m > TF_MAX_DIM || n > TF_MAX_DIM)
        return tf_fail(TF_ERR_RANGE, "shape %lld x %lld out of range 0..%d", (long long)m,
                       (long long)n, TF_MAX_DIM);
    if (index_bytes != 4 && index_bytes != 8)
        return tf_fail(TF_ERR_ARG, "index width %d bytes, expected 4 or 8", index_bytes);
    if (indptr[0] != 0)
        return tf_fail(TF_ERR_ARG, "indptr[0] is %lld, expected 0", (long long)indptr[0]);
    for (int64_t i = 0; i < m; i++)
        if (indptr[i + 1] < indptr[i])
            return tf_fail(TF_ERR_ARG, "indptr decreases at row %lld", (long long)i);
    for (int64_t k = 0; k < indptr[m]; k++) {
        int64_t j = index_bytes == 4 ? ((const int32_t *)indices)[k] : ((const int64_t *)indices)[k];
        if (j < 0 || j >= n)
            return tf_fail(TF_ERR_ARG, "column index %lld of entry %lld outside 0..%lld",
                           (long long)j, (long long)k, (long long)n - 1);
    }
    return TF_OK;
}

int tf_h5csr_write(const char *path, int64_t m, int64_t n, const int64_t *indptr,
                   const void *indices, int index_bytes, const void *data, int value_bytes)
{
    if (!path || !indptr || (!indices && indptr[m] > 0))
        return tf_fail(TF_ERR_ARG, "tf_h5csr_write: missing argument");
    int st = check_arrays(m, n, indptr, indices, index_bytes);
    if (!st && !(value_bytes == 0 || value_bytes == 4 || value_bytes == 8))
        st = tf_fail(TF_ERR_ARG, "value width %d bytes, expected 4, 8 or 0 (pattern)", value_bytes);
    if (!st && value_bytes && !data && indptr[m] > 0)
        st = tf_fail(TF_ERR_ARG, "tf_h5csr_write: no data");
    if (st)
        return tf_fail_prefix(st, "%s", path);
    size_t pl = strlen(path);
    char *tmp = malloc(pl + 32);
    if (!tmp)
        return tf_fail(TF_ERR_NOMEM, "%s: cannot allocate a file name", path);
    snprintf(tmp, pl + 32, "%s.tmp%ld", path, (long)getpid());
    int64_t nnz = indptr[m];
    H5E_BEGIN_TRY
    {
        hid_t f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        if (f < 0)
            st = tf_fail(TF_ERR_IO, "%s: cannot create", tmp);
        if (!st)
            st = write_1d(f, "indptr", H5T_STD_I64LE, H5T_NATIVE_INT64, m + 1, indptr);
        if (!st)
            st = index_bytes == 4
                     ? write_1d(f, "indices", H5T_STD_I32LE, H5T_NATIVE_INT32, nnz, indices)
                     : write_1d(f, "indices", H5T_STD_I64LE, H5T_NATIVE_INT64, nnz, indices);
        if (!st && value_bytes)
            st = value_bytes == 4
                     ? write_1d(f, "data", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, nnz, data)
                     : write_1d(f, "data", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, nnz, data);
        if (!st) {
            hsize_t two = 2;
            int64_t dims[2] = {m, n};
            hid_t sp = H5Screate_simple(1, &two, NULL);
            hid_t a = sp < 0 ? -1
                             : H5Acreate2(f, "shape", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
            if (a < 0 || H5Awrite(a, H5T_NATIVE_INT64, dims) < 0)
                st = tf_fail(TF_ERR_HDF5, "cannot write attribute 'shape'");
            if (a >= 0)
                H5Aclose(a);
            if (sp >= 0)
                H5Sclose(sp);
        }
        if (f >= 0 && H5Fclose(f) < 0 && !st)
            st = tf_fail(TF_ERR_IO, "%s: cannot close", tmp);
    }
    H5E_END_TRY;
    if (!st && rename(tmp, path) != 0)
        st = tf_fail(TF_ERR_IO, "%s: cannot rename %s into place: %s", path, tmp, strerror(errno));
    if (st) {
        remove(tmp);
        tf_fail_prefix(st, "%s", path);
    }
    free(tmp);
    return st;
}
