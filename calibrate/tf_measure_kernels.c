/* gamma_local, gamma_coll, gamma_fetch: time per nonzero per column of the
 * executor's kernels (executor/tf_kernels.h) on synthetic parts shaped like
 * each half's data:
 *  - local: CSR over the rank's own B band (square, mean degree 8), C
 *    overwritten (add = 0), as the local part is computed first;
 *  - collective: CSR over a collective buffer half as tall (received
 *    stripes), mean degree 3 (remote edges are fewer), added into C;
 *  - fetch: CSC over fetched rows, a quarter of the band (mean column
 *    degree 2: a fetched row is usually wanted by one or two local rows),
 *    into a compact accumulator, called run by run (8 columns) as the
 *    executor does when runs land.
 * Threads as in the executor's two-group SpMM: the CSR halves on the
 * collective group (threads - 1 threads, or 1 when threads == 1, split over
 * 64-row blocks), the CSC kernel on one fetch thread. Every rank computes at
 * once, so an oversubscribed node's sharing of cores is in the numbers.
 * The CSR kernels' time depends on where a nonzero's B row comes from: a
 * row read recently is in cache, others come from memory at about 8x the
 * time. Each CSR point's nonzeros are split by the planner's own reuse
 * count (tf_reuse.h, with the level-2 cache of this machine), one more
 * point per CSR kernel reads a band of 256 B rows that always stays in
 * cache, and the local and collective points are fitted together:
 * t = (gamma * misses + gamma_cached * hits + gamma_row * rows) * K, gamma
 * per kernel, gamma_cached and gamma_row shared (the same loop reading a
 * row it has in cache, and loading and storing a row of C). Rows and
 * nonzeros go together on a band of fixed degree, so one more point per
 * CSR kernel has short rows (2 nonzeros on average for the local kernel,
 * a road network's; 1 for the collective one) at about the nonzeros of a
 * band point over the same B band: that separates the cost per row from
 * the cost per nonzero.
 * The fetch kernel's time depends on where the row of C it adds into comes
 * from in the same way: its points' nonzeros are split by the planner's
 * count over the C rows in column order (neither reused nor streamed:
 * tf_reuse_csc_misses), one more point spreads m fetched rows over 4m rows
 * of C (16x the band point's; rows from memory) and one adds many fetched
 * rows into 256 rows of C (always in cache), and the fit is
 * t = (gamma_fetch * misses + gamma_fetch_cached * hits) * K. */
#include "tf_calibrate.h"
#include "tf_dense.h"
#include "tf_error.h"
#include "tf_kernels.h"
#include "tf_reuse.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROW_BLOCK 64
#define RUN_COLS 8
#define TF_CAL_MAX_REPS 64 /* repetitions per point, at most */
#define HOT_BROWS 256      /* B rows of the in-cache point: 128 KiB at K = 128 */
#define HOT_ROWS 16384     /* its C rows: enough work to time */

enum { KER_LOCAL = 0, KER_COLL = 1, KER_FETCH = 2, NKER = 3 };
/* Shapes of a point: a band of the kernel's usual degree, short rows over
 * the same band, and the in-cache band. */
enum { SHAPE_BAND = 0, SHAPE_SHORT = 1, SHAPE_HOT = 2 };
static const char *const ker_name[NKER] = {"local CSR", "collective CSR", "fetch CSC"};

typedef struct {
    int kind, k;
    double work; /* nnz * k */
    tf_cal_sparse a;
    float *b, *c; /* B (rows of the part's inner dimension) and the output */
    int64_t brows, crows;
    int64_t miss; /* nonzeros loading their B row from memory (CSR) */
} ker_point;

static void point_free(ker_point *p)
{
    tf_cal_sparse_free(&p->a);
    free(p->b);
    free(p->c);
    memset(p, 0, sizeof *p);
}

/* Shapes scale with m, the rank's rows (and B band rows): the working set,
 * not only the work, decides the speed (B rows in cache or not), so the
 * sweep spans the band sizes of real plans (1 K to 32 K rows per rank). */
