/* twoface-plan: the costly preprocessing, once per graph. */
#include "tf_agree.h"
#include "tf_bands_from.h"
#include "tf_calib_file.h"
#include "tf_cli.h"
#include "tf_dense.h"
#include "tf_dist_comm.h"
#include "tf_dist_planner.h"
#include "tf_dist_prepare.h"
#include "tf_dist_read.h"
#include "tf_dist_rows.h"
#include "tf_dist_write.h"
#include "tf_mem_policy.h"
#include "tf_mem_trace.h"
#include "tf_error.h"
#include "tf_outpath.h"
#include "tf_explain.h"
#include "tf_h5csr.h"
#include "tf_mm_read.h"
#include "tf_partition.h"
#include "tf_partition_auto.h"
#include "tf_partition_metis.h"
#include "tf_plan.h"
#include "tf_plan_io.h"
#include "tf_planner.h"
#include "tf_prepare.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <mpi.h>
#include <omp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

/* Under mpirun every rank parses the same options and agrees on every
 * error, so only rank 0 speaks (simulated ranks share one process, so
 * closing the others' stderr is not an option). */
static int quiet_rank;
/* While the options are parsed, what say() says is also recorded as the
 * error, so that the ranks can agree on it: a rank given other arguments
 * (other argument vectors per rank, by a wrapper or MPMD) then stops every
 * rank. parse_said: rank 0 has printed it already. */
static int parsing = 1, parse_said;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (parsing) {
        const char *msg = strncmp(buf, "twoface-plan: ", 14) == 0 ? buf + 14 : buf;
        size_t n = strlen(msg);
        tf_fail(TF_ERR_ARG, "%.*s", (int)(n && msg[n - 1] == '\n' ? n - 1 : n), msg);
        parse_said = !quiet_rank;
    }
    if (!quiet_rank)
        fputs(buf, stderr);
}

static void usage(FILE *f)
{
    if (quiet_rank)
        return;
    fprintf(f,
            "usage: twoface-plan MATRIX -n P -o PLAN.h5 [options]\n"
            "       mpirun -n Q twoface-plan MATRIX [-n P] -o PLAN.h5 [options]\n"
            "       twoface-plan MATRIX --transpose --bands-from FORWARD.h5 -o PLAN.h5 [options]\n"
            "  MATRIX                 Matrix Market file (.mtx, .mtx.zst, .mtx.gz)\n"
            "  -n, --ranks P          number of MPI ranks the plan is for (required\n"
            "                         unless --bands-from gives it; under mpirun, default:\n"
            "                         the ranks planning it)\n"
            "  -o, --output PLAN.h5   plan file to write (atomically)\n"
            "  -k K                   dense width to optimise for (default %d)\n"
            "  --calibration FILE     cost-model coefficients from twoface-calibrate\n"
            "                         (default: built-in coefficients, docs/cost-model.md)\n"
            "  --mode M               twoface (default), fetch or collective\n"
            "  --stripe-width W       rows per dense stripe (default %d)\n"
            "  --gap G                max unwanted rows spanned by a fetch run\n"
            "                         (default: from the model)\n"
            "  --collective-rows R    needed (default): the collective moves the runs of\n"
            "                         rows a rank uses; stripe: all W rows of each stripe\n"
            "  --comm f32|bf16        what B rows will travel as (default f32): bf16 halves\n"
            "                         the model's byte terms; recorded in the plan, and\n"
            "                         the executor's default (docs/executor.md)\n"
            "  --no-alternative       do not carry the runner-up plan (by default a twoface\n"
            "                         plan carries it when predicted within %.1fx; the\n"
            "                         executor then times both in its first SpMMs)\n"
            "  --partition auto|rows|nnz|work|metis\n"
            "                         bands balanced by rows, by nonzeros, or by work (the\n"
            "                         kernels' work: a cost per row of C, and nonzeros\n"
            "                         whose B row is in cache weighing less), or a METIS\n"
            "                         graph partition (square A; rows renumbered, the plan\n"
            "                         carries the permutation); auto (default): work where\n"
            "                         bands of equal nonzeros give one rank more than\n"
            "                         %.1fx the kernel work of the heaviest work band,\n"
            "                         else nnz (the plan records which)\n"
            "  --metis-balance B      nnz (default) or nnz+rows: what METIS balances\n"
            "  --metis-objective O    cut (default) or vol: what METIS minimises\n"
            "  --threads T            executor threads per rank the model assumes\n"
            "                         (default: from the calibration, else 1)\n"
            "  --zstd-level L         compression level 0..22 (default %d; 0 = none)\n"
            "  --max-memory BYTES     refuse to start a phase whose estimated peak memory\n"
            "                         exceeds BYTES (suffix K, M, G or T; default: the\n"
            "                         machine's physical memory)\n"
            "  --normalize N          gcn: D^-1/2 (A + I) D^-1/2 (self loops added where\n"
            "                         missing), mean: D^-1 A, none (default); pattern\n"
            "                         entries count as 1 (docs/normalization.md)\n"
            "  --transpose            plan the transpose of the (normalised) matrix, for\n"
            "                         the backward products dH = A^T dZ\n"
            "  --bands-from PLAN.h5   take the row bands (and the number of ranks) from a\n"
            "                         plan of the same matrix and normalisation; with\n"
            "                         --transpose its B-row bands become the row bands\n"
            "  --explain              print the per-rank classification and predictions\n"
            "  --svg FILE             draw ranks x column stripes coloured by class\n"
            "  -q, --quiet            no phase timings on stderr\n"
            "  --json                 one JSON line of the phase timings on stdout\n"
            "  -h, --help             this text\n",
            TF_DEFAULT_K, TF_DEFAULT_STRIPE_WIDTH, TF_ALT_RATIO,
            (double)TF_AUTO_WORK_NUM / TF_AUTO_WORK_DEN, TF_PLAN_ZSTD_DEFAULT);
}

/* Prints the one-line message of tf_cli_int. */
static int parse_int(const char *opt, const char *s, long lo, long hi, int *out)
{
    if (tf_cli_int(opt, s, lo, hi, out) == TF_OK)
        return 0;
    say( "twoface-plan: %s\n", tf_error_message());
    return -1;
}

/* Under mpirun each rank reads its own copy of an input (each node its
 * own, without a shared file system). Copies whose hashes differ from rank
 * 0's stop every rank in one line: with other coefficients the ranks
 * would classify with different models and write a mixed plan without a
 * word, and other --bands-from bands fail later with a message about bands. */
static int same_copy_everywhere(uint64_t h, const char *opt, const char *path)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return tf_agree_same(MPI_COMM_WORLD, h, TF_ERR_FORMAT,
                         "%s %s: rank %d's copy differs from rank 0's: every rank must read "
                         "the same file", opt, path, rank);
}

