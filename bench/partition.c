/* Partitions compared without running: for each graph, rank
 * count P and partition (rows, nnz, metis), the planner runs in memory (the
 * default twoface mode at K) and this prints, from the plan statistics:
 *
 *   recv max / mean   B rows a rank receives per SpMM (collective rows in +
 *                     fetched rows, gap rows included), max and mean over ranks
 *   need max / mean   distinct remote B rows a rank needs (the sparsity-aware
 *                     minimum, remote_distinct)
 *   nnz max/mean      the rank's nonzeros (local + collective + fetch), max over mean
 *   pred max/mean     predicted time per rank (t_total), max over mean
 *   part s, plan s    the partition phase (METIS, renumbering and permuted copy
 *                     included) and the whole planning, without I/O
 *
 * usage: partition [-k K] [-p 4,16,64] [--calibration FILE] [--csv OUT.csv]
 *                  [--parts rows,nnz,metis] [--metis-balance nnz|nnz+rows]
 *                  [--metis-objective cut|vol] MATRIX...
 * Markdown on stdout. */
#include "tf_calib_file.h"
#include "tf_bench_list.h"
#include "tf_csr.h"
#include "tf_error.h"
#include "tf_mm_read.h"
#include "tf_partition.h"
#include "tf_partition_metis.h"
#include "tf_planner.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *base(const char *path)
{
    const char *s = strrchr(path, '/');
    s = s ? s + 1 : path;
    static char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    char *d = strstr(buf, ".mtx");
    if (d)
        *d = '\0';
    return buf;
}

static void maxmean(const double *x, int P, double *mx, double *mean)
{
    *mx = 0;
    *mean = 0;
    for (int p = 0; p < P; p++) {
        if (x[p] > *mx)
            *mx = x[p];
        *mean += x[p] / P;
    }
}

