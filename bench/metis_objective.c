/* METIS objective and balance compared (docs/partition.md): for
 * each graph and P, tf_partition_metis with (cut, nnz), (vol, nnz) and
 * (cut, nnz+rows), interleaved ROUNDS times in one process (c v r c v r
 * ...), reporting the median METIS time of each and the distinct remote B
 * rows each part needs (max and mean over parts: what a rank receives at
 * the sparsity-aware minimum), computed from the parts alone.
 *
 * usage: metis_objective [-p 4,16,64] [-r ROUNDS] MATRIX...   (Markdown out) */
#include "tf_bench_list.h"
#include "tf_csr.h"
#include "tf_error.h"
#include "tf_median.h"
#include "tf_mm_read.h"
#include "tf_partition_metis.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Distinct columns of part p's rows owned by another part, max and mean. */
static void needed(const tf_csr *a, const int32_t *part, int P, double *mx, double *mean)
{
    int64_t *cnt = calloc((size_t)P, sizeof *cnt);
    int32_t *seen = malloc((size_t)a->ncols * sizeof *seen);
    for (int64_t j = 0; j < a->ncols; j++)
        seen[j] = -1;
    /* Rows grouped by part: one pass per part over its rows. */
    int64_t *order = malloc((size_t)a->nrows * sizeof *order), *start = calloc((size_t)P + 1, sizeof *start);
    for (int64_t i = 0; i < a->nrows; i++)
        start[part[i] + 1]++;
    for (int p = 0; p < P; p++)
        start[p + 1] += start[p];
    int64_t *pos = malloc(((size_t)P + 1) * sizeof *pos);
    memcpy(pos, start, ((size_t)P + 1) * sizeof *pos);
    for (int64_t i = 0; i < a->nrows; i++)
        order[pos[part[i]]++] = i;
    for (int p = 0; p < P; p++)
        for (int64_t x = start[p]; x < start[p + 1]; x++)
            for (int64_t e = a->rowptr[order[x]]; e < a->rowptr[order[x] + 1]; e++) {
                int32_t j = a->col[e];
                if (part[j] != p && seen[j] != p) {
                    seen[j] = p;
                    cnt[p]++;
                }
            }
    *mx = 0;
    *mean = 0;
    for (int p = 0; p < P; p++) {
        if (cnt[p] > *mx)
            *mx = (double)cnt[p];
        *mean += (double)cnt[p] / P;
    }
    free(cnt);
    free(seen);
    free(order);
    free(start);
    free(pos);
}

int main(int argc, char **argv)
{
    const char *plist = "4,16,64";
    int rounds = 3;
    const char *files[64];
    int nf = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-p") && i + 1 < argc)
            plist = argv[++i];
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: metis_objective [-p 4,16,64] [-r ROUNDS] MATRIX...\n");
            return 2;
        } else if (nf < 64)
            files[nf++] = argv[i];
    }
    if (rounds < 1 || rounds > 100)
        rounds = 3;
    int Ps[16], nP = tf_bench_int_list(plist, Ps, 16);
    if (nP < 1) {
        fprintf(stderr, "metis_objective: -p '%s': expected rank counts like 4,16,64\n", plist);
        return 2;
    }
    const tf_metis_options var[3] = {{TF_METIS_BALANCE_NNZ, TF_METIS_OBJ_CUT},
                                     {TF_METIS_BALANCE_NNZ, TF_METIS_OBJ_VOL},
                                     {TF_METIS_BALANCE_NNZ_ROWS, TF_METIS_OBJ_CUT}};
    const char *names[3] = {"cut, nnz", "vol, nnz", "cut, nnz+rows"};
    printf("| graph | P | %s: METIS s, needed max / mean | %s | %s |\n", names[0], names[1],
           names[2]);
    printf("|---|---:|---|---|---|\n");
    for (int f = 0; f < nf; f++) {
        tf_csr a;
        if (tf_mm_read(files[f], &a, NULL) || a.nrows != a.ncols) {
            fprintf(stderr, "metis_objective: %s: %s\n", files[f],
                    a.nrows != a.ncols ? "not square" : tf_error_message());
            return 1;
        }
        const char *b = strrchr(files[f], '/');
        char name[128];
        snprintf(name, sizeof name, "%s", b ? b + 1 : files[f]);
        char *d = strstr(name, ".mtx");
        if (d)
            *d = '\0';
        int32_t *part = malloc((size_t)a.nrows * sizeof *part);
        for (int ip = 0; ip < nP; ip++) {
            double t[3][100], mx[3], mean[3];
            for (int r = 0; r < rounds; r++)
                for (int v = 0; v < 3; v++) {
                    double t0 = omp_get_wtime();
                    if (tf_partition_metis(&a, Ps[ip], &var[v], part)) {
                        fprintf(stderr, "metis_objective: %s\n", tf_error_message());
                        return 1;
                    }
                    t[v][r] = omp_get_wtime() - t0;
                    if (r == 0)
                        needed(&a, part, Ps[ip], &mx[v], &mean[v]);
                }
            printf("| %s | %d", name, Ps[ip]);
            for (int v = 0; v < 3; v++)
                printf(" | %.3f, %.0f / %.0f", tf_median(t[v], rounds), mx[v], mean[v]);
            printf(" |\n");
            fflush(stdout);
        }
        free(part);
        tf_csr_free(&a);
    }
    return 0;
}