/* --explain's word on --partition auto: which bands it chose, and why. */
static void explain_auto(FILE *f, const tf_plan_options *o, const tf_plan *plan)
{
    if (o->partition != TF_PART_AUTO || !o->auto_ratio)
        return;
    fprintf(f,
            "partition auto: %s; bands of equal nonzeros give the heaviest rank %.2fx the "
            "kernel work of the heaviest work band (work above %.2fx)\n",
            tf_partition_name(plan->partition), *o->auto_ratio,
            (double)TF_AUTO_WORK_NUM / TF_AUTO_WORK_DEN);
}

/* The options that make the plan, the same on every rank: with other ones
 * the ranks would build parts of different plans, or take other paths
 * through the collectives (--svg gathers the statistics). Paths,
 * --max-memory and what is printed may differ per rank (each node its own
 * copies and memory). */
static int same_options_everywhere(const tf_plan_options *o, int normalization, int transpose,
                                   int level, int threads, int bands, int calib, int svg)
{
    const int64_t v[] = {o->nranks, o->k, o->mode, o->stripe_width, o->gap, o->partition,
                         o->coll_rows, o->no_alternative, o->comm, o->metis.balance,
                         o->metis.objective, normalization, transpose, level, threads,
                         bands, calib, svg};
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return tf_agree_same(MPI_COMM_WORLD, tf_agree_mix_ints(0, v, sizeof v / sizeof v[0]),
                         TF_ERR_ARG,
                         "rank %d was given other planning options than rank 0 (-n, -k, --mode, "
                         "--stripe-width, --gap, --partition, --collective-rows, "
                         "--no-alternative, --comm, --metis-*, --normalize, --transpose, "
                         "--zstd-level, --threads, --bands-from, --calibration, --svg): every "
                         "rank must get the same", rank);
}

/* ---- Memory estimates ----------------------------------------------------
 *
 * Before each phase that allocates in proportion to the matrix, its peak is
 * estimated and compared with --max-memory, else with the physical memory, so
 * that a matrix too large for the machine ends with one clear line instead of
 * an OOM kill (or hours of swapping) half-way through. The estimates follow
 * the allocations of the reader (tf_mm_read.c, tf_csr.c), the planner and
 * the writer (which encodes the whole file in memory before writing it), and
 * were checked against the measured peak RSS on random, row-heavy and
 * symmetric matrices at 1 to 4096 ranks, in every mode, plain and compressed:
 * they came out 1.2-3.5x the measurement, never below (docs/reliability.md;
 * the twoface rows re-measured with the runner-up plans).
 * A phase above the limit ends with a one-line message before it allocates;
 * --max-memory larger than the physical memory overrides the check. */

#define MIB (1024.0 * 1024.0)

/* "123", "64K", "1.5G", "2GiB": K/M/G/T are powers of 1024. */
static int parse_bytes(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    double mult = 1.0;
    if (end != s) {
        switch (toupper((unsigned char)*end)) {
        case 'K': mult = 1024.0; end++; break;
        case 'M': mult = MIB; end++; break;
        case 'G': mult = MIB * 1024.0; end++; break;
        case 'T': mult = MIB * MIB; end++; break;
        default: break;
        }
        if (mult > 1.0 && (*end == 'i' || *end == 'I') && (end[1] == 'B' || end[1] == 'b'))
            end += 2;
        else if (*end == 'B' || *end == 'b')
            end++;
    }
    if (end == s || *end != '\0' || errno || !(v > 0) || v * mult > 9.0e18 ||
        !isdigit((unsigned char)s[0])) {
        say(
                "twoface-plan: %s '%s': expected a positive number of bytes, optionally with "
                "a suffix K, M, G or T\n",
                opt, s);
        return -1;
    }
    *out = v * mult;
    return 0;
}

static void fmt_bytes(double b, char *buf, size_t n)
{
    if (b >= MIB * 1024.0)
        snprintf(buf, n, "%.1f GiB", b / (MIB * 1024.0));
    else if (b >= MIB)
        snprintf(buf, n, "%.1f MiB", b / MIB);
    else
        snprintf(buf, n, "%.0f KiB", b / 1024.0 > 1 ? b / 1024.0 : 1.0);
}

typedef struct {
    double bytes;      /* the limit */
    const char *what;  /* where it comes from, for messages */
} mem_limit;

static void limit_init(mem_limit *l, double max_memory)
{
    if (max_memory > 0) {
        l->bytes = max_memory;
        l->what = "--max-memory";
        return;
    }
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    l->bytes = pages > 0 && psize > 0 ? (double)pages * (double)psize : 0.0;
    l->what = "the physical memory";
}

/* TF_OK, or the failure (TF_ERR_NOMEM and its message, ending with who)
 * when `need` exceeds the limit. */
static int limit_status(const mem_limit *l, const char *matrix, const char *phase, double need,
                        const char *detail, const char *who)
{
    if (l->bytes <= 0 || need <= l->bytes)
        return TF_OK;
    char nb[32], lb[32];
    fmt_bytes(need, nb, sizeof nb);
    fmt_bytes(l->bytes, lb, sizeof lb);
    return tf_fail(TF_ERR_NOMEM, "%s: %s needs about %s (%s), more than %s (%s)%s%s", matrix,
                   phase, nb, detail, lb, l->what,
                   l->what[0] == '-' ? "" : "; set --max-memory to try anyway", who);
}

/* Prints the error and returns 1 when `need` exceeds the limit. */
static int over_limit(const mem_limit *l, const char *matrix, const char *phase, double need,
                      const char *detail)
{
    if (limit_status(l, matrix, phase, need, detail, "") == TF_OK)
        return 0;
    say("twoface-plan: %s\n", tf_error_message());
    return 1;
}

/* over_limit on every rank of comm at once. A rank's limit is its node's
 * memory over the ranks on that node, so nodes of another size or with
 * another rank count can disagree: the ranks agree, and all stop, with the
 * first failing rank's message (printed by rank 0), or all go on. */
static int over_limit_all(MPI_Comm comm, const mem_limit *l, const char *matrix,
                          const char *phase, double need, const char *detail)
{
    int me = 0, Q = 1;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &Q);
    char who[48] = "";
    if (Q > 1)
        snprintf(who, sizeof who, " (rank %d of %d)", me, Q);
    if (tf_agree(comm, limit_status(l, matrix, phase, need, detail, who)) == TF_OK)
        return 0;
    say("twoface-plan: %s\n", tf_error_message());
    return 1;
}

/* What the banner and size line of a Matrix Market file say, read from its
 * first 64 KiB (decompressed when it is zstd or gzip). Best effort: when
 * anything is unexpected, ok is 0 and the reader reports the problem. */
typedef struct {
    int ok;
    int symmetric; /* symmetric or skew-symmetric: entries are mirrored */
    int mirrored;  /* symmetric (not skew): the matrix equals its transpose */
    int plain;     /* not compressed */
    int64_t m, n, declared;
    int64_t after_size_line; /* bytes after the size line (plain files) */
} mm_header;

#define PEEK_BYTES (64 * 1024)
#define PEEK_FIRST 4096

