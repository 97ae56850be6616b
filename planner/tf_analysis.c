#include "tf_analysis.h"
#include "tf_error.h"
#include "tf_radix.h"
#include "tf_reuse.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

void tf_analysis_free(tf_analysis *an)
{
    free(an->stripe_base);
    free(an->st_owner);
    free(an->st_first);
    free(an->st_rows);
    free(an->ss_off);
    free(an->ss_stripe);
    free(an->ss_nnz);
    free(an->ss_distinct);
    free(an->ss_runs);
    free(an->ss_run_rows);
    free(an->ss_class);
    free(an->nnz_local);
    free(an->remote_distinct);
    free(an->local_miss);
    free(an->remote_miss);
    free(an->remote_nnz);
    free(an->remote_rows);
    free(an->fetch_miss);
    memset(an, 0, sizeof *an);
}

/* Columns of rank p (with multiplicity) in row order: the remote ones
 * (remote = 1) or the local ones, relative to the band. */
static int64_t band_cols(const tf_csr *a, int64_t r0, int64_t r1, int64_t b0, int64_t b1,
                         int remote, uint32_t *out)
{
    int64_t n = 0;
    for (int64_t e = a->rowptr[r0]; e < a->rowptr[r1]; e++) {
        int64_t j = a->col[e];
        if ((j < b0 || j >= b1) == remote)
            out[n++] = (uint32_t)(remote ? j : j - b0);
    }
    return n;
}

/* Rows of [r0, r1) with at least one nonzero outside the band [b0, b1):
 * the rows the collective kernel adds into when every remote nonzero is
 * collective. */
static int64_t remote_row_count(const tf_csr *a, int64_t r0, int64_t r1, int64_t b0, int64_t b1)
{
    int64_t n = 0;
    for (int64_t i = r0; i < r1; i++)
        for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++)
            if (a->col[e] < b0 || a->col[e] >= b1) {
                n++;
                break;
            }
    return n;
}

/* The two counts over rank p's remote nonzeros (rows [r0, r1), columns
 * outside the band [b0, b1)), from one stable sort of (column, position):
 *  - remote_miss: nonzeros whose B row the collective CSR kernel loads
 *    from memory (tf_reuse_misses_sorted);
 *  - fetch_miss: nonzeros whose row of C the fetch CSC kernel finds neither
 *    in cache nor streamed (tf_reuse.h). The kernel walks them column by
 *    column (fetched B row by fetched B row) with rows ascending within a
 *    column - the order the stable sort leaves the positions in, so their
 *    rows (rows[pos]) are the kernel's sequence.
 * Either is n when its window is 0. cols holds the n remote columns in row
 * order and is left sorted ascending (the stripe analysis needs that);
 * pos, tmp and tpos are scratch of n entries, rows of n and last of
 * r1 - r0 when fetch_window > 0. */
static void remote_misses(const tf_csr *a, int64_t r0, int64_t r1, int64_t b0, int64_t b1,
                          int64_t n, int64_t reuse_window, int64_t fetch_window, uint32_t *cols,
                          uint32_t *pos, uint32_t *tmp, uint32_t *tpos, uint32_t *rows,
                          uint32_t *last, int64_t *remote_miss, int64_t *fetch_miss)
{
    /* Positions and rows travel as 32-bit values; UINT32_MAX is the CSC
     * count's "not read yet". */
    int fits = n > 1 && n < (int64_t)UINT32_MAX;
    int reuse = reuse_window > 0 && fits, fetch = fetch_window > 0 && fits;
    *remote_miss = n;
    *fetch_miss = n;
    if (!reuse && !fetch) {
        tf_radix_sort_u32(cols, NULL, n, tmp, NULL);
        return;
    }
    for (int64_t e = 0; e < n; e++)
        pos[e] = (uint32_t)e;
    if (fetch) {
        int64_t x = 0;
        for (int64_t i = r0; i < r1; i++)
            for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++)
                if (a->col[e] < b0 || a->col[e] >= b1)
                    rows[x++] = (uint32_t)(i - r0);
    }
    tf_radix_sort_u32(cols, pos, n, tmp, tpos);
    if (reuse)
        *remote_miss = tf_reuse_misses_sorted(cols, pos, n, reuse_window);
    if (fetch) {
        for (int64_t e = 0; e < n; e++)
            tmp[e] = rows[pos[e]];
        *fetch_miss =
            tf_reuse_csc_misses(cols, tmp, n, fetch_window, TF_REUSE_STREAM_ROWS, last, r1 - r0);
    }
}

