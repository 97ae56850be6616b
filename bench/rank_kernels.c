/* Each rank's local kernel of a plan, timed alone on this machine (one
 * process, warm caches), beside the model's t_local for it and the model's
 * counts (rows of C, nonzeros, those whose B row comes from memory), and the
 * model over the warm time (docs/cost-model.md, "cnr-2000's kernel in the
 * simulation"). Each rank's local part is read from the plan, as the
 * executor loads it.
 *
 * From the repository root, after make:
 *   cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Iexecutor -Iformat -o /tmp/rank_kernels \
 *       bench/rank_kernels.c build/lib/libtwoface.a \
 *       $(pkg-config --cflags --libs hdf5-serial libzstd zlib) -fopenmp -lm
 *   OMP_NUM_THREADS=1 /tmp/rank_kernels PLAN.h5 [K] */
#include "tf_error.h"
#include "tf_kernels.h"
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

/* Best of REPS of rank r's local part through tf_kern_csr, B its own band. */
static int time_part(const tf_rank_plan *rp, int k, double *best)
{
    float *b = tf_kern_alloc_rows(rp->nbrows > 0 ? rp->nbrows : 1, k, sizeof(float));
    float *c = tf_kern_alloc_c(rp->nrows > 0 ? rp->nrows : 1, k);
    if (!b || !c) {
        free(b), free(c);
        return tf_fail(TF_ERR_NOMEM, "out of memory for rank %d's B and C", rp->rank);
    }
    for (int64_t x = 0; x < rp->nbrows * k; x++)
        b[x] = 1.0f;
    *best = INFINITY;
    for (int r = 0; r < REPS; r++) {
        double t0 = now();
        tf_kern_csr(0, rp->nrows, rp->loc_ptr, rp->loc_idx, rp->loc_val, b, k, c, 0);
        double t = now() - t0;
        *best = t < *best ? t : *best;
    }
    free(b), free(c);
    return TF_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: rank_kernels PLAN.h5 [K]\n");
        return 2;
    }
    int k = argc > 2 ? atoi(argv[2]) : 128;
    tf_plan p;
    if (k < 1 || tf_plan_read(argv[1], TF_PLAN_READ_HEADER, &p)) {
        fprintf(stderr, "rank_kernels: %s\n", k < 1 ? "K must be at least 1" : tf_error_message());
        return 1;
    }
    double sum_w = 0, sum_m = 0, lo = INFINITY, hi = 0;
    printf("rank rows nnz_local miss warm_ms model_t_local_ms\n");
    for (int r = 0; r < p.nranks; r++) {
        const tf_rank_stats *s = &p.all_stats[r];
        double t = 0;
        tf_plan part;
        if (tf_plan_read(argv[1], r, &part) || time_part(&part.parts[0], k, &t)) {
            fprintf(stderr, "rank_kernels: %s\n", tf_error_message());
            return 1;
        }
        tf_plan_free(&part);
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
    return 0;
}