static size_t peek_text(const char *path, char *out, size_t cap, int *plain, int64_t *file_size)
{
    *plain = 0;
    *file_size = -1;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return 0;
    }
    *file_size = (int64_t)sb.st_size;
    unsigned char *raw = malloc(cap);
    size_t have = 0, got = 0;
    if (raw) {
        ssize_t r;
        while (have < cap && (r = read(fd, raw + have, cap - have)) > 0)
            have += (size_t)r;
    }
    if (raw && have >= 4 && raw[0] == 0x28 && raw[1] == 0xB5 && raw[2] == 0x2F &&
        raw[3] == 0xFD) {
        /* zstd: decode until cap bytes of text, reading more input as needed. */
        ZSTD_DStream *z = ZSTD_createDStream();
        if (z && !ZSTD_isError(ZSTD_initDStream(z))) {
            ZSTD_outBuffer ob = {out, cap, 0};
            for (int rounds = 0; ob.pos < cap && rounds < 256; rounds++) {
                ZSTD_inBuffer ib = {raw, have, 0};
                size_t ret = ZSTD_decompressStream(z, &ob, &ib);
                if (ZSTD_isError(ret) || ib.pos == 0)
                    break;
                memmove(raw, raw + ib.pos, have - ib.pos);
                have -= ib.pos;
                ssize_t r = read(fd, raw + have, cap - have);
                if (r > 0)
                    have += (size_t)r;
                else if (have == 0)
                    break;
            }
            got = ob.pos;
        }
        ZSTD_freeDStream(z);
    } else if (raw && have >= 2 && raw[0] == 0x1F && raw[1] == 0x8B) {
        close(fd);
        fd = -1;
        gzFile g = gzopen(path, "rb");
        if (g) {
            int r = gzread(g, out, (unsigned)cap);
            got = r > 0 ? (size_t)r : 0;
            gzclose(g);
        }
    } else if (raw) {
        *plain = 1;
        got = have < cap ? have : cap;
        memcpy(out, raw, got);
    }
    free(raw);
    if (fd >= 0)
        close(fd);
    return got;
}

static int word_is(const char **p, const char *w)
{
    while (**p == ' ' || **p == '\t')
        (*p)++;
    size_t n = strlen(w);
    if (strncasecmp(*p, w, n) != 0)
        return 0;
    char c = (*p)[n];
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\0')
        return 0;
    *p += n;
    return 1;
}

/* The banner and size line in text[0, len): 1 with the size line in *h,
 * 0 if the banner is a coordinate matrix's but no size line is in the
 * text, -1 if the banner is not one twoface reads. */
static int parse_header(const char *text, size_t len, int64_t fsize, mm_header *h)
{
    const char *p = text;
    if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    if (!word_is(&p, "%%MatrixMarket") || !word_is(&p, "matrix") ||
        !word_is(&p, "coordinate"))
        return -1;
    if (!word_is(&p, "real") && !word_is(&p, "integer") && !word_is(&p, "pattern"))
        return -1;
    if (word_is(&p, "symmetric"))
        h->symmetric = h->mirrored = 1;
    else if (word_is(&p, "skew-symmetric"))
        h->symmetric = 1;
    else if (!word_is(&p, "general"))
        return -1;
    /* Comment and blank lines, then the size line. */
    for (;;) {
        const char *nl = strchr(p, '\n');
        if (!nl)
            return 0;
        p = nl + 1;
        const char *q = p;
        while (*q == ' ' || *q == '\t' || *q == '\r')
            q++;
        if (*q == '%' || *q == '\n')
            continue;
        long long v[3];
        char *end = (char *)q;
        int i = 0;
        for (; i < 3; i++) {
            while (*end == ' ' || *end == '\t')
                end++;
            if (!isdigit((unsigned char)*end))
                break;
            errno = 0;
            v[i] = strtoll(end, &end, 10);
            if (errno)
                break;
        }
        const char *eol = strchr(end, '\n');
        if (i == 3 && eol) {
            h->m = v[0];
            h->n = v[1];
            h->declared = v[2];
            h->after_size_line = fsize - (int64_t)(eol + 1 - text);
            h->ok = 1;
            return 1;
        }
        return eol ? -1 : 0;
    }
}

/* The first PEEK_FIRST bytes hold the banner and size line of nearly every
 * file; reading PEEK_BYTES at once cost rank 0 0.12-0.15 ms before any
 * other rank could start (a longer comment block reads the rest). */
static void peek_header(const char *path, mm_header *h)
{
    for (size_t cap = PEEK_FIRST;; cap = PEEK_BYTES) {
        memset(h, 0, sizeof *h);
        char *text = malloc(cap + 1);
        if (!text)
            return;
        int64_t fsize;
        size_t len = peek_text(path, text, cap, &h->plain, &fsize);
        text[len] = '\0';
        int found = parse_header(text, len, fsize, h);
        free(text);
        if (found != 0 || len < cap || cap == PEEK_BYTES)
            return;
    }
}

/* Reading: the coordinate triplets (16 bytes an entry, capacity doubling
 * from 1 Mi entries when the count cannot be trusted), then the CSR matrix,
 * a value buffer for the sort and three row arrays, plus the decoders. */
static double estimate_read(const mm_header *h)
{
    double e = (double)h->declared * (h->symmetric ? 2.0 : 1.0);
    double cap = e;
    if (!h->plain) {
        cap = (double)(1 << 20);
        while (cap < e)
            cap *= 2.0;
    }
    return 16.0 * cap + 16.0 * e + 24.0 * ((double)h->m + 1.0) + 24.0 * MIB;
}

/* Planning: A stays in memory (12 bytes a nonzero, 8 a row). The parts hold
 * every nonzero again (index and value) and two row-pointer arrays; a
 * nonzero in another rank's columns may cost a fetch buffer row and a run
 * (fetch) or a buffer row (collective); every sparse stripe (rank, stripe
 * with nonzeros) has entries in the schedules, the statistics and the
 * analysis; each rank has fixed-size tables and, in the file, some twenty
 * HDF5 objects. Writing: the whole file is encoded in memory first (HDF5's
 * core driver grows the image by reallocation), about the size of the parts
 * uncompressed, less with zstd. */
static double estimate_plan(const tf_csr *a, int P, int W, int level, int mode)
{
    double nnz = (double)a->nnz, m = (double)a->nrows, n = (double)a->ncols;
    double remote = P > 1 ? nnz * (double)(P - 1) / (double)P : 0.0;
    double stripes = n / (W > 0 ? W : 1) + P;
    double sparse = (double)P * stripes < remote ? (double)P * stripes : remote;
    double parts = 8.0 * nnz + 44.0 * remote + 20.0 * m + 56.0 * sparse + 24.0 * stripes +
                   24.0 * 1024.0 * (double)P;
    double a_bytes = 12.0 * nnz + 8.0 * (m + 1.0);
    /* twoface: three built plans at once, the greedy hybrid and both pure
     * plans it is compared with (tf_planner.c); two of them stay (the choice
     * and its runner-up), so writing holds two plans and their encoding. A
     * pure mode builds one plan; it keeps the factor 2 it was checked with
     * (docs/reliability.md: 1.17x the peak at 64 ranks, fetch). */
    double built = mode == TF_MODE_TWOFACE ? 3.0 : 2.0, kept = mode == TF_MODE_TWOFACE ? 2.0 : 1.0;
    double plan = a_bytes + built * parts + 25.0 * sparse + 24.0 * MIB;
    double write = kept * parts * (level == 0 ? 2.0 : 1.3) + 24.0 * MIB;
    return plan > write ? plan : write;
}

