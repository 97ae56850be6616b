/* The owner's bf16 rounding per value, for format/tf_bf16.c's comment and
 * docs/benchmarks.md ("bfloat16"): every vector set this CPU runs
 * (tf_bf16_pack_isa), and the passes the collective's send side makes per
 * exported value - the fused pack-round (float32 in, bf16 out, the widest
 * set) against the baseline round into the window then copy into the pack
 * that it replaced, and float32's plain copy. Interleaved in rounds, median ns per value.
 *   sh bench/bf16_pack.sh   (builds it, runs at 16K, 1M and 8M values) */
#include "tf_bf16.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

enum { NISA = 4, NCASE = 7, ROUNDS = 15 };
static const char *const names[NCASE] = {"round baseline", "round avx2", "round avx512",
                                         "round avx512bf16 (CPU's own)",
                                         "baseline round + copy 2 B (old pack)",
                                         "fused round (the pack now)", "copy 4 B (float32 pack)"};

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : 1 << 20;
    if (n < 1) {
        fprintf(stderr, "bf16_pack: N must be positive\n");
        return 1;
    }
    /* About 2^26 values per timing, so that small N is timed over many reps. */
    int reps = (int)((1 << 26) / n) + 1;
    float *src = malloc((size_t)n * sizeof *src), *f32 = malloc((size_t)n * sizeof *f32);
    uint16_t *win = malloc((size_t)n * sizeof *win), *out = malloc((size_t)n * sizeof *out);
    if (!src || !f32 || !win || !out) {
        fprintf(stderr, "bf16_pack: out of memory\n");
        return 1;
    }
    for (int64_t i = 0; i < n; i++)
        src[i] = (float)(i % 1000) * 0.37f - 100.0f;
    memset(f32, 0, (size_t)n * sizeof *f32);
    memset(win, 0, (size_t)n * sizeof *win);
    memset(out, 0, (size_t)n * sizeof *out);
    static const char *const isa[NISA] = {"baseline", "avx2", "avx512", "avx512bf16"};
    double t[NCASE][ROUNDS];
    int ran[NCASE] = {0};
    unsigned check = 0;
    for (int r = 0; r < ROUNDS; r++)
        for (int c = 0; c < NCASE; c++) {
            double t0 = now();
            int ok = 1;
            for (int x = 0; x < reps && ok; x++) {
                if (c < NISA) {
                    ok = tf_bf16_pack_isa(isa[c], src, out, n);
                } else if (c == NISA) {
                    tf_bf16_pack_isa("baseline", src, win, n);
                    memcpy(out, win, (size_t)n * sizeof *out);
                } else if (c == NISA + 1) {
                    tf_bf16_pack(src, out, n);
                } else {
                    memcpy(f32, src, (size_t)n * sizeof *f32);
                }
                check += out[x % n] + (unsigned)f32[x % n];
            }
            t[c][r] = (now() - t0) / reps / (double)n * 1e9;
            ran[c] = ok;
        }
    printf("values %lld, %d reps x %d rounds (checksum %u)\n", (long long)n, reps, ROUNDS,
           check & 0xff);
    for (int c = 0; c < NCASE; c++) {
        if (!ran[c]) {
            printf("  %-38s not on this CPU\n", names[c]);
            continue;
        }
        qsort(t[c], ROUNDS, sizeof t[c][0], cmp_d);
        printf("  %-38s %.3f ns per value\n", names[c], t[c][ROUNDS / 2]);
    }
    free(src);
    free(f32);
    free(win);
    free(out);
    return 0;
}
