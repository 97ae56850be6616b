/* The executor's local compute kernels against the machine's memory
 * bandwidth, on one core (what one rank gets in the benchmark).
 *
 *   copy   STREAM-like copy a[i] = b[i] of two 128 MiB float arrays, best of
 *          7; bandwidth = 2 x 128 MiB / time (read + write, as STREAM counts)
 *   csr    tf_kern_csr over all rows of A (the local and collective kernels):
 *          C = A B, B n x K, C m x K
 *   csc    tf_kern_csc over all columns of A stored column-major (the fetch
 *          kernel, scattering into C rows)
 *
 * For each kernel: the median time of several runs (after one untimed run),
 * GFLOP/s (2 nnz K), and the compulsory bytes it touches per run, A (8 bytes
 * per nonzero + 8 per row or column pointer) + the B rows its nonzeros use,
 * once each + C (m K 4) over the time, as a fraction of the copy bandwidth.
 * Every nonzero actually reads a whole B row (nnz K 4 bytes "gathered"); the
 * gathered rate is printed too: above the copy bandwidth means the rows come
 * from cache.
 *
 * usage: kernels [-k 32,128,512] [--csv OUT.csv] MATRIX...   (Markdown on stdout) */
#include "tf_csr.h"
#include "tf_dense.h"
#include "tf_error.h"
#include "tf_kernels.h"
#include "tf_mm_read.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double now(void) { return omp_get_wtime(); }

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double copy_bandwidth(void)
{
    const size_t n = (size_t)32 << 20; /* 32 Mi floats = 128 MiB */
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    if (!a || !b)
        return 0;
    for (size_t i = 0; i < n; i++) {
        a[i] = 0.0f;
        b[i] = (float)i;
    }
    double best = 1e30;
    for (int r = 0; r < 7; r++) {
        double t = now();
        memcpy(a, b, n * sizeof *a);
        t = now() - t;
        if (t < best)
            best = t;
    }
    /* Use a so the copy cannot be elided. */
    volatile float sink = a[n / 2];
    (void)sink;
    free(a);
    free(b);
    return 2.0 * (double)n * sizeof(float) / best;
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

/* Median of reps runs of fn after one untimed run; reps grows until ~0.3 s. */
typedef void (*kern_fn)(const void *ctx);
static double time_kernel(kern_fn fn, const void *ctx)
{
    fn(ctx);
    double t1 = now();
    fn(ctx);
    t1 = now() - t1;
    int reps = t1 > 0 ? (int)(0.3 / t1) : 50;
    if (reps < 3)
        reps = 3;
    if (reps > 51)
        reps = 51;
    double *ts = malloc((size_t)reps * sizeof *ts);
    for (int r = 0; r < reps; r++) {
        double t = now();
        fn(ctx);
        ts[r] = now() - t;
    }
    qsort(ts, (size_t)reps, sizeof *ts, cmpd);
    double med = ts[reps / 2];
    free(ts);
    return med;
}

typedef struct {
    const tf_csr *a;
    const int64_t *cptr;
    const int32_t *cidx;
    const float *cval;
    const float *b;
    float *c;
    int64_t k;
} job;

static void run_csr(const void *p)
{
    const job *j = p;
    tf_kern_csr(0, j->a->nrows, j->a->rowptr, j->a->col, j->a->val, j->b, j->k, j->c, 0);
}

static void run_csc(const void *p)
{
    const job *j = p;
    memset(j->c, 0, (size_t)j->a->nrows * (size_t)j->k * sizeof *j->c);
    tf_kern_csc(0, j->a->ncols, j->cptr, j->cidx, j->cval, j->b, j->k, j->c);
}

int main(int argc, char **argv)
{
    const char *klist = "32,128,512", *csv_path = NULL;
    const char *files[64];
    int nf = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-k") && i + 1 < argc)
            klist = argv[++i];
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
            csv_path = argv[++i];
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: kernels [-k 32,128,512] [--csv OUT] MATRIX...\n");
            return 2;
        } else if (nf < 64)
            files[nf++] = argv[i];
    }
    int Ks[8], nk = 0;
    for (const char *s = klist; *s && nk < 8;) {
        Ks[nk++] = atoi(s);
        const char *c = strchr(s, ',');
        if (!c)
            break;
        s = c + 1;
    }
    double bw = copy_bandwidth();
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (csv)
        fprintf(csv, "graph,K,kernel,time_s,gflops,bytes,bytes_per_s,copy_bw,fraction,gathered_per_s\n");
    printf("STREAM-like copy bandwidth (one core, 128 MiB arrays, best of 7): %.2f GB/s\n\n",
           bw / 1e9);
    printf("| graph | K | kernel | ms | GFLOP/s | compulsory MB | GB/s | of copy bw | gathered GB/s |\n");
    printf("|---|---:|---|---:|---:|---:|---:|---:|---:|\n");
    for (int f = 0; f < nf; f++) {
        tf_csr a;
        if (tf_mm_read(files[f], &a, NULL)) {
            fprintf(stderr, "kernels: %s\n", tf_error_message());
            return 1;
        }
        /* CSC copy (the fetch kernel's layout). */
        int64_t *cptr = calloc((size_t)a.ncols + 1, sizeof *cptr);
        int32_t *cidx = malloc((size_t)(a.nnz > 0 ? a.nnz : 1) * sizeof *cidx);
        float *cval = malloc((size_t)(a.nnz > 0 ? a.nnz : 1) * sizeof *cval);
        char *used = calloc((size_t)a.ncols + 1, 1);
        for (int64_t e = 0; e < a.nnz; e++) {
            cptr[a.col[e] + 1]++;
            used[a.col[e]] = 1;
        }
        int64_t ucols = 0;
        for (int64_t j = 0; j < a.ncols; j++) {
            cptr[j + 1] += cptr[j];
            ucols += used[j];
        }
        int64_t *pos = malloc((size_t)a.ncols * sizeof *pos + 1);
        memcpy(pos, cptr, (size_t)a.ncols * sizeof *pos);
        for (int64_t i = 0; i < a.nrows; i++)
            for (int64_t e = a.rowptr[i]; e < a.rowptr[i + 1]; e++) {
                int64_t p = pos[a.col[e]]++;
                cidx[p] = (int32_t)i;
                cval[p] = a.val[e];
            }
        free(pos);
        for (int ik = 0; ik < nk; ik++) {
            int64_t k = Ks[ik];
            float *b = malloc((size_t)a.ncols * (size_t)k * sizeof *b);
            float *c = calloc((size_t)a.nrows * (size_t)k, sizeof *c);
            if (!b || !c) {
                fprintf(stderr, "kernels: out of memory\n");
                return 1;
            }
            tf_dense_fill(b, 1, 0, a.ncols, k);
            job j = {&a, cptr, cidx, cval, b, c, k};
            double bytes_a_csr = (double)a.nnz * 8 + (double)(a.nrows + 1) * 8;
            double bytes_a_csc = (double)a.nnz * 8 + (double)(a.ncols + 1) * 8;
            double bytes_bc = (double)ucols * k * 4 + (double)a.nrows * k * 4;
            for (int kern = 0; kern < 2; kern++) {
                double t = time_kernel(kern ? run_csc : run_csr, &j);
                double bytes = (kern ? bytes_a_csc : bytes_a_csr) + bytes_bc;
                double gf = 2.0 * (double)a.nnz * k / t / 1e9;
                double gathered = (double)a.nnz * k * 4 / t;
                printf("| %s | %lld | %s | %.3f | %.2f | %.1f | %.2f | %.0f%% | %.1f |\n",
                       base(files[f]), (long long)k, kern ? "csc (fetch)" : "csr (local/coll)",
                       t * 1e3, gf, bytes / 1e6, bytes / t / 1e9, 100.0 * bytes / t / bw,
                       gathered / 1e9);
                if (csv)
                    fprintf(csv, "%s,%lld,%s,%.9g,%.4g,%.0f,%.6g,%.6g,%.4f,%.6g\n",
                            base(files[f]), (long long)k, kern ? "csc" : "csr", t, gf, bytes,
                            bytes / t, bw, bytes / t / bw, gathered);
                fflush(stdout);
            }
            free(b);
            free(c);
        }
        free(cptr);
        free(cidx);
        free(cval);
        free(used);
        tf_csr_free(&a);
    }
    if (csv)
        fclose(csv);
    return 0;
}