/* Every file the run will write, checked before minutes of reading and
 * planning: a bad --svg path must not surface after the plan is written,
 * and neither output may replace a file the run reads (-o MATRIX would
 * destroy the matrix) or the other output. */
static int check_outputs(const char *out_path, const char *svg, const char *matrix,
                         const char *calib, const char *bands_from)
{
    const char *opt[2] = {"-o", "--svg"}, *path[2] = {out_path, svg};
    const char *in_opt[3] = {"MATRIX", "--calibration", "--bands-from"};
    const char *in[3] = {matrix, calib, bands_from};
    for (int i = 0; i < 2; i++) {
        if (path[i] && tf_outpath_check(path[i])) {
            say("twoface-plan: %s%s\n", path[i][0] ? "" : opt[i],
                    path[i][0] ? tf_error_message() : ": the output path is empty");
            return 1;
        }
        int st = i == 1 ? tf_outpath_distinct(opt[1], svg, opt[0], out_path) : TF_OK;
        for (int j = 0; j < 3 && !st; j++)
            st = tf_outpath_distinct(opt[i], path[i], in_opt[j], in[j]);
        if (st) {
            say("twoface-plan: %s\n", tf_error_message());
            return 1;
        }
    }
    return 0;
}

/* ---- Planning on the job's own ranks ------------------------------------ */

/* Started by mpirun (Open MPI, or a PMI launcher): plan with every rank. A
 * plain start stays a single process without MPI. TF_PLAN_ALWAYS_MPI (the
 * SMPI build, `make smpi`) always plans on the ranks: smpirun sets none of
 * these variables, and a simulated program has no life outside MPI. */
static int under_mpirun(void)
{
#ifdef TF_PLAN_ALWAYS_MPI
    return 1;
#else
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
#endif
}

static int mpi_on; /* MPI_Init was called: finalise at exit */
static double t_main;     /* omp_get_wtime at main's start */
static double t_init;     /* seconds from there to MPI_Init's return */
static double t_main_mpi; /* MPI_Wtime at MPI_Init's return: under a simulator
                             (SMPI) the simulated clock */

static void finalize_at_exit(void)
{
    int fin = 0;
    if (mpi_on && MPI_Finalized(&fin) == MPI_SUCCESS && !fin)
        MPI_Finalize();
    mpi_on = 0;
}

enum { PH_START, PH_READ, PH_PREP, PH_PART, PH_ANALYSE, PH_CLASSIFY, PH_BUILD, PH_WRITE, PH_DRAW,
       N_PH };
