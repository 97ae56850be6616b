#include "tf_gnn_features.h"
#include "tf_dense_h5.h"
#include "tf_error.h"
#include "tf_gnn_rng.h"
#include "tf_meminfo.h"
#include "tf_mm_read.h"
#include "tf_gnn_text.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

int tf_gnn_features_split(const char *spec, char *file, size_t cap, const char **dset)
{
    const char *exts[] = {".h5:", ".hdf5:"};
    for (int i = 0; i < 2; i++) {
        const char *p = strstr(spec, exts[i]);
        if (p) {
            size_t len = (size_t)(p - spec) + strlen(exts[i]) - 1;
            if (len >= cap)
                return 0;
            memcpy(file, spec, len);
            file[len] = '\0';
            *dset = spec + len + 1;
            return 1;
        }
    }
    return 0;
}

static int rows_mismatch(const char *path, int64_t rows, int64_t n)
{
    return tf_fail(TF_ERR_FORMAT, "%s: %lld rows of features, but the plan's graph has %lld nodes",
                   path, (long long)rows, (long long)n);
}

/* Keeps the rows d->ids of a whole matrix. */
static int take_rows(const tf_csr *all, tf_gnn_data *d)
{
    int64_t nnz = 0;
    for (int64_t i = 0; i < d->nrows; i++)
        nnz += all->rowptr[d->ids[i] + 1] - all->rowptr[d->ids[i]];
    int st = tf_csr_alloc(&d->x, d->nrows, all->ncols, nnz);
    if (st)
        return st;
    int64_t e = 0;
    for (int64_t i = 0; i < d->nrows; i++) {
        int64_t g = d->ids[i];
        int64_t len = all->rowptr[g + 1] - all->rowptr[g];
        memcpy(d->x.col + e, all->col + all->rowptr[g], (size_t)len * sizeof *d->x.col);
        memcpy(d->x.val + e, all->val + all->rowptr[g], (size_t)len * sizeof *d->x.val);
        e += len;
        d->x.rowptr[i + 1] = e;
    }
    return TF_OK;
}

static int read_mm(const char *path, tf_gnn_data *d)
{
    tf_mm_read_options o = TF_MM_READ_OPTIONS_INIT;
    o.progress = 0;
    tf_csr all;
    int st = tf_mm_read(path, &all, &o);
    if (st)
        return st;
    if (all.nrows != d->n)
        st = rows_mismatch(path, all.nrows, d->n);
    else
        st = take_rows(&all, d);
    tf_csr_free(&all);
    return st;
}

/* Dense rows into CSR, zeros dropped (they add nothing to X.W). */
static int dense_to_csr(const float *v, int64_t nrows, int64_t ncols, tf_csr *x)
{
    int64_t nnz = 0;
    for (int64_t i = 0; i < nrows * ncols; i++)
        nnz += v[i] != 0;
    int st = tf_csr_alloc(x, nrows, ncols, nnz);
    if (st)
        return st;
    int64_t e = 0;
    for (int64_t i = 0; i < nrows; i++) {
        for (int64_t j = 0; j < ncols; j++)
            if (v[i * ncols + j] != 0) {
                x->col[e] = (int32_t)j;
                x->val[e++] = v[i * ncols + j];
            }
        x->rowptr[i + 1] = e;
    }
    return TF_OK;
}

typedef struct {
    int64_t id;
    int64_t local;
} id_pos;

