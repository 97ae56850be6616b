/* twoface-exec: runs SpMMs with one or more plans, and the baselines, and
 * reports times.
 *
 *   mpirun -n P twoface-exec PLAN.h5 [PLAN2.h5 ...] [--algo A,B,...]
 *          [--replication C,...] [-k K] [-i ITER] [--time S] [--max-iterations N]
 *          [--warmup W] [--b FILE.h5] [--c-out FILE.h5] [--check] [--json]
 *          [--threads T] [--threads-fetch T] [--select-calls N] [--seed S]
 *
 * Several algorithms run in one process, interleaved round by round
 * (a b c, b c a, c a b ...: the order rotates) on the same B: round r fills every algorithm's B with the
 * generator at seed S + r (or copies --b), a barrier precedes each timed call.
 * At the end every algorithm's C is compared with the first one's.
 *
 * Every fallible collective step ends with an agreement over the ranks, so a
 * failure on one rank is reported once (by rank 0) and every rank exits with
 * status 1; a failure inside an SpMM, where the other ranks may be waiting in
 * MPI, ends with MPI_Abort. */
#include "tf_algo.h"
#include "tf_dense.h"
#include "tf_dense_h5.h"
#include "tf_exec.h"
#include "tf_median.h"
#include "tf_perm_exec.h"
#include "tf_reference.h"

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define PROG "twoface-exec"
#define CHECK_TOL 1e-5
#define MAX_PLANS 8

typedef struct {
    const char *plans[MAX_PLANS];
    int nplans;
    const char *algo, *replication;
    int k;
    int iters, warmup, max_iters;
    double time_budget;
    const char *b_path, *c_path;
    int check, json;
    int threads, threads_fetch;
    int select_calls;
    uint64_t seed;
} args;

static int g_rank = 0;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun -n P " PROG " PLAN.h5 [PLAN2.h5 ...] [options]\n"
            "  --algo A,B,...        algorithms to run interleaved on the same B: twoface,\n"
            "                        fetch, collective (each needs a plan of that --mode),\n"
            "                        allgather, shift, p2p (on the first plan's partition);\n"
            "                        default: the mode of every plan given\n"
            "  --replication C,...   shift's replication factors, each dividing P; one\n"
            "                        entry shift(c=C) each (default: divisors of P up to 4)\n"
            "  -k K                  dense width (default: --b's width, else the planned K)\n"
            "  -i, --iterations N    timed rounds (default 10; with --time the minimum)\n"
            "  --time S              run timed rounds until S seconds have passed\n"
            "  --max-iterations N    cap on timed rounds with --time (default 100000)\n"
            "  --warmup W            untimed rounds first (default 2; more while a\n"
            "                        twoface plan's start-up trial runs)\n"
            "  --b FILE.h5           B from dataset /B (float32, n x K); default: generator\n"
            "  --c-out FILE.h5       write the first algorithm's C to dataset /C (m x K)\n"
            "  --check               compare every C with a serial reference (tolerance 1e-5)\n"
            "  --json                one JSON object per algorithm on stdout\n"
            "  --threads T           OpenMP threads per rank (default OMP_NUM_THREADS)\n"
            "  --threads-fetch T     threads of the fetch group (default 1 if T >= 2;\n"
            "                        0 = one thread overlaps both halves)\n"
            "  --select-calls N      start-up trial of a plan carrying a runner-up: timed\n"
            "                        SpMM calls per plan (default 4; -1 = no trial)\n"
            "  --seed S              seed of the B generator (default 1; round r uses S + r)\n"
            "  -h, --help            this text\n");
}

/* Prints on rank 0 only (all ranks agree before calling). */
static void say_error(const char *what, const char *msg)
{
    if (g_rank != 0)
        return;
    size_t wl = what ? strlen(what) : 0;
    if (what && strncmp(msg, what, wl) == 0 && msg[wl] == ':')
        fprintf(stderr, PROG ": %s\n", msg); /* the message names the file already */
    else if (what)
        fprintf(stderr, PROG ": %s: %s\n", what, msg);
    else
        fprintf(stderr, PROG ": %s\n", msg);
    fflush(stderr);
}

static int finish(int code)
{
    MPI_Finalize();
    return code;
}

static int parse_int(const char *opt, const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return tf_fail(TF_ERR_ARG, "%s: expected an integer in [%ld, %ld], got '%s'", opt, lo, hi,
                       s);
    *out = v;
    return TF_OK;
}

