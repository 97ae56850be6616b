/* twoface-exec: runs SpMMs with a plan and reports times.
 *
 *   mpirun -n P twoface-exec PLAN.h5 [-k K] [-i ITER] [--warmup W] [--b FILE.h5]
 *          [--c-out FILE.h5] [--check] [--json] [--threads T] [--threads-fetch T]
 *          [--seed S]
 *
 * Every fallible collective step ends with an agreement over the ranks, so a
 * failure on one rank is reported once (by rank 0) and every rank exits with
 * status 1; a failure inside an SpMM, where the other ranks may be waiting in
 * MPI, ends with MPI_Abort. */
#include "tf_dense.h"
#include "tf_dense_h5.h"
#include "tf_exec.h"
#include "tf_reference.h"

#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define PROG "twoface-exec"
#define CHECK_TOL 1e-5

typedef struct {
    const char *plan;
    int k;
    int iters, warmup;
    const char *b_path, *c_path;
    int check, json;
    int threads, threads_fetch;
    uint64_t seed;
} args;

static int g_rank = 0;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun -n P " PROG " PLAN.h5 [options]\n"
            "  -k K                  dense width (default: --b's width, else the planned K)\n"
            "  -i, --iterations N    timed SpMMs (default 10)\n"
            "  --warmup W            untimed SpMMs first (default 2)\n"
            "  --b FILE.h5           B from dataset /B (float32, n x K); default: generator\n"
            "  --c-out FILE.h5       write C to dataset /C (float32, m x K)\n"
            "  --check               compare C with a serial reference (tolerance 1e-5)\n"
            "  --json                one JSON object on stdout instead of the text report\n"
            "  --threads T           OpenMP threads per rank (default OMP_NUM_THREADS)\n"
            "  --threads-fetch T     threads of the fetch group (default 1 if T >= 2;\n"
            "                        0 = one thread overlaps both halves)\n"
            "  --seed S              seed of the B generator (default 1)\n"
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
    a->threads = 0;
    a->threads_fetch = -1;
    a->seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0)
            return -1;
        if (s[0] != '-' || s[1] == '\0') {
            if (a->plan)
                return tf_fail(TF_ERR_ARG, "unexpected argument '%s' (one plan only)", s);
            a->plan = s;
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
        static const char *const known[] = {"-k", "--k", "-i", "--iterations", "--warmup",
                                            "--threads", "--threads-fetch", "--seed", "--b",
                                            "--c-out", "--check", "--json"};
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
        } else if (strcmp(name, "--warmup") == 0) {
            if (!(st = parse_int(name, val, 0, 100000000, &v)))
                a->warmup = (int)v;
        } else if (strcmp(name, "--threads") == 0) {
            if (!(st = parse_int(name, val, 1, 4096, &v)))
                a->threads = (int)v;
        } else if (strcmp(name, "--threads-fetch") == 0) {
            if (!(st = parse_int(name, val, 0, 4096, &v)))
                a->threads_fetch = (int)v;
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
        } else {
            return tf_fail(TF_ERR_ARG, "unknown option '%s' (see --help)", name);
        }
        if (st)
            return st;
    }
    if (!a->plan)
        return tf_fail(TF_ERR_ARG, "no plan file given (see --help)");
    return TF_OK;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
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

/* Max scaled error of this rank's C rows against the reference. */
static int check_rows(const tf_handle *h, const args *a, int k, const float *c, double *err_out)
{
    const tf_csr *rows = tf_handle_rows(h);
    int64_t nr = rows->nrows;
    double *absrow = malloc((size_t)(nr + 1) * sizeof *absrow);
    const int64_t BLK = 1024;
    double *cref = malloc((size_t)BLK * (size_t)k * sizeof *cref);
    if (!absrow || !cref) {
        free(absrow);
        free(cref);
        return tf_fail(TF_ERR_NOMEM, "out of memory for --check");
    }
    for (int64_t i = 0; i < nr; i++) {
        double s = 0.0;
        for (int64_t e = rows->rowptr[i]; e < rows->rowptr[i + 1]; e++)
            s += fabs((double)rows->val[e]);
        absrow[i] = s;
    }
    int st = TF_OK;
    double worst = 0.0, bmax = 1.0; /* generator values lie in [-1, 1) */
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
                tf_reference_spmm_gen(rows, r0, r1, a->seed, k, cref);
            double e = tf_reference_scaled_error(c + r0 * k, cref, absrow + r0, r1 - r0, k,
                                                 bmax > 0 ? bmax : 1.0);
            if (!(e <= worst)) /* NaN-safe max */
                worst = e;
        }
        MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, h->comm);
    }
    tf_csr_free(&compact);
    free(bneed);
    free(absrow);
    free(cref);
    *err_out = worst;
    return st_all;
}