static int by_id(const void *a, const void *b)
{
    const id_pos *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* The Matrix Market reader refuses NaN and Inf; an HDF5 dataset must agree,
 * or one NaN turns every loss into NaN. rows[i] is the dataset row of
 * got's row i. */
static int check_finite(const char *file, const char *dset, const float *got,
                        const int32_t *rows, int64_t nr, int64_t cols)
{
    for (int64_t i = 0; i < nr; i++)
        for (int64_t j = 0; j < cols; j++)
            if (!isfinite(got[i * cols + j]))
                return tf_fail(TF_ERR_FORMAT, "%s: dataset %s, row %lld, column %lld (from 0): "
                               "%s is not a finite number; features must be finite",
                               file, dset, (long long)rows[i], (long long)j,
                               isnan(got[i * cols + j]) ? "nan"
                               : got[i * cols + j] > 0 ? "inf" : "-inf");
    return TF_OK;
}

static int read_h5(const char *file, const char *dset, tf_gnn_data *d)
{
    int64_t rows, cols;
    int st = tf_dense_h5_shape(file, dset, &rows, &cols);
    if (st)
        return st;
    if (rows != d->n)
        return rows_mismatch(file, rows, d->n);
    if (cols < 1)
        return tf_fail(TF_ERR_FORMAT, "%s: dataset %s has no columns: every node needs at least "
                       "one feature", file, dset);
    if (cols > TF_MAX_DIM)
        return tf_fail(TF_ERR_RANGE, "%s: dataset %s has %lld columns, more than %d: feature "
                       "columns are 32-bit", file, dset, (long long)cols, TF_MAX_DIM);
    int64_t nr = d->nrows;
    /* The rows as read and in node order, both dense: a few hundred bytes
     * of file (chunks never written) can declare billions of columns. */
    int64_t cells = nr * cols; /* both below 2^31 */
    int64_t bytes = cells > INT64_MAX / 8 ? INT64_MAX : 2 * cells * (int64_t)sizeof(float);
    int st2 = tf_mem_check(bytes, 0);
    if (st2)
        return tf_fail_prefix(st2, "%s: dataset %s: %lld x %lld dense features on this rank",
                              file, dset, (long long)nr, (long long)cols);
    id_pos *ord = malloc((size_t)(nr > 0 ? nr : 1) * sizeof *ord);
    int32_t *sorted = malloc((size_t)(nr > 0 ? nr : 1) * sizeof *sorted);
    float *got = malloc((size_t)(nr > 0 ? nr : 1) * (size_t)(cols > 0 ? cols : 1) * sizeof *got);
    float *v = malloc((size_t)(nr > 0 ? nr : 1) * (size_t)(cols > 0 ? cols : 1) * sizeof *v);
    if (!ord || !sorted || !got || !v)
        st = tf_fail(TF_ERR_NOMEM, "%s: out of memory for %lld x %lld features", file,
                     (long long)nr, (long long)cols);
    if (!st) {
        for (int64_t i = 0; i < nr; i++)
            ord[i] = (id_pos){d->ids[i], i};
        qsort(ord, (size_t)nr, sizeof *ord, by_id);
        for (int64_t i = 0; i < nr; i++)
            sorted[i] = (int32_t)ord[i].id;
        st = nr > 0 ? tf_dense_h5_read_row_set(file, dset, sorted, nr, cols, got) : TF_OK;
    }
    if (!st)
        st = check_finite(file, dset, got, sorted, nr, cols);
    if (!st) {
        for (int64_t i = 0; i < nr; i++)
            memcpy(v + ord[i].local * cols, got + i * cols, (size_t)cols * sizeof *v);
        st = dense_to_csr(v, nr, cols, &d->x);
    }
    free(ord);
    free(sorted);
    free(got);
    free(v);
    return st;
}

int tf_gnn_features_read(const char *spec, tf_gnn_data *d)
{
    char file[4096];
    const char *dset;
    int st;
    if (tf_gnn_features_split(spec, file, sizeof file, &dset))
        st = read_h5(file, dset, d);
    else if (tf_gnn_is_hdf5(spec))
        return tf_fail(TF_ERR_ARG, "%s: this is an HDF5 file; did you mean %s:/dataset?", spec,
                       spec);
    else
        st = read_mm(spec, d);
    if (st == TF_OK && d->x.ncols < 1)
        st = tf_fail(TF_ERR_FORMAT, "%s: no feature columns: every node needs at least one "
                     "feature", spec);
    return st;
}

int tf_gnn_features_random(uint64_t seed, int64_t nfeat, tf_gnn_data *d)
{
    if (nfeat < 1 || nfeat > TF_MAX_DIM)
        return tf_fail(TF_ERR_ARG, "--random-features %lld: expected 1..%d", (long long)nfeat,
                       TF_MAX_DIM);
    int st = tf_csr_alloc(&d->x, d->nrows, nfeat, d->nrows * nfeat);
    if (st)
        return st;
    uint64_t key = tf_gnn_rng_key(seed, 0, TF_GNN_RNG_FEATURES);
    for (int64_t i = 0; i < d->nrows; i++) {
        uint64_t nk = tf_gnn_rng_node(key, (uint64_t)d->ids[i]);
        for (int64_t j = 0; j < nfeat; j++) {
            d->x.col[i * nfeat + j] = (int32_t)j;
            d->x.val[i * nfeat + j] = (float)tf_gnn_rng_u01(nk, (uint64_t)j);
        }
        d->x.rowptr[i + 1] = (i + 1) * nfeat;
    }
    return TF_OK;
}