typedef struct {
    int64_t n, cap;
    int32_t *stripe, *distinct, *runs, *run_rows;
    int64_t *nnz;
} stripe_list;

static int list_push(stripe_list *l, int32_t s, int64_t nnz, int32_t distinct, int32_t runs,
                     int32_t run_rows)
{
    if (l->n == l->cap) {
        int64_t cap = l->cap ? 2 * l->cap : 64;
        int32_t *a = realloc(l->stripe, (size_t)cap * sizeof *a);
        if (a) l->stripe = a;
        int32_t *b = realloc(l->distinct, (size_t)cap * sizeof *b);
        if (b) l->distinct = b;
        int32_t *c = realloc(l->runs, (size_t)cap * sizeof *c);
        if (c) l->runs = c;
        int32_t *d = realloc(l->run_rows, (size_t)cap * sizeof *d);
        if (d) l->run_rows = d;
        int64_t *e = realloc(l->nnz, (size_t)cap * sizeof *e);
        if (e) l->nnz = e;
        if (!a || !b || !c || !d || !e)
            return TF_ERR_NOMEM;
        l->cap = cap;
    }
    l->stripe[l->n] = s;
    l->nnz[l->n] = nnz;
    l->distinct[l->n] = distinct;
    l->runs[l->n] = runs;
    l->run_rows[l->n] = run_rows;
    l->n++;
    return TF_OK;
}

static void list_free(stripe_list *l)
{
    free(l->stripe);
    free(l->distinct);
    free(l->runs);
    free(l->run_rows);
    free(l->nnz);
}

int tf_analysis_run(const tf_csr *a, int nranks, const int64_t *row_off,
                    const int64_t *brow_off, int width, int gap, int64_t reuse_window,
                    int64_t fetch_window, tf_analysis *an)
{
    return tf_analysis_run_part(a, 0, 0, nranks, nranks, row_off, brow_off, width, gap,
                                reuse_window, fetch_window, an);
}

