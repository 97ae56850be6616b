#include "tf_gnn_h5.h"
#include "tf_error.h"

#include <string.h>

static void quiet(tf_gnn_h5 *f)
{
    H5Eget_auto2(H5E_DEFAULT, &f->func, &f->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void loud(const tf_gnn_h5 *f) { H5Eset_auto2(H5E_DEFAULT, f->func, f->data); }

int tf_gnn_h5_create(tf_gnn_h5 *f, const char *path)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    quiet(f);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) >= 0)
        f->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    else
        f->file = -1;
    if (fapl >= 0)
        H5Pclose(fapl);
    if (f->file < 0) {
        loud(f);
        return tf_fail(TF_ERR_HDF5, "%s: cannot create the HDF5 file", path);
    }
    return TF_OK;
}

int tf_gnn_h5_open(tf_gnn_h5 *f, const char *path)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    quiet(f);
    f->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f->file < 0) {
        loud(f);
        return tf_fail(TF_ERR_IO, "%s: cannot open it as an HDF5 file", path);
    }
    return TF_OK;
}

int tf_gnn_h5_close(tf_gnn_h5 *f)
{
    int st = TF_OK;
    if (f->file >= 0 && H5Fclose(f->file) < 0)
        st = tf_fail(TF_ERR_HDF5, "%s: closing the HDF5 file failed", f->path);
    f->file = -1;
    loud(f);
    return st;
}

static int put_attr(tf_gnn_h5 *f, const char *name, hid_t type, const void *v)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = sp < 0 ? -1 : H5Acreate2(f->file, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    int ok = a >= 0 && H5Awrite(a, type, v) >= 0;
    if (a >= 0)
        H5Aclose(a);
    if (sp >= 0)
        H5Sclose(sp);
    return ok ? TF_OK : tf_fail(TF_ERR_HDF5, "%s: cannot write attribute %s", f->path, name);
}

int tf_gnn_h5_put_i64(tf_gnn_h5 *f, const char *name, int64_t v)
{
    return put_attr(f, name, H5T_NATIVE_INT64, &v);
}

int tf_gnn_h5_put_u64(tf_gnn_h5 *f, const char *name, uint64_t v)
{
    return put_attr(f, name, H5T_NATIVE_UINT64, &v);
}

int tf_gnn_h5_put_f64(tf_gnn_h5 *f, const char *name, double v)
{
    return put_attr(f, name, H5T_NATIVE_DOUBLE, &v);
}

int tf_gnn_h5_put_str(tf_gnn_h5 *f, const char *name, const char *s)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    int st = t >= 0 && H5Tset_size(t, strlen(s) + 1) >= 0 ? put_attr(f, name, t, s)
                                                         : tf_fail(TF_ERR_HDF5, "%s: string type",
                                                                   f->path);
    if (t >= 0)
        H5Tclose(t);
    return st;
}

int tf_gnn_h5_put_data(tf_gnn_h5 *f, const char *name, const double *v, int64_t rows,
                       int64_t cols)
{
    hsize_t dims[2] = {(hsize_t)rows, (hsize_t)cols};
    hid_t sp = H5Screate_simple(cols > 0 ? 2 : 1, dims, NULL);
    hid_t d = sp < 0 ? -1
                     : H5Dcreate2(f->file, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT,
                                  H5P_DEFAULT);
    int ok = d >= 0 && H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0;
    if (d >= 0)
        H5Dclose(d);
    if (sp >= 0)
        H5Sclose(sp);
    return ok ? TF_OK : tf_fail(TF_ERR_HDF5, "%s: cannot write dataset %s", f->path, name);
}

static int get_attr(tf_gnn_h5 *f, const char *name, hid_t type, void *v)
{
    if (H5Aexists(f->file, name) <= 0)
        return tf_fail(TF_ERR_FORMAT, "%s: attribute %s is missing", f->path, name);
    hid_t a = H5Aopen(f->file, name, H5P_DEFAULT);
    hid_t sp = a < 0 ? -1 : H5Aget_space(a);
    int ok = sp >= 0 && H5Sget_simple_extent_npoints(sp) == 1 && H5Aread(a, type, v) >= 0;
    if (sp >= 0)
        H5Sclose(sp);
    if (a >= 0)
        H5Aclose(a);
    return ok ? TF_OK : tf_fail(TF_ERR_FORMAT, "%s: attribute %s is not one number", f->path,
                                name);
}

