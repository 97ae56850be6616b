/* PETSc as an external peer of twoface-exec (docs/benchmarks.md, "PETSc"):
 * C = A B with MatMatMult of an MPIAIJ A and an MPIDENSE B, MAT_REUSE_MATRIX
 * after the first product, on the same row partition and the same B values
 * as twoface-exec, with the same timing protocol and JSON fields.
 *
 *   mpirun -n P petsc-spmm MATRIX.mtx[.zst|.gz] [-k K] [-i N] [--warmup W]
 *          [--time S] [--partition rows|nnz] [--seed S] [--json]
 *
 * Built by `make bench-petsc` with PETSc's flags only. It does not link
 * libtwoface: PETSc links the MPI flavour of HDF5 and the library the serial
 * one, and the two must never be loaded into one process. So the pieces it
 * needs are copied here: the B generator (format/tf_dense.c), the two row
 * partitions (format/tf_partition.c), and a minimal Matrix Market reader
 * (coordinate real/integer/pattern, general/symmetric/skew-symmetric; .zst and
 * .gz through `zstd -dc` / `gzip -dc`). Every rank reads the file, sorts the
 * entries, sums duplicates, partitions and keeps its rows.
 *
 * PETSc computes in double precision (the Debian build has real double
 * scalars): A, B and C are doubles here, floats in twoface. Bytes received are
 * the model of its scatter: the distinct remote columns of a rank's rows
 * times K times 8 bytes, one message per owner. */
#include <petscmat.h>

#include <ctype.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "tf_dense.h"

/* ---- tf_dense_value of format/tf_dense.c (keep identical): this program
 * links PETSc's MPI flavour of HDF5 and so not libtwoface, but the header's
 * inline tf_mix64 needs no library ---- */
static float dense_value(uint64_t seed, int64_t j, int64_t k)
{
    uint64_t h1 = tf_mix64(seed + 0x9E3779B97F4A7C15ULL * (uint64_t)(j + 1));
    uint64_t h2 = tf_mix64(h1 ^ (0xBF58476D1CE4E5B9ULL * (uint64_t)(k + 1)));
    return (float)((double)(h2 >> 40) * (1.0 / 8388608.0) - 1.0);
}

typedef struct {
    int32_t r, c;
    double v;
} entry;

static int cmp_entry(const void *x, const void *y)
{
    const entry *a = x, *b = y;
    if (a->r != b->r)
        return a->r < b->r ? -1 : 1;
    return (a->c > b->c) - (a->c < b->c);
}