/* Returns TF_OK, TF_ERR_ARG with a message, or -1 for --help. */
static int parse_args(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    a->k = 0;
    a->iters = 10;
    a->warmup = 2;
    a->max_iters = 100000;
    a->threads = 0;
    a->threads_fetch = -1;
    a->seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0)
            return -1;
        if (s[0] != '-' || s[1] == '\0') {
            if (a->nplans >= MAX_PLANS)
                return tf_fail(TF_ERR_ARG, "unexpected argument '%s' (at most %d plans)", s,
                               MAX_PLANS);
            a->plans[a->nplans++] = s;
            continue;
        }
        /* --opt=value or --opt value */
        char name[64];
        const char *val = NULL;
        const char *eq = strncmp(s, "--", 2) == 0 ? strchr(s, '=') : NULL;
        if (eq) {
            size_t n = (size_t)(eq - s);
            if (n >= sizeof name)
                n = sizeof name - 1;
            memcpy(name, s, n);
            name[n] = '\0';
            val = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", s);
        }
        static const char *const known[] = {
            "-k",      "--k",        "-i",     "--iterations", "--warmup", "--threads",
            "--threads-fetch", "--seed", "--b", "--c-out",     "--check",  "--json",
            "--algo",  "--replication", "--time", "--max-iterations", "--select-calls"};
        int is_known = 0;
        for (size_t x = 0; x < sizeof known / sizeof known[0]; x++)
            is_known |= strcmp(name, known[x]) == 0;
        if (!is_known)
            return tf_fail(TF_ERR_ARG, "unknown option '%s' (see --help)", name);
        int is_flag = strcmp(name, "--check") == 0 || strcmp(name, "--json") == 0;
        if (is_flag) {
            if (val)
                return tf_fail(TF_ERR_ARG, "%s takes no value", name);
            if (strcmp(name, "--check") == 0)
                a->check = 1;
            else
                a->json = 1;
            continue;
        }
        if (!val) {
            if (i + 1 >= argc)
                return tf_fail(TF_ERR_ARG, "%s needs a value", name);
            val = argv[++i];
        }
        long v;
        int st = TF_OK;
        if (strcmp(name, "-k") == 0 || strcmp(name, "--k") == 0) {
            if (!(st = parse_int(name, val, 1, 1 << 24, &v)))
                a->k = (int)v;
        } else if (strcmp(name, "-i") == 0 || strcmp(name, "--iterations") == 0) {
            if (!(st = parse_int(name, val, 1, 100000000, &v)))
                a->iters = (int)v;
        } else if (strcmp(name, "--max-iterations") == 0) {
            if (!(st = parse_int(name, val, 1, 100000000, &v)))
                a->max_iters = (int)v;
        } else if (strcmp(name, "--warmup") == 0) {
            if (!(st = parse_int(name, val, 0, 100000000, &v)))
                a->warmup = (int)v;
        } else if (strcmp(name, "--threads") == 0) {
            if (!(st = parse_int(name, val, 1, 4096, &v)))
                a->threads = (int)v;
        } else if (strcmp(name, "--threads-fetch") == 0) {
            if (!(st = parse_int(name, val, 0, 4096, &v)))
                a->threads_fetch = (int)v;
        } else if (strcmp(name, "--select-calls") == 0) {
            if (!(st = parse_int(name, val, -1, 1000, &v)))
                a->select_calls = (int)v;
        } else if (strcmp(name, "--time") == 0) {
            char *end;
            errno = 0;
            double t = strtod(val, &end);
            if (errno || end == val || *end || !(t >= 0) || t > 1e6)
                st = tf_fail(TF_ERR_ARG, "--time: expected seconds in [0, 1e6], got '%s'", val);
            a->time_budget = t;
        } else if (strcmp(name, "--seed") == 0) {
            char *end;
            errno = 0;
            unsigned long long u = strtoull(val, &end, 0);
            if (errno || end == val || *end || val[0] == '-')
                st = tf_fail(TF_ERR_ARG, "--seed: expected a non-negative integer, got '%s'",
                             val);
            a->seed = u;
        } else if (strcmp(name, "--b") == 0) {
            a->b_path = val;
        } else if (strcmp(name, "--c-out") == 0) {
            a->c_path = val;
        } else if (strcmp(name, "--algo") == 0) {
            a->algo = val;
        } else if (strcmp(name, "--replication") == 0) {
            a->replication = val;
        } else {
            return tf_fail(TF_ERR_ARG, "unknown option '%s' (see --help)", name);
        }
        if (st)
            return st;
    }
    if (a->nplans == 0)
        return tf_fail(TF_ERR_ARG, "no plan file given (see --help)");
    if (a->replication && !a->algo)
        return tf_fail(TF_ERR_ARG, "--replication applies to shift only: add --algo shift");
    if (a->max_iters < a->iters)
        a->max_iters = a->iters;
    return TF_OK;
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* sum_j |A(i,j)| of this rank's rows. */
static double *abs_row_sums(const tf_csr *rows)
{
    double *absrow = malloc((size_t)(rows->nrows + 1) * sizeof *absrow);
    if (!absrow)
        return NULL;
    for (int64_t i = 0; i < rows->nrows; i++) {
        double s = 0.0;
        for (int64_t e = rows->rowptr[i]; e < rows->rowptr[i + 1]; e++)
            s += fabs((double)rows->val[e]);
        absrow[i] = s;
    }
    return absrow;
}

/* Max scaled error of every algorithm's C rows against the reference (B of
 * seed `seed`, or the --b file); errs[x] is the max over ranks. */
