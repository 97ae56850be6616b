/* Where a B row comes from decides the CSR kernel's time (docs/cost-model.md,
 * "Kernels: rows from cache or from memory"): the same work, 20 000 rows of C
 * with 8 random nonzeros each at K = 128, on bands of B of 1 000, 20 000 and
 * 200 000 rows (in level 2, in level 3, from memory), through tf_kern_csr in
 * the variant the process picks. Prints ns per nonzero-column, best of ROUNDS
 * (every band's call once per round, the order rotated).
 *
 * From the repository root, after make:
 *   cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Iexecutor -Iformat -o /tmp/kernel_bands \
 *       bench/kernel_bands.c build/lib/libtwoface.a -fopenmp -lm
 *   OMP_NUM_THREADS=1 /tmp/kernel_bands [ROUNDS] */
#include "tf_kernels.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROWS 20000
#define PER_ROW 8
#define K 128

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 7;
    static const int64_t band[3] = {1000, 20000, 200000};
    if (rounds < 1 || tf_kern_init() != 0) {
        fprintf(stderr, "usage: %s [ROUNDS >= 1]\n", argv[0]);
        return 2;
    }
    int64_t *ptr = malloc((ROWS + 1) * sizeof *ptr);
    int32_t *idx[3];
    float *val = malloc((size_t)ROWS * PER_ROW * sizeof *val);
    float *b = malloc((size_t)band[2] * K * sizeof *b);
    float *c = malloc((size_t)ROWS * K * sizeof *c);
    if (!ptr || !val || !b || !c)
        return 1;
    uint64_t x = 88172645463325252ull;
    for (int64_t i = 0; i <= ROWS; i++)
        ptr[i] = i * PER_ROW;
    for (int64_t e = 0; e < (int64_t)ROWS * PER_ROW; e++)
        val[e] = 0.5f + (float)(e % 7) * 0.125f;
    for (int64_t e = 0; e < band[2] * K; e++)
        b[e] = (float)(e % 13) * 0.25f;
    for (int s = 0; s < 3; s++) {
        if (!(idx[s] = malloc((size_t)ROWS * PER_ROW * sizeof *idx[s])))
            return 1;
        for (int64_t e = 0; e < (int64_t)ROWS * PER_ROW; e++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            idx[s][e] = (int32_t)(x % (uint64_t)band[s]);
        }
    }
    double best[3] = {1e30, 1e30, 1e30};
    for (int r = 0; r < rounds; r++)
        for (int t = 0; t < 3; t++) {
            int s = (t + r) % 3;
            double t0 = now();
            tf_kern_csr(0, ROWS, ptr, idx[s], val, b, K, c, 0);
            double dt = now() - t0;
            if (dt < best[s])
                best[s] = dt;
        }
    printf("variant %s, %d rows x %d nonzeros, K = %d, best of %d:\n", tf_kern_variant(), ROWS,
           PER_ROW, K, rounds);
    for (int s = 0; s < 3; s++)
        printf("  band of %7lld B rows (%6.1f MiB): %.3f ns per nonzero-column\n",
               (long long)band[s], (double)band[s] * K * 4 / 1048576.0,
               best[s] / ((double)ROWS * PER_ROW * K) * 1e9);
    for (int s = 0; s < 3; s++)
        free(idx[s]);
    free(ptr);
    free(val);
    free(b);
    free(c);
    return 0;
}
