/* Each rank's local kernel of a plan, timed alone on this machine (one
 * process, warm caches), beside the model's t_local for it and the model's
 * counts (rows of C, nonzeros, those whose B row comes from memory), and the
 * model over the warm time (docs/cost-model.md, "cnr-2000's kernel in the
 * simulation"). The local part
 * is rebuilt from the matrix and the plan's bands: the nonzeros of a band's
 * rows whose columns lie in its own B band, through tf_kern_csr.
 *
 * From the repository root, after make:
 *   cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Iexecutor -Iformat -o /tmp/rank_kernels \
 *       bench/rank_kernels.c build/lib/libtwoface.a \
 *       $(pkg-config --cflags --libs hdf5-serial libzstd zlib) -fopenmp -lm
 *   OMP_NUM_THREADS=1 /tmp/rank_kernels MATRIX.mtx PLAN.h5 [K] */
#include "tf_csr.h"
#include "tf_error.h"
#include "tf_kernels.h"
#include "tf_mm_read.h"
#include "tf_plan.h"
#include "tf_plan_io.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define REPS 12

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Best of REPS of the local kernel of rows [lo, hi), columns [blo, bhi). */
static int time_band(const tf_csr *a, int64_t lo, int64_t hi, int64_t blo, int64_t bhi, int k,
                     double *best)
{
    int64_t m = hi - lo, nb = bhi - blo;
    int64_t *ptr = malloc((size_t)(m + 1) * sizeof *ptr);
    int64_t cap = a->rowptr[hi] - a->rowptr[lo];
    int32_t *idx = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *idx);
    float *val = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *val);
    float *b = tf_kern_alloc_rows(nb > 0 ? nb : 1, k, sizeof(float));
    float *c = tf_kern_alloc_c(m > 0 ? m : 1, k);
    if (!ptr || !idx || !val || !b || !c) {
        free(ptr), free(idx), free(val), free(b), free(c);
        return tf_fail(TF_ERR_NOMEM, "out of memory for a band of %lld rows", (long long)m);
    }
    int64_t nz = 0;
    ptr[0] = 0;
    for (int64_t i = lo; i < hi; i++) {
        for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++)
            if (a->col[e] >= blo && a->col[e] < bhi) {
                idx[nz] = (int32_t)(a->col[e] - blo);
                val[nz++] = a->val[e];
            }
        ptr[i - lo + 1] = nz;
    }
    for (int64_t x = 0; x < nb * k; x++)
        b[x] = 1.0f;
    *best = INFINITY;
    for (int r = 0; r < REPS; r++) {
        double t0 = now();
        tf_kern_csr(0, m, ptr, idx, val, b, k, c, 0);
        double t = now() - t0;
        *best = t < *best ? t : *best;
    }
    free(ptr), free(idx), free(val), free(b), free(c);
    return TF_OK;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: rank_kernels MATRIX.mtx PLAN.h5 [K]\n");
        return 2;
    }
    int k = argc > 3 ? atoi(argv[3]) : 128;
    tf_csr a;
    tf_plan p;
    if (tf_mm_read(argv[1], &a, NULL) || tf_plan_read(argv[2], 0, &p)) {
        fprintf(stderr, "rank_kernels: %s\n", tf_error_message());
        return 1;
    }
    if (a.nrows != p.m || a.ncols != p.n || k < 1) {
        fprintf(stderr, "rank_kernels: %s is a plan of a %lld x %lld matrix, %s is %lld x %lld "
                "(or K < 1)\n", argv[2], (long long)p.m, (long long)p.n, argv[1],
                (long long)a.nrows, (long long)a.ncols);
        return 1;
    }
    double sum_w = 0, sum_m = 0, lo = INFINITY, hi = 0;
    printf("rank rows nnz_local miss warm_ms model_t_local_ms\n");
    for (int r = 0; r < p.nranks; r++) {
        const tf_rank_stats *s = &p.all_stats[r];
        double t = 0;
        if (time_band(&a, p.row_off[r], p.row_off[r + 1], p.brow_off[r], p.brow_off[r + 1], k,
                      &t)) {
            fprintf(stderr, "rank_kernels: %s\n", tf_error_message());
            return 1;
        }
        printf("%d %lld %lld %lld %.4f %.4f\n", r, (long long)s->rows_local,
               (long long)s->nnz_local, (long long)s->nnz_local_miss, t * 1e3, s->t_local * 1e3);
        sum_w += t;
        sum_m += s->t_local;
        if (t > 0) {
            lo = s->t_local / t < lo ? s->t_local / t : lo;
            hi = s->t_local / t > hi ? s->t_local / t : hi;
        }
    }
    if (sum_w > 0)
        printf("model / warm: %.2f on the mean rank, %.2f-%.2f over the ranks\n", sum_m / sum_w,
               lo, hi);
    tf_plan_free(&p);
    tf_csr_free(&a);
    return 0;
}