static int check_rows(const tf_handle *h, const args *a, int k, uint64_t seed, float *const *cs,
                      int nc, double *errs)
{
    tf_csr orig;
    const tf_csr *rows;
    if (tf_exec_rows_original(h, &orig, &rows))
        return tf_exec_agree(h->comm, TF_ERR_NOMEM);
    int64_t nr = rows->nrows;
    double *absrow = abs_row_sums(rows);
    const int64_t BLK = 1024;
    double *cref = malloc((size_t)BLK * (size_t)k * sizeof *cref);
    for (int x = 0; x < nc; x++)
        errs[x] = 0.0;
    if (!absrow || !cref) {
        free(absrow);
        free(cref);
        return tf_fail(TF_ERR_NOMEM, "out of memory for --check");
    }
    int st = TF_OK;
    double bmax = 1.0; /* generator values lie in [-1, 1) */
    tf_csr compact;
    memset(&compact, 0, sizeof compact);
    float *bneed = NULL;
    if (a->b_path) {
        /* The distinct columns this rank's rows use, read from the file, and
         * a copy of the rows with columns renumbered into that list. */
        int64_t n = rows->ncols;
        int32_t *map = malloc((size_t)(n + 1) * sizeof *map);
        st = map ? tf_csr_alloc(&compact, nr, 0, rows->nnz)
                 : tf_fail(TF_ERR_NOMEM, "out of memory for --check");
        int64_t nneed = 0;
        int32_t *need = NULL;
        if (st == TF_OK) {
            for (int64_t j = 0; j < n; j++)
                map[j] = -1;
            for (int64_t e = 0; e < rows->nnz; e++)
                map[rows->col[e]] = 0;
            need = malloc((size_t)(n + 1) * sizeof *need);
            if (!need)
                st = tf_fail(TF_ERR_NOMEM, "out of memory for --check");
        }
        if (st == TF_OK) {
            for (int64_t j = 0; j < n; j++)
                if (map[j] == 0) {
                    map[j] = (int32_t)nneed;
                    need[nneed++] = (int32_t)j;
                }
            compact.ncols = nneed;
            memcpy(compact.rowptr, rows->rowptr, (size_t)(nr + 1) * sizeof *compact.rowptr);
            for (int64_t e = 0; e < rows->nnz; e++) {
                compact.col[e] = map[rows->col[e]];
                compact.val[e] = rows->val[e];
            }
            bneed = malloc((size_t)(nneed > 0 ? nneed : 1) * (size_t)k * sizeof *bneed);
            st = bneed ? tf_dense_h5_read_row_set(a->b_path, "/B", need, nneed, k, bneed)
                       : tf_fail(TF_ERR_NOMEM, "out of memory for --check");
        }
        bmax = 0.0;
        for (int64_t x = 0; st == TF_OK && x < nneed * k; x++)
            if (fabs((double)bneed[x]) > bmax)
                bmax = fabs((double)bneed[x]);
        free(map);
        free(need);
    }
    /* The scale uses the largest |B| anywhere, the same on every rank. */
    int st_all = tf_exec_agree(h->comm, st);
    if (st_all == TF_OK) {
        double g = bmax;
        MPI_Allreduce(&g, &bmax, 1, MPI_DOUBLE, MPI_MAX, h->comm);
        for (int64_t r0 = 0; r0 < nr; r0 += BLK) {
            int64_t r1 = r0 + BLK < nr ? r0 + BLK : nr;
            if (a->b_path)
                tf_reference_spmm(&compact, r0, r1, bneed, k, cref);
            else
                tf_reference_spmm_gen(rows, r0, r1, seed, k, cref);
            for (int x = 0; x < nc; x++) {
                double e = tf_reference_scaled_error(cs[x] + r0 * k, cref, absrow + r0, r1 - r0,
                                                     k, bmax > 0 ? bmax : 1.0);
                if (!(e <= errs[x])) /* NaN-safe max */
                    errs[x] = e;
            }
        }
        MPI_Allreduce(MPI_IN_PLACE, errs, nc, MPI_DOUBLE, MPI_MAX, h->comm);
    }
    tf_csr_free(&compact);
    tf_csr_free(&orig);
    free(bneed);
    free(absrow);
    free(cref);
    return st_all;
}

/* Max over this rank's entries of |C - C0| / (sum_j |A(i,j)| max|B|). */
static double scaled_diff(const double *absrow, int64_t nr, int k, const float *c,
                          const float *c0, double bmax)
{
    double worst = 0.0;
    for (int64_t i = 0; i < nr; i++) {
        double scale = absrow[i] * bmax + 1e-30;
        for (int64_t x = 0; x < k; x++) {
            double d = fabs((double)c[i * k + x] - (double)c0[i * k + x]);
            if (!(d == d))
                return INFINITY;
            if (d / scale > worst)
                worst = d / scale;
        }
    }
    return worst;
}

static void close_all(tf_algo **algs, int nalg, tf_handle **hs, int nh)
{
    for (int x = 0; x < nalg; x++)
        tf_algo_free(algs[x]);
    for (int i = 0; i < nh; i++)
        tf_close(hs[i]);
}

