/* The loop nests of the GCN's dense products (tf_gnn_dense.h), compiled once
 * per instruction set like the executor's kernels (executor/tf_kern_loops.h):
 * included by tf_gnn_dense_baseline.c, _avx2.c and _avx512.c, each built with
 * its own target flags (Makefile, "GNN" block) and defining
 *   TF_GNN_DENSE_OPS    the name of the variant's table (tf_gnn_dense_ops)
 *   TF_GNN_DENSE_NAME   the variant's name ("baseline", "avx2", "avx512")
 *   TF_GNN_DRAW_SIMD    1 to vectorise the dropout draws (64-bit multiplies:
 *                       slower than scalar code on SSE2, 4-8x faster on AVX)
 * tf_gnn_dense.c runs the variant the executor's kernels run.
 *
 * The loops are shaped for one core (measured in docs/gnn.md, "Dense
 * products"): a row's nonzero factors are first packed into a short list
 * without branches (a dropout mask keeps half the entries at random, which a
 * branch per entry mispredicts half the time), then multiplied with the
 * columns held in a register tile of TILE doubles, the inner loop running
 * over the contiguous width. Every output element still sums its terms in
 * the order of the plain triple loop, one multiply and one add each (no FMA:
 * -std=c11 implies -ffp-contract=off, and the Makefile says so for the
 * variants), and a dropped or zero factor is left out as before, so every
 * variant gives bitwise the results of that loop. */
#include "tf_gnn_dense_variants.h"
#include "tf_gnn_rng.h"

#include <math.h>
#include <string.h>

#define MAXW TF_GNN_MAX_WIDTH
/* Columns kept in registers: the hidden width of the usual recipe. */
#define TILE 16
/* Factors packed per pass: a stack buffer, so rows of any length work. */
#define CHUNK 256

static int dropping(const tf_gnn_drop *d) { return d && d->p > 0; }

/* Entry (node, column) of a dropout mask is kept when its draw
 * u01 = (bits >> 11) * 2^-53 is >= p (tf_gnn_drop_factor), i.e. when
 * bits >> 11 >= thr = ceil(p * 2^53): the same test in integers, which
 * vectorises (both sides < 2^63, so a signed compare). kept[t] = 1 or 0 for
 * the columns col[t] (col NULL: columns c0 + t), t < m. The flags are used
 * as numbers, never branched on: a branch on a random mask mispredicts half
 * the time. */
static int64_t threshold(const tf_gnn_drop *d) { return (int64_t)ceil(d->p * 0x1.0p53); }

static void draw_kept(uint64_t nk, const int32_t *restrict col, int64_t c0, int m, int64_t thr,
                      int64_t *restrict kept)
{
    if (col) {
#if TF_GNN_DRAW_SIMD
#pragma omp simd
#endif
        for (int t = 0; t < m; t++)
            kept[t] = (int64_t)(tf_gnn_rng_bits(nk, (uint64_t)col[t]) >> 11) >= thr;
    }
    else {
#if TF_GNN_DRAW_SIMD
#pragma omp simd
#endif
        for (int t = 0; t < m; t++)
            kept[t] = (int64_t)(tf_gnn_rng_bits(nk, (uint64_t)(c0 + t)) >> 11) >= thr;
    }
}

/* Packs the nonzero factors of entries [e0, e1) of row i of drop(X) into
 * v, c; returns their count. A kept entry's factor is val * scale, scale =
 * 1 / (1 - p) computed once (the same double as tf_gnn_drop_factor's); a
 * dropped one is left out like a zero product. */
static int pack_csr(const tf_csr *x, int64_t e0, int64_t e1, int on, uint64_t nk, int64_t thr,
                    double scale, double *restrict v, int32_t *restrict c)
{
    const int32_t *restrict col = x->col;
    const float *restrict val = x->val;
    const int m = (int)(e1 - e0);
    int64_t kept[CHUNK];
    if (on)
        draw_kept(nk, col + e0, 0, m, thr, kept);
    else
        for (int t = 0; t < m; t++)
            kept[t] = 1;
    const double f = on ? scale : 1.0;
    int n = 0;
    for (int t = 0; t < m; t++) {
        double a = (double)val[e0 + t] * f;
        v[n] = a;
        c[n] = col[e0 + t];
        n += (int)(kept[t] & (a != 0));
    }
    return n;
}

