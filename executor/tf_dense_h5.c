#include "tf_dense_h5.h"
#include "tf_error.h"
#include "tf_exec.h"
#include "tf_h5zstd.h"
#include "tf_outpath.h"

#include <hdf5.h>

#include <stdint.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* HDF5 prints its error stack by default; our messages say it all. */
static void quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

typedef struct {
    hid_t file, dset, space;
} h5obj;

static void h5_close(h5obj *o)
{
    if (o->space >= 0)
        H5Sclose(o->space);
    if (o->dset >= 0)
        H5Dclose(o->dset);
    if (o->file >= 0)
        H5Fclose(o->file);
    o->file = o->dset = o->space = -1;
}

/* Opens path:dset read-only and checks it is a 2-D float32 dataset. */
static int h5_open_dense(const char *path, const char *dset, h5obj *o, int64_t *rows,
                         int64_t *cols)
{
    o->file = o->dset = o->space = -1;
    quiet();
    int st = tf_h5zstd_register(); /* so zstd-compressed B files read too */
    if (st)
        return st;
    if (access(path, R_OK) != 0)
        return tf_fail(TF_ERR_IO, "%s: cannot open for reading", path);
    /* A named pipe would block open() until a writer comes, while the other
     * ranks wait for this one; HDF5 cannot read one anyway (it seeks). */
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISFIFO(sb.st_mode))
        return tf_fail(TF_ERR_IO, "%s: a named pipe, not an HDF5 file", path);
    o->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (o->file < 0)
        return tf_fail(TF_ERR_IO, "%s: not an HDF5 file", path);
    if (H5Lexists(o->file, dset, H5P_DEFAULT) <= 0) {
        h5_close(o);
        return tf_fail(TF_ERR_FORMAT, "%s: no dataset %s", path, dset);
    }
    o->dset = H5Dopen2(o->file, dset, H5P_DEFAULT);
    if (o->dset < 0) {
        h5_close(o);
        return tf_fail(TF_ERR_FORMAT, "%s: %s is not a dataset", path, dset);
    }
    hid_t type = H5Dget_type(o->dset);
    int ok = type >= 0 && H5Tget_class(type) == H5T_FLOAT && H5Tget_size(type) == 4;
    if (type >= 0)
        H5Tclose(type);
    if (!ok) {
        h5_close(o);
        return tf_fail(TF_ERR_FORMAT, "%s: dataset %s is not float32", path, dset);
    }
    o->space = H5Dget_space(o->dset);
    int nd = o->space >= 0 ? H5Sget_simple_extent_ndims(o->space) : -1;
    hsize_t dims[2] = {0, 0};
    if (nd != 2 || H5Sget_simple_extent_dims(o->space, dims, NULL) != 2) {
        h5_close(o);
        return tf_fail(TF_ERR_FORMAT, "%s: dataset %s is not 2-D (rows x K)", path, dset);
    }
    *rows = (int64_t)dims[0];
    *cols = (int64_t)dims[1];
    return TF_OK;
}

int tf_dense_h5_shape(const char *path, const char *dset, int64_t *rows, int64_t *cols)
{
    h5obj o;
    int st = h5_open_dense(path, dset, &o, rows, cols);
    h5_close(&o);
    return st;
}

/* Reads rows [r0, r0 + n) of an open dataset into out. */
static int read_block(const char *path, const char *dset, h5obj *o, int64_t r0, int64_t n,
                      int64_t k, float *out)
{
    if (n <= 0 || k <= 0)
        return TF_OK;
    hsize_t start[2] = {(hsize_t)r0, 0}, count[2] = {(hsize_t)n, (hsize_t)k};
    hid_t mem = H5Screate_simple(2, count, NULL);
    herr_t e = mem >= 0 ? H5Sselect_hyperslab(o->space, H5S_SELECT_SET, start, NULL, count, NULL)
                        : -1;
    if (e >= 0)
        e = H5Dread(o->dset, H5T_NATIVE_FLOAT, mem, o->space, H5P_DEFAULT, out);
    if (mem >= 0)
        H5Sclose(mem);
    if (e < 0)
        return tf_fail(TF_ERR_HDF5, "%s: cannot read rows %lld..%lld of %s", path, (long long)r0,
                       (long long)(r0 + n - 1), dset);
    return TF_OK;
}