static int cmpd(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void die(int rank, const char *msg, const char *arg)
{
    if (rank == 0)
        fprintf(stderr, "petsc-spmm: %s%s%s\n", arg ? arg : "", arg ? ": " : "", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Reads the whole matrix (expanded) into sorted, duplicate-free entries. */
static entry *read_mm(const char *path, int rank, int64_t *m_out, int64_t *n_out, int64_t *nnz_out)
{
    FILE *f = NULL;
    int piped = 0;
    size_t len = strlen(path);
    char cmd[4200];
    if (len > 4 && strcmp(path + len - 4, ".zst") == 0) {
        snprintf(cmd, sizeof cmd, "zstd -dc -- '%s'", path);
        f = popen(cmd, "r");
        piped = 1;
    } else if (len > 3 && strcmp(path + len - 3, ".gz") == 0) {
        snprintf(cmd, sizeof cmd, "gzip -dc -- '%s'", path);
        f = popen(cmd, "r");
        piped = 1;
    } else {
        f = fopen(path, "r");
    }
    if (!f)
        die(rank, "cannot open", path);
    char line[1 << 16];
    if (!fgets(line, sizeof line, f))
        die(rank, "empty file", path);
    char obj[64], fmt[64], field[64], sym[64];
    if (sscanf(line, "%%%%MatrixMarket %63s %63s %63s %63s", obj, fmt, field, sym) != 4)
        die(rank, "not a Matrix Market file", path);
    for (char *s = fmt; *s; s++)
        *s = (char)tolower((unsigned char)*s);
    for (char *s = field; *s; s++)
        *s = (char)tolower((unsigned char)*s);
    for (char *s = sym; *s; s++)
        *s = (char)tolower((unsigned char)*s);
    if (strcmp(fmt, "coordinate") != 0)
        die(rank, "only coordinate files", path);
    int pattern = strcmp(field, "pattern") == 0;
    if (!pattern && strcmp(field, "real") != 0 && strcmp(field, "integer") != 0)
        die(rank, "only real, integer or pattern fields", path);
    int symmetric = strcmp(sym, "symmetric") == 0, skew = strcmp(sym, "skew-symmetric") == 0;
    if (!symmetric && !skew && strcmp(sym, "general") != 0)
        die(rank, "only general, symmetric or skew-symmetric", path);
    long long m = -1, n = -1, cnt = -1;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '%' || line[0] == '\n' || line[0] == '\r')
            continue;
        if (sscanf(line, "%lld %lld %lld", &m, &n, &cnt) != 3)
            die(rank, "bad size line", path);
        break;
    }
    if (m < 0 || n < 0 || cnt < 0 || m > INT32_MAX || n > INT32_MAX)
        die(rank, "bad sizes", path);
    size_t cap = (size_t)cnt * ((symmetric || skew) ? 2 : 1) + 1, ne = 0;
    entry *e = malloc(cap * sizeof *e);
    if (!e)
        die(rank, "out of memory", path);
    long long got = 0;
    while (got < cnt && fgets(line, sizeof line, f)) {
        if (line[0] == '%' || line[0] == '\n' || line[0] == '\r')
            continue;
        char *p = line, *end;
        long long i = strtoll(p, &end, 10);
        p = end;
        long long j = strtoll(p, &end, 10);
        if (end == p)
            die(rank, "bad entry line", path);
        p = end;
        double v = 1.0;
        if (!pattern) {
            v = strtod(p, &end);
            if (end == p)
                die(rank, "bad value", path);
        }
        if (i < 1 || i > m || j < 1 || j > n)
            die(rank, "index out of range", path);
        e[ne++] = (entry){(int32_t)(i - 1), (int32_t)(j - 1), v};
        if ((symmetric || skew) && i != j)
            e[ne++] = (entry){(int32_t)(j - 1), (int32_t)(i - 1), skew ? -v : v};
        got++;
    }
    if (got != cnt)
        die(rank, "fewer entries than the size line says", path);
    if (piped ? pclose(f) != 0 : fclose(f) != 0)
        die(rank, "read error (decompression failed?)", path);
    qsort(e, ne, sizeof *e, cmp_entry);
    size_t w = 0;
    for (size_t x = 0; x < ne; x++) {
        if (w > 0 && e[w - 1].r == e[x].r && e[w - 1].c == e[x].c)
            e[w - 1].v += e[x].v; /* duplicates summed */
        else
            e[w++] = e[x];
    }
    /* float32 values, as twoface stores them */
    for (size_t x = 0; x < w; x++)
        e[x].v = (double)(float)e[x].v;
    *m_out = m;
    *n_out = n;
    *nnz_out = (int64_t)w;
    return e;
}

int main(int argc, char **argv)
{
    /* As twoface-exec: freed memory stays mapped (first-touch page faults are
     * very expensive on the development VM; MPI allocates temporaries). */
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
    /* PETSc does not see our arguments (no "unused option" warnings). */
    PetscCall(PetscInitialize(NULL, NULL, NULL, NULL));
    MPI_Comm comm = PETSC_COMM_WORLD;
    int rank, P;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &P);
    const char *path = NULL, *partition = "rows";
    int K = 128, iters = 10, warmup = 2, json = 0, max_iters = 100000;
    double budget = 0;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(s, "--json"))
            json = 1;
        else if (!strcmp(s, "-k") && v)
            K = atoi(v), i++;
        else if ((!strcmp(s, "-i") || !strcmp(s, "--iterations")) && v)
            iters = atoi(v), i++;
        else if (!strcmp(s, "--warmup") && v)
            warmup = atoi(v), i++;
        else if (!strcmp(s, "--time") && v)
            budget = atof(v), i++;
        else if (!strcmp(s, "--max-iterations") && v)
            max_iters = atoi(v), i++;
        else if (!strcmp(s, "--partition") && v)
            partition = v, i++;
        else if (!strcmp(s, "--seed") && v)
            seed = strtoull(v, NULL, 0), i++;
        else if (s[0] != '-' && !path)
            path = s;
        else
            die(rank,
                "usage: petsc-spmm MATRIX [-k K] [-i N] [--warmup W] [--time S] "
                "[--partition rows|nnz] [--seed S] [--json]",
                NULL);
    }
    if (!path || K < 1 || iters < 1 || warmup < 0)
        die(rank, "usage: petsc-spmm MATRIX [-k K] [-i N] [--warmup W] [--time S] ...", NULL);
    if (strcmp(partition, "rows") && strcmp(partition, "nnz"))
        die(rank, "--partition: rows or nnz", NULL);
    if (max_iters < iters)
        max_iters = iters;

    int64_t m, n, nnz;
    entry *e = read_mm(path, rank, &m, &n, &nnz);
    /* Row counts -> global rowptr. */
    int64_t *rowptr = calloc((size_t)m + 1, sizeof *rowptr);
    for (int64_t x = 0; x < nnz; x++)
        rowptr[e[x].r + 1]++;
    for (int64_t i = 0; i < m; i++)
        rowptr[i + 1] += rowptr[i];
    /* Partitions (format/tf_partition.c): rows, or bands of ~nnz/P nonzeros;
     * B rows = A rows for a square matrix, else equal rows of n. */
    int64_t *off = malloc((size_t)(P + 1) * sizeof *off), *boff = malloc((size_t)(P + 1) * sizeof *boff);
    if (!strcmp(partition, "nnz") && nnz > 0) {
        off[0] = 0;
        int64_t i = 0;
        for (int p = 0; p < P; p++) {
            int64_t target = (int64_t)(((__int128)nnz * (p + 1)) / P);
            while (i < m && rowptr[i] < target)
                i++;
            off[p + 1] = (p == P - 1) ? m : i;
        }
    } else {
        off[0] = 0;
        for (int p = 0; p < P; p++)
            off[p + 1] = off[p] + m / P + (p < m % P ? 1 : 0);
    }
    if (m == n) {
        memcpy(boff, off, (size_t)(P + 1) * sizeof *boff);
    } else {
        boff[0] = 0;
        for (int p = 0; p < P; p++)
            boff[p + 1] = boff[p] + n / P + (p < n % P ? 1 : 0);
    }
    int64_t r0 = off[rank], nr = off[rank + 1] - off[rank];
    int64_t b0 = boff[rank], nb = boff[rank + 1] - boff[rank];
    int64_t e0 = rowptr[r0], ne = rowptr[r0 + nr] - e0;
    PetscInt *ai = malloc((size_t)(nr + 1) * sizeof *ai);
    PetscInt *aj = malloc((size_t)(ne > 0 ? ne : 1) * sizeof *aj);
    PetscScalar *av = malloc((size_t)(ne > 0 ? ne : 1) * sizeof *av);
    for (int64_t i = 0; i <= nr; i++)
        ai[i] = (PetscInt)(rowptr[r0 + i] - e0);
    for (int64_t x = 0; x < ne; x++) {
        aj[x] = (PetscInt)e[e0 + x].c;
        av[x] = e[e0 + x].v;
    }
    /* Volume model of the scatter: distinct remote columns, their owners. */
    char *seen = calloc((size_t)n + 1, 1);
    char *oseen = calloc((size_t)P, 1);
    double remote = 0, owners = 0;
    for (int64_t x = 0; x < ne; x++) {
        int64_t c = aj[x];
        if (c >= b0 && c < b0 + nb)
            continue;
        if (!seen[c]) {
            seen[c] = 1;
            remote++;
            int lo = 0, hi = P - 1;
            while (lo < hi) {
                int mid = (lo + hi + 1) / 2;
                if (boff[mid] <= c)
                    lo = mid;
                else
                    hi = mid - 1;
            }
            while (lo < P - 1 && boff[lo + 1] <= c)
                lo++;
            if (!oseen[lo]) {
                oseen[lo] = 1;
                owners++;
            }
        }
    }
    free(seen);
    free(oseen);
    /* Sum of |A(i,:)| for the check. */
    double *absrow = calloc((size_t)nr + 1, sizeof *absrow);
    for (int64_t i = 0; i < nr; i++)
        for (PetscInt x = ai[i]; x < ai[i + 1]; x++)
            absrow[i] += fabs(av[x]);
    free(e);

    Mat A, B, C;
    PetscCall(MatCreateMPIAIJWithArrays(comm, (PetscInt)nr, (PetscInt)nb, (PetscInt)m, (PetscInt)n,
                                        ai, aj, av, &A));
    PetscCall(MatCreateDense(comm, (PetscInt)nb, PETSC_DECIDE, (PetscInt)n, K, NULL, &B));
    PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));

    /* Round r: B = generator at seed + r; untimed warm-up rounds first (the
     * first one makes C with MAT_INITIAL_MATRIX). */
    int cap = 1024, timed = 0, round = 0;
    double *times = malloc((size_t)cap * sizeof *times), t_start = 0;
    C = NULL;
    for (;; round++) {
        if (round >= warmup) {
            if (round == warmup) {
                MPI_Barrier(comm);
                t_start = MPI_Wtime();
            }
            double el = MPI_Wtime() - t_start;
            MPI_Allreduce(MPI_IN_PLACE, &el, 1, MPI_DOUBLE, MPI_MAX, comm);
            int more = timed < iters || (budget > 0 && el < budget && timed < max_iters);
            if (!more)
                break;
            if (timed == cap) {
                cap *= 2;
                times = realloc(times, (size_t)cap * sizeof *times);
            }
        }
        PetscScalar *barr;
        PetscInt lda;
        PetscCall(MatDenseGetLDA(B, &lda));
        PetscCall(MatDenseGetArray(B, &barr));
        for (int64_t j = 0; j < nb; j++)
            for (int k = 0; k < K; k++)
                barr[j + (int64_t)k * lda] = dense_value(seed + (uint64_t)round, b0 + j, k);
        PetscCall(MatDenseRestoreArray(B, &barr));
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        PetscCall(MatMatMult(A, B, C ? MAT_REUSE_MATRIX : MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
        double t = MPI_Wtime() - t0, tmax;
        MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm);
        if (round >= warmup)
            times[timed++] = tmax;
    }
    if (!C) { /* no rounds at all cannot happen (iters >= 1) */
        die(rank, "no product computed", NULL);
    }
    uint64_t last = seed + (uint64_t)(round - 1);
    /* Check against a double reference from the generator (any B row). */
    const PetscScalar *carr;
    PetscInt ldc;
    PetscCall(MatDenseGetLDA(C, &ldc));
    PetscCall(MatDenseGetArrayRead(C, &carr));
    double worst = 0;
    double *ref = malloc((size_t)K * sizeof *ref);
    for (int64_t i = 0; i < nr; i++) {
        for (int k = 0; k < K; k++)
            ref[k] = 0;
        for (PetscInt x = ai[i]; x < ai[i + 1]; x++)
            for (int k = 0; k < K; k++)
                ref[k] += av[x] * (double)dense_value(last, aj[x], k);
        double scale = absrow[i] * 1.0 + 1e-30;
        for (int k = 0; k < K; k++) {
            double d = fabs(carr[i + (int64_t)k * ldc] - ref[k]) / scale;
            if (!(d <= worst))
                worst = d;
        }
    }
    PetscCall(MatDenseRestoreArrayRead(C, &carr));
    MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, comm);
    double bytes = remote * K * 8.0, cnt[2] = {bytes, owners}, sum[2], mx[2];
    MPI_Reduce(cnt, sum, 2, MPI_DOUBLE, MPI_SUM, 0, comm);
    MPI_Reduce(cnt, mx, 2, MPI_DOUBLE, MPI_MAX, 0, comm);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double rss = (double)ru.ru_maxrss / 1024.0, rss_max = 0, rss_sum = 0;
    MPI_Reduce(&rss, &rss_max, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Reduce(&rss, &rss_sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    if (rank == 0) {
        qsort(times, (size_t)timed, sizeof *times, cmpd);
        double med = timed % 2 ? times[timed / 2] : 0.5 * (times[timed / 2 - 1] + times[timed / 2]);
        const char *ver = "";
        char vbuf[128];
        if (PetscGetVersion(vbuf, sizeof vbuf) == 0)
            ver = vbuf;
        if (json) {
            printf("{\"algo\": \"petsc\", \"matrix\": \"%s\", \"petsc_version\": \"%s\", "
                   "\"precision\": \"double\", \"partition\": \"%s\"",
                   path, ver, partition);
            printf(", \"m\": %lld, \"n\": %lld, \"nnz\": %lld, \"ranks\": %d, \"threads\": 1, "
                   "\"threads_fetch\": 0, \"k\": %d",
                   (long long)m, (long long)n, (long long)nnz, P, K);
            printf(", \"iterations\": %d, \"warmup\": %d, \"median_s\": %.9g, \"min_s\": %.9g, "
                   "\"max_s\": %.9g, \"ratio_to_twoface\": null, \"breakdown\": {}",
                   timed, warmup, med, times[0], times[timed - 1]);
            printf(", \"bytes_received\": {\"total\": %.0f}, \"bytes_per_rank\": {\"max\": %.0f, "
                   "\"mean\": %.0f}, \"messages\": {\"total\": %.0f}, \"messages_per_rank\": "
                   "{\"max\": %.0f, \"mean\": %.4g}",
                   sum[0], mx[0], sum[0] / P, sum[1], mx[1], sum[1] / P);
            printf(", \"max_error\": %.6g, \"check_passed\": %s, \"peak_rss_mib\": %.1f, "
                   "\"peak_rss_mib_mean\": %.1f}\n",
                   worst, worst <= 1e-5 ? "true" : "false", rss_max, rss_sum / P);
        } else {
            printf("petsc %s (double precision): %s, %d ranks, %lld x %lld, %lld nonzeros, K = %d, "
                   "%s partition\n",
                   ver, path, P, (long long)m, (long long)n, (long long)nnz, K, partition);
            printf("time per MatMatMult (max over ranks): median %.3f ms, min %.3f ms, max %.3f ms "
                   "over %d rounds after %d warm-up\n",
                   med * 1e3, times[0] * 1e3, times[timed - 1] * 1e3, timed, warmup);
            printf("received per SpMM (model): max %.3f MiB per rank in %.0f messages; max scaled "
                   "error vs double reference %.3g\n",
                   mx[0] / (1024.0 * 1024.0), mx[1], worst);
        }
        fflush(stdout);
    }
    free(ref);
    free(times);
    PetscCall(MatDestroy(&C));
    PetscCall(MatDestroy(&B));
    PetscCall(MatDestroy(&A));
    free(ai);
    free(aj);
    free(av);
    free(absrow);
    free(rowptr);
    free(off);
    free(boff);
    PetscCall(PetscFinalize());
    return worst <= 1e-5 ? 0 : 1;
}