static int point_make(ker_point *p, int kind, int k, int64_t m, int shape, uint64_t seed)
{
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->k = k;
    int st;
    if (shape == SHAPE_SHORT && kind == KER_LOCAL) {
        /* Degree 1-3 (mean 2) over 4x the rows: the band point's nonzeros. */
        st = tf_cal_synth(&p->a, 4 * m, m, 2.0, 0.5, 64, seed);
        p->brows = m;
        p->crows = 4 * m;
    } else if (shape == SHAPE_SHORT && kind == KER_COLL) {
        /* One nonzero per row over 3x the rows. */
        st = tf_cal_synth(&p->a, 3 * m, m / 2, 1.0, 0.5, 256, seed);
        p->brows = m / 2;
        p->crows = 3 * m;
    } else if (shape == SHAPE_SHORT && kind == KER_FETCH) {
        /* m fetched rows spread over 4m rows of C, 16x the band point's:
         * most additions load their row from memory. */
        st = tf_cal_synth(&p->a, m, 4 * m, 2.0, 0.3, 256, seed);
        p->brows = m;
        p->crows = 4 * m;
    } else if (shape == SHAPE_HOT && kind == KER_FETCH) {
        /* Many fetched rows into a few rows of C, which stay in cache. */
        st = tf_cal_synth(&p->a, HOT_ROWS, HOT_BROWS, 2.0, 0.3, 64, seed);
        p->brows = HOT_ROWS;
        p->crows = HOT_BROWS;
    } else if (shape == SHAPE_HOT) {
        /* Many C rows over a B band far smaller than any cache. */
        st = tf_cal_synth(&p->a, HOT_ROWS, HOT_BROWS, kind == KER_LOCAL ? 8.0 : 3.0, 0.5, 64,
                          seed);
        p->brows = HOT_BROWS;
        p->crows = HOT_ROWS;
    } else if (kind == KER_LOCAL) {
        st = tf_cal_synth(&p->a, m, m, 8.0, 0.5, 64, seed);
        p->brows = m;
        p->crows = m;
    } else if (kind == KER_COLL) {
        st = tf_cal_synth(&p->a, m, m / 2, 3.0, 0.5, 256, seed);
        p->brows = m / 2;
        p->crows = m;
    } else {
        /* CSC: outer = fetched rows (columns of the part), inner = the
         * compact rows of C the fetch part touches. */
        st = tf_cal_synth(&p->a, m / 4, m / 4, 2.0, 0.3, 256, seed);
        p->brows = m / 4;
        p->crows = m / 4;
    }
    if (st)
        return st;
    p->work = (double)p->a.nnz * k;
    p->miss = p->a.nnz;
    /* On cache lines, as the executor's B and C (tf_kern_alloc_rows). */
    p->b = tf_kern_alloc_rows(p->brows, k, sizeof *p->b);
    p->c = tf_kern_alloc_c(p->crows, k);
    if (!p->b || !p->c)
        return tf_fail(TF_ERR_NOMEM, "kernel measurement: out of memory for %lld x %d",
                       (long long)p->brows, k);
    tf_dense_fill(p->b, seed, 0, p->brows, k);
    memset(p->c, 0, (size_t)p->crows * (size_t)k * sizeof *p->c);
    return TF_OK;
}

static void point_run(ker_point *p, int csr_threads)
{
    const tf_cal_sparse *a = &p->a;
    if (p->kind == KER_FETCH) {
        for (int64_t j = 0; j < a->nouter; j += RUN_COLS)
            tf_kern_csc(j, j + RUN_COLS < a->nouter ? j + RUN_COLS : a->nouter, a->ptr, a->idx,
                        a->val, p->b, p->k, p->c);
        return;
    }
    /* Overwriting as the executor would for a C of this size. */
    int add = p->kind == KER_COLL ? 1 : tf_kern_c_mode(p->crows * (int64_t)p->k * 4);
    if (csr_threads <= 1) {
        tf_kern_csr(0, a->nouter, a->ptr, a->idx, a->val, p->b, p->k, p->c, add);
        return;
    }
    const int64_t m = a->nouter;
#pragma omp parallel for schedule(dynamic, 1) num_threads(csr_threads)
    for (int64_t x = 0; x < m; x += ROW_BLOCK)
        tf_kern_csr(x, x + ROW_BLOCK < m ? x + ROW_BLOCK : m, a->ptr, a->idx, a->val, p->b, p->k,
                    p->c, add);
}

/* Misses of a point for a cache of cache_bytes at its K: of B rows in row
 * order for a CSR point, of C rows in column order for the CSC one (the
 * index lists are read in the kernel's order either way). */