int tf_analysis_run_part(const tf_csr *a, int64_t row_base, int p0, int p1, int nranks,
                         const int64_t *row_off, const int64_t *brow_off, int width, int gap,
                         int64_t reuse_window, int64_t fetch_window, tf_analysis *an)
{
    memset(an, 0, sizeof *an);
    if (width < 1)
        return tf_fail(TF_ERR_ARG, "stripe width %d: expected at least 1", width);
    an->nranks = nranks;
    an->width = width;
    an->gap = gap;
    an->row_off = row_off;
    an->brow_off = brow_off;
    an->stripe_base = malloc((size_t)(nranks + 1) * sizeof *an->stripe_base);
    an->nnz_local = calloc((size_t)nranks, sizeof *an->nnz_local);
    an->remote_distinct = calloc((size_t)nranks, sizeof *an->remote_distinct);
    an->ss_off = calloc((size_t)nranks + 1, sizeof *an->ss_off);
    an->local_miss = calloc((size_t)nranks, sizeof *an->local_miss);
    an->remote_miss = calloc((size_t)nranks, sizeof *an->remote_miss);
    an->remote_nnz = calloc((size_t)nranks, sizeof *an->remote_nnz);
    an->remote_rows = calloc((size_t)nranks, sizeof *an->remote_rows);
    an->fetch_miss = calloc((size_t)nranks, sizeof *an->fetch_miss);
    if (!an->stripe_base || !an->nnz_local || !an->remote_distinct || !an->ss_off ||
        !an->local_miss || !an->remote_miss || !an->remote_nnz || !an->remote_rows ||
        !an->fetch_miss)
        goto nomem;
    an->stripe_base[0] = 0;
    for (int q = 0; q < nranks; q++) {
        int64_t nb = brow_off[q + 1] - brow_off[q];
        an->stripe_base[q + 1] = an->stripe_base[q] + (nb + width - 1) / width;
    }
    an->nstripes = an->stripe_base[nranks];
    if (an->nstripes > INT32_MAX)
        return tf_analysis_free(an), tf_fail(TF_ERR_RANGE, "%lld stripes: use a wider stripe",
                                             (long long)an->nstripes);
    int64_t S = an->nstripes;
    an->st_owner = malloc((size_t)(S ? S : 1) * sizeof *an->st_owner);
    an->st_first = malloc((size_t)(S ? S : 1) * sizeof *an->st_first);
    an->st_rows = malloc((size_t)(S ? S : 1) * sizeof *an->st_rows);
    if (!an->st_owner || !an->st_first || !an->st_rows)
        goto nomem;
    for (int q = 0; q < nranks; q++)
        for (int64_t s = an->stripe_base[q]; s < an->stripe_base[q + 1]; s++) {
            int64_t first = brow_off[q] + (s - an->stripe_base[q]) * width;
            int64_t end = first + width < brow_off[q + 1] ? first + width : brow_off[q + 1];
            an->st_owner[s] = q;
            an->st_first[s] = first;
            an->st_rows[s] = (int32_t)(end - first);
        }

    stripe_list *lists = calloc((size_t)nranks, sizeof *lists);
    if (!lists)
        goto nomem;
    int failed = 0;
#pragma omp parallel reduction(| : failed)
    {
        /* Scratch sized for the largest rank, allocated once per thread. */
        int64_t maxnnz = 0;
        for (int p = p0; p < p1; p++) {
            int64_t z = a->rowptr[row_off[p + 1] - row_base] - a->rowptr[row_off[p] - row_base];
            if (z > maxnnz)
                maxnnz = z;
        }
        size_t cap = (size_t)(maxnnz ? maxnnz : 1);
        uint32_t *cols = malloc(cap * sizeof *cols);
        uint32_t *tmp = malloc(cap * sizeof *tmp);
        /* The reuse count's positions and their sort scratch. */
        uint32_t *pos = malloc(cap * sizeof *pos);
        uint32_t *tpos = malloc(cap * sizeof *tpos);
        /* The fetch kernel's C rows and each row's last read, only when
         * its misses are counted. */
        int64_t maxrows = 1;
        for (int p = p0; p < p1; p++)
            if (row_off[p + 1] - row_off[p] > maxrows)
                maxrows = row_off[p + 1] - row_off[p];
        uint32_t *rows = fetch_window > 0 ? malloc(cap * sizeof *rows) : NULL;
        uint32_t *last = fetch_window > 0 ? malloc((size_t)maxrows * sizeof *last) : NULL;
        /* Each local B row's last read, for the local kernel's count. */
        int64_t maxb = 1;
        for (int p = p0; p < p1; p++)
            if (brow_off[p + 1] - brow_off[p] > maxb)
                maxb = brow_off[p + 1] - brow_off[p];
        uint32_t *blast = reuse_window > 0 ? malloc((size_t)maxb * sizeof *blast) : NULL;
        if (!cols || !tmp || !pos || !tpos || (fetch_window > 0 && (!rows || !last)) ||
            (reuse_window > 0 && !blast))
            failed = 1;
#pragma omp for schedule(dynamic, 1)
        for (int p = p0; p < p1; p++) {
            if (failed)
                continue;
            int64_t r0 = row_off[p] - row_base, r1 = row_off[p + 1] - row_base;
            int64_t b0 = brow_off[p], b1 = brow_off[p + 1];
            int64_t nloc = band_cols(a, r0, r1, b0, b1, 0, cols);
            an->nnz_local[p] = nloc;
            an->local_miss[p] = tf_reuse_misses_band(cols, nloc, reuse_window, 0, blast, b1 - b0);
            int64_t nrem = band_cols(a, r0, r1, b0, b1, 1, cols);
            an->remote_nnz[p] = nrem;
            an->remote_rows[p] = remote_row_count(a, r0, r1, b0, b1);
            remote_misses(a, r0, r1, b0, b1, nrem, reuse_window, fetch_window, cols, pos, tmp,
                          tpos, rows, last, &an->remote_miss[p], &an->fetch_miss[p]);
            int q = 0;
            int64_t distinct_total = 0;
            for (int64_t e = 0; e < nrem;) {
                int64_t j = cols[e];
                while (brow_off[q + 1] <= j)
                    q++;
                int64_t s = an->stripe_base[q] + (j - brow_off[q]) / width;
                int64_t send = an->st_first[s] + an->st_rows[s];
                int64_t nnz = 0, distinct = 0, runs = 0, run_rows = 0, last = -1, run_start = -1;
                while (e < nrem && (int64_t)cols[e] < send) {
                    int64_t c = cols[e];
                    if (c != last) {
                        distinct++;
                        if (last < 0 || c - last - 1 > gap) {
                            if (last >= 0)
                                run_rows += last - run_start + 1;
                            runs++;
                            run_start = c;
                        }
                        last = c;
                    }
                    nnz++;
                    e++;
                }
                run_rows += last - run_start + 1;
                distinct_total += distinct;
                if (list_push(&lists[p], (int32_t)s, nnz, (int32_t)distinct, (int32_t)runs,
                              (int32_t)run_rows)) {
                    failed = 1;
                    break;
                }
            }
            an->remote_distinct[p] = distinct_total;
        }
        free(cols);
        free(tmp);
        free(pos);
        free(tpos);
        free(rows);
        free(last);
        free(blast);
    }
    if (!failed) {
        for (int p = 0; p < nranks; p++)
            an->ss_off[p + 1] = an->ss_off[p] + lists[p].n;
        int64_t T = an->ss_off[nranks] ? an->ss_off[nranks] : 1;
        an->ss_stripe = malloc((size_t)T * sizeof *an->ss_stripe);
        an->ss_nnz = malloc((size_t)T * sizeof *an->ss_nnz);
        an->ss_distinct = malloc((size_t)T * sizeof *an->ss_distinct);
        an->ss_runs = malloc((size_t)T * sizeof *an->ss_runs);
        an->ss_run_rows = malloc((size_t)T * sizeof *an->ss_run_rows);
        an->ss_class = calloc((size_t)T, sizeof *an->ss_class);
        if (!an->ss_stripe || !an->ss_nnz || !an->ss_distinct || !an->ss_runs ||
            !an->ss_run_rows || !an->ss_class)
            failed = 1;
        else
            for (int p = 0; p < nranks; p++) {
                size_t n = (size_t)lists[p].n;
                int64_t o = an->ss_off[p];
                if (!n)
                    continue;
                memcpy(an->ss_stripe + o, lists[p].stripe, n * sizeof(int32_t));
                memcpy(an->ss_nnz + o, lists[p].nnz, n * sizeof(int64_t));
                memcpy(an->ss_distinct + o, lists[p].distinct, n * sizeof(int32_t));
                memcpy(an->ss_runs + o, lists[p].runs, n * sizeof(int32_t));
                memcpy(an->ss_run_rows + o, lists[p].run_rows, n * sizeof(int32_t));
            }
    }
    for (int p = 0; p < nranks; p++)
        list_free(&lists[p]);
    free(lists);
    if (failed)
        goto nomem;
    return TF_OK;
nomem:
    tf_analysis_free(an);
    return tf_fail(TF_ERR_NOMEM, "out of memory analysing stripes for %d ranks", nranks);
}