int tf_gnn_h5_get_i64(tf_gnn_h5 *f, const char *name, int64_t *v)
{
    return get_attr(f, name, H5T_NATIVE_INT64, v);
}

int tf_gnn_h5_get_u64(tf_gnn_h5 *f, const char *name, uint64_t *v)
{
    return get_attr(f, name, H5T_NATIVE_UINT64, v);
}

int tf_gnn_h5_get_f64(tf_gnn_h5 *f, const char *name, double *v)
{
    return get_attr(f, name, H5T_NATIVE_DOUBLE, v);
}

int tf_gnn_h5_get_str(tf_gnn_h5 *f, const char *name, char *s, size_t n)
{
    if (H5Aexists(f->file, name) <= 0)
        return tf_fail(TF_ERR_FORMAT, "%s: attribute %s is missing", f->path, name);
    hid_t a = H5Aopen(f->file, name, H5P_DEFAULT);
    hid_t ft = a < 0 ? -1 : H5Aget_type(a);
    hid_t mt = H5Tcopy(H5T_C_S1);
    size_t len = ft < 0 ? 0 : H5Tget_size(ft);
    char buf[256] = "";
    int ok = ft >= 0 && H5Tget_class(ft) == H5T_STRING && !H5Tis_variable_str(ft) &&
             len > 0 && len < sizeof buf && mt >= 0 && H5Tset_size(mt, len) >= 0 &&
             H5Aread(a, mt, buf) >= 0;
    if (mt >= 0)
        H5Tclose(mt);
    if (ft >= 0)
        H5Tclose(ft);
    if (a >= 0)
        H5Aclose(a);
    if (!ok)
        return tf_fail(TF_ERR_FORMAT, "%s: attribute %s is not a short string", f->path, name);
    buf[len < sizeof buf ? len : sizeof buf - 1] = '\0';
    snprintf(s, n, "%s", buf);
    return TF_OK;
}

int64_t tf_gnn_h5_data_len(tf_gnn_h5 *f, const char *name)
{
    if (H5Lexists(f->file, name, H5P_DEFAULT) <= 0) {
        tf_fail(TF_ERR_FORMAT, "%s: dataset %s is missing", f->path, name);
        return -1;
    }
    hid_t d = H5Dopen2(f->file, name, H5P_DEFAULT);
    hid_t sp = d < 0 ? -1 : H5Dget_space(d);
    hssize_t cnt = sp < 0 ? -1 : H5Sget_simple_extent_npoints(sp);
    if (sp >= 0)
        H5Sclose(sp);
    if (d >= 0)
        H5Dclose(d);
    if (cnt < 0)
        tf_fail(TF_ERR_FORMAT, "%s: dataset %s cannot be read", f->path, name);
    return (int64_t)cnt;
}

int tf_gnn_h5_get_data(tf_gnn_h5 *f, const char *name, double *v, int64_t n)
{
    if (H5Lexists(f->file, name, H5P_DEFAULT) <= 0)
        return tf_fail(TF_ERR_FORMAT, "%s: dataset %s is missing", f->path, name);
    hid_t d = H5Dopen2(f->file, name, H5P_DEFAULT);
    hid_t sp = d < 0 ? -1 : H5Dget_space(d);
    int rank = sp < 0 ? -1 : H5Sget_simple_extent_ndims(sp);
    hssize_t cnt = sp < 0 ? -1 : H5Sget_simple_extent_npoints(sp);
    int st = TF_OK;
    if (rank != 1 || cnt != n)
        st = tf_fail(TF_ERR_FORMAT, "%s: dataset %s has %lld values, expected %lld", f->path,
                     name, (long long)cnt, (long long)n);
    else if (H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
        st = tf_fail(TF_ERR_HDF5, "%s: cannot read dataset %s", f->path, name);
    if (sp >= 0)
        H5Sclose(sp);
    if (d >= 0)
        H5Dclose(d);
    return st;
}
