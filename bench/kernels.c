/* The executor's local kernels against their peers and the memory bandwidth,
 * all in one process, interleaved: every round runs each contender once, the
 * table gives each one's median.
 *
 *   tf-<variant>  tf_kern_csr over all rows of A (the local and collective
 *                 kernels), in each instruction-set variant this CPU runs
 *                 (tf-baseline, tf-avx2, tf-avx512); with -t T, T threads
 *                 over blocks of 64 rows as the executor runs it
 *   tf-csc        tf_kern_csc (the fetch kernel, scattering into C rows) over
 *                 A stored column-major, in the best variant
 *   eigen         Eigen's SparseMatrix<RowMajor> x row-major dense (compiled
 *                 -O3 -march=native)
 *   rsb           librsb's rsb_spmm on the matrix as built from the CSR
 *   rsb-tuned     the same after rsb_tune_spmm for this K (threads fixed)
 *
 * Columns: median ms; GFLOP/s (2 nnz K); compulsory bytes (A: 8 bytes per
 * nonzero + row or column pointers; each B row the nonzeros use, once; C)
 * over the time as a share of a STREAM-like copy on the same threads (the
 * best rate seen so far, the copy running once per round too); and
 * "vs best peer" = time of the faster of {eigen, rsb-tuned} / this time
 * (above 1: faster than the best peer). Every C is checked against
 * tf-baseline's: the tf variants must agree bitwise, the peers within float
 * rounding (max |diff| <= 1e-5 max |C|); a mismatch fails the run.
 *
 * usage: kernels [-k 16,32,128,512] [-t THREADS] [--csv OUT.csv] MATRIX...
 * (Markdown on stdout; the last lines summarise the targets.) */
#include "kernels_peers.h"
#include "tf_csr.h"
#include "tf_dense.h"
#include "tf_error.h"
#include "tf_kernels.h"
#include "tf_mm_read.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROW_BLOCK 64 /* as executor/tf_spmm.c */
#define MAX_CONT 8
#define PEER_TOL 1e-5

static double now(void) { return omp_get_wtime(); }

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A STREAM-like copy of two 128 MiB float arrays with `threads` threads,
 * timed at the start (7 times) and once in every round of every case, so
 * that it sees the same load as the kernels; the reference is the best rate
 * seen so far (read + write bytes / time, as STREAM counts). */
typedef struct {
    float *a, *b;
    int64_t n;
    int threads;
    double best; /* bytes per second */
} copy_ref;

static void copy_once(copy_ref *r)
{
    double t = now();
#pragma omp parallel num_threads(r->threads)
    {
        int nt = omp_get_num_threads(), id = omp_get_thread_num();
        int64_t c0 = r->n * id / nt, c1 = r->n * (id + 1) / nt;
        memcpy(r->a + c0, r->b + c0, (size_t)(c1 - c0) * sizeof *r->a);
    }
    t = now() - t;
    double bw = 2.0 * (double)r->n * sizeof(float) / t;
    if (bw > r->best)
        r->best = bw;
}

static int copy_init(copy_ref *r, int threads)
{
    r->n = (int64_t)32 << 20;
    r->threads = threads;
    r->best = 0;
    r->a = malloc((size_t)r->n * sizeof *r->a);
    r->b = malloc((size_t)r->n * sizeof *r->b);
    if (!r->a || !r->b)
        return 1;
#pragma omp parallel for num_threads(threads)
    for (int64_t i = 0; i < r->n; i++) {
        r->a[i] = 0.0f;
        r->b[i] = (float)i;
    }
    for (int x = 0; x < 7; x++)
        copy_once(r);
    return 0;
}

