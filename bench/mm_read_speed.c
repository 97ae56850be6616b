/* Matrix Market reader throughput: text MB/s and entries/s for plain, zstd
 * and gzip input, best of N runs, with a naive fscanf loop as a yardstick.
 *
 * Not part of the Makefile (it needs a data file a fresh clone lacks).
 * From the repository root:
 *
 *   mpicc -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -O2 -Iformat -o /tmp/mm_read_speed \
 *       bench/mm_read_speed.c format/tf_mm_read.c format/tf_csr.c format/tf_error.c \
 *       format/tf_meminfo.c \
 *       -lzstd -lz -lm && /tmp/mm_read_speed
 *
 * Arguments: [FILE.mtx.zst [RUNS]]; default ../shared/data/soc-Slashdot0902.mtx.zst
 * (the largest shared graph) and 3 runs. The file is decompressed once to a
 * temporary .mtx (and recompressed to .gz) under $TMPDIR, so the timed runs
 * read from the page cache: this measures the parser, not the disk. */
#include "tf_error.h"
#include "tf_mm_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }
/* CPU time (user + system, so page faults count) next to wall time: on a
 * shared machine the wall clock also measures the neighbours. */
static double cpu(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }
static double best_cpu;

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

static int write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(p, 1, n, f);
    return (fclose(f) == 0 && w == n) ? 0 : -1;
}

/* Best-of-runs wall time of tf_mm_read; nnz of the result in *nnz. */
static double time_read(const char *path, int runs, int64_t *nnz)
{
    double best = 1e30;
    best_cpu = 1e30;
    tf_mm_read_options opt = TF_MM_READ_OPTIONS_INIT;
    opt.progress = 0;
    for (int k = 0; k < runs; k++) {
        tf_csr a;
        double t0 = now(), c0 = cpu();
        int st = tf_mm_read(path, &a, &opt);
        double t = now() - t0, c = cpu() - c0;
        if (c < best_cpu)
            best_cpu = c;
        if (st) {
            fprintf(stderr, "%s\n", tf_error_message());
            exit(1);
        }
        *nnz = a.nnz;
        tf_csr_free(&a);
        if (t < best)
            best = t;
    }
    return best;
}

/* The reader most code starts with: fscanf per line, then nothing else
 * (no CSR build), so it flatters the baseline. */
static double time_fscanf(const char *path, int runs, long long *lines)
{
    double best = 1e30;
    best_cpu = 1e30;
    for (int k = 0; k < runs; k++) {
        double t0 = now(), c0 = cpu();
        FILE *f = fopen(path, "r");
        char line[1024];
        long long n = 0, r, cols, m, i, j;
        while (fgets(line, sizeof line, f) && line[0] == '%')
            ;
        if (sscanf(line, "%lld %lld %lld", &r, &cols, &m) != 3)
            exit(1);
        while (fscanf(f, "%lld %lld", &i, &j) == 2)
            n++;
        fclose(f);
        double t = now() - t0, c = cpu() - c0;
        if (c < best_cpu)
            best_cpu = c;
        *lines = n;
        if (t < best)
            best = t;
    }
    return best;
}

int main(int argc, char **argv)
{
    const char *src = argc > 1 ? argv[1] : "../shared/data/soc-Slashdot0902.mtx.zst";
    int runs = argc > 2 ? atoi(argv[2]) : 3;
    size_t zlen;
    char *z = slurp(src, &zlen);
    if (!z) {
        fprintf(stderr, "cannot read %s\n", src);
        return 1;
    }
    unsigned long long tlen = ZSTD_getFrameContentSize(z, zlen);
    if (tlen == ZSTD_CONTENTSIZE_ERROR || tlen == ZSTD_CONTENTSIZE_UNKNOWN) {
        fprintf(stderr, "%s: no content size in the zstd frame header\n", src);
        return 1;
    }
    char *text = malloc(tlen);
    size_t got = ZSTD_decompress(text, tlen, z, zlen);
    if (ZSTD_isError(got)) {
        fprintf(stderr, "%s: %s\n", src, ZSTD_getErrorName(got));
        return 1;
    }
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char plain[480], zst[512], gz[512];
    snprintf(plain, sizeof plain, "%s/mm_read_speed_%d.mtx", dir, (int)getpid());
    snprintf(zst, sizeof zst, "%s.zst", plain);
    snprintf(gz, sizeof gz, "%s.gz", plain);
    if (write_file(plain, text, got) || write_file(zst, z, zlen)) {
        fprintf(stderr, "cannot write under %s\n", dir);
        return 1;
    }
    gzFile g = gzopen(gz, "wb6");
    if (!g || gzwrite(g, text, (unsigned)got) != (int)got || gzclose(g) != Z_OK) {
        fprintf(stderr, "cannot write %s\n", gz);
        return 1;
    }
    double mb = (double)got / 1e6;
    int64_t nnz = 0;
    long long lines = 0;
    printf("input: %s (%.1f MB of text, %.2f MB zstd), best of %d runs\n", src, mb,
           (double)zlen / 1e6, runs);
    printf("%-22s %9s %9s %9s %12s\n", "", "wall s", "MB/s", "cpu MB/s", "M entries/s");
    const char *paths[3] = {plain, zst, gz};
    const char *names[3] = {"tf_mm_read .mtx", "tf_mm_read .mtx.zst", "tf_mm_read .mtx.gz"};
    for (int k = 0; k < 3; k++) {
        double t = time_read(paths[k], runs, &nnz);
        printf("%-22s %9.3f %9.1f %9.1f %12.2f\n", names[k], t, mb / t, mb / best_cpu,
               (double)nnz / t / 1e6);
    }
    double tf = time_fscanf(plain, runs, &lines);
    printf("%-22s %9.3f %9.1f %9.1f %12.2f  (fscanf loop, parse only, no CSR)\n",
           "baseline .mtx", tf, mb / tf, mb / best_cpu, (double)lines / tf / 1e6);
    printf("nnz after reading: %lld\n", (long long)nnz);
    unlink(plain);
    unlink(zst);
    unlink(gz);
    free(text);
    free(z);
    return 0;
}