int main(int argc, char **argv)
{
    /* ucx one-sided returned corrupted MPI_Get data on the development
     * machine; sm (allocated windows) then rdma unless the user says
     * otherwise. */
    setenv("OMPI_MCA_osc", "sm,rdma", 0);
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
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

    tf_handle *h = NULL;
    st = tf_open(a.plan, comm, &h);
    if (st) {
        say_error(a.plan, tf_error_message());
        return finish(1);
    }
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
        tf_close(h);
        return finish(1);
    }
    if (k <= 0)
        k = tf_get_k_planned(h) > 0 ? tf_get_k_planned(h) : 128;

    tf_exec_options opt;
    tf_exec_options_default(&opt);
    opt.threads = a.threads;
    opt.threads_fetch = a.threads_fetch;
    tf_ctx *ctx = NULL;
    st = tf_context_create(h, k, &opt, &ctx);
    if (st) {
        say_error(a.plan, tf_error_message());
        tf_close(h);
        return finish(1);
    }

    /* B: this rank's rows, straight into the window. */
    float *b = tf_b_rows(ctx, NULL, NULL);
    if (a.b_path)
        st = tf_dense_h5_read_rows(a.b_path, "/B", brow_begin, nbrows, k, b);
    else if (nbrows > 0)
        tf_dense_fill(b, a.seed, brow_begin, nbrows, k);
    float *c = malloc((size_t)(nrows > 0 ? nrows : 1) * (size_t)k * sizeof *c);
    if (st == TF_OK && !c)
        st = tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate C (%lld x %d)", g_rank,
                     (long long)nrows, k);
    if (st == TF_OK)
        memset(c, 0, (size_t)(nrows > 0 ? nrows : 1) * (size_t)k * sizeof *c);
    st = tf_exec_agree(comm, st);
    if (st) {
        say_error(a.b_path, tf_error_message());
        free(c);
        tf_context_free(ctx);
        tf_close(h);
        return finish(1);
    }

    /* Runs. */
    double *times = malloc((size_t)a.iters * sizeof *times);
    if (!times)
        MPI_Abort(comm, 1);
    for (int it = 0; it < a.warmup + a.iters; it++) {
        if (it == a.warmup)
            tf_timing_reset(ctx);
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        st = tf_spmm(ctx, c);
        double t = MPI_Wtime() - t0;
        if (st) {
            /* Other ranks may be blocked inside MPI: no agreement possible. */
            fprintf(stderr, PROG ": %s: rank %d: SpMM failed: %s\n", a.plan, g_rank,
                    tf_error_message());
            fflush(stderr);
            MPI_Abort(comm, 1);
        }
        if (it >= a.warmup) {
            double tmax;
            MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm);
            times[it - a.warmup] = tmax;
        }
    }

    int exit_code = 0;
    double max_err = 0.0;
    if (a.check) {
        st = check_rows(h, &a, k, c, &max_err);
        if (st) {
            say_error(a.b_path ? a.b_path : a.plan, tf_error_message());
            exit_code = 1;
        }
    }
    if (exit_code == 0 && a.c_path) {
        st = tf_dense_h5_write_dist(comm, a.c_path, "/C", m, k, row_begin, nrows, c);
        if (st) {
            say_error(a.c_path, tf_error_message());
            exit_code = 1;
        }
    }

    /* Statistics. */
    tf_timing tm;
    tf_timing_get(ctx, &tm);
    double per[7] = {tm.local_comp, tm.coll_wait, tm.coll_comp, tm.fetch_wait,
                     tm.fetch_comp, tm.merge,     tm.sync};
    for (int x = 0; x < 7; x++)
        per[x] /= (double)(tm.calls > 0 ? tm.calls : 1);
    double per_max[7], per_mean[7];
    MPI_Reduce(per, per_max, 7, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Reduce(per, per_mean, 7, MPI_DOUBLE, MPI_SUM, 0, comm);
    int64_t cnt[4] = {tm.bytes_coll, tm.bytes_fetch, tm.msgs_coll, tm.msgs_fetch}, cnt_sum[4];
    MPI_Reduce(cnt, cnt_sum, 4, MPI_INT64_T, MPI_SUM, 0, comm);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double rss = (double)ru.ru_maxrss / 1024.0, rss_max = 0, rss_sum = 0; /* KiB -> MiB */
    MPI_Reduce(&rss, &rss_max, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Reduce(&rss, &rss_sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);

    if (g_rank == 0 && exit_code == 0) {
        qsort(times, (size_t)a.iters, sizeof *times, cmp_double);
        double med = a.iters % 2 ? times[a.iters / 2]
                                 : 0.5 * (times[a.iters / 2 - 1] + times[a.iters / 2]);
        double tmin = times[0], tmax = times[a.iters - 1];
        double calls = (double)(tm.calls > 0 ? tm.calls : 1);
        for (int x = 0; x < 7; x++)
            per_mean[x] /= nranks;
        /* Per SpMM, summed over ranks (every rank's calls are the same count). */
        double bc = (double)cnt_sum[0] / calls, bf = (double)cnt_sum[1] / calls;
        double mc = (double)cnt_sum[2] / calls, mf = (double)cnt_sum[3] / calls;
        const char *bnames[7] = {"local_comp_s", "coll_wait_s", "coll_comp_s", "fetch_wait_s",
                                 "fetch_comp_s", "merge_s",     "sync_s"};
        if (a.json) {
            printf("{\"algo\": ");
            json_string(stdout, tf_get_mode_name(h));
            printf(", \"plan\": ");
            json_string(stdout, a.plan);
            printf(", \"m\": %lld, \"n\": %lld, \"nnz\": %lld", (long long)m, (long long)n,
                   (long long)tf_get_nnz(h));
            printf(", \"ranks\": %d, \"threads\": %d, \"threads_fetch\": %d, \"k\": %d",
                   nranks, tf_ctx_threads(ctx), tf_ctx_threads_fetch(ctx), k);
            printf(", \"iterations\": %d, \"warmup\": %d", a.iters, a.warmup);
            printf(", \"median_s\": %.9g, \"min_s\": %.9g, \"max_s\": %.9g", med, tmin, tmax);
            printf(", \"breakdown\": {");
            for (int x = 0; x < 7; x++)
                printf("%s\"%s\": %.9g", x ? ", " : "", bnames[x], per_max[x]);
            printf("}, \"breakdown_mean\": {");
            for (int x = 0; x < 7; x++)
                printf("%s\"%s\": %.9g", x ? ", " : "", bnames[x], per_mean[x]);
            printf("}, \"bytes_received\": {\"collective\": %.0f, \"fetch\": %.0f, \"total\": %.0f}",
                   bc, bf, bc + bf);
            printf(", \"messages\": {\"collective\": %.0f, \"fetch\": %.0f, \"total\": %.0f}", mc,
                   mf, mc + mf);
            if (a.check)
                printf(", \"max_error\": %.6g, \"check_passed\": %s", max_err,
                       max_err <= CHECK_TOL ? "true" : "false");
            printf(", \"peak_rss_mb\": %.1f, \"peak_rss_mb_mean\": %.1f}\n", rss_max,
                   rss_sum / nranks);
        } else {
            printf("plan %s: %s, %d ranks, %lld x %lld with %lld nonzeros\n", a.plan,
                   tf_get_mode_name(h), nranks, (long long)m, (long long)n,
                   (long long)tf_get_nnz(h));
            printf("K = %d, %d thread(s) per rank (fetch group %d%s), %d iterations after %d "
                   "warm-up(s)\n",
                   k, tf_ctx_threads(ctx), tf_ctx_threads_fetch(ctx),
                   tf_ctx_threads_fetch(ctx) ? "" : ": single-thread overlap", a.iters, a.warmup);
            printf("time per SpMM (max over ranks): median %.3f ms, min %.3f ms, max %.3f ms\n",
                   med * 1e3, tmin * 1e3, tmax * 1e3);
            printf("breakdown per SpMM (ms, max / mean over ranks):\n");
            const char *labels[7] = {"local compute", "collective wait", "collective compute",
                                     "fetch wait", "fetch compute", "merge", "final sync"};
            for (int x = 0; x < 7; x++)
                printf("  %-19s %9.3f %9.3f\n", labels[x], per_max[x] * 1e3, per_mean[x] * 1e3);
            printf("received per SpMM (all ranks): collective %.3f MB in %.0f messages, fetch "
                   "%.3f MB in %.0f requests\n",
                   bc / 1e6, mc, bf / 1e6, mf);
            printf("peak memory per rank: max %.1f MB, mean %.1f MB\n", rss_max, rss_sum / nranks);
            if (a.check)
                printf("check: max scaled error %.3g (tolerance %g): %s\n", max_err, CHECK_TOL,
                       max_err <= CHECK_TOL ? "passed" : "FAILED");
        }
        fflush(stdout);
    }
    if (exit_code == 0 && a.check && !(max_err <= CHECK_TOL)) {
        if (g_rank == 0) {
            fprintf(stderr, PROG ": %s: check failed: max scaled error %.3g > %g\n", a.plan,
                    max_err, CHECK_TOL);
            fflush(stderr);
        }
        exit_code = 1;
    }
    free(times);
    free(c);
    tf_context_free(ctx);
    tf_close(h);
    return finish(exit_code);
}