static void copy_free(copy_ref *r)
{
    free(r->a);
    free(r->b);
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

/* One matrix in every layout the contenders take. */
typedef struct {
    tf_csr a;
    int64_t *cptr; /* CSC copy: the fetch kernel's layout */
    int32_t *cidx;
    float *cval;
    int *rp32; /* 32-bit row offsets for the peers */
    int64_t used_cols;
    kp_eigen *eigen;
    kp_rsb *rsb, *rsb_tuned;
} mat;

typedef struct {
    const mat *m;
    const float *b;
    float *c;
    int64_t k;
    int threads;
    int rsb_fail;
    int c_mode; /* the executor's store rule for a C of this size */
} job;

typedef void (*run_fn)(job *j);

static void run_tf(job *j)
{
    const tf_csr *a = &j->m->a;
    if (j->threads <= 1) {
        tf_kern_csr(0, a->nrows, a->rowptr, a->col, a->val, j->b, j->k, j->c, j->c_mode);
        return;
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(j->threads)
    for (int64_t x = 0; x < a->nrows; x += ROW_BLOCK)
        tf_kern_csr(x, x + ROW_BLOCK < a->nrows ? x + ROW_BLOCK : a->nrows, a->rowptr, a->col,
                    a->val, j->b, j->k, j->c, j->c_mode);
}

/* One thread at any -t: the executor gives each fetched run to one thread. */
static void run_csc(job *j)
{
    const tf_csr *a = &j->m->a;
    memset(j->c, 0, (size_t)a->nrows * (size_t)j->k * sizeof *j->c);
    tf_kern_csc(0, a->ncols, j->m->cptr, j->m->cidx, j->m->cval, j->b, j->k, j->c);
}

static void run_eigen(job *j) { kp_eigen_spmm(j->m->eigen, j->b, (int)j->k, j->c, j->threads); }

static void run_rsb(job *j) { j->rsb_fail |= kp_rsb_spmm(j->m->rsb, j->b, (int)j->k, j->c); }

static void run_rsb_tuned(job *j)
{
    j->rsb_fail |= kp_rsb_spmm(j->m->rsb_tuned, j->b, (int)j->k, j->c);
}

typedef struct {
    char name[32];
    run_fn fn;
    const char *variant; /* tf kernels: the variant to select first */
    float *c;
    double *t;
    double med;
} contender;

/* One call of a contender (in its variant, into its own C); seconds. */
static double run_timed(const contender *c, job *j)
{
    if (c->variant)
        tf_kern_select(c->variant);
    j->c = c->c;
    double t = now();
    c->fn(j);
    return now() - t;
}

static int mat_load(const char *path, mat *m, int threads)
{
    memset(m, 0, sizeof *m);
    if (tf_mm_read(path, &m->a, NULL)) {
        fprintf(stderr, "kernels: %s\n", tf_error_message());
        return 1;
    }
    const tf_csr *a = &m->a;
    if (a->nnz > INT32_MAX || a->nrows > INT32_MAX || a->ncols > INT32_MAX) {
        fprintf(stderr, "kernels: %s: too large for the peers' 32-bit indices\n", path);
        return 1;
    }
    size_t nz = (size_t)(a->nnz > 0 ? a->nnz : 1);
    m->cptr = calloc((size_t)a->ncols + 1, sizeof *m->cptr);
    m->cidx = malloc(nz * sizeof *m->cidx);
    m->cval = malloc(nz * sizeof *m->cval);
    m->rp32 = malloc(((size_t)a->nrows + 1) * sizeof *m->rp32);
    int64_t *pos = malloc(((size_t)a->ncols + 1) * sizeof *pos);
    if (!m->cptr || !m->cidx || !m->cval || !m->rp32 || !pos) {
        free(pos);
        fprintf(stderr, "kernels: %s: out of memory\n", path);
        return 1;
    }
    for (int64_t e = 0; e < a->nnz; e++)
        m->cptr[a->col[e] + 1]++;
    for (int64_t j = 0; j < a->ncols; j++) {
        m->used_cols += m->cptr[j + 1] > 0;
        m->cptr[j + 1] += m->cptr[j];
    }
    memcpy(pos, m->cptr, (size_t)a->ncols * sizeof *pos);
    for (int64_t i = 0; i < a->nrows; i++)
        for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++) {
            int64_t p = pos[a->col[e]]++;
            m->cidx[p] = (int32_t)i;
            m->cval[p] = a->val[e];
        }
    free(pos);
    for (int64_t i = 0; i <= a->nrows; i++)
        m->rp32[i] = (int)a->rowptr[i];
    m->eigen = kp_eigen_new((int)a->nrows, (int)a->ncols, (int)a->nnz, m->rp32, a->col, a->val);
    m->rsb = kp_rsb_new((int)a->nrows, (int)a->ncols, (int)a->nnz, m->rp32, a->col, a->val,
                        threads);
    if (!m->eigen || !m->rsb) {
        fprintf(stderr, "kernels: %s: cannot build the %s matrix\n", path,
                m->eigen ? "librsb" : "Eigen");
        return 1;
    }
    return 0;
}

static void mat_free(mat *m)
{
    free(m->cptr);
    free(m->cidx);
    free(m->cval);
    free(m->rp32);
    if (m->eigen)
        kp_eigen_free(m->eigen);
    kp_rsb_free(m->rsb);
    kp_rsb_free(m->rsb_tuned);
    tf_csr_free(&m->a);
}

/* max |x - ref| / max |ref| (0 when both are all zero). */
static double scaled_diff(const float *x, const float *ref, size_t n)
{
    double d = 0, r = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)x[i] - ref[i]);
        if (e > d || isnan(e))
            d = isnan(e) ? INFINITY : e;
        if (fabs(ref[i]) > r)
            r = fabs(ref[i]);
    }
    return r > 0 ? d / r : d;
}