int tf_dense_h5_read_rows(const char *path, const char *dset, int64_t row_begin, int64_t nrows,
                          int64_t k, float *out)
{
    h5obj o;
    int64_t rows, cols;
    int st = h5_open_dense(path, dset, &o, &rows, &cols);
    if (st == TF_OK && (cols != k || row_begin < 0 || row_begin + nrows > rows))
        st = tf_fail(TF_ERR_FORMAT, "%s: dataset %s is %lld x %lld, rows %lld..%lld x %lld needed",
                     path, dset, (long long)rows, (long long)cols, (long long)row_begin,
                     (long long)(row_begin + nrows - 1), (long long)k);
    if (st == TF_OK)
        st = read_block(path, dset, &o, row_begin, nrows, k, out);
    h5_close(&o);
    return st;
}

int tf_dense_h5_read_row_set(const char *path, const char *dset, const int32_t *rows, int64_t n,
                             int64_t k, float *out)
{
    h5obj o;
    int64_t nr, nc;
    int st = h5_open_dense(path, dset, &o, &nr, &nc);
    if (st == TF_OK && nc != k)
        st = tf_fail(TF_ERR_FORMAT, "%s: dataset %s has %lld columns, K = %lld", path, dset,
                     (long long)nc, (long long)k);
    if (st == TF_OK && n > 0 && (rows[0] < 0 || rows[n - 1] >= nr))
        st = tf_fail(TF_ERR_FORMAT, "%s: dataset %s has %lld rows, row %d needed", path, dset,
                     (long long)nr, rows[n - 1]);
    /* Groups of rows with gaps of at most GAP unwanted rows, read whole
     * through a bounce buffer of at most 4096 rows, sized by the widest
     * group: with wide rows (a million features) 4096 of them would not
     * fit, while the rows asked for do. */
    const int64_t GAP = 16, MAXG = 4096;
    float *tmp = NULL;
    int64_t widest = 0;
    for (int64_t a = 0, b; st == TF_OK && a < n; a = b) {
        for (b = a + 1; b < n && rows[b] - rows[b - 1] <= GAP + 1 && rows[b] - rows[a] < MAXG;)
            b++;
        if ((int64_t)rows[b - 1] - rows[a] + 1 > widest)
            widest = (int64_t)rows[b - 1] - rows[a] + 1;
    }
    if (st == TF_OK && n > 0) {
        if (k > 0 && (uint64_t)widest > SIZE_MAX / sizeof *tmp / (uint64_t)k)
            st = tf_fail(TF_ERR_NOMEM, "%s: dataset %s: %lld rows of %lld floats do not fit in "
                         "memory", path, dset, (long long)widest, (long long)k);
        else if (!(tmp = malloc((size_t)widest * (size_t)k * sizeof *tmp)))
            st = tf_fail(TF_ERR_NOMEM, "%s: dataset %s: out of memory for %lld rows of %lld "
                         "floats", path, dset, (long long)widest, (long long)k);
    }
    for (int64_t a = 0; a < n && st == TF_OK;) {
        int64_t b = a + 1;
        while (b < n && rows[b] - rows[b - 1] <= GAP + 1 && rows[b] - rows[a] < MAXG)
            b++;
        int64_t r0 = rows[a], span = (int64_t)rows[b - 1] - r0 + 1;
        st = read_block(path, dset, &o, r0, span, k, tmp);
        for (int64_t x = a; x < b && st == TF_OK; x++)
            memcpy(out + x * k, tmp + ((int64_t)rows[x] - r0) * k, (size_t)k * sizeof *out);
        a = b;
    }
    free(tmp);
    h5_close(&o);
    return st;
}

/* Creates a file with an m x k float32 dataset (contiguous, no filter:
 * readable by any HDF5 tool). */