static int point_count_misses(ker_point *p, double cache_bytes)
{
    int64_t n = p->a.nnz, window = (int64_t)(cache_bytes / (4.0 * p->k));
    if (window <= 0 || n <= 1)
        return TF_OK;
    const int csc = p->kind == KER_FETCH;
    /* Each row's last read: B's rows for a CSR point (its inner indices),
     * C's for the CSC one. */
    const int64_t nrows = csc ? p->crows : p->brows;
    uint32_t *last = malloc((size_t)(nrows > 0 ? nrows : 1) * sizeof *last);
    size_t sz = (size_t)n * sizeof(uint32_t);
    uint32_t *c = csc ? malloc(sz) : NULL, *v = csc ? malloc(sz) : NULL;
    int st = TF_OK;
    if (!last || (csc && (!c || !v))) {
        st = tf_fail(TF_ERR_NOMEM, "kernel measurement: out of memory counting reuse of %lld "
                                   "nonzeros", (long long)n);
    } else if (csc) {
        /* Columns in order, rows ascending within each: the kernel's. */
        for (int64_t j = 0; j < p->a.nouter; j++)
            for (int64_t e = p->a.ptr[j]; e < p->a.ptr[j + 1]; e++) {
                c[e] = (uint32_t)j;
                v[e] = (uint32_t)p->a.idx[e];
            }
        p->miss = tf_reuse_csc_misses(c, v, n, window, TF_REUSE_STREAM_ROWS, last, nrows);
    } else {
        /* The planner's count of a rank's local part: the same reads in row
         * order over its band (indices are non-negative, and int32 and
         * uint32 may alias). */
        p->miss = tf_reuse_misses_band((const uint32_t *)p->a.idx, n, window, 0, last, nrows);
    }
    free(c);
    free(v);
    free(last);
    return st;
}

int tf_cal_kernel_nparams(int use_cache)
{
    return use_cache ? 4 : 3;
}

void tf_cal_kernel_xrow(int use_cache, int coll, int64_t nnz, int64_t miss, int64_t rows, int k,
                        double *r)
{
    const double kk = k;
    r[0] = coll ? 0.0 : (double)miss * kk;
    r[1] = coll ? (double)miss * kk : 0.0;
    if (use_cache)
        r[2] = (double)(nnz - miss) * kk;
    r[tf_cal_kernel_nparams(use_cache) - 1] = (double)rows * kk;
}