/* The same for a dense float row of length a. */
static int pack_dense(const float *restrict h, int a, double *restrict v, int32_t *restrict c)
{
    int n = 0;
    for (int p = 0; p < a; p++) {
        double x = h[p];
        v[n] = x;
        c[n] = p;
        n += x != 0;
    }
    return n;
}

/* acc[0, k) += sum over t of v[t] * w[c[t] * k + (0, k)], terms in t order. */
static void gather_rows(int n, const double *restrict v, const int32_t *restrict c,
                        const double *restrict w, int k, double *restrict acc)
{
    int j0 = 0;
    for (; j0 + TILE <= k; j0 += TILE) {
        double t[TILE];
        for (int j = 0; j < TILE; j++)
            t[j] = acc[j0 + j];
        for (int e = 0; e < n; e++) {
            const double *restrict wr = w + (int64_t)c[e] * k + j0;
            const double ve = v[e];
#pragma GCC unroll 16
            for (int j = 0; j < TILE; j++)
                t[j] += ve * wr[j];
        }
        for (int j = 0; j < TILE; j++)
            acc[j0 + j] = t[j];
    }
    for (int e = 0; e < n && j0 < k; e++) {
        const double *restrict wr = w + (int64_t)c[e] * k;
        for (int j = j0; j < k; j++)
            acc[j] += v[e] * wr[j];
    }
}

/* gw[c[t] * k + (0, k)] += v[t] * g[0, k) for every t, g as double in gd. */
static void scatter_rows(int n, const double *restrict v, const int32_t *restrict c,
                         const double *restrict gd, int k, double *restrict gw)
{
    int j0 = 0;
    for (; j0 + TILE <= k; j0 += TILE) {
        double t[TILE];
        for (int j = 0; j < TILE; j++)
            t[j] = gd[j0 + j];
        for (int e = 0; e < n; e++) {
            double *restrict wr = gw + (int64_t)c[e] * k + j0;
            const double ve = v[e];
#pragma GCC unroll 16
            for (int j = 0; j < TILE; j++)
                wr[j] += ve * t[j];
        }
    }
    for (int e = 0; e < n && j0 < k; e++) {
        double *restrict wr = gw + (int64_t)c[e] * k;
        for (int j = j0; j < k; j++)
            wr[j] += v[e] * gd[j];
    }
}

static void store_row(const double *restrict acc, int k, float *restrict out)
{
    for (int j = 0; j < k; j++)
        out[j] = (float)acc[j];
}

static void xw(const tf_csr *x, const int64_t *ids, const tf_gnn_drop *drop, const double *w,
               int k, float *out)
{
    const int on = dropping(drop);
    const double scale = on ? 1.0 / (1.0 - drop->p) : 1.0;
    const int64_t thr = on ? threshold(drop) : 0;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < x->nrows; i++) {
        double acc[MAXW], v[CHUNK];
        int32_t c[CHUNK];
        memset(acc, 0, (size_t)k * sizeof *acc);
        uint64_t nk = on ? tf_gnn_rng_node(drop->key, (uint64_t)ids[i]) : 0;
        for (int64_t e = x->rowptr[i]; e < x->rowptr[i + 1]; e += CHUNK) {
            int64_t e1 = e + CHUNK < x->rowptr[i + 1] ? e + CHUNK : x->rowptr[i + 1];
            int n = pack_csr(x, e, e1, on, nk, thr, scale, v, c);
            gather_rows(n, v, c, w, k, acc);
        }
        store_row(acc, k, out + i * k);
    }
}

static void xtg(const tf_csr *x, const int64_t *ids, const tf_gnn_drop *drop, const float *g,
                int k, double *gw)
{
    const int on = dropping(drop);
    const double scale = on ? 1.0 / (1.0 - drop->p) : 1.0;
    const int64_t thr = on ? threshold(drop) : 0;
    double gd[MAXW], v[CHUNK];
    int32_t c[CHUNK];
    for (int64_t i = 0; i < x->nrows; i++) {
        uint64_t nk = on ? tf_gnn_rng_node(drop->key, (uint64_t)ids[i]) : 0;
        for (int j = 0; j < k; j++)
            gd[j] = g[i * k + j];
        for (int64_t e = x->rowptr[i]; e < x->rowptr[i + 1]; e += CHUNK) {
            int64_t e1 = e + CHUNK < x->rowptr[i + 1] ? e + CHUNK : x->rowptr[i + 1];
            int n = pack_csr(x, e, e1, on, nk, thr, scale, v, c);
            scatter_rows(n, v, c, gd, k, gw);
        }
    }
}

