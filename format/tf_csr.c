#include "tf_csr.h"
#include "tf_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int tf_coo_init(tf_coo *coo, int64_t nrows, int64_t ncols, int64_t cap_hint)
{
    memset(coo, 0, sizeof *coo);
    coo->nrows = nrows;
    coo->ncols = ncols;
    if (cap_hint < 16)
        cap_hint = 16;
    coo->row = malloc((size_t)cap_hint * sizeof *coo->row);
    coo->col = malloc((size_t)cap_hint * sizeof *coo->col);
    coo->val = malloc((size_t)cap_hint * sizeof *coo->val);
    if (!coo->row || !coo->col || !coo->val) {
        tf_coo_free(coo);
        return tf_fail(TF_ERR_NOMEM, "cannot allocate %lld matrix entries",
                       (long long)cap_hint);
    }
    coo->cap = cap_hint;
    return TF_OK;
}

int tf_coo_push(tf_coo *coo, int32_t r, int32_t c, double v)
{
    if (coo->n == coo->cap) {
        int64_t cap = coo->cap * 2;
        int32_t *nr = realloc(coo->row, (size_t)cap * sizeof *nr);
        if (nr)
            coo->row = nr;
        int32_t *nc = realloc(coo->col, (size_t)cap * sizeof *nc);
        if (nc)
            coo->col = nc;
        double *nv = realloc(coo->val, (size_t)cap * sizeof *nv);
        if (nv)
            coo->val = nv;
        if (!nr || !nc || !nv)
            return tf_fail(TF_ERR_NOMEM, "cannot grow matrix to %lld entries",
                           (long long)cap);
        coo->cap = cap;
    }
    coo->row[coo->n] = r;
    coo->col[coo->n] = c;
    coo->val[coo->n] = v;
    coo->n++;
    return TF_OK;
}

void tf_coo_free(tf_coo *coo)
{
    free(coo->row);
    free(coo->col);
    free(coo->val);
    memset(coo, 0, sizeof *coo);
}

int tf_csr_alloc(tf_csr *m, int64_t nrows, int64_t ncols, int64_t nnz)
{
    memset(m, 0, sizeof *m);
    m->nrows = nrows;
    m->ncols = ncols;
    m->nnz = nnz;
    m->rowptr = calloc((size_t)nrows + 1, sizeof *m->rowptr);
    m->col = malloc((size_t)(nnz ? nnz : 1) * sizeof *m->col);
    m->val = malloc((size_t)(nnz ? nnz : 1) * sizeof *m->val);
    if (!m->rowptr || !m->col || !m->val) {
        tf_csr_free(m);
        return tf_fail(TF_ERR_NOMEM, "cannot allocate a %lld x %lld matrix with %lld nonzeros",
                       (long long)nrows, (long long)ncols, (long long)nnz);
    }
    return TF_OK;
}

void tf_csr_free(tf_csr *m)
{
    free(m->rowptr);
    free(m->col);
    free(m->val);
    memset(m, 0, sizeof *m);
}

/* Counting sort by row, then an insertion-free per-row sort by column: rows of
 * real graphs are short, and a counting pass keeps the whole thing O(nnz)
 * apart from the per-row sorts. */
static int cmp_colval(const void *a, const void *b)
{
    const int32_t ca = *(const int32_t *)a, cb = *(const int32_t *)b;
    return (ca > cb) - (ca < cb);
}

typedef struct {
    int32_t col;
    int32_t pad;
    double val;
} colval;

int tf_csr_from_coo(tf_csr *out, const tf_coo *coo)
{
    int64_t n = coo->n, nr = coo->nrows;
    int64_t *cnt = calloc((size_t)nr + 1, sizeof *cnt);
    colval *tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
    if (!cnt || !tmp) {
        free(cnt);
        free(tmp);
        return tf_fail(TF_ERR_NOMEM, "cannot sort %lld matrix entries", (long long)n);
    }
    for (int64_t e = 0; e < n; e++)
        cnt[coo->row[e] + 1]++;
    for (int64_t i = 0; i < nr; i++)
        cnt[i + 1] += cnt[i];
    int64_t *pos = malloc((size_t)(nr ? nr : 1) * sizeof *pos);
    if (!pos) {
        free(cnt);
        free(tmp);
        return tf_fail(TF_ERR_NOMEM, "cannot sort %lld matrix entries", (long long)n);
    }
    memcpy(pos, cnt, (size_t)nr * sizeof *pos);
    for (int64_t e = 0; e < n; e++) {
        int64_t p = pos[coo->row[e]]++;
        tmp[p].col = coo->col[e];
        tmp[p].pad = 0;
        tmp[p].val = coo->val[e];
    }
    free(pos);
    /* Count unique entries per row after sorting, to size the output. */
    int64_t uniq = 0;
    for (int64_t i = 0; i < nr; i++) {
        int64_t b = cnt[i], e = cnt[i + 1];
        qsort(tmp + b, (size_t)(e - b), sizeof *tmp, cmp_colval);
        for (int64_t k = b; k < e; k++)
            if (k == b || tmp[k].col != tmp[k - 1].col)
                uniq++;
    }
    int st = tf_csr_alloc(out, nr, coo->ncols, uniq);
    if (st) {
        free(cnt);
        free(tmp);
        return st;
    }
    int64_t w = 0;
    for (int64_t i = 0; i < nr; i++) {
        int64_t b = cnt[i], e = cnt[i + 1];
        for (int64_t k = b; k < e;) {
            double sum = 0.0;
            int32_t c = tmp[k].col;
            while (k < e && tmp[k].col == c)
                sum += tmp[k++].val;
            float f = (float)sum;
            if (!isfinite(f) && isfinite(sum)) {
                free(cnt);
                free(tmp);
                tf_csr_free(out);
                return tf_fail(TF_ERR_RANGE,
                               "entry (%lld, %d) sums to %g, outside float32 range",
                               (long long)i + 1, c + 1, sum);
            }
            out->col[w] = c;
            out->val[w] = f;
            w++;
        }
        out->rowptr[i + 1] = w;
    }
    free(cnt);
    free(tmp);
    return TF_OK;
}

int tf_csr_validate(const tf_csr *m)
{
    if (m->nrows < 0 || m->ncols < 0 || m->nrows > TF_MAX_DIM || m->ncols > TF_MAX_DIM)
        return tf_fail(TF_ERR_FORMAT, "matrix dimensions %lld x %lld out of range",
                       (long long)m->nrows, (long long)m->ncols);
    if (m->rowptr[0] != 0 || m->rowptr[m->nrows] != m->nnz)
        return tf_fail(TF_ERR_FORMAT, "row pointers do not span 0..%lld", (long long)m->nnz);
    for (int64_t i = 0; i < m->nrows; i++) {
        if (m->rowptr[i + 1] < m->rowptr[i])
            return tf_fail(TF_ERR_FORMAT, "row pointer decreases at row %lld", (long long)i);
        for (int64_t k = m->rowptr[i]; k < m->rowptr[i + 1]; k++) {
            if (m->col[k] < 0 || m->col[k] >= m->ncols)
                return tf_fail(TF_ERR_FORMAT, "column %d of row %lld outside 0..%lld",
                               m->col[k], (long long)i, (long long)m->ncols - 1);
            if (k > m->rowptr[i] && m->col[k] <= m->col[k - 1])
                return tf_fail(TF_ERR_FORMAT, "columns of row %lld not sorted and unique",
                               (long long)i);
        }
    }
    return TF_OK;
}