static int parse_ks(const char *s, int *ks, int max)
{
    int n = 0;
    while (*s && n < max) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 65536)
            return -1;
        ks[n++] = (int)v;
        if (*end != ',')
            return *end ? -1 : n;
        s = end + 1;
    }
    return n;
}

static void usage(void)
{
    fprintf(stderr, "usage: kernels [-k 16,32,128,512] [-t THREADS] [--csv OUT] MATRIX...\n");
}

int main(int argc, char **argv)
{
    const char *klist = "16,32,128,512", *csv_path = NULL;
    const char *files[64];
    int nf = 0, threads = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-k") && i + 1 < argc)
            klist = argv[++i];
        else if (!strcmp(argv[i], "-t") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
            csv_path = argv[++i];
        else if (argv[i][0] == '-' || nf == 64) {
            usage();
            return 2;
        } else
            files[nf++] = argv[i];
    }
    int ks[16];
    int nk = parse_ks(klist, ks, 16);
    if (nk <= 0 || threads < 1 || threads > 256 || nf == 0) {
        usage();
        return 2;
    }
    if (tf_kern_init()) {
        fprintf(stderr, "kernels: %s\n", tf_error_message());
        return 2;
    }
    const char *forced = getenv("TF_KERNEL");
    const char *best = tf_kern_variant(); /* TF_KERNEL or the CPU's best */
    if (kp_rsb_init()) {
        fprintf(stderr, "kernels: rsb_lib_init failed\n");
        return 1;
    }
    int nvar;
    const char *const *vars = tf_kern_variants(&nvar);

    copy_ref cref;
    if (copy_init(&cref, threads)) {
        fprintf(stderr, "kernels: out of memory for the copy\n");
        return 1;
    }
    const double bw0 = cref.best;
    FILE *csv = NULL;
    if (csv_path && !(csv = fopen(csv_path, "w"))) {
        fprintf(stderr, "kernels: cannot write %s\n", csv_path);
        return 1;
    }
    if (csv)
        fprintf(csv, "graph,K,threads,kernel,time_s,gflops,bytes,fraction_copy_bw,vs_best_peer,"
                     "max_diff\n");
    printf("Threads: %d. Copy bandwidth at the start (two 128 MiB arrays, best of 7): %.2f GB/s. "
           "Our kernels' variant: %s%s. Eigen %s, librsb %s.\n\n",
           threads, bw0 / 1e9, best, forced && *forced ? " (TF_KERNEL)" : " (auto)",
           kp_eigen_version(), kp_rsb_version());
    printf("| graph | K | kernel | ms | GFLOP/s | of copy bw | vs best peer | check |\n");
    printf("|---|---:|---|---:|---:|---:|---:|---|\n");

    double log_ratio = 0, log_rate = 0, log_rate_best = 0, min_ratio = 1e30;
    int ncases = 0, failed = 0;
    char min_case[300] = "";
    for (int f = 0; f < nf; f++) {
        mat m;
        if (mat_load(files[f], &m, threads)) {
            mat_free(&m);
            return 1;
        }
        const tf_csr *a = &m.a;
        const char *g = base(files[f]);
        for (int ik = 0; ik < nk; ik++) {
            const int64_t k = ks[ik];
            const size_t csize = (size_t)a->nrows * (size_t)k;
            float *b = tf_kern_alloc_rows(a->ncols, k, sizeof *b); /* rows on lines, as B's */
            contender ct[MAX_CONT];
            int nc = 0;
            for (int v = 0; v < nvar; v++)
                if (tf_kern_available(vars[v])) {
                    snprintf(ct[nc].name, sizeof ct[nc].name, "tf-%s", vars[v]);
                    ct[nc].fn = run_tf;
                    ct[nc++].variant = vars[v];
                }
            const contender rest[] = {{"tf-csc", run_csc, best, NULL, NULL, 0},
                                      {"eigen", run_eigen, NULL, NULL, NULL, 0},
                                      {"rsb", run_rsb, NULL, NULL, NULL, 0},
                                      {"rsb-tuned", run_rsb_tuned, NULL, NULL, NULL, 0}};
            for (size_t x = 0; x < sizeof rest / sizeof rest[0]; x++)
                ct[nc++] = rest[x];
            int oom = !b;
            for (int x = 0; x < nc; x++) {
                /* Aligned as the executor's callers allocate C, so that the
                 * streaming stores it uses on a large C apply here too. */
                ct[x].c = tf_kern_alloc_c(a->nrows, k);
                ct[x].t = NULL;
                oom |= !ct[x].c;
            }
            if (oom) {
                fprintf(stderr, "kernels: %s K=%lld: out of memory\n", g, (long long)k);
                return 1;
            }
            tf_dense_fill(b, 1, 0, a->ncols, k);
            job j = {&m, b, NULL, k, threads, 0, tf_kern_c_mode((int64_t)(csize * sizeof(float)))};

            /* A fresh librsb matrix tuned for this K. */
            double tune_s = 0;
            kp_rsb_free(m.rsb_tuned);
            m.rsb_tuned = kp_rsb_new((int)a->nrows, (int)a->ncols, (int)a->nnz, m.rp32, a->col,
                                     a->val, threads);
            if (!m.rsb_tuned || kp_rsb_tune(m.rsb_tuned, b, (int)k, ct[nc - 1].c, &tune_s)) {
                fprintf(stderr, "kernels: %s K=%lld: rsb_tune_spmm failed\n", g, (long long)k);
                return 1;
            }

            /* Warm-up round (also the results checked below), then rounds
             * until each contender had ~0.3 s, at least 5, at most 21. */
            double round_s = 0, slowest = 0;
            for (int x = 0; x < nc; x++) {
                double t = run_timed(&ct[x], &j);
                round_s += t;
                if (t > slowest)
                    slowest = t;
            }
            int reps = slowest > 0 ? (int)(0.3 / slowest) : 21;
            reps = reps < 5 ? 5 : reps > 21 ? 21 : reps;
            for (int x = 0; x < nc; x++)
                if (!(ct[x].t = malloc((size_t)reps * sizeof(double)))) {
                    fprintf(stderr, "kernels: out of memory\n");
                    return 1;
                }
            for (int r = 0; r < reps; r++) {
                copy_once(&cref);
                for (int x = 0; x < nc; x++)
                    ct[x].t[r] = run_timed(&ct[x], &j);
            }
            tf_kern_select(best);
            if (j.rsb_fail) {
                fprintf(stderr, "kernels: %s K=%lld: rsb_spmm failed\n", g, (long long)k);
                return 1;
            }
            int ref = 0; /* tf-baseline */
            double peer_best = 1e30;
            for (int x = 0; x < nc; x++) {
                qsort(ct[x].t, (size_t)reps, sizeof(double), cmpd);
                ct[x].med = ct[x].t[reps / 2];
                if (!strcmp(ct[x].name, "eigen") || !strcmp(ct[x].name, "rsb-tuned"))
                    if (ct[x].med < peer_best)
                        peer_best = ct[x].med;
            }
            const double bytes_a = (double)a->nnz * 8;
            const double bytes_bc = (double)m.used_cols * k * 4 + (double)a->nrows * k * 4;
            for (int x = 0; x < nc; x++) {
                const int is_tf = ct[x].variant != NULL && ct[x].fn == run_tf;
                const int is_csc = ct[x].fn == run_csc;
                double bytes = bytes_a + bytes_bc + (double)((is_csc ? a->ncols : a->nrows) + 1) * 8;
                double t = ct[x].med, gf = 2.0 * (double)a->nnz * k / t / 1e9;
                double frac = bytes / t / cref.best, ratio = peer_best / t;
                char check[48];
                double diff = 0;
                if (x == ref)
                    snprintf(check, sizeof check, "reference");
                else if (is_tf || is_csc) {
                    int same = !memcmp(ct[x].c, ct[ref].c, csize * sizeof(float));
                    diff = same ? 0 : scaled_diff(ct[x].c, ct[ref].c, csize);
                    snprintf(check, sizeof check, same ? "bitwise" : "DIFFERS %.2g", diff);
                    failed |= !same;
                } else {
                    diff = scaled_diff(ct[x].c, ct[ref].c, csize);
                    snprintf(check, sizeof check, diff <= PEER_TOL ? "%.1g" : "DIFFERS %.2g",
                             diff);
                    failed |= !(diff <= PEER_TOL);
                }
                printf("| %s | %lld | %s%s | %.3f | %.2f | %.0f%% | %.2f | %s |\n", g,
                       (long long)k, ct[x].name,
                       is_tf && !strcmp(ct[x].variant, best) ? " **" : "", t * 1e3, gf,
                       100 * frac, ratio, check);
                if (csv)
                    fprintf(csv, "%s,%lld,%d,%s,%.9g,%.4g,%.0f,%.4f,%.4f,%.3g\n", g,
                            (long long)k, threads, ct[x].name, t, gf, bytes, frac, ratio, diff);
                if (is_tf && !strcmp(ct[x].variant, best)) {
                    log_ratio += log(ratio);
                    log_rate += log(bytes / t);
                    log_rate_best += log(bytes / ct[x].t[0]); /* t sorted: fastest round */
                    ncases++;
                    if (ratio < min_ratio) {
                        min_ratio = ratio;
                        snprintf(min_case, sizeof min_case, "%s K=%lld", g, (long long)k);
                    }
                }
            }
            fprintf(stderr, "kernels: %s K=%lld: %d rounds of %.3f s, rsb_tune_spmm %.2f s\n", g,
                    (long long)k, reps, round_s, tune_s);
            fflush(stdout);
            for (int x = 0; x < nc; x++) {
                free(ct[x].c);
                free(ct[x].t);
            }
            free(b);
        }
        mat_free(&m);
    }
    if (ncases > 0)
        printf("\nSummary (tf-%s, %d threads, %d cases): vs best peer {eigen, rsb-tuned} geomean "
               "%.2fx, min %.2fx (%s); compulsory bytes at %.0f%% of the best copy bandwidth "
               "of the run (%.2f GB/s), geomean (%.0f%% with each case's fastest round, as "
               "the copy's).\n",
               best, threads, ncases, exp(log_ratio / ncases), min_ratio, min_case,
               100 * exp(log_rate / ncases) / cref.best, cref.best / 1e9,
               100 * exp(log_rate_best / ncases) / cref.best);
    if (csv)
        fclose(csv);
    kp_rsb_exit();
    copy_free(&cref);
    if (failed) {
        fprintf(stderr, "kernels: some results differ from tf-baseline's (see the check column)\n");
        return 1;
    }
    return 0;
}