/* This process's peak resident memory (VmHWM, MiB) and CPU seconds. */
static void usage_self(double *rss_mib, double *cpu_s)
{
    *rss_mib = 0;
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            *rss_mib = atof(line + 6) / 1024.0;
    if (f)
        fclose(f);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *cpu_s = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
             (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

/* MiB this process holds for the file (the plan and its runner-up): the
 * parts' arrays, or their encoded chunks once the arrays are freed (enc).
 * What "excluding the plan being written" leaves out of the memory per
 * nonzero (docs/planning.md). */
static double plan_mib(const tf_plan *p, const tf_dist_enc *enc)
{
    double b = 0;
    if (enc)
        return (double)(tf_dist_enc_bytes(&enc[0]) + tf_dist_enc_bytes(&enc[1])) /
               (1024.0 * 1024.0);
    for (; p; p = p->alt)
        for (int i = 0; i < p->n_parts; i++) {
            const tf_rank_plan *r = &p->parts[i];
            b += (double)(r->nrows + 1) * 8 * 2 + (double)(r->fetch_buf_rows + 1) * 8 +
                 (double)(r->loc_nnz + r->coll_nnz + r->fet_nnz) * 8 +
                 (double)r->n_fetch_rows * 4 + (double)(r->n_recv + r->n_runs) * 20 +
                 (double)r->n_send * 12;
        }
    return b / (1024.0 * 1024.0);
}

static const char *const ph_name[N_PH] = {"start", "read", "prepare", "partition", "analyse",
                                          "classify", "build", "write", "explain_svg"};

/* The --json line: phases (each the slowest rank's), their sum, the wall
 * time, and memory and CPU as {largest, summed} over the Q ranks (umax[0],
 * usum[0]: peak RSS in MiB; umax[1], usum[1]: CPU seconds; usum[2]: the
 * plan's arrays, plan_mib; umax[3]: the ranks' encoding within the write,
 * encode_s, 0 where it is not timed apart). */
static void print_json(int Q, const tf_plan *plan, const double *ph, double wall,
                       const double *umax, const double *usum)
{
    double sum = 0;
    printf("{\"ranks_planning\": %d, \"nranks\": %d, \"nnz\": %lld", Q, plan->nranks,
           (long long)plan->nnz);
    for (int i = 0; i < N_PH; i++) {
        printf(", \"%s_s\": %.6f", ph_name[i], ph[i]);
        sum += ph[i];
    }
    printf(", \"total_s\": %.6f, \"wall_s\": %.6f, \"encode_s\": %.6f, \"rss_max_mib\": %.1f, "
           "\"rss_sum_mib\": %.1f, \"cpu_max_s\": %.3f, \"cpu_sum_s\": %.3f, "
           "\"plan_sum_mib\": %.1f}\n",
           sum, wall, umax[3], umax[0], usum[0], umax[1], usum[1], usum[2]);
    fflush(stdout);
}

/* Each phase's time is the slowest rank's: phases end at a collective, so
 * the ranks enter the next one together and the maxima add up to the run. */
static int run_distributed(const char *matrix, const char *out_path, tf_plan_options *o,
                           int normalization, int transpose, const char *bands_from,
                           const tf_plan *fwd, int level, const char *svg, int explain, int quiet,
                           int json, double max_memory)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    int Q, me;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    double ph[N_PH] = {0};
    /* --max-memory is per rank; by default the ranks of one node share its
     * memory. */
    mem_limit lim;
    limit_init(&lim, max_memory);
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (max_memory <= 0 && local && atoi(local) > 1) {
        lim.bytes /= atoi(local);
        lim.what = "this rank's share of the physical memory";
    }
    mm_header hdr;
    if (me == 0)
        peek_header(matrix, &hdr);
    MPI_Bcast(&hdr, (int)sizeof hdr, MPI_BYTE, 0, comm);
    if (hdr.ok && hdr.m <= TF_MAX_DIM && hdr.n <= TF_MAX_DIM &&
        (double)hdr.declared <= (double)hdr.m * (double)hdr.n) {
        /* A rank's share of the entries, in the triplets and the exchange
         * that sends them to their rows' ranks. */
        mm_header share = hdr;
        share.declared = hdr.declared / Q + 1;
        share.m = hdr.m / Q + 1;
        double need = 2.0 * estimate_read(&share);
        char detail[160];
        snprintf(detail, sizeof detail, "%lld x %lld, %lld entries over %d ranks",
                 (long long)hdr.m, (long long)hdr.n, (long long)hdr.declared, Q);
        if (over_limit_all(comm, &lim, matrix, "reading", need, detail))
            return 1;
    }
    MPI_Barrier(comm);
    double t = MPI_Wtime();
    ph[PH_START] = t_init + (t - t_main_mpi);
    tf_dcsr a;
    tf_mem_trace("start");
    tf_dist_read_options dro = {0, 0, max_memory > 0 ? (int64_t)max_memory : 0};
    int st = tf_dist_read_opt(comm, matrix, &a, &dro);
    /* The readers' messages name the file (and line) themselves, as in the
     * serial path; only the later steps' messages need the matrix's name. */
    int named = st != TF_OK || bands_from;
    tf_mem_trace("read");
    double t1 = MPI_Wtime();
    ph[PH_READ] = t1 - t;
    if (st == TF_OK) {
        st = tf_dist_prepare(comm, &a, normalization, transpose, o);
        if (st == TF_OK && bands_from) {
            uint64_t fp = o->transposed ? 0 : tf_dist_fingerprint(comm, &a, normalization);
            st = tf_agree(comm, tf_bands_from_dims(fwd, bands_from, matrix, a.m, a.n, fp, o));
        }
        if (st)
            tf_dcsr_free(&a);
    }
    if (st) {
        if (me == 0)
            say( "twoface-plan: %s%s%s\n", named ? "" : matrix, named ? "" : ": ",
                    tf_error_message());
        return 1;
    }
    {
        /* Planning: this rank's rows and the parts of its plan ranks, as
         * estimate_plan counts them for a matrix of its share; rank 0 also
         * encodes the whole file. */
        int64_t most[2] = {a.loc.nnz, a.nrows};
        MPI_Allreduce(MPI_IN_PLACE, most, 2, MPI_INT64_T, MPI_MAX, comm);
        tf_csr share = {most[1], a.n, most[0], NULL, NULL, NULL};
        int pq = (o->nranks + Q - 1) / Q;
        double need = estimate_plan(&share, pq, o->stripe_width, level, o->mode);
        tf_csr whole = {a.m, a.n, a.nnz_total, NULL, NULL, NULL};
        double w = estimate_plan(&whole, o->nranks, o->stripe_width, level, o->mode) / 2.0;
        char detail[160];
        snprintf(detail, sizeof detail, "%lld x %lld, %lld nonzeros, %d ranks planned on %d",
                 (long long)a.m, (long long)a.n, (long long)a.nnz_total, o->nranks, Q);
        if (over_limit_all(comm, &lim, matrix, "planning", need > w ? need : w, detail)) {
            tf_dcsr_free(&a);
            return 1;
        }
    }
    tf_mem_trace("prepare");
    double t2 = MPI_Wtime();
    ph[PH_PREP] = t2 - t1;
    double phase[TF_PLAN_PHASES] = {0};
    o->timing = phase;
    tf_plan plan;
    /* Encoded as built, the plan's arrays are freed before the write; the
     * picture needs the chosen plan's arrays, so --svg keeps them. */
    tf_dist_enc enc_store[2], *enc = svg ? NULL : enc_store;
    st = enc ? tf_dist_plan_build_enc(comm, &a, o, level, &plan, enc)
             : tf_dist_plan_build(comm, &a, o, &plan);
    double t3 = MPI_Wtime();
    if (st) {
        if (me == 0)
            say( "twoface-plan: %s: %s\n", matrix, tf_error_message());
        return 1;
    }
    /* The build's own clock, with what it spent between phases in build.
     * Encoding the plans for the file (checksums, chunks, compression) is
     * writing, as it is for the single process, which encodes when it
     * writes; here each rank encodes its parts as each candidate is built
     * (phase[4]). */
    ph[PH_PART] = phase[0];
    ph[PH_ANALYSE] = phase[1];
    ph[PH_CLASSIFY] = phase[2];
    ph[PH_BUILD] = (t3 - t2) - phase[0] - phase[1] - phase[2] - phase[4];
    tf_mem_trace("plan built");
    st = enc ? tf_dist_plan_write_enc(comm, out_path, &plan, enc, level)
             : tf_dist_plan_write(comm, out_path, &plan, level);
    double held_mib = plan_mib(&plan, enc);
    if (enc) {
        tf_dist_enc_free(&enc[0]);
        tf_dist_enc_free(&enc[1]);
    }
    tf_mem_trace("write");
    double t4 = MPI_Wtime();
    ph[PH_WRITE] = t4 - t3 + phase[4];
    if (st) {
        if (me == 0)
            say( "twoface-plan: %s\n", tf_error_message());
        tf_plan_free(&plan);
        return 1;
    }
    int rc = 0;
    if (svg) {
        int bins = tf_explain_svg_bins(&plan), P = plan.nranks;
        double *acc = calloc((size_t)P * bins * 4, sizeof *acc);
        st = acc ? TF_OK : tf_fail(TF_ERR_NOMEM, "%s: out of memory for the picture", svg);
        st = tf_agree(comm, st);
        if (st == TF_OK) {
            for (int i = 0; i < plan.n_parts; i++)
                tf_explain_svg_row(&plan, &plan.parts[i],
                                   acc + (size_t)(plan.first_rank + i) * bins * 4);
            /* Each rank filled only its own rows: the sum is the picture. */
            MPI_Reduce(me == 0 ? MPI_IN_PLACE : acc, acc, P * bins * 4, MPI_DOUBLE, MPI_SUM, 0,
                       comm);
            if (me == 0)
                st = tf_explain_svg_draw(svg, &plan, acc);
            st = tf_agree(comm, st);
        }
        free(acc);
        if (st) {
            if (me == 0)
                say( "twoface-plan: %s\n", tf_error_message());
            rc = 1;
        }
    }
    if (explain && me == 0) {
        explain_auto(stdout, o, &plan);
        tf_explain_print(stdout, &plan);
    }
    double t5 = MPI_Wtime();
    ph[PH_DRAW] = t5 - t4;
    double mx[N_PH];
    MPI_Reduce(ph, mx, N_PH, MPI_DOUBLE, MPI_MAX, 0, comm);
    /* Memory and CPU per rank: the largest and the sum over the ranks. */
    double u[4], umax[4], usum[4];
    usage_self(&u[0], &u[1]);
    u[2] = held_mib;
    u[3] = phase[4];
    MPI_Reduce(u, umax, 4, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Reduce(u, usum, 4, MPI_DOUBLE, MPI_SUM, 0, comm);
    MPI_Barrier(comm);
    double wall = t_init + (MPI_Wtime() - t_main_mpi);
    if (me == 0) {
        double sum = 0;
        for (int i = 0; i < N_PH; i++)
            sum += mx[i];
        if (!quiet)
            say(
                    "twoface-plan: %s -> %s: %lld x %lld, %lld nnz, %d ranks planned on %d, K %d, "
                    "mode %s (classes %s%s%s); normalize %s, %s%s\n"
                    "  time (slowest rank): start %.3f s, read %.3f s, prepare %.3f s, partition "
                    "%.3f s, analyse %.3f s, classify %.3f s, build %.3f s, write %.3f s; "
                    "planning %.3f s without I/O, %.3f s in all (wall %.3f s)\n",
                    matrix, out_path, (long long)plan.m, (long long)plan.n, (long long)plan.nnz,
                    plan.nranks, Q, plan.k_planned, tf_mode_name(plan.mode),
                    tf_plan_classes(&plan), plan.alt ? "; runner-up carried: " : "",
                    plan.alt ? tf_plan_classes(plan.alt) : "", tf_norm_name(plan.normalization),
                    plan.symmetric ? "symmetric" : "not symmetric",
                    plan.transposed ? ", transposed" : "", mx[PH_START], mx[PH_READ],
                    mx[PH_PREP], mx[PH_PART], mx[PH_ANALYSE], mx[PH_CLASSIFY], mx[PH_BUILD],
                    mx[PH_WRITE], mx[PH_PREP] + mx[PH_PART] + mx[PH_ANALYSE] + mx[PH_CLASSIFY] +
                    mx[PH_BUILD], sum, wall);
        if (json)
            print_json(Q, &plan, mx, wall, umax, usum);
    }
    tf_plan_free(&plan);
    return rc;
}

static int plan_main(int argc, char **argv)
{
    t_main = omp_get_wtime();
    tf_mem_policy_planner();
    if (under_mpirun()) {
        int prov;
        if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &prov) != MPI_SUCCESS) {
            say( "twoface-plan: MPI_Init_thread failed\n");
            return 1;
        }
        mpi_on = 1;
        atexit(finalize_at_exit);
        t_init = omp_get_wtime() - t_main;
        t_main_mpi = MPI_Wtime();
#ifdef TF_PLAN_ALWAYS_MPI
        /* Simulated ranks take turns on the host, whose clock runs through
         * the other ranks' turns too; the simulated clock starts with the job. */
        t_init = t_main_mpi;
#endif
        int me;
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        /* Rank 0 speaks for all: every error is agreed over the ranks. */
        quiet_rank = me != 0;
    }
    tf_plan_options o;
    tf_plan_options_default(&o);
    /* Bands of equal nonzeros, or of equal work where those leave the
     * kernels imbalanced: measured (docs/partition.md). */
    o.partition = TF_PART_AUTO;
    double auto_ratio = 0;
    o.auto_ratio = &auto_ratio;
    int partition_given = 0; /* --bands-from brings its own */
    const char *metis_opt = NULL; /* the last --metis-* given, which only METIS reads */
    const char *out_path = NULL, *calib = NULL, *svg = NULL;
    int explain = 0, quiet = 0, json = 0, level = TF_PLAN_ZSTD_DEFAULT, threads = 0;
    double max_memory = 0.0;
    int normalization = TF_NORM_NONE, transpose = 0;
    const char *bands_from = NULL;
    enum {
        O_CALIB = 256, O_MODE, O_WIDTH, O_GAP, O_PART, O_EXPLAIN, O_SVG, O_LEVEL, O_THREADS,
        O_MAXMEM, O_CROWS, O_NOALT, O_NORM, O_TRANSPOSE, O_BANDS, O_MBAL, O_MOBJ, O_JSON, O_COMM
    };
    static const struct option longopts[] = {
        {"ranks", required_argument, 0, 'n'},     {"output", required_argument, 0, 'o'},
        {"calibration", required_argument, 0, O_CALIB}, {"mode", required_argument, 0, O_MODE},
        {"stripe-width", required_argument, 0, O_WIDTH}, {"gap", required_argument, 0, O_GAP},
        {"partition", required_argument, 0, O_PART}, {"explain", no_argument, 0, O_EXPLAIN},
        {"svg", required_argument, 0, O_SVG},     {"zstd-level", required_argument, 0, O_LEVEL},
        {"threads", required_argument, 0, O_THREADS}, {"quiet", no_argument, 0, 'q'},
        {"max-memory", required_argument, 0, O_MAXMEM},
        {"collective-rows", required_argument, 0, O_CROWS},
        {"no-alternative", no_argument, 0, O_NOALT},
        {"comm", required_argument, 0, O_COMM},
        {"normalize", required_argument, 0, O_NORM}, {"transpose", no_argument, 0, O_TRANSPOSE},
        {"bands-from", required_argument, 0, O_BANDS},
        {"metis-balance", required_argument, 0, O_MBAL},
        {"metis-objective", required_argument, 0, O_MOBJ},
        {"json", no_argument, 0, O_JSON},
        {"help", no_argument, 0, 'h'},            {0, 0, 0, 0}};
    int c;
    opterr = 0; /* tf_cli_getopt_error says it in one line */
    int perr = 0;
    while (!perr && (c = getopt_long(argc, argv, ":n:o:k:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (parse_int("-n", optarg, 1, 1 << 20, &o.nranks))
                perr = 1;
            break;
        case 'o': out_path = optarg; break;
        case 'k':
            if (parse_int("-k", optarg, 1, 1 << 20, &o.k))
                perr = 1;
            break;
        case O_CALIB: calib = optarg; break;
        case O_MODE:
            if (tf_mode_parse(optarg, &o.mode)) {
                say( "twoface-plan: %s\n", tf_error_message());
                perr = 1;
            }
            break;
        case O_WIDTH:
            if (parse_int("--stripe-width", optarg, 1, 1 << 24, &o.stripe_width))
                perr = 1;
            break;
        case O_GAP:
            if (parse_int("--gap", optarg, 0, 1 << 24, &o.gap))
                perr = 1;
            break;
        case O_CROWS:
            if (tf_coll_rows_parse(optarg, &o.coll_rows)) {
                say( "twoface-plan: %s\n", tf_error_message());
                perr = 1;
            }
            break;
        case O_PART:
            partition_given = 1;
            if (tf_partition_parse(optarg, &o.partition)) {
                say( "twoface-plan: %s\n", tf_error_message());
                perr = 1;
            }
            break;
        case O_MBAL:
        case O_MOBJ:
            metis_opt = c == O_MBAL ? "--metis-balance" : "--metis-objective";
            if ((c == O_MBAL ? tf_metis_balance_parse(optarg, &o.metis.balance)
                             : tf_metis_objective_parse(optarg, &o.metis.objective))) {
                say( "twoface-plan: %s %s\n",
                        c == O_MBAL ? "--metis-balance:" : "--metis-objective:",
                        tf_error_message());
                perr = 1;
            }
            break;
        case O_EXPLAIN: explain = 1; break;
        case O_NORM:
            if (tf_norm_parse(optarg, &normalization)) {
                say( "twoface-plan: --normalize: %s\n", tf_error_message());
                perr = 1;
            }
            break;
        case O_TRANSPOSE: transpose = 1; break;
        case O_BANDS: bands_from = optarg; break;
        case O_NOALT: o.no_alternative = 1; break;
        case O_COMM:
            if (tf_prec_parse(optarg, &o.comm)) {
                say("twoface-plan: --comm: %s\n", tf_error_message());
                perr = 1;
            }
            break;
        case O_SVG: svg = optarg; break;
        case O_LEVEL:
            if (parse_int("--zstd-level", optarg, 0, 22, &level))
                perr = 1;
            break;
        case O_THREADS:
            if (parse_int("--threads", optarg, 1, 4096, &threads))
                perr = 1;
            break;
        case O_MAXMEM:
            if (parse_bytes("--max-memory", optarg, &max_memory))
                perr = 1;
            break;
        case 'q': quiet = 1; break;
        case O_JSON: json = 1; break;
        case 'h': usage(stdout); return 0;
        default:
            tf_cli_getopt_error(c, argv, longopts);
            say( "twoface-plan: %s\n", tf_error_message());
            perr = 1;
        }
    }
    /* Options that would change nothing are refused, as twoface-exec and
     * twoface-gcn refuse --replication without shift. */
    if (!perr && metis_opt && (o.partition != TF_PART_METIS || bands_from)) {
        if (bands_from)
            say( "twoface-plan: %s: METIS does not run with --bands-from (the forward plan "
                 "gives the bands)\n", metis_opt);
        else
            say( "twoface-plan: %s applies to --partition metis only\n", metis_opt);
        perr = 1;
    }
    int pre = perr || tf_cli_path("--calibration", calib) ||
                      tf_cli_path("--bands-from", bands_from) ||
                      (optind < argc && tf_cli_path("MATRIX", argv[optind]))
                  ? TF_ERR_ARG
                  : TF_OK;
    /* OMP_NUM_THREADS and whether MATRIX is a named FIFO are this rank's
     * environment and node: under mpirun the ranks agree, so that none
     * goes on alone into the collective reading. */
    if (pre == TF_OK && (optind != argc - 1 || !out_path))
        pre = tf_fail(TF_ERR_ARG, "%s (--help lists the options)",
                      optind >= argc ? "missing MATRIX"
                      : optind < argc - 1 ? "more than one MATRIX given"
                                          : "missing -o PLAN.h5");
    if (pre == TF_OK)
        pre = tf_cli_omp_threads();
    if (pre == TF_OK && optind < argc)
        pre = tf_cli_not_fifo("MATRIX", argv[optind]);
    if (mpi_on)
        pre = tf_agree(MPI_COMM_WORLD, pre);
    if (pre == TF_OK && mpi_on)
        pre = same_options_everywhere(&o, normalization, transpose, level, threads,
                                      bands_from != NULL, calib != NULL, svg != NULL);
    if (pre) {
        if (!parse_said)
            say( "twoface-plan: %s\n", tf_error_message());
        return 2;
    }
    parsing = 0;
    /* The forward plan's header first: cheap, and it gives the ranks. */
    tf_plan fwd;
    memset(&fwd, 0, sizeof fwd);
    if (mpi_on && o.nranks < 1 && !bands_from)
        MPI_Comm_size(MPI_COMM_WORLD, &o.nranks);
    if (bands_from && optind == argc - 1 && out_path) {
        int rs = tf_plan_read(bands_from, TF_PLAN_READ_HEADER, &fwd);
        if (mpi_on)
            rs = tf_agree(MPI_COMM_WORLD, tf_agree_note_io(MPI_COMM_WORLD, rs));
        if (rs) {
            say( "twoface-plan: --bands-from: %s\n", tf_error_message());
            return 1;
        }
        if (mpi_on && same_copy_everywhere(tf_plan_identity(&fwd), "--bands-from", bands_from)) {
            say( "twoface-plan: %s\n", tf_error_message());
            tf_plan_free(&fwd);
            return 1;
        }
        /* The bands come with the partition that made them: another one
         * asked for would be ignored without a word. */
        if (partition_given && o.partition != fwd.partition &&
            !(o.partition == TF_PART_AUTO &&
              (fwd.partition == TF_PART_NNZ || fwd.partition == TF_PART_WORK))) {
            say( "twoface-plan: --partition %s disagrees with --bands-from %s, whose bands "
                 "were made with --partition %s\n", tf_partition_name(o.partition), bands_from,
                 tf_partition_name(fwd.partition));
            tf_plan_free(&fwd);
            return 2;
        }
        if (o.nranks > 0 && o.nranks != fwd.nranks) {
            say( "twoface-plan: -n %d disagrees with --bands-from %s, a plan for %d "
                            "ranks\n", o.nranks, bands_from, fwd.nranks);
            tf_plan_free(&fwd);
            return 2;
        }
        o.nranks = fwd.nranks;
    }
    if (optind != argc - 1 || o.nranks < 1 || !out_path) {
        say( "twoface-plan: %s (--help lists the options)\n",
                optind >= argc ? "missing MATRIX"
                : optind < argc - 1 ? "more than one MATRIX given"
                : o.nranks < 1 ? "missing -n P (ranks the plan is for)"
                               : "missing -o PLAN.h5");
        return 2;
    }
    const char *matrix = argv[optind];
    /* Under mpirun rank 0 writes every output file: its view decides. */
    int bad_out = quiet_rank ? 0 : check_outputs(out_path, svg, matrix, calib, bands_from);
    if (mpi_on)
        MPI_Bcast(&bad_out, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (bad_out) {
        tf_plan_free(&fwd);
        return 1;
    }
    if (calib) {
        tf_calibration cal;
        int rs = tf_calib_read(calib, &cal);
        if (mpi_on)
            rs = tf_agree(MPI_COMM_WORLD, tf_agree_note_io(MPI_COMM_WORLD, rs));
        if (rs == TF_OK && mpi_on) {
            uint64_t h = 0;
            for (int i = 0; i < TF_NCOEFFS; i++) {
                double v = tf_coeffs_get(&cal.coeffs, i);
                uint64_t w;
                memcpy(&w, &v, sizeof w);
                h = tf_mix64(h ^ w);
            }
            rs = same_copy_everywhere(h, "--calibration", calib);
        }
        if (rs) {
            say( "twoface-plan: %s\n", tf_error_message());
            tf_plan_free(&fwd);
            return 1;
        }
        o.coeffs = cal.coeffs;
    }
    if (threads)
        o.coeffs.threads = threads;

    if (mpi_on) {
        int rc = run_distributed(matrix, out_path, &o, normalization, transpose, bands_from, &fwd,
                                 level, svg, explain, quiet, json, max_memory);
        tf_plan_free(&fwd);
        return rc;
    }
    mem_limit lim;
    limit_init(&lim, max_memory);
    mm_header hdr;
    peek_header(matrix, &hdr);
    /* A size line the reader rejects (sizes out of range, more entries than
     * the matrix has positions or than a plain file's bytes can hold) is the
     * reader's to report: it names the line. */
    if (hdr.ok && hdr.m <= TF_MAX_DIM && hdr.n <= TF_MAX_DIM &&
        (double)hdr.declared <= (double)hdr.m * (double)hdr.n &&
        !(hdr.plain && hdr.declared > (hdr.after_size_line + 1) / 4)) {
        double need = estimate_read(&hdr);
        long long entries = (long long)hdr.declared * (hdr.symmetric ? 2 : 1);
        char detail[160];
        snprintf(detail, sizeof detail, "%lld x %lld, %lld entr%s%s", (long long)hdr.m,
                 (long long)hdr.n, entries, entries == 1 ? "y" : "ies",
                 hdr.symmetric ? " with the mirrored triangle" : "");
        if (over_limit(&lim, matrix, "reading", need, detail)) {
            tf_plan_free(&fwd);
            return 1;
        }
    }

    double t0 = omp_get_wtime();
    tf_csr a;
    tf_mm_read_options ro = TF_MM_READ_OPTIONS_INIT;
    /* The readers check the declared rows against the node's available
     * memory, or against --max-memory, which overrides as above. */
    ro.max_memory = max_memory > 0 ? (int64_t)max_memory : 0;
    int is_h5 = 0; /* an HDF5 CSR file (tf_h5csr.h), told by its magic bytes */
    int64_t hm, hn, hrow0, hkey;
    if (tf_h5csr_sniff(matrix, &is_h5) ||
        (is_h5 ? tf_h5csr_read_part(matrix, 1, 0, ro.max_memory, 1, &a, &hm, &hn, &hrow0, &hkey)
               : tf_mm_read(matrix, &a, &ro))) {
        say( "twoface-plan: %s\n", tf_error_message());
        tf_plan_free(&fwd);
        return 1;
    }
    double t_read = omp_get_wtime() - t0;
    /* The matrix the plan stores: normalised, maybe transposed (a transpose
     * and the symmetry test each hold a second copy of A for a moment, less
     * than planning holds below). */
    /* A symmetric file's matrix, as the reader mirrored it, needs no
     * symmetry test (peek_header's look at the banner says so; where it
     * cannot tell, the test runs, with the same outcome). */
    int st = tf_matrix_prepare_read(&a, normalization, transpose, !is_h5 && hdr.ok && hdr.mirrored,
                                    &o);
    if (st)
        say( "twoface-plan: %s: %s\n", matrix, tf_error_message());
    else if (bands_from && (st = tf_bands_from(&fwd, bands_from, matrix, &a, &o)))
        say( "twoface-plan: %s\n", tf_error_message());
    if (st) {
        tf_csr_free(&a);
        tf_plan_free(&fwd);
        return 1;
    }
    double t_prep = omp_get_wtime() - t0 - t_read;
    {
        double need = estimate_plan(&a, o.nranks, o.stripe_width, level, o.mode);
        char detail[160];
        snprintf(detail, sizeof detail, "%lld x %lld, %lld nonzeros, %d ranks",
                 (long long)a.nrows, (long long)a.ncols, (long long)a.nnz, o.nranks);
        if (over_limit(&lim, matrix, "planning", need, detail)) {
            tf_csr_free(&a);
            tf_plan_free(&fwd);
            return 1;
        }
    }
    double phase[TF_PLAN_PHASES] = {0};
    o.timing = phase;
    tf_plan plan;
    double tb = omp_get_wtime();
    if (tf_plan_build(&a, &o, &plan)) {
        say( "twoface-plan: %s: %s\n", matrix, tf_error_message());
        tf_csr_free(&a);
        tf_plan_free(&fwd);
        return 1;
    }
    tf_csr_free(&a);
    tf_plan_free(&fwd); /* o.row_off pointed into it */
    double t1 = omp_get_wtime();
    double t_build = t1 - tb;
    if (tf_plan_write(out_path, &plan, level)) {
        say( "twoface-plan: %s\n", tf_error_message());
        tf_plan_free(&plan);
        return 1;
    }
    double t_write = omp_get_wtime() - t1;
    int rc = 0;
    if (svg && tf_explain_svg(svg, &plan)) {
        say( "twoface-plan: %s\n", tf_error_message());
        rc = 1;
    }
    if (explain) {
        explain_auto(stdout, &o, &plan);
        tf_explain_print(stdout, &plan);
    }
    /* The phases, and what lies between them, add up to the run: the
     * planner's time outside its own phase clocks counts as build. */
    double t_end = omp_get_wtime();
    double ph[N_PH] = {t0 - t_main, t_read, t_prep, phase[0], phase[1], phase[2],
                       t_build - phase[0] - phase[1] - phase[2], t_write,
                       t_end - t1 - t_write};
    ph[PH_PREP] = tb - t0 - t_read;
    if (json) {
        double u[4];
        usage_self(&u[0], &u[1]);
        u[2] = plan_mib(&plan, NULL);
        u[3] = 0; /* encoded within tf_plan_write, not timed apart */
        print_json(1, &plan, ph, t_end - t_main, u, u);
    }
    if (!quiet && rc == 0) {
        double plan_s = phase[0] + phase[1] + phase[2] + phase[3];
        say(
                "twoface-plan: %s -> %s: %lld x %lld, %lld nnz, %d ranks, K %d, mode %s "
                "(classes %s%s%s); normalize %s, %s%s; comm %s\n"
                "  time: read %.3f s, normalise/transpose/symmetry %.3f s, partition %.3f s, analyse %.3f s, classify %.3f s, "
                "build %.3f s, write %.3f s; planning %.3f s without I/O, %.3f s with "
                "(%d OpenMP threads)\n",
                matrix, out_path, (long long)plan.m, (long long)plan.n, (long long)plan.nnz,
                plan.nranks, plan.k_planned, tf_mode_name(plan.mode), tf_plan_classes(&plan),
                plan.alt ? "; runner-up carried: " : "", plan.alt ? tf_plan_classes(plan.alt) : "",
                tf_norm_name(plan.normalization), plan.symmetric ? "symmetric" : "not symmetric",
                plan.transposed ? ", transposed" : "", tf_prec_name(plan.comm), t_read, t_prep, phase[0], phase[1],
                phase[2], phase[3], t_write, plan_s + t_prep, plan_s + t_prep + t_read + t_write,
                omp_get_max_threads());
    }
    tf_plan_free(&plan);
    return rc;
}

/* Finalised on the way out of main too, not only at exit: a simulated rank
 * (SMPI) ends when its main returns, long before the process's exit handlers
 * run, and a rank that never finalised stalls the simulation. */
int main(int argc, char **argv)
{
    int rc = plan_main(argc, argv);
    finalize_at_exit();
    return tf_cli_exit_status("twoface-plan", rc);
}