int tf_measure_kernels(const tf_cal_config *cfg, tf_fit fits[3], double *gamma_cached,
                       double *cache_bytes, double *gamma_row)
{
    /* Band sizes and shapes (for the fetch kernel, every shape is a band). */
    static const int64_t rows_quick[] = {2048, 16384, 8192, 4096};
    static const int shape_quick[] = {SHAPE_BAND, SHAPE_BAND, SHAPE_SHORT, SHAPE_HOT};
    static const int64_t rows_full[] = {1024, 4096, 8192, 16384, 32768, 4096, 16384, 4096};
    static const int shape_full[] = {SHAPE_BAND, SHAPE_BAND,  SHAPE_BAND,  SHAPE_BAND,
                                     SHAPE_BAND, SHAPE_SHORT, SHAPE_SHORT, SHAPE_HOT};
    const int64_t *rows = cfg->quick ? rows_quick : rows_full;
    const int *shape = cfg->quick ? shape_quick : shape_full;
    const int nw = cfg->quick ? 4 : 8;
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    *cache_bytes = l2 > 0 ? (double)l2 : 0.0;
    *gamma_cached = 0.0;
    *gamma_row = 0.0;
    const int reps = tf_cal_reps(cfg, 9, 40);
    _Static_assert(40 <= TF_CAL_MAX_REPS, "kernel repetitions exceed the sample buffer");
    const int csr_threads = cfg->threads >= 2 ? cfg->threads - 1 : 1;
    /* Points of one K at a time: all K at once would hold (and first-touch)
     * several hundred MB per rank. */
    const int nper = NKER * nw, npts = nper * cfg->nk;

    ker_point *pts = calloc((size_t)nper, sizeof *pts);
    double *t = calloc((size_t)reps * nper, sizeof *t);
    double *te = calloc((size_t)reps * nper, sizeof *te);
    double *x = malloc((size_t)npts * sizeof *x), *y = malloc((size_t)npts * sizeof *y);
    int *kof = malloc((size_t)npts * sizeof *kof);
    int64_t *nnzof = malloc((size_t)npts * sizeof *nnzof);
    int64_t *missof = malloc((size_t)npts * sizeof *missof);
    int64_t *rowsof = malloc((size_t)npts * sizeof *rowsof);
    int st = TF_OK;
    if (!pts || !t || !te || !x || !y || !kof || !nnzof || !missof || !rowsof)
        st = tf_fail(TF_ERR_NOMEM, "kernel measurement: out of memory");
    st = tf_cal_agree(cfg->comm, st);

    for (int ki = 0; ki < cfg->nk && st == TF_OK; ki++) {
        for (int i = 0; i < nper && st == TF_OK; i++)
            if ((st = point_make(&pts[i], i % NKER, cfg->k[ki], rows[i / NKER],
                                 shape[i / NKER], 1000 + (uint64_t)(ki * nper + i))) == TF_OK)
                st = point_count_misses(&pts[i], *cache_bytes);
        st = tf_cal_agree(cfg->comm, st);
        for (int r = -1; r < reps && st == TF_OK; r++)
            for (int i = 0; i < nper; i++) {
                MPI_Barrier(cfg->comm);
                double t0 = tf_cal_now();
                point_run(&pts[i], csr_threads);
                double t1 = tf_cal_now();
                if (r >= 0) {
                    t[(size_t)r * nper + i] = t0;
                    te[(size_t)r * nper + i] = t1;
                }
            }
        if (st == TF_OK) {
            tf_cal_sample_times(cfg->comm, cfg->one_node, t, te, reps * nper);
            double col[TF_CAL_MAX_REPS];
            /* Stored kind-major: the fits below take each kind's points. */
            for (int i = 0; i < nper; i++) {
                for (int r = 0; r < reps; r++)
                    col[r] = t[(size_t)r * nper + i];
                int kind = i % NKER, o = kind * (cfg->nk * nw) + ki * nw + i / NKER;
                x[o] = pts[i].work;
                y[o] = tf_median(col, reps);
                kof[o] = pts[i].k;
                nnzof[o] = pts[i].a.nnz;
                missof[o] = pts[i].miss;
                /* Every synthetic row has a nonzero, so the kernel writes
                 * (local) or updates (collective) each of them. */
                rowsof[o] = pts[i].crows;
            }
        }
        for (int i = 0; i < nper; i++)
            point_free(&pts[i]);
    }

    const int n = cfg->nk * nw;
    /* The two CSR kernels together: [gamma_local, gamma_coll, gamma_cached,
     * gamma_row] against [local misses, collective misses, hits, rows] x K;
     * without a cache size every nonzero is a miss and gamma_cached is left
     * out. */
    const int use_cache = *cache_bytes > 0;
    const int np = tf_cal_kernel_nparams(use_cache), jrow = np - 1;
    double *xj = malloc((size_t)2 * n * np * sizeof *xj);
    double *xf = malloc((size_t)2 * n * sizeof *xf);
    if (st == TF_OK && (!xj || !xf))
        st = tf_fail(TF_ERR_NOMEM, "kernel measurement: out of memory");
    tf_fit joint;
    memset(&joint, 0, sizeof joint);
    if (st == TF_OK) {
        for (int i = 0; i < 2 * n; i++)
            tf_cal_kernel_xrow(use_cache, i >= n, nnzof[i], missof[i], rowsof[i], kof[i],
                               xj + (size_t)np * i);
        st = tf_fit_linear(2 * n, np, xj, y, 1, &joint);
    }
    for (int kind = 0; kind < NKER && st == TF_OK; kind++) {
        const int o = kind * n;
        if (kind != KER_FETCH) {
            /* This kernel's share of the joint fit, with its own errors. */
            memset(&fits[kind], 0, sizeof fits[kind]);
            fits[kind].np = 1;
            fits[kind].n = n;
            fits[kind].coef[0] = joint.coef[kind];
            fits[kind].raw[0] = joint.raw[kind];
            fits[kind].clamped[0] = joint.clamped[kind];
            double ss = 0;
            for (int i = o; i < o + n; i++) {
                double e = (tf_fit_eval(np, joint.coef, xj + (size_t)np * i) - y[i]) / y[i];
                ss += e * e;
                if (fabs(e) > fits[kind].max_rel)
                    fits[kind].max_rel = fabs(e);
            }
            fits[kind].rms_rel = sqrt(ss / n);
            if (use_cache)
                *gamma_cached = joint.coef[2];
            *gamma_row = joint.coef[jrow];
        } else if (use_cache) {
            /* [gamma_fetch, gamma_fetch_cached] against [misses, hits] x K. */
            for (int i = 0; i < n; i++) {
                xf[2 * i] = (double)missof[o + i] * kof[o + i];
                xf[2 * i + 1] = (double)(nnzof[o + i] - missof[o + i]) * kof[o + i];
            }
            st = tf_fit_linear(n, 2, xf, y + o, 1, &fits[kind]);
        } else {
            st = tf_fit_linear(n, 1, x + o, y + o, 1, &fits[kind]);
        }
        if (st == TF_OK && cfg->log) {
            FILE *f = cfg->log;
            int th = kind == KER_FETCH ? 1 : csr_threads;
            int split = kind != KER_FETCH;
            fprintf(f, "%s kernel (%d thread%s per rank, %d reps, first start to last end, median):\n",
                    ker_name[kind], th, th == 1 ? "" : "s", reps);
            fprintf(f, "  %5s %10s %6s %7s %10s %11s %11s %7s\n", "K", "nnz", "miss", "nnz/row",
                    "ns/nnz-col", "meas_ms", "model_ms", "err");
            for (int i = o; i < o + n; i++) {
                double pred = split       ? tf_fit_eval(np, joint.coef, xj + (size_t)np * i)
                              : use_cache ? tf_fit_eval(2, fits[kind].coef, xf + 2 * (i - o))
                                          : fits[kind].coef[0] * x[i];
                fprintf(f, "  %5d %10lld %5.0f%% %7.2f %10.3f %11.3f %11.3f %+6.1f%%\n", kof[i],
                        (long long)nnzof[i], 100.0 * (double)missof[i] / (double)nnzof[i],
                        (double)nnzof[i] / (double)rowsof[i], 1e9 * y[i] / x[i], 1e3 * y[i],
                        1e3 * pred, 100.0 * (pred - y[i]) / y[i]);
            }
            static const char *const nm[NKER] = {"gamma_local", "gamma_coll", "gamma_fetch"};
            static const char *const un[1] = {"s/nnz-col"};
            if (split) {
                static const char *const jn[2][4] = {
                    {"gamma_local", "gamma_coll", "gamma_row", ""},
                    {"gamma_local", "gamma_coll", "gamma_cached", "gamma_row"}};
                static const char *const ju[4] = {"s/nnz-col", "s/nnz-col", "s/nnz-col",
                                                  "s/row-col"};
                static const char *const ju3[3] = {"s/nnz-col", "s/nnz-col", "s/row-col"};
                if (kind == KER_COLL && use_cache) {
                    fprintf(f, "  B rows in cache: the level-2 cache, %.0f KiB per core; miss = "
                               "nonzeros loading their row from memory\n", *cache_bytes / 1024);
                    tf_cal_print_fit(f, "t = (gamma*miss + gamma_cached*(nnz-miss) + "
                                        "gamma_row*rows)*K, both CSR kernels", &joint, jn[1], ju);
                } else if (kind == KER_COLL) {
                    tf_cal_print_fit(f, "t = (gamma*nnz + gamma_row*rows)*K, both CSR kernels",
                                     &joint, jn[0], ju3);
                }
            } else if (use_cache) {
                static const char *const fn[2] = {"gamma_fetch", "gamma_fetch_cached"};
                static const char *const fu[2] = {"s/nnz-col", "s/nnz-col"};
                fprintf(f, "  rows of C in cache: the same cache; miss = nonzeros adding into "
                           "a row loaded from memory\n");
                tf_cal_print_fit(f, "t = (gamma_fetch*miss + gamma_fetch_cached*(nnz-miss))*K",
                                 &fits[kind], fn, fu);
            } else {
                tf_cal_print_fit(f, "t = gamma*nnz*K", &fits[kind], &nm[kind], un);
            }
        }
    }
    free(xj);
    free(xf);
    free(missof);
    free(rowsof);
    st = tf_cal_agree(cfg->comm, st);
    free(pts);
    free(t);
    free(te);
    free(x);
    free(y);
    free(kof);
    free(nnzof);
    return st;
}