/* Per algorithm, after the runs: what rank 0 prints. */
typedef struct {
    double med, tmin, tmax;
    double det_max[9], det_mean[9]; /* 7 executor parts + comm + compute, per SpMM */
    double bytes_sum, bytes_max, bytes_coll_sum, bytes_fetch_sum;
    double msgs_sum, msgs_max, msgs_coll_sum, msgs_fetch_sum;
    double diff;  /* vs the first algorithm */
    double err;   /* vs the reference (--check) */
} report;

/* Freed memory stays mapped and is reused: no large allocation is served by
 * mmap (and unmapped at free), and the heap is never trimmed. First-touch
 * page faults cost 12-17 us per 4 KiB page on the development VM, and MPI
 * allocates temporaries inside some collectives on every call (the shift
 * baseline's MPI_Reduce_scatter of 113 MB ran 7.1 s instead of 0.58 s per
 * call with glibc's defaults). The executor itself allocates nothing per
 * SpMM; this keeps the comparison about the algorithms, not the VM's faults.
 * TF_EXEC_MALLOC=default keeps glibc's defaults. */
static void keep_freed_memory(void)
{
    const char *e = getenv("TF_EXEC_MALLOC");
    if (e && strcmp(e, "default") == 0)
        return;
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
}

int main(int argc, char **argv)
{
    keep_freed_memory();
    /* ucx one-sided returned corrupted MPI_Get data on the development
     * machine; sm (allocated windows) then rdma unless the user says
     * otherwise. */
    setenv("OMPI_MCA_osc", "sm,rdma", 0);
    int provided = 0;
    /* Ask only for what the run can use: with one OpenMP thread the executor
     * never calls MPI from two threads, and FUNNELED lets transports that
     * refuse THREAD_MULTIPLE (osc pt2pt, one-sided over plain TCP) run. */
    MPI_Init_thread(&argc, &argv,
                    omp_get_max_threads() > 1 ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED,
                    &provided);
    MPI_Comm comm = MPI_COMM_WORLD;
    int nranks;
    MPI_Comm_rank(comm, &g_rank);
    MPI_Comm_size(comm, &nranks);

    args a;
    int st = parse_args(argc, argv, &a);
    if (st == -1) {
        if (g_rank == 0)
            usage(stdout);
        return finish(0);
    }
    if (st) {
        say_error(NULL, tf_error_message());
        return finish(1);
    }

    /* Plans. */
    tf_handle *hs[MAX_PLANS] = {NULL};
    tf_algo *algs[TF_ALGO_MAX] = {NULL};
    for (int i = 0; i < a.nplans; i++) {
        st = tf_open(a.plans[i], comm, &hs[i]); /* agrees */
        if (st) {
            say_error(a.plans[i], tf_error_message());
            close_all(algs, 0, hs, i);
            return finish(1);
        }
    }
    st = tf_exec_agree(comm, tf_algo_check_plans(hs, a.plans, a.nplans));
    tf_algo_spec *specs = NULL;
    int nalg = 0;
    if (st == TF_OK && a.algo) {
        st = tf_algo_parse(a.algo, a.replication, nranks, &specs, &nalg);
    } else if (st == TF_OK) {
        specs = calloc((size_t)a.nplans, sizeof *specs);
        if (!specs)
            st = tf_fail(TF_ERR_NOMEM, "out of memory");
        for (int i = 0; st == TF_OK && i < a.nplans; i++) {
            specs[i].kind = tf_get_mode(hs[i]);
            specs[i].replication = 1;
            snprintf(specs[i].name, sizeof specs[i].name, "%s", tf_get_mode_name(hs[i]));
        }
        nalg = a.nplans;
    }
    for (int x = 0; st == TF_OK && x < nalg; x++) {
        int idx;
        st = tf_algo_pick_plan(&specs[x], hs, a.nplans, &idx);
    }
    st = tf_exec_agree(comm, st);
    if (st) {
        say_error(NULL, tf_error_message());
        free(specs);
        close_all(algs, 0, hs, a.nplans);
        return finish(1);
    }
    tf_handle *h = hs[0];
    int64_t row_begin, nrows, brow_begin, nbrows;
    tf_get_rows(h, &row_begin, &nrows);
    tf_get_brows(h, &brow_begin, &nbrows);
    int64_t m = tf_get_m(h), n = tf_get_n(h);

    /* K: -k, else the width of --b, else the planned K. */
    int k = a.k;
    st = TF_OK;
    if (a.b_path) {
        int64_t br = 0, bc = 0;
        st = tf_dense_h5_shape(a.b_path, "/B", &br, &bc);
        if (st == TF_OK && br != n)
            st = tf_fail(TF_ERR_FORMAT, "%s: /B has %lld rows, the matrix has %lld columns",
                         a.b_path, (long long)br, (long long)n);
        else if (st == TF_OK && k > 0 && bc != k)
            st = tf_fail(TF_ERR_FORMAT, "%s: /B has %lld columns, -k is %d", a.b_path,
                         (long long)bc, k);
        else if (st == TF_OK && (bc < 1 || bc > (1 << 24)))
            st = tf_fail(TF_ERR_FORMAT, "%s: /B has %lld columns", a.b_path, (long long)bc);
        if (st == TF_OK)
            k = (int)bc;
    }
    st = tf_exec_agree(comm, st);
    if (st) {
        say_error(a.b_path, tf_error_message());
        free(specs);
        close_all(algs, 0, hs, a.nplans);
        return finish(1);
    }
    if (k <= 0)
        k = tf_get_k_planned(h) > 0 ? tf_get_k_planned(h) : 128;

    tf_exec_options opt;
    tf_exec_options_default(&opt);
    opt.threads = a.threads;
    opt.threads_fetch = a.threads_fetch;
    opt.select_calls = a.select_calls;
    for (int x = 0; x < nalg; x++) {
        st = tf_algo_create(&specs[x], hs, a.nplans, k, &opt, &algs[x]); /* agrees */
        if (st) {
            int idx = 0;
            tf_algo_pick_plan(&specs[x], hs, a.nplans, &idx);
            say_error(specs[x].kind <= TF_ALGO_COLLECTIVE ? a.plans[idx] : specs[x].name,
                      tf_error_message());
            free(specs);
            close_all(algs, x, hs, a.nplans);
            return finish(1);
        }
    }

    /* B of the round (generated or read once), and one C per algorithm. */
    size_t bsz = (size_t)(nbrows > 0 ? nbrows : 1) * (size_t)k;
    size_t csz = (size_t)(nrows > 0 ? nrows : 1) * (size_t)k;
    float *bgen = calloc(bsz, sizeof *bgen);
    float *cs[TF_ALGO_MAX] = {NULL};
    st = bgen ? TF_OK : tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate B", g_rank);
    for (int x = 0; st == TF_OK && x < nalg; x++) {
        cs[x] = calloc(csz, sizeof *cs[x]); /* touched */
        if (!cs[x])
            st = tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate C (%lld x %d)", g_rank,
                         (long long)nrows, k);
    }
    if (a.b_path) {
        st = tf_exec_agree(comm, st);
        if (st == TF_OK)
            st = tf_exec_read_b(h, a.b_path, k, bgen);
    }
    st = tf_exec_agree(comm, st);
    int cap = a.time_budget > 0 ? (a.max_iters < 1024 ? a.max_iters : 1024) : a.iters;
    double *times = NULL;
    if (st == TF_OK) {
        times = malloc((size_t)cap * (size_t)nalg * sizeof *times);
        st = tf_exec_agree(comm, times ? TF_OK : tf_fail(TF_ERR_NOMEM, "out of memory"));
    }
    if (st) {
        say_error(a.b_path, tf_error_message());
        free(bgen);
        for (int x = 0; x < nalg; x++)
            free(cs[x]);
        free(specs);
        close_all(algs, nalg, hs, a.nplans);
        return finish(1);
    }

    /* Rounds: every algorithm once per round, same B. Warm-up lasts at least
     * as long as the start-up trials (every rank has the same numbers), so
     * that timed rounds measure the plan each trial kept; the trials' own
     * times are reported with the selection. */
    int warmup = a.warmup;
    for (int x = 0; x < nalg; x++) {
        tf_selection sel;
        if (tf_algo_selection(algs[x], &sel) && sel.trial && !sel.decided &&
            sel.calls_total - sel.calls_made > warmup)
            warmup = sel.calls_total - sel.calls_made;
    }
    int timed = 0;
    double t_start = 0.0;
    int round = 0;
    for (;; round++) {
        if (round == warmup) {
            for (int x = 0; x < nalg; x++)
                tf_algo_reset(algs[x]);
            MPI_Barrier(comm);
            t_start = MPI_Wtime();
        }
        if (round >= warmup) {
            /* Stop? Decided from values every rank has (the same on all). */
            int more;
            if (a.time_budget > 0) {
                double el = MPI_Wtime() - t_start;
                MPI_Allreduce(MPI_IN_PLACE, &el, 1, MPI_DOUBLE, MPI_MAX, comm);
                more = timed < a.iters || (el < a.time_budget && timed < a.max_iters);
            } else {
                more = timed < a.iters;
            }
            if (!more)
                break;
            if (timed == cap) {
                cap = cap * 2 < a.max_iters ? cap * 2 : a.max_iters;
                double *t2 = realloc(times, (size_t)cap * (size_t)nalg * sizeof *times);
                if (!t2) {
                    fprintf(stderr, PROG ": rank %d: out of memory for times\n", g_rank);
                    MPI_Abort(comm, 1);
                }
                times = t2;
            }
        }
        if (!a.b_path && nbrows > 0)
            tf_exec_fill_b(h, a.seed + (uint64_t)round, k, bgen);
        /* The order rotates every round: the first algorithm after B is
         * refilled and the last before the next refill see different cache
         * and scheduler states, and a fixed order biased ratios by 5-15%
         * between two identical plans. */
        for (int y = 0; y < nalg; y++) {
            int x = (y + round) % nalg;
            float *b = tf_algo_b(algs[x]);
            if (nbrows > 0)
                memcpy(b, bgen, (size_t)nbrows * (size_t)k * sizeof *b);
            MPI_Barrier(comm);
            double t0 = MPI_Wtime();
            st = tf_algo_run(algs[x], cs[x]);
            double t = MPI_Wtime() - t0;
            if (st) {
                /* Other ranks may be blocked inside MPI: no agreement possible. */
                fprintf(stderr, PROG ": %s: rank %d: SpMM failed: %s\n", specs[x].name, g_rank,
                        tf_error_message());
                fflush(stderr);
                MPI_Abort(comm, 1);
            }
            if (round >= warmup) {
                double tmax;
                MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm);
                times[(size_t)timed * nalg + x] = tmax;
            }
        }
        if (round >= warmup)
            timed++;
    }
    uint64_t last_seed = a.seed + (uint64_t)(round - 1);

    int exit_code = 0;
    report *rep = calloc((size_t)nalg, sizeof *rep);
    if (!rep)
        MPI_Abort(comm, 1);

    /* Agreement between algorithms: each C against the first one's. */
    double bmax = 1.0;
    if (a.b_path) {
        bmax = 0.0;
        for (int64_t x = 0; x < nbrows * k; x++)
            if (fabs((double)bgen[x]) > bmax)
                bmax = fabs((double)bgen[x]);
        MPI_Allreduce(MPI_IN_PLACE, &bmax, 1, MPI_DOUBLE, MPI_MAX, comm);
        if (!(bmax > 0))
            bmax = 1.0;
    }
    if (nalg > 1) {
        double *absrow = abs_row_sums(tf_handle_rows(h));
        if (!absrow)
            MPI_Abort(comm, 1);
        double *diffs = calloc((size_t)nalg, sizeof *diffs);
        if (!diffs)
            MPI_Abort(comm, 1);
        for (int x = 1; x < nalg; x++)
            diffs[x] = scaled_diff(absrow, nrows, k, cs[x], cs[0], bmax);
        MPI_Allreduce(MPI_IN_PLACE, diffs, nalg, MPI_DOUBLE, MPI_MAX, comm);
        for (int x = 0; x < nalg; x++) {
            rep[x].diff = diffs[x];
            if (!(diffs[x] <= CHECK_TOL)) {
                if (g_rank == 0)
                    fprintf(stderr,
                            PROG ": %s and %s disagree: max scaled difference %.3g > %g\n",
                            specs[0].name, specs[x].name, diffs[x], CHECK_TOL);
                exit_code = 1;
            }
        }
        free(diffs);
        free(absrow);
    }

    if (a.check) {
        double *errs = calloc((size_t)nalg, sizeof *errs);
        if (!errs)
            MPI_Abort(comm, 1);
        st = check_rows(h, &a, k, last_seed, cs, nalg, errs);
        if (st) {
            say_error(a.b_path ? a.b_path : a.plans[0], tf_error_message());
            exit_code = 1;
        }
        for (int x = 0; x < nalg; x++)
            rep[x].err = errs[x];
        free(errs);
    }
    if (exit_code == 0 && a.c_path) {
        st = tf_exec_write_c(h, a.c_path, k, cs[0]);
        if (st) {
            say_error(a.c_path, tf_error_message());
            exit_code = 1;
        }
    }

    /* Statistics. */
    for (int x = 0; x < nalg; x++) {
        tf_algo_stats s;
        tf_algo_stats_get(algs[x], &s);
        double calls = (double)(s.calls > 0 ? s.calls : 1);
        double per[9] = {s.detail.local_comp, s.detail.coll_wait,  s.detail.coll_comp,
                         s.detail.fetch_wait, s.detail.fetch_comp, s.detail.merge,
                         s.detail.sync,       s.comm,              s.compute};
        for (int y = 0; y < 9; y++)
            per[y] /= calls;
        MPI_Reduce(per, rep[x].det_max, 9, MPI_DOUBLE, MPI_MAX, 0, comm);
        MPI_Reduce(per, rep[x].det_mean, 9, MPI_DOUBLE, MPI_SUM, 0, comm);
        double cnt[6] = {(double)s.bytes / calls,
                         (double)s.msgs / calls,
                         (double)s.detail.bytes_coll / calls,
                         (double)s.detail.bytes_fetch / calls,
                         (double)s.detail.msgs_coll / calls,
                         (double)s.detail.msgs_fetch / calls},
               sum[6], mx[2];
        MPI_Reduce(cnt, sum, 6, MPI_DOUBLE, MPI_SUM, 0, comm);
        MPI_Reduce(cnt, mx, 2, MPI_DOUBLE, MPI_MAX, 0, comm);
        rep[x].bytes_sum = sum[0];
        rep[x].msgs_sum = sum[1];
        rep[x].bytes_coll_sum = sum[2];
        rep[x].bytes_fetch_sum = sum[3];
        rep[x].msgs_coll_sum = sum[4];
        rep[x].msgs_fetch_sum = sum[5];
        rep[x].bytes_max = mx[0];
        rep[x].msgs_max = mx[1];
        for (int y = 0; y < 9; y++)
            rep[x].det_mean[y] /= nranks;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double rss = (double)ru.ru_maxrss / 1024.0, rss_max = 0, rss_sum = 0; /* KiB -> MiB */
    MPI_Reduce(&rss, &rss_max, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Reduce(&rss, &rss_sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);

    if (g_rank == 0) {
        double *col = malloc((size_t)(timed > 0 ? timed : 1) * sizeof *col);
        if (!col)
            MPI_Abort(comm, 1);
        int tf_idx = -1;
        for (int x = 0; x < nalg; x++) {
            for (int r = 0; r < timed; r++)
                col[r] = times[(size_t)r * nalg + x];
            rep[x].med = tf_median(col, timed); /* sorts col */
            rep[x].tmin = col[0];
            rep[x].tmax = col[timed - 1];
            if (specs[x].kind == TF_ALGO_TWOFACE && tf_idx < 0)
                tf_idx = x;
        }
        free(col);
        const char *bnames[9] = {"local_comp_s", "coll_wait_s", "coll_comp_s",
                                 "fetch_wait_s", "fetch_comp_s", "merge_s",
                                 "sync_s",       "comm_s",      "compute_s"};
        if (a.json) {
            for (int x = 0; x < nalg; x++) {
                const report *r = &rep[x];
                int fam = specs[x].kind <= TF_ALGO_COLLECTIVE;
                printf("{\"algo\": ");
                json_string(stdout, specs[x].name);
                printf(", \"plan\": ");
                json_string(stdout, a.plans[tf_algo_plan_index(algs[x])]);
                printf(", \"m\": %lld, \"n\": %lld, \"nnz\": %lld", (long long)m, (long long)n,
                       (long long)tf_get_nnz(h));
                printf(", \"ranks\": %d, \"threads\": %d, \"threads_fetch\": %d, \"k\": %d",
                       nranks, tf_algo_threads(algs[x]), tf_algo_threads_fetch(algs[x]), k);
                if (specs[x].kind == TF_ALGO_SHIFT)
                    printf(", \"replication\": %d", specs[x].replication);
                printf(", \"iterations\": %d, \"warmup\": %d, \"interleaved\": %d", timed,
                       warmup, nalg);
                printf(", \"median_s\": %.9g, \"min_s\": %.9g, \"max_s\": %.9g", r->med, r->tmin,
                       r->tmax);
                if (tf_idx >= 0)
                    printf(", \"ratio_to_twoface\": %.6g", r->med / rep[tf_idx].med);
                else
                    printf(", \"ratio_to_twoface\": null");
                for (int which = 0; which < 2; which++) {
                    const double *d = which ? r->det_mean : r->det_max;
                    printf(which ? ", \"breakdown_mean\": {" : ", \"breakdown\": {");
                    int first = 1;
                    for (int y = fam ? 0 : 7; y < 9; y++) {
                        printf("%s\"%s\": %.9g", first ? "" : ", ", bnames[y], d[y]);
                        first = 0;
                    }
                    printf("}");
                }
                if (fam)
                    printf(", \"bytes_received\": {\"collective\": %.0f, \"fetch\": %.0f, "
                           "\"total\": %.0f}",
                           r->bytes_coll_sum, r->bytes_fetch_sum, r->bytes_sum);
                else
                    printf(", \"bytes_received\": {\"total\": %.0f}", r->bytes_sum);
                printf(", \"bytes_per_rank\": {\"max\": %.0f, \"mean\": %.0f}", r->bytes_max,
                       r->bytes_sum / nranks);
                if (fam)
                    printf(", \"messages\": {\"collective\": %.0f, \"fetch\": %.0f, "
                           "\"total\": %.0f}",
                           r->msgs_coll_sum, r->msgs_fetch_sum, r->msgs_sum);
                else
                    printf(", \"messages\": {\"total\": %.0f}", r->msgs_sum);
                printf(", \"messages_per_rank\": {\"max\": %.0f, \"mean\": %.4g}", r->msgs_max,
                       r->msgs_sum / nranks);
                if (nalg > 1) {
                    printf(", \"max_diff_vs_first\": %.6g", r->diff);
                }
                if (a.check)
                    printf(", \"max_error\": %.6g, \"check_passed\": %s", r->err,
                           r->err <= CHECK_TOL ? "true" : "false");
                /* Last, so that the record's own keys come first for
                 * line-oriented readers (bench/run takes the first match). */
                tf_selection sel;
                if (tf_algo_selection(algs[x], &sel)) { /* the plan-based ones (fam) */
                    printf(", \"classes\": \"%s\"",
                           sel.classes[sel.decided && sel.chose_alternative]);
                    if (sel.trial)
                        printf(", \"selection\": {\"planned\": \"%s\", \"alternative\": \"%s\", "
                               "\"chose\": \"%s\", \"trial_calls\": %d, \"trial_median_s\": "
                               "[%.9g, %.9g]}",
                               sel.classes[0], sel.classes[1],
                               !sel.decided            ? "undecided"
                               : sel.chose_alternative ? "alternative"
                                                       : "planned",
                               sel.calls, sel.median[0], sel.median[1]);
                    else
                        printf(", \"selection\": null");
                }
                printf(", \"peak_rss_mb\": %.1f, \"peak_rss_mb_mean\": %.1f}\n", rss_max,
                       rss_sum / nranks);
            }
        } else {
            printf("%d plan(s), first %s: %d ranks, %lld x %lld with %lld nonzeros\n", a.nplans,
                   a.plans[0], nranks, (long long)m, (long long)n, (long long)tf_get_nnz(h));
            printf("K = %d, %d thread(s) per rank, %d round(s) after %d warm-up round(s), "
                   "%d algorithm(s) interleaved\n",
                   k, tf_algo_threads(algs[0]), timed, warmup, nalg);
            printf("%-14s %10s %10s %10s %8s %12s %10s %10s %10s\n", "algorithm", "median_ms",
                   "min_ms", "max_ms", "vs_tf", "MB/rank_max", "msgs_max", "comm_ms",
                   "compute_ms");
            for (int x = 0; x < nalg; x++) {
                const report *r = &rep[x];
                char ratio[32] = "-";
                if (tf_idx >= 0)
                    snprintf(ratio, sizeof ratio, "%.2f", r->med / rep[tf_idx].med);
                printf("%-14s %10.3f %10.3f %10.3f %8s %12.3f %10.0f %10.3f %10.3f\n",
                       specs[x].name, r->med * 1e3, r->tmin * 1e3, r->tmax * 1e3, ratio,
                       r->bytes_max / 1e6, r->msgs_max, r->det_max[7] * 1e3,
                       r->det_max[8] * 1e3);
            }
            for (int x = 0; x < nalg; x++) {
                if (specs[x].kind > TF_ALGO_COLLECTIVE)
                    continue;
                const report *r = &rep[x];
                printf("%s breakdown per SpMM (ms, max / mean over ranks):\n", specs[x].name);
                const char *labels[7] = {"local compute", "collective wait",
                                         "collective compute", "fetch wait",
                                         "fetch compute", "merge", "final sync"};
                for (int y = 0; y < 7; y++)
                    printf("  %-19s %9.3f %9.3f\n", labels[y], r->det_max[y] * 1e3,
                           r->det_mean[y] * 1e3);
                printf("  received per SpMM (all ranks): collective %.3f MB in %.0f messages, "
                       "fetch %.3f MB in %.0f requests\n",
                       r->bytes_coll_sum / 1e6, r->msgs_coll_sum, r->bytes_fetch_sum / 1e6,
                       r->msgs_fetch_sum);
            }
            for (int x = 0; x < nalg; x++) {
                tf_selection sel;
                if (!tf_algo_selection(algs[x], &sel) || !sel.trial || !sel.decided)
                    continue;
                printf("%s start-up trial (median of %d calls each, slowest rank): planned %s "
                       "%.3f ms, alternative %s %.3f ms: kept the %s\n",
                       specs[x].name, sel.calls, sel.classes[0], sel.median[0] * 1e3,
                       sel.classes[1], sel.median[1] * 1e3,
                       sel.chose_alternative ? "alternative" : "planned plan");
            }
            printf("peak memory per rank: max %.1f MB, mean %.1f MB\n", rss_max, rss_sum / nranks);
            if (nalg > 1) {
                double worst = 0;
                for (int x = 1; x < nalg; x++)
                    if (!(rep[x].diff <= worst))
                        worst = rep[x].diff;
                printf("agreement: max scaled difference vs %s %.3g (tolerance %g): %s\n",
                       specs[0].name, worst, CHECK_TOL, worst <= CHECK_TOL ? "passed" : "FAILED");
            }
            if (a.check)
                for (int x = 0; x < nalg; x++)
                    printf("check %s: max scaled error %.3g (tolerance %g): %s\n", specs[x].name,
                           rep[x].err, CHECK_TOL, rep[x].err <= CHECK_TOL ? "passed" : "FAILED");
        }
        fflush(stdout);
    }
    if (a.check && exit_code == 0) {
        for (int x = 0; x < nalg; x++)
            if (!(rep[x].err <= CHECK_TOL)) {
                if (g_rank == 0) {
                    fprintf(stderr, PROG ": %s: check failed: max scaled error %.3g > %g\n",
                            nalg == 1 ? a.plans[tf_algo_plan_index(algs[x])] : specs[x].name,
                            rep[x].err, CHECK_TOL);
                    fflush(stderr);
                }
                exit_code = 1;
            }
    }
    free(rep);
    free(times);
    free(bgen);
    for (int x = 0; x < nalg; x++)
        free(cs[x]);
    free(specs);
    close_all(algs, nalg, hs, a.nplans);
    return finish(exit_code);
}