static int create_file(const char *path, const char *dset, int64_t m, int64_t k,
                       const char *shown)
{
    quiet();
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) {
        if (strcmp(path, shown) == 0)
            return tf_fail(TF_ERR_IO, "%s: cannot create", path);
        return tf_fail(TF_ERR_IO, "%s: cannot create the temporary file %s", shown, path);
    }
    hsize_t dims[2] = {(hsize_t)m, (hsize_t)k};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t d = sp >= 0 ? H5Dcreate2(f, dset, H5T_IEEE_F32LE, sp, H5P_DEFAULT, H5P_DEFAULT,
                                   H5P_DEFAULT)
                      : -1;
    int st = d >= 0 ? TF_OK : tf_fail(TF_ERR_HDF5, "%s: cannot create dataset %s", path, dset);
    if (d >= 0)
        H5Dclose(d);
    if (sp >= 0)
        H5Sclose(sp);
    if (H5Fclose(f) < 0 && st == TF_OK)
        st = tf_fail(TF_ERR_IO, "%s: cannot close", path);
    return st;
}

static int write_rows(const char *path, const char *dset, int64_t r0, int64_t n, int64_t k,
                      const float *data)
{
    quiet();
    if (n <= 0 || k <= 0)
        return TF_OK;
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0)
        return tf_fail(TF_ERR_IO, "%s: cannot open for writing", path);
    hid_t d = H5Dopen2(f, dset, H5P_DEFAULT);
    hid_t sp = d >= 0 ? H5Dget_space(d) : -1;
    hsize_t start[2] = {(hsize_t)r0, 0}, count[2] = {(hsize_t)n, (hsize_t)k};
    hid_t mem = H5Screate_simple(2, count, NULL);
    herr_t e = (sp >= 0 && mem >= 0)
                   ? H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, NULL, count, NULL)
                   : -1;
    if (e >= 0)
        e = H5Dwrite(d, H5T_NATIVE_FLOAT, mem, sp, H5P_DEFAULT, data);
    if (mem >= 0)
        H5Sclose(mem);
    if (sp >= 0)
        H5Sclose(sp);
    if (d >= 0)
        H5Dclose(d);
    if (H5Fclose(f) < 0 && e >= 0)
        return tf_fail(TF_ERR_IO, "%s: cannot close (disk full?)", path);
    if (e < 0)
        return tf_fail(TF_ERR_HDF5, "%s: cannot write rows %lld..%lld", path, (long long)r0,
                       (long long)(r0 + n - 1));
    return TF_OK;
}

int tf_dense_h5_write(const char *path, const char *dset, int64_t rows, int64_t k,
                      const float *data)
{
    int st = create_file(path, dset, rows, k, path);
    if (st == TF_OK)
        st = write_rows(path, dset, 0, rows, k, data);
    return st;
}

int tf_dense_h5_write_dist(MPI_Comm comm, const char *path, const char *dset, int64_t m,
                           int64_t k, int64_t row_begin, int64_t nrows, const float *c)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    tf_outpath out;
    char tmp[sizeof out.tmp] = "";
    int st = TF_OK;
    if (rank == 0) {
        st = tf_outpath_open(&out, path);
        if (st == TF_OK) {
            snprintf(tmp, sizeof tmp, "%s", out.tmp);
            /* HDF5 truncates the empty file and writes through its own
             * descriptor; ours stays open for the fsync of the commit. */
            st = create_file(tmp, dset, m, k, path);
            if (st != TF_OK)
                tf_outpath_abort(&out);
        }
    }
    MPI_Bcast(tmp, (int)sizeof tmp, MPI_CHAR, 0, comm);
    st = tf_agree(comm, st);
    /* One rank after the other: serial HDF5 must not have the file open for
     * writing in two processes at once. */
    for (int r = 0; r < size && st == TF_OK; r++) {
        if (rank == r)
            st = write_rows(tmp, dset, row_begin, nrows, k, c);
        st = tf_agree(comm, st);
    }
    if (rank == 0 && tmp[0]) {
        if (st == TF_OK)
            st = tf_outpath_commit(&out);
        else
            tf_outpath_abort(&out);
    }
    return tf_agree(comm, st);
}
