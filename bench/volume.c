/* Volume at scales this machine cannot run: for each graph and rank count P,
 * the bytes of B every rank receives and the messages it receives / requests
 * it issues per SpMM, for every strategy, from the plans and volume models
 * alone (no MPI communication: the planner runs in memory).
 *
 *   twoface, fetch, collective   plan statistics (tf_plan_build with --mode):
 *                                bytes = (collective rows in + fetched rows, gap
 *                                rows included) K 4, messages = collective
 *                                sources + fetch requests; also the bytes a rank
 *                                SENDS by the collective (its stripes times
 *                                their recipients), the owner overload the
 *                                recipient-aware model watches
 *   allgather, shift(c)          tf_baseline_predict (shift: every c dividing P
 *                                up to 16, the c with the smallest max reported)
 *   p2p = sparsity-aware minimum distinct remote B rows per rank (all_stats
 *                                remote_distinct) K 4, one message per owner
 *
 * usage: volume [-k K] [-p 16,64,256] [--calibration FILE] [--csv OUT.csv]
 *               MATRIX...
 * Prints a Markdown table (max and mean over ranks) on stdout. */
#include "tf_baseline.h"
#include "tf_calib_file.h"
#include "tf_csr.h"
#include "tf_error.h"
#include "tf_mm_read.h"
#include "tf_partition.h"
#include "tf_planner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double bmax, bmean, mmax, mmean;
} vol;

static void acc(vol *v, int P, const double *b, const double *m)
{
    memset(v, 0, sizeof *v);
    for (int p = 0; p < P; p++) {
        if (b[p] > v->bmax)
            v->bmax = b[p];
        if (m[p] > v->mmax)
            v->mmax = m[p];
        v->bmean += b[p] / P;
        v->mmean += m[p] / P;
    }
}

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

static void mb(char *out, size_t n, double bytes)
{
    if (bytes >= 1e9)
        snprintf(out, n, "%.2f GB", bytes / 1e9);
    else if (bytes >= 1e6)
        snprintf(out, n, "%.1f MB", bytes / 1e6);
    else
        snprintf(out, n, "%.0f kB", bytes / 1e3);
}

