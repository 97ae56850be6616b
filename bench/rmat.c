/* R-MAT graph generator for the planning benchmarks (docs/planning.md):
 * 2^scale vertices, edge_factor * 2^scale directed edges drawn with the
 * Graph500 probabilities (a, b, c) = (0.57, 0.19, 0.19), written as a
 * Matrix Market pattern file (duplicates kept: the reader sums them).
 * Deterministic for a given seed (splitmix64).
 *
 *   rmat SCALE [EDGE_FACTOR [SEED]] > graph.mtx */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t state;

static uint64_t next(void)
{
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double uniform(void) { return (double)(next() >> 11) * 0x1.0p-53; }

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: rmat SCALE [EDGE_FACTOR [SEED]] > graph.mtx\n");
        return 2;
    }
    int scale = atoi(argv[1]);
    long ef = argc > 2 ? atol(argv[2]) : 16;
    state = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
    if (scale < 1 || scale > 30 || ef < 1 || ef > 1024) {
        fprintf(stderr, "rmat: SCALE 1..30 and EDGE_FACTOR 1..1024 expected\n");
        return 2;
    }
    const double a = 0.57, b = 0.19, c = 0.19;
    int64_t n = (int64_t)1 << scale, m = ef * n;
    printf("%%%%MatrixMarket matrix coordinate pattern general\n");
    printf("%% R-MAT scale %d, edge factor %ld, seed %llu, (a, b, c) = (%.2f, %.2f, %.2f)\n",
           scale, ef, (unsigned long long)(argc > 3 ? strtoull(argv[3], NULL, 10) : 1), a, b, c);
    printf("%lld %lld %lld\n", (long long)n, (long long)n, (long long)m);
    for (int64_t e = 0; e < m; e++) {
        int64_t i = 0, j = 0;
        for (int bit = scale - 1; bit >= 0; bit--) {
            double u = uniform();
            if (u < a) {
            } else if (u < a + b) {
                j |= (int64_t)1 << bit;
            } else if (u < a + b + c) {
                i |= (int64_t)1 << bit;
            } else {
                i |= (int64_t)1 << bit;
                j |= (int64_t)1 << bit;
            }
        }
        printf("%lld %lld\n", (long long)i + 1, (long long)j + 1);
    }
    return ferror(stdout) ? 1 : 0;
}
