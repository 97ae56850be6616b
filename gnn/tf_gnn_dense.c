#include "tf_gnn_dense.h"
#include "tf_gnn_rng.h"

#include <stdlib.h>
#include <string.h>

#define MAXW TF_GNN_MAX_WIDTH

static int dropping(const tf_gnn_drop *d) { return d && d->p > 0; }

void tf_gnn_xw(const tf_csr *x, const int64_t *ids, const tf_gnn_drop *drop, const double *w,
               int k, float *out)
{
    int on = dropping(drop);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < x->nrows; i++) {
        double acc[MAXW];
        memset(acc, 0, (size_t)k * sizeof *acc);
        uint64_t nk = on ? tf_gnn_rng_node(drop->key, (uint64_t)ids[i]) : 0;
        for (int64_t e = x->rowptr[i]; e < x->rowptr[i + 1]; e++) {
            double v = x->val[e];
            if (on)
                v *= tf_gnn_drop_factor(drop, nk, x->col[e]);
            if (v == 0)
                continue;
            const double *wr = w + (int64_t)x->col[e] * k;
#pragma omp simd
            for (int j = 0; j < k; j++)
                acc[j] += v * wr[j];
        }
        for (int j = 0; j < k; j++)
            out[i * k + j] = (float)acc[j];
    }
}

void tf_gnn_xtg(const tf_csr *x, const int64_t *ids, const tf_gnn_drop *drop, const float *g,
                int k, double *gw)
{
    int on = dropping(drop);
    for (int64_t i = 0; i < x->nrows; i++) {
        uint64_t nk = on ? tf_gnn_rng_node(drop->key, (uint64_t)ids[i]) : 0;
        const float *gr = g + i * k;
        for (int64_t e = x->rowptr[i]; e < x->rowptr[i + 1]; e++) {
            double v = x->val[e];
            if (on)
                v *= tf_gnn_drop_factor(drop, nk, x->col[e]);
            if (v == 0)
                continue;
            double *wr = gw + (int64_t)x->col[e] * k;
#pragma omp simd
            for (int j = 0; j < k; j++)
                wr[j] += v * gr[j];
        }
    }
}

void tf_gnn_hw(const float *h, int64_t nrows, int a, const double *w, int b, float *out)
{
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < nrows; i++) {
        double acc[MAXW];
        memset(acc, 0, (size_t)b * sizeof *acc);
        for (int p = 0; p < a; p++) {
            double v = h[i * a + p];
            if (v == 0)
                continue;
#pragma omp simd
            for (int j = 0; j < b; j++)
                acc[j] += v * w[p * b + j];
        }
        for (int j = 0; j < b; j++)
            out[i * b + j] = (float)acc[j];
    }
}

void tf_gnn_htg(const float *h, int64_t nrows, int a, const float *g, int b, double *gw)
{
    for (int64_t i = 0; i < nrows; i++)
        for (int p = 0; p < a; p++) {
            double v = h[i * a + p];
            if (v == 0)
                continue;
#pragma omp simd
            for (int j = 0; j < b; j++)
                gw[p * b + j] += v * g[i * b + j];
        }
}

void tf_gnn_gwt(const float *g, int64_t nrows, int b, const double *w, int a, float *out)
{
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < nrows; i++)
        for (int p = 0; p < a; p++) {
            double acc = 0;
            for (int j = 0; j < b; j++)
                acc += g[i * b + j] * w[p * b + j];
            out[i * a + p] = (float)acc;
        }
}