int main(int argc, char **argv)
{
    int K = 128;
    tf_metis_options mo;
    tf_metis_options_default(&mo);
    const char *plist = "4,16,64", *calib = NULL, *csv_path = NULL, *parts = "rows,nnz,metis";
    const char *files[64];
    int nf = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-k") && i + 1 < argc)
            K = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-p") && i + 1 < argc)
            plist = argv[++i];
        else if (!strcmp(argv[i], "--calibration") && i + 1 < argc)
            calib = argv[++i];
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
            csv_path = argv[++i];
        else if (!strcmp(argv[i], "--parts") && i + 1 < argc)
            parts = argv[++i];
        else if (!strcmp(argv[i], "--metis-balance") && i + 1 < argc) {
            if (tf_metis_balance_parse(argv[++i], &mo.balance)) {
                fprintf(stderr, "partition: %s\n", tf_error_message());
                return 2;
            }
        } else if (!strcmp(argv[i], "--metis-objective") && i + 1 < argc) {
            if (tf_metis_objective_parse(argv[++i], &mo.objective)) {
                fprintf(stderr, "partition: %s\n", tf_error_message());
                return 2;
            }
        }
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: partition [-k K] [-p 4,16,64] [--calibration FILE] "
                            "[--csv OUT] [--parts rows,nnz,metis] "
                            "[--metis-balance nnz|nnz+rows] [--metis-objective cut|vol] MATRIX...\n");
            return 2;
        } else if (nf < 64)
            files[nf++] = argv[i];
    }
    int Ps[16], nP = tf_bench_int_list(plist, Ps, 16);
    if (nP < 1) {
        fprintf(stderr, "partition: -p '%s': expected rank counts like 4,16,64\n", plist);
        return 2;
    }
    int kinds[3], nk = 0;
    for (const char *s = parts; *s && nk < 3;) {
        char name[16];
        size_t len = strcspn(s, ",");
        snprintf(name, sizeof name, "%.*s", (int)len, s);
        if (tf_partition_parse(name, &kinds[nk])) {
            fprintf(stderr, "partition: %s\n", tf_error_message());
            return 2;
        }
        nk++;
        s += len;
        if (*s == ',')
            s++;
    }
    tf_plan_options dflt;
    tf_plan_options_default(&dflt);
    tf_coeffs coeffs = dflt.coeffs;
    if (calib) {
        tf_calibration cal;
        if (tf_calib_read(calib, &cal)) {
            fprintf(stderr, "partition: %s\n", tf_error_message());
            return 1;
        }
        coeffs = cal.coeffs;
    }
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (csv)
        fprintf(csv, "graph,P,partition,recv_max,recv_mean,need_max,need_mean,nnz_max_mean,"
                     "pred_max_s,pred_max_mean,partition_s,plan_s\n");
    printf("| graph | P | partition | B rows recv max / mean | needed max / mean | "
           "nnz max/mean | predicted max ms (max/mean) | partition s | planning s |\n");
    printf("|---|---:|---|---:|---:|---:|---:|---:|---:|\n");
    for (int f = 0; f < nf; f++) {
        tf_csr a;
        if (tf_mm_read(files[f], &a, NULL)) {
            fprintf(stderr, "partition: %s\n", tf_error_message());
            return 1;
        }
        for (int ip = 0; ip < nP; ip++) {
            int P = Ps[ip];
            double *recv = calloc((size_t)P, sizeof *recv), *need = calloc((size_t)P, sizeof *need);
            double *nnz = calloc((size_t)P, sizeof *nnz), *pred = calloc((size_t)P, sizeof *pred);
            for (int x = 0; x < nk; x++) {
                if (kinds[x] == TF_PART_METIS && a.nrows != a.ncols)
                    continue;
                tf_plan_options o;
                tf_plan_options_default(&o);
                o.nranks = P;
                o.k = K;
                o.coeffs = coeffs;
                o.partition = kinds[x];
                o.metis = mo;
                double phase[TF_PLAN_PHASES] = {0};
                o.timing = phase;
                tf_plan plan;
                double t0 = omp_get_wtime();
                if (tf_plan_build(&a, &o, &plan)) {
                    fprintf(stderr, "partition: %s: P=%d: %s\n", files[f], P, tf_error_message());
                    return 1;
                }
                double t_plan = omp_get_wtime() - t0;
                for (int p = 0; p < P; p++) {
                    const tf_rank_stats *s = &plan.all_stats[p];
                    recv[p] = (double)(s->coll_rows_recv + s->fetch_rows);
                    need[p] = (double)s->remote_distinct;
                    nnz[p] = (double)(s->nnz_local + s->nnz_coll + s->nnz_fetch);
                    pred[p] = s->t_total;
                }
                double rmx, rmn, nmx, nmn, zmx, zmn, pmx, pmn;
                maxmean(recv, P, &rmx, &rmn);
                maxmean(need, P, &nmx, &nmn);
                maxmean(nnz, P, &zmx, &zmn);
                maxmean(pred, P, &pmx, &pmn);
                printf("| %s | %d | %s | %.0f / %.0f | %.0f / %.0f | %.3f | %.3f (%.2f) | "
                       "%.3f | %.3f |\n",
                       base(files[f]), P, tf_partition_name(kinds[x]), rmx, rmn, nmx, nmn,
                       zmn > 0 ? zmx / zmn : 0.0, pmx * 1e3, pmn > 0 ? pmx / pmn : 0.0,
                       phase[0], t_plan);
                if (csv)
                    fprintf(csv, "%s,%d,%s,%.0f,%.1f,%.0f,%.1f,%.4f,%.6g,%.4f,%.6f,%.6f\n",
                            base(files[f]), P, tf_partition_name(kinds[x]), rmx, rmn, nmx, nmn,
                            zmn > 0 ? zmx / zmn : 0.0, pmx, pmn > 0 ? pmx / pmn : 0.0, phase[0],
                            t_plan);
                fflush(stdout);
                tf_plan_free(&plan);
            }
            free(recv);
            free(need);
            free(nnz);
            free(pred);
        }
        tf_csr_free(&a);
    }
    if (csv)
        fclose(csv);
    return 0;
}
