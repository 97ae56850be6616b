/* The measurements behind the CSR kernel's fixed choices (docs/executor.md,
 * "Kernels"): the AVX-512 kernel built with each setting below, all in one
 * process, interleaved round by round on the same A and B; for each graph
 * and K the median time of each setting over the "base" one (the shipped
 * setting: no prefetch, no K panel, no FMA). Below 1: the setting is faster.
 *
 *   pfD    __builtin_prefetch of the B row D nonzeros ahead
 *   pW     K panels of W columns swept over all rows, one after the other
 *   fma    -ffp-contract=fast (a*b+c fused)
 *
 * usage: kernels-knobs [-k 128,512] [-r ROUNDS] MATRIX...   (needs AVX-512) */
#include "tf_csr.h"
#include "tf_dense.h"
#include "tf_error.h"
#include "tf_kern_variants.h"
#include "tf_mm_read.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keep in step with KNOBS in the Makefile. */
extern const tf_kern_ops knob_base, knob_pf4, knob_pf8, knob_pf16, knob_p64, knob_p128,
    knob_p256, knob_fma;
static const tf_kern_ops *const knobs[] = {&knob_base, &knob_pf4,  &knob_pf8,  &knob_pf16,
                                           &knob_p64,  &knob_p128, &knob_p256, &knob_fma};
#define NKNOB ((int)(sizeof knobs / sizeof knobs[0]))

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int ks[8] = {128, 512}, nk = 2, rounds = 7;
    const char *files[64];
    int nf = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-k") && i + 1 < argc) {
            nk = 0;
            for (const char *s = argv[++i]; nk >= 0 && nk < 8;) {
                char *end;
                long v = strtol(s, &end, 10);
                if (end == s || v < 1 || v > 65536 || (*end && *end != ','))
                    nk = -1;
                else
                    ks[nk++] = (int)v;
                if (nk < 0 || !*end)
                    break;
                s = end + 1;
            }
        } else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (argv[i][0] != '-' && nf < 64)
            files[nf++] = argv[i];
        else
            nf = -1000;
    }
    if (nf <= 0 || nk <= 0 || rounds < 1 || rounds > 1000) {
        fprintf(stderr, "usage: kernels-knobs [-k 128,512] [-r ROUNDS] MATRIX...\n");
        return 2;
    }
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512vl")) {
        fprintf(stderr, "kernels-knobs: this CPU has no AVX-512 (the knobs are built for it)\n");
        return 1;
    }
    printf("| graph | K |");
    for (int x = 1; x < NKNOB; x++)
        printf(" %s |", knobs[x]->name);
    printf(" base ms |\n|---|---:|");
    for (int x = 0; x < NKNOB; x++)
        printf("---:|");
    printf("\n");
    double *t = malloc((size_t)NKNOB * (size_t)rounds * sizeof *t);
    for (int f = 0; f < nf; f++) {
        tf_csr a;
        if (tf_mm_read(files[f], &a, NULL)) {
            fprintf(stderr, "kernels-knobs: %s\n", tf_error_message());
            return 1;
        }
        const char *g = strrchr(files[f], '/') ? strrchr(files[f], '/') + 1 : files[f];
        for (int ik = 0; ik < nk; ik++) {
            int64_t k = ks[ik];
            float *b = malloc((size_t)a.ncols * (size_t)k * sizeof *b + 1);
            float *c = malloc((size_t)a.nrows * (size_t)k * sizeof *c + 1);
            if (!b || !c || !t) {
                fprintf(stderr, "kernels-knobs: out of memory\n");
                return 1;
            }
            tf_dense_fill(b, 1, 0, a.ncols, k);
            for (int r = -1; r < rounds; r++) /* round -1: warm-up */
                for (int x = 0; x < NKNOB; x++) {
                    double s = omp_get_wtime();
                    knobs[x]->csr(0, a.nrows, a.rowptr, a.col, a.val, b, k, c, 0);
                    if (r >= 0)
                        t[x * rounds + r] = omp_get_wtime() - s;
                }
            double med[NKNOB];
            for (int x = 0; x < NKNOB; x++) {
                qsort(t + x * rounds, (size_t)rounds, sizeof *t, cmpd);
                med[x] = t[x * rounds + rounds / 2];
            }
            printf("| %.*s | %lld |", (int)strcspn(g, "."), g, (long long)k);
            for (int x = 1; x < NKNOB; x++)
                printf(" %.2f |", med[x] / med[0]);
            printf(" %.3f |\n", med[0] * 1e3);
            fflush(stdout);
            free(b);
            free(c);
        }
        tf_csr_free(&a);
    }
    free(t);
    return 0;
}