int main(int argc, char **argv)
{
    int K = 128;
    const char *plist = "16,64,256", *calib = NULL, *csv_path = NULL;
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
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: volume [-k K] [-p 16,64,256] [--calibration FILE] "
                            "[--csv OUT] MATRIX...\n");
            return 2;
        } else if (nf < 64)
            files[nf++] = argv[i];
    }
    int Ps[16], nP = 0;
    for (const char *s = plist; *s && nP < 16;) {
        Ps[nP++] = atoi(s);
        const char *c = strchr(s, ',');
        if (!c)
            break;
        s = c + 1;
    }
    tf_coeffs coeffs;
    tf_plan_options dflt;
    tf_plan_options_default(&dflt);
    coeffs = dflt.coeffs;
    if (calib) {
        tf_calibration cal;
        if (tf_calib_read(calib, &cal)) {
            fprintf(stderr, "volume: %s\n", tf_error_message());
            return 1;
        }
        coeffs = cal.coeffs;
    }
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (csv)
        fprintf(csv, "graph,P,K,algo,bytes_max,bytes_mean,msgs_max,msgs_mean,sent_max\n");
    const double row = 4.0 * K;
    printf("| graph | P | minimum = p2p: MB/rank max / mean, msgs max | twoface | fetch | "
           "collective | twoface sent max | allgather | shift, best c |\n");
    printf("|---|---:|---|---|---|---|---:|---|---|\n");
    for (int f = 0; f < nf; f++) {
        tf_csr a;
        if (tf_mm_read(files[f], &a, NULL)) {
            fprintf(stderr, "volume: %s\n", tf_error_message());
            return 1;
        }
        for (int ip = 0; ip < nP; ip++) {
            int P = Ps[ip];
            double *b = calloc((size_t)P, sizeof *b), *m = calloc((size_t)P, sizeof *m);
            double *sent = calloc((size_t)P, sizeof *sent);
            vol v[3], vmin, vag, vsh = {0, 0, 0, 0};
            double sent_max[3] = {0, 0, 0};
            tf_plan plan;
            int64_t *row_off = NULL, *brow_off = NULL;
            for (int mode = 0; mode < 3; mode++) {
                tf_plan_options o;
                tf_plan_options_default(&o);
                o.nranks = P;
                o.k = K;
                o.mode = mode;
                o.coeffs = coeffs;
                if (tf_plan_build(&a, &o, &plan)) {
                    fprintf(stderr, "volume: %s: P=%d: %s\n", files[f], P, tf_error_message());
                    return 1;
                }
                for (int p = 0; p < P; p++) {
                    const tf_rank_stats *s = &plan.all_stats[p];
                    b[p] = (double)(s->coll_rows_recv + s->fetch_rows) * row;
                    m[p] = (double)(s->coll_peers_recv + s->fetch_requests);
                    sent[p] = (double)s->coll_rows_sent * row;
                    if (sent[p] > sent_max[mode])
                        sent_max[mode] = sent[p];
                }
                acc(&v[mode], P, b, m);
                if (mode == 0) {
                    /* The minimum: distinct remote rows, one message per owner. */
                    row_off = malloc((size_t)(P + 1) * sizeof *row_off);
                    brow_off = malloc((size_t)(P + 1) * sizeof *brow_off);
                    memcpy(row_off, plan.row_off, (size_t)(P + 1) * sizeof *row_off);
                    memcpy(brow_off, plan.brow_off, (size_t)(P + 1) * sizeof *brow_off);
                    char *seen = calloc((size_t)P, 1);
                    for (int p = 0; p < P; p++) {
                        b[p] = (double)plan.all_stats[p].remote_distinct * row;
                        memset(seen, 0, (size_t)P);
                        int owners = 0;
                        for (int64_t e = a.rowptr[row_off[p]]; e < a.rowptr[row_off[p + 1]]; e++) {
                            int q = tf_partition_owner(brow_off, P, a.col[e]);
                            if (q != p && !seen[q]) {
                                seen[q] = 1;
                                owners++;
                            }
                        }
                        m[p] = owners;
                    }
                    free(seen);
                    acc(&vmin, P, b, m);
                }
                tf_plan_free(&plan);
            }
            for (int p = 0; p < P; p++) {
                int64_t bb, mm;
                tf_baseline_predict(TF_BASE_ALLGATHER, P, p, row_off, brow_off, 1, K, &bb, &mm);
                b[p] = (double)bb;
                m[p] = (double)mm;
            }
            acc(&vag, P, b, m);
            int best_c = 0;
            for (int c = 1; c <= 16 && c <= P; c++) {
                if (P % c)
                    continue;
                for (int p = 0; p < P; p++) {
                    int64_t bb, mm;
                    tf_baseline_predict(TF_BASE_SHIFT, P, p, row_off, brow_off, c, K, &bb, &mm);
                    b[p] = (double)bb;
                    m[p] = (double)mm;
                }
                vol t;
                acc(&t, P, b, m);
                if (csv)
                    fprintf(csv, "%s,%d,%d,shift(c=%d),%.0f,%.0f,%.0f,%.2f,\n", base(files[f]), P,
                            K, c, t.bmax, t.bmean, t.mmax, t.mmean);
                if (!best_c || t.bmax < vsh.bmax) {
                    vsh = t;
                    best_c = c;
                }
            }
            const char *names[3] = {"twoface", "fetch", "collective"};
            if (csv) {
                fprintf(csv, "%s,%d,%d,minimum,%.0f,%.0f,%.0f,%.2f,\n", base(files[f]), P, K,
                        vmin.bmax, vmin.bmean, vmin.mmax, vmin.mmean);
                for (int x = 0; x < 3; x++)
                    fprintf(csv, "%s,%d,%d,%s,%.0f,%.0f,%.0f,%.2f,%.0f\n", base(files[f]), P, K,
                            names[x], v[x].bmax, v[x].bmean, v[x].mmax, v[x].mmean, sent_max[x]);
                fprintf(csv, "%s,%d,%d,allgather,%.0f,%.0f,%.0f,%.2f,\n", base(files[f]), P, K,
                        vag.bmax, vag.bmean, vag.mmax, vag.mmean);
            }
            char s1[32], s2[32];
            printf("| %s | %d", base(files[f]), P);
            mb(s1, sizeof s1, vmin.bmax);
            mb(s2, sizeof s2, vmin.bmean);
            printf(" | %s / %s, %.0f", s1, s2, vmin.mmax);
            const vol *all[3] = {&v[0], &v[1], &v[2]};
            for (int x = 0; x < 3; x++) {
                mb(s1, sizeof s1, all[x]->bmax);
                printf(" | %s (%.2fx), %.0f", s1, vmin.bmax > 0 ? all[x]->bmax / vmin.bmax : 0.0,
                       all[x]->mmax);
            }
            mb(s1, sizeof s1, sent_max[0]);
            printf(" | %s", s1);
            mb(s1, sizeof s1, vag.bmax);
            printf(" | %s (%.1fx), %.0f", s1, vmin.bmax > 0 ? vag.bmax / vmin.bmax : 0.0,
                   vag.mmax);
            mb(s1, sizeof s1, vsh.bmax);
            printf(" | c=%d: %s (%.1fx), %.0f |\n", best_c, s1,
                   vmin.bmax > 0 ? vsh.bmax / vmin.bmax : 0.0, vsh.mmax);
            fflush(stdout);
            free(b);
            free(m);
            free(sent);
            free(row_off);
            free(brow_off);
        }
        tf_csr_free(&a);
    }
    if (csv)
        fclose(csv);
    return 0;
}
