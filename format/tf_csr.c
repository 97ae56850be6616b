/* MADV_HUGEPAGE is a Linux name, hidden under plain _POSIX_C_SOURCE; the
 * Makefile defines this already, a hand-written compile line may not. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif
#include "tf_csr.h"
#include "tf_error.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Large arrays here are filled front to back right after allocation, and
 * the 4 KiB first-touch page faults can cost more than the filling: 14 us a
 * page on the development VM, i.e. under 300 MB/s, which made them half of
 * the time of reading a Matrix Market file. Transparent huge pages cut that
 * by 50x. madvise is only a hint: nothing changes where THP is off, and
 * arrays under one huge page keep plain malloc. */
#define HUGE_PAGE ((size_t)2 << 20)

static void advise_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    if (!p || bytes < HUGE_PAGE)
        return;
    uintptr_t b = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    uintptr_t e = ((uintptr_t)p + bytes) & ~(uintptr_t)(HUGE_PAGE - 1);
    if (e > b)
        (void)madvise((void *)b, e - b, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

/* Aligned and rounded up to whole huge pages so that none of the array is
 * left on small pages; the rounding wastes less than one huge page. */
static void *big_malloc(size_t bytes)
{
    if (bytes < HUGE_PAGE)
        return malloc(bytes ? bytes : 1);
    size_t rounded = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    void *p;
    if (posix_memalign(&p, HUGE_PAGE, rounded))
        return NULL;
    advise_huge(p, rounded);
    return p;
}

static void *big_realloc(void *p, size_t bytes)
{
    void *q = realloc(p, bytes);
    advise_huge(q, bytes);
    return q;
}

/* Room for cap_hint entries (at least 16), with a values array or without. */
static int coo_init(tf_coo *coo, int64_t nrows, int64_t ncols, int64_t cap_hint, int values)
{
    memset(coo, 0, sizeof *coo);
    coo->nrows = nrows;
    coo->ncols = ncols;
    if (cap_hint < 16)
        cap_hint = 16;
    coo->row = big_malloc((size_t)cap_hint * sizeof *coo->row);
    coo->col = big_malloc((size_t)cap_hint * sizeof *coo->col);
    if (values)
        coo->val = big_malloc((size_t)cap_hint * sizeof *coo->val);
    if (!coo->row || !coo->col || (values && !coo->val)) {
        tf_coo_free(coo);
        return tf_fail(TF_ERR_NOMEM, "cannot allocate %lld matrix entries",
                       (long long)cap_hint);
    }
    coo->cap = cap_hint;
    return TF_OK;
}

int tf_coo_init(tf_coo *coo, int64_t nrows, int64_t ncols, int64_t cap_hint)
{
    return coo_init(coo, nrows, ncols, cap_hint, 1);
}

int tf_coo_init_ones(tf_coo *coo, int64_t nrows, int64_t ncols, int64_t cap_hint)
{
    return coo_init(coo, nrows, ncols, cap_hint, 0);
}

int tf_coo_values(tf_coo *coo)
{
    if (coo->val)
        return TF_OK;
    coo->val = big_malloc((size_t)(coo->cap ? coo->cap : 1) * sizeof *coo->val);
    if (!coo->val)
        return tf_fail(TF_ERR_NOMEM, "cannot allocate the values of %lld matrix entries",
                       (long long)coo->cap);
    for (int64_t e = 0; e < coo->n; e++)
        coo->val[e] = 1.0;
    return TF_OK;
}

int tf_coo_push(tf_coo *coo, int32_t r, int32_t c, double v)
{
    if (coo->n == coo->cap) {
        int64_t cap = coo->cap * 2;
        int32_t *nr = big_realloc(coo->row, (size_t)cap * sizeof *nr);
        if (nr)
            coo->row = nr;
        int32_t *nc = big_realloc(coo->col, (size_t)cap * sizeof *nc);
        if (nc)
            coo->col = nc;
        double *nv = coo->val ? big_realloc(coo->val, (size_t)cap * sizeof *nv) : NULL;
        if (nv)
            coo->val = nv;
        if (!nr || !nc || (coo->val && !nv))
            return tf_fail(TF_ERR_NOMEM, "cannot grow matrix to %lld entries",
                           (long long)cap);
        coo->cap = cap;
    }
    if (!coo->val && v != 1.0) {
        int st = tf_coo_values(coo);
        if (st)
            return st;
    }
    coo->row[coo->n] = r;
    coo->col[coo->n] = c;
    if (coo->val)
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
    m->rowptr = big_malloc(((size_t)nrows + 1) * sizeof *m->rowptr);
    if (m->rowptr)
        memset(m->rowptr, 0, ((size_t)nrows + 1) * sizeof *m->rowptr);
    m->col = big_malloc((size_t)(nnz ? nnz : 1) * sizeof *m->col);
    m->val = big_malloc((size_t)(nnz ? nnz : 1) * sizeof *m->val);
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

/* Stable sort of one row's (col, val) pairs by column. Stable so that
 * duplicates are summed in input order and the float result never depends
 * on the sort. Short rows (most rows of real graphs) use insertion sort;
 * long ones a bottom-up merge sort through the scratch arrays. */
#define SORT_RUN 32

static void insertion_sort(int32_t *c, double *v, int64_t len)
{
    for (int64_t k = 1; k < len; k++) {
        int32_t ck = c[k];
        double vk = v[k];
        int64_t p = k;
        while (p > 0 && c[p - 1] > ck) {
            c[p] = c[p - 1];
            v[p] = v[p - 1];
            p--;
        }
        c[p] = ck;
        v[p] = vk;
    }
}

static void sort_row(int32_t *c, double *v, int64_t len, int32_t *sc, double *sv)
{
    for (int64_t s = 0; s < len; s += SORT_RUN)
        insertion_sort(c + s, v + s, len - s < SORT_RUN ? len - s : SORT_RUN);
    if (len <= SORT_RUN)
        return;
    int32_t *ac = c, *bc = sc;
    double *av = v, *bv = sv;
    for (int64_t w = SORT_RUN; w < len; w *= 2) {
        for (int64_t lo = 0; lo < len; lo += 2 * w) {
            int64_t mid = lo + w < len ? lo + w : len;
            int64_t hi = lo + 2 * w < len ? lo + 2 * w : len;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) {
                if (ac[j] < ac[i]) {
                    bc[o] = ac[j];
                    bv[o++] = av[j++];
                } else {
                    bc[o] = ac[i];
                    bv[o++] = av[i++];
                }
            }
            for (; i < mid; i++, o++) {
                bc[o] = ac[i];
                bv[o] = av[i];
            }
            for (; j < hi; j++, o++) {
                bc[o] = ac[j];
                bv[o] = av[j];
            }
        }
        int32_t *tc = ac;
        ac = bc;
        bc = tc;
        double *tv = av;
        av = bv;
        bv = tv;
    }
    if (ac != c) {
        memcpy(c, ac, (size_t)len * sizeof *c);
        memcpy(v, av, (size_t)len * sizeof *v);
    }
}

/* A row of a matrix without values: the same runs and merges on columns
 * alone (equal columns are equal entries, so stability does not matter,
 * but it costs nothing). A qsort with a comparison call per step took a
 * third of the time of reading an R-MAT graph, whose hub rows are long and
 * arrive unsorted. */
static void sort_cols(int32_t *c, int64_t len, int32_t *sc)
{
    for (int64_t s = 0; s < len; s += SORT_RUN) {
        int64_t m = len - s < SORT_RUN ? len - s : SORT_RUN;
        int32_t *r = c + s;
        for (int64_t k = 1; k < m; k++) {
            int32_t ck = r[k];
            int64_t p = k;
            while (p > 0 && r[p - 1] > ck) {
                r[p] = r[p - 1];
                p--;
            }
            r[p] = ck;
        }
    }
    if (len <= SORT_RUN)
        return;
    int32_t *a = c, *b = sc;
    for (int64_t w = SORT_RUN; w < len; w *= 2) {
        for (int64_t lo = 0; lo < len; lo += 2 * w) {
            int64_t mid = lo + w < len ? lo + w : len;
            int64_t hi = lo + 2 * w < len ? lo + 2 * w : len;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                b[o++] = a[j] < a[i] ? a[j++] : a[i++];
            while (i < mid)
                b[o++] = a[i++];
            while (j < hi)
                b[o++] = a[j++];
        }
        int32_t *t = a;
        a = b;
        b = t;
    }
    if (a != c)
        memcpy(c, a, (size_t)len * sizeof *c);
}

/* Counting sort by row, then a stable sort by column within each row, so
 * the whole thing is O(nnz) apart from the per-row sorts. Files are usually
 * written row-major (or column-major, which the stable row scatter also
 * turns into sorted rows), so the common cases skip the scatter (input
 * already in (row, col) order) or every per-row sort. Fresh memory is kept
 * small on purpose, since first-touch page faults rather than arithmetic
 * dominate on large inputs: columns are scattered straight into the output
 * and compacted in place; only the values need a double-precision buffer,
 * because duplicates are summed in double.
 *
 * With owned (the caller's triplets, given up), each triplet array is freed
 * as soon as the scatter no longer reads it and the output's values are
 * allocated only then, so the triplets and the whole CSR never coexist: a
 * pattern matrix peaks at 12 bytes an entry instead of 16 (the row band a
 * distributed read builds is the largest array of its rank). Sorted input
 * keeps its column array as the output's. */
static int from_coo(tf_csr *out, const tf_coo *coo, tf_coo *owned, int64_t row_base)
{
    int64_t n = coo->n, nr = coo->nrows;
    const int32_t *crow = coo->row, *ccol = coo->col;
    int sorted = 1;
    for (int64_t e = 1; e < n && sorted; e++)
        sorted = crow[e] > crow[e - 1] || (crow[e] == crow[e - 1] && ccol[e] >= ccol[e - 1]);
    memset(out, 0, sizeof *out);
    out->nrows = nr;
    out->ncols = coo->ncols;
    out->nnz = n;
    int st = TF_OK;
    double *tval = NULL, *scratch_v = NULL;
    int32_t *scratch_c = NULL;
    int64_t col_cap = n;
    int64_t *cnt = calloc((size_t)nr + 1, sizeof *cnt);
    if (!cnt) {
        st = tf_fail(TF_ERR_NOMEM, "cannot sort %lld matrix entries", (long long)n);
        goto fail;
    }
    for (int64_t e = 0; e < n; e++)
        cnt[crow[e] + 1]++;
    int64_t maxrow = 0;
    for (int64_t i = 0; i < nr; i++) {
        if (cnt[i + 1] > maxrow)
            maxrow = cnt[i + 1];
        cnt[i + 1] += cnt[i];
    }
    out->rowptr = big_malloc(((size_t)nr + 1) * sizeof *out->rowptr);
    if (out->rowptr)
        memset(out->rowptr, 0, ((size_t)nr + 1) * sizeof *out->rowptr);
    if (owned && sorted) {
        out->col = owned->col; /* compacted in place below */
        col_cap = owned->cap;
        owned->col = NULL;
        free(owned->row);
        owned->row = NULL;
    } else {
        /* Sized for no duplicates (the common case) and shrunk afterwards. */
        out->col = big_malloc((size_t)(n ? n : 1) * sizeof *out->col);
    }
    if (!out->rowptr || (!out->col && n)) {
        st = tf_fail(TF_ERR_NOMEM, "cannot allocate a %lld x %lld matrix with %lld nonzeros",
                     (long long)nr, (long long)coo->ncols, (long long)n);
        goto fail;
    }
    const int32_t *scol = out->col; /* entries grouped by row, columns sorted */
    const double *sval = coo->val;
    if (sorted && !owned) {
        scol = ccol;
    } else if (!sorted) {
        int64_t *pos = malloc((size_t)(nr ? nr : 1) * sizeof *pos);
        if (coo->val)
            tval = big_malloc((size_t)(n ? n : 1) * sizeof *tval);
        if (!pos || (coo->val && !tval)) {
            free(pos);
            st = tf_fail(TF_ERR_NOMEM, "cannot sort %lld matrix entries", (long long)n);
            goto fail;
        }
        memcpy(pos, cnt, (size_t)nr * sizeof *pos);
        if (coo->val) {
            for (int64_t e = 0; e < n; e++) {
                int64_t p = pos[crow[e]]++;
                out->col[p] = ccol[e];
                tval[p] = coo->val[e];
            }
        } else {
            /* Only columns move; every value is 1. */
            for (int64_t e = 0; e < n; e++)
                out->col[pos[crow[e]]++] = ccol[e];
        }
        free(pos);
        if (owned) /* every triplet is in out->col and tval now */
            tf_coo_free(owned);
        for (int64_t i = 0; i < nr; i++) {
            int64_t b = cnt[i], e = cnt[i + 1], k = b + 1;
            while (k < e && out->col[k] >= out->col[k - 1])
                k++;
            if (k >= e)
                continue; /* already sorted: the usual case */
            if (e - b > SORT_RUN && !scratch_c) {
                scratch_c = malloc((size_t)maxrow * sizeof *scratch_c);
                scratch_v = tval ? malloc((size_t)maxrow * sizeof *scratch_v) : NULL;
                if (!scratch_c || (tval && !scratch_v)) {
                    st = tf_fail(TF_ERR_NOMEM, "cannot sort %lld matrix entries", (long long)n);
                    goto fail;
                }
            }
            if (!tval)
                sort_cols(out->col + b, e - b, scratch_c);
            else
                sort_row(out->col + b, tval + b, e - b, scratch_c, scratch_v);
        }
        sval = tval;
    }
    out->val = big_malloc((size_t)(n ? n : 1) * sizeof *out->val);
    if (!out->val) {
        st = tf_fail(TF_ERR_NOMEM, "cannot allocate the values of %lld nonzeros", (long long)n);
        goto fail;
    }
    /* Writes position w from positions >= w, so compacting out->col in place
     * is safe. */
    int64_t w = 0;
    for (int64_t i = 0; i < nr; i++) {
        int64_t b = cnt[i], e = cnt[i + 1];
        for (int64_t k = b; k < e;) {
            double sum = 0.0;
            int32_t c = scol[k];
            if (sval) {
                while (k < e && scol[k] == c)
                    sum += sval[k++];
            } else {
                while (k < e && scol[k] == c)
                    sum += 1.0, k++;
            }
            float f = (float)sum;
            if (!isfinite(f) && isfinite(sum)) {
                st = tf_fail(TF_ERR_RANGE, "entry (%lld, %d) sums to %g, outside float32 range",
                             (long long)(row_base + i) + 1, c + 1, sum);
                goto fail;
            }
            out->col[w] = c;
            out->val[w] = f;
            w++;
        }
        out->rowptr[i + 1] = w;
    }
    if (w < n || col_cap > n) {
        out->nnz = w;
        int32_t *nc = realloc(out->col, (size_t)(w ? w : 1) * sizeof *nc);
        if (nc)
            out->col = nc;
        if (w < n) {
            float *nv = realloc(out->val, (size_t)(w ? w : 1) * sizeof *nv);
            if (nv)
                out->val = nv;
        }
    }
    free(cnt);
    free(tval);
    free(scratch_c);
    free(scratch_v);
    if (owned)
        tf_coo_free(owned);
    return TF_OK;
fail:
    tf_csr_free(out);
    free(cnt);
    free(tval);
    free(scratch_c);
    free(scratch_v);
    if (owned)
        tf_coo_free(owned);
    return st;
}

int tf_csr_from_coo_rows(tf_csr *out, const tf_coo *coo, int64_t row_base)
{
    return from_coo(out, coo, NULL, row_base);
}

int tf_csr_from_coo_take(tf_csr *out, tf_coo *coo, int64_t row_base)
{
    /* The copy keeps the sizes and pointers readable while *coo's arrays
     * are freed one by one. */
    tf_coo view = *coo;
    return from_coo(out, &view, coo, row_base);
}

int tf_csr_from_coo(tf_csr *out, const tf_coo *coo)
{
    return tf_csr_from_coo_rows(out, coo, 0);
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