static void hw(const float *h, int64_t nrows, int a, const double *w, int b, float *out)
{
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < nrows; i++) {
        double acc[MAXW], v[CHUNK];
        int32_t c[CHUNK];
        memset(acc, 0, (size_t)b * sizeof *acc);
        for (int p0 = 0; p0 < a; p0 += CHUNK) {
            int n = pack_dense(h + i * a + p0, a - p0 < CHUNK ? a - p0 : CHUNK, v, c);
            gather_rows(n, v, c, w + (int64_t)p0 * b, b, acc);
        }
        store_row(acc, b, out + i * b);
    }
}

static void htg(const float *h, int64_t nrows, int a, const float *g, int b, double *gw)
{
    double gd[MAXW], v[CHUNK];
    int32_t c[CHUNK];
    for (int64_t i = 0; i < nrows; i++) {
        for (int j = 0; j < b; j++)
            gd[j] = g[i * b + j];
        for (int p0 = 0; p0 < a; p0 += CHUNK) {
            int n = pack_dense(h + i * a + p0, a - p0 < CHUNK ? a - p0 : CHUNK, v, c);
            scatter_rows(n, v, c, gd, b, gw + (int64_t)p0 * b);
        }
    }
}

/* r = drop(ReLU(h)) with the hidden layer's mask. Every entry is ReLU(h)
 * times its factor, scale * kept: a zero stays zero, so drawing for it as
 * well changes nothing and needs no branch. */
static void relu_drop(const float *h, int64_t nrows, int k, const int64_t *ids,
                      const tf_gnn_drop *drop, float *r)
{
    const int on = dropping(drop);
    const double scale = on ? 1.0 / (1.0 - drop->p) : 1.0;
    const int64_t thr = on ? threshold(drop) : 0;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < nrows; i++) {
        const float *restrict hi = h + i * k;
        float *restrict ri = r + i * k;
        int64_t kept[CHUNK];
        uint64_t nk = on ? tf_gnn_rng_node(drop->key, (uint64_t)ids[i]) : 0;
        for (int j0 = 0; j0 < k; j0 += CHUNK) {
            const int m = k - j0 < CHUNK ? k - j0 : CHUNK;
            if (!on) {
                for (int t = 0; t < m; t++)
                    ri[j0 + t] = hi[j0 + t] > 0 ? hi[j0 + t] : 0;
                continue;
            }
            draw_kept(nk, NULL, j0, m, thr, kept);
            for (int t = 0; t < m; t++) {
                float v = hi[j0 + t] > 0 ? hi[j0 + t] : 0;
                ri[j0 + t] = (float)(v * (scale * (double)kept[t]));
            }
        }
    }
}

/* out[i][p] sums g[i][j] * w[p][j] over j in order; a tile of TILE outputs
 * at a time gives independent sums in place of one dependent chain. */
static void gwt(const float *g, int64_t nrows, int b, const double *w, int a, float *out)
{
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < nrows; i++) {
        const float *restrict gr = g + i * b;
        float *restrict o = out + i * a;
        int p0 = 0;
        for (; p0 + TILE <= a; p0 += TILE) {
            double t[TILE] = {0};
            for (int j = 0; j < b; j++) {
                const double gj = gr[j];
#pragma GCC unroll 16
                for (int q = 0; q < TILE; q++)
                    t[q] += gj * w[(int64_t)(p0 + q) * b + j];
            }
            for (int q = 0; q < TILE; q++)
                o[p0 + q] = (float)t[q];
        }
        for (int q = p0; q < a; q++) {
            double acc = 0;
            for (int j = 0; j < b; j++)
                acc += gr[j] * w[(int64_t)q * b + j];
            o[q] = (float)acc;
        }
    }
}

const tf_gnn_dense_ops TF_GNN_DENSE_OPS = {TF_GNN_DENSE_NAME, xw, xtg, hw, htg, gwt, relu_drop};
