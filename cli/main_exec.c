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
#include "tf_cli.h"
#include "tf_dense.h"
#include "tf_dense_h5.h"
#include "tf_exec.h"
#include "tf_exec_check.h"
#include "tf_exec_opts.h"
#include "tf_exec_report.h"
#include "tf_exec_ids.h"
#include "tf_exec_mem.h"
#include "tf_kernels.h"

#include <limits.h>
#include <malloc.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "twoface-exec"

static int g_rank = 0;

static void say_error(const char *what, const char *msg) { tf_exec_say_error(g_rank, what, msg); }

/* The options that decide which SpMMs run, how often and on what, the same
 * on every rank: with others the ranks would wait in different calls. The
 * files may differ per rank (each node its own copies), and so may the
 * threads (each rank's own). */
static int same_options(MPI_Comm comm, const tf_exec_args *a)
{
    uint64_t h = tf_agree_mix_str(tf_agree_mix_str(0, a->algo), a->replication);
    const int64_t v[] = {a->nplans,        a->k,         a->iters,           a->warmup,
                         a->max_iters,     a->check,     a->b_path != NULL,  a->c_path != NULL,
                         a->json,          a->comm,      a->comm2,           a->select_calls,
                         (int64_t)a->seed};
    h = tf_agree_mix_ints(h, v, sizeof v / sizeof v[0]);
    return tf_agree_same(comm, tf_agree_mix_double(h, a->time_budget), TF_ERR_ARG,
                         "rank %d was given other options than rank 0 (PLAN count, --algo, "
                         "--replication, -k, -i, --warmup, --time, --b, --c-out, --check, "
                         "--json, --select-calls, --comm, --seed): every rank must get the same",
                         g_rank);
}

/* What a run holds, from the plans to the timings; run_free releases it. */
typedef struct {
    MPI_Comm comm;
    int nranks;
    tf_handle *hs[TF_EXEC_MAX_PLANS]; /* hs[0], the first plan, gives the rows */
    tf_algo_spec *specs;
    tf_algo *algs[TF_ALGO_MAX];
    int nalg, k;
    int64_t row_begin, nrows, brow_begin, nbrows, m, n;
    float *bgen;               /* B of the round: generated, or read once from --b */
    float *cs[TF_ALGO_MAX];    /* one C per algorithm */
    double *times;             /* cap x nalg: slowest rank's seconds per timed call */
    double *btimes;            /* cap x nalg: slowest rank's seconds to write B before it */
    int cap, warmup, timed;
    uint64_t last_seed;        /* the B of the last round (for --check) */
} run;

/* Collective: frees in the same order on every rank (every step before
 * agreed, so every rank holds the same objects). */
static void run_free(run *r, int nplans)
{
    free(r->times);
    free(r->btimes);
    free(r->bgen);
    for (int x = 0; x < r->nalg; x++) {
        free(r->cs[x]);
        tf_algo_free(r->algs[x]);
    }
    free(r->specs);
    for (int i = 0; i < nplans; i++)
        tf_close(r->hs[i]);
}

/* Each setup step below is collective and agreed: on failure rank 0 has
 * printed the one line and every rank returns 1. */

/* The plans, and the algorithms to run on them (--algo, else the mode of
 * every plan). */
static int open_plans(run *r, const tf_exec_args *a)
{
    for (int i = 0; i < a->nplans; i++) {
        int st = tf_open(a->plans[i], r->comm, &r->hs[i]); /* agrees */
        if (st) {
            say_error(a->plans[i], tf_error_message());
            return 1;
        }
    }
    tf_handle **hs = r->hs;
    int st = tf_agree(r->comm, tf_algo_check_plans(hs, a->plans, a->nplans));
    int nalg = 0;
    if (st == TF_OK && a->algo) {
        st = tf_algo_parse(a->algo, a->replication, r->nranks, &r->specs, &nalg);
    } else if (st == TF_OK) {
        r->specs = calloc((size_t)a->nplans, sizeof *r->specs);
        if (!r->specs)
            st = tf_fail(TF_ERR_NOMEM, "out of memory");
        for (int i = 0; st == TF_OK && i < a->nplans; i++) {
            r->specs[i].kind = tf_get_mode(hs[i]);
            r->specs[i].replication = 1;
            snprintf(r->specs[i].name, sizeof r->specs[i].name, "%s", tf_get_mode_name(hs[i]));
        }
        nalg = a->nplans;
    }
    /* --comm A,B: every algorithm twice, named NAME/A and NAME/B. */
    if (st == TF_OK && a->comm2 != TF_COMM_PLAN) {
        tf_algo_spec *two = nalg * 2 <= TF_ALGO_MAX ? calloc((size_t)nalg * 2, sizeof *two) : NULL;
        if (!two)
            st = tf_fail(TF_ERR_ARG, "--comm with two precisions: at most %d algorithms",
                         TF_ALGO_MAX / 2);
        for (int x = 0; st == TF_OK && x < 2 * nalg; x++) {
            two[x] = r->specs[x / 2];
            two[x].comm = x % 2 ? a->comm2 : a->comm;
            /* "/bf16" and the NUL fit after at most TF_ALGO_NAME_MAX - 6 characters. */
            size_t len = strnlen(r->specs[x / 2].name, TF_ALGO_NAME_MAX - 6);
            const char *cn = tf_comm_precision_name(two[x].comm);
            memcpy(two[x].name, r->specs[x / 2].name, len);
            two[x].name[len] = '/';
            memcpy(two[x].name + len + 1, cn, strlen(cn) + 1);
        }
        if (st == TF_OK) {
            free(r->specs);
            r->specs = two;
            nalg *= 2;
        }
    }
    for (int x = 0; st == TF_OK && x < nalg; x++) {
        int idx;
        st = tf_algo_pick_plan(&r->specs[x], hs, a->nplans, &idx);
    }
    st = tf_agree(r->comm, st);
    if (st) {
        say_error(NULL, tf_error_message());
        return 1;
    }
    /* Only now: run_free frees the C of nalg algorithms. */
    r->nalg = nalg;
    tf_get_rows(hs[0], &r->row_begin, &r->nrows);
    tf_get_brows(hs[0], &r->brow_begin, &r->nbrows);
    r->m = tf_get_m(hs[0]);
    r->n = tf_get_n(hs[0]);
    return 0;
}

/* K: -k, else the width of --b, else the planned K. */
static int choose_k(run *r, const tf_exec_args *a)
{
    int k = a->k;
    int st = TF_OK;
    if (a->b_path) {
        int64_t br = 0, bc = 0;
        st = tf_dense_h5_shape(a->b_path, "/B", &br, &bc);
        if (st == TF_OK && br != r->n)
            st = tf_fail(TF_ERR_FORMAT, "%s: /B has %lld rows, the matrix has %lld columns",
                         a->b_path, (long long)br, (long long)r->n);
        else if (st == TF_OK && k > 0 && bc != k)
            st = tf_fail(TF_ERR_FORMAT, "%s: /B has %lld columns, -k is %d", a->b_path,
                         (long long)bc, k);
        else if (st == TF_OK && (bc < 1 || bc > (1 << 24)))
            st = tf_fail(TF_ERR_FORMAT, "%s: /B has %lld columns, expected 1..%d (the range of "
                         "-k)", a->b_path, (long long)bc, 1 << 24);
        if (st == TF_OK)
            k = (int)bc;
    }
    st = tf_agree(r->comm, tf_agree_note_io(r->comm, st));
    if (st == TF_OK && a->b_path) {
        /* Each rank reads its own copy of --b (each node its own, without a
         * shared file system): copies of other widths would give the ranks
         * other K, and the SpMM would read rows of one width from windows of
         * another. */
        int lo = k, hi = k;
        MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, r->comm);
        MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, r->comm);
        if (lo != hi)
            st = tf_fail(TF_ERR_FORMAT, "%s: the ranks' copies of /B are %d to %d columns wide: "
                         "every rank must read the same file", a->b_path, lo, hi);
    }
    if (st) {
        say_error(a->b_path, tf_error_message());
        return 1;
    }
    if (k <= 0)
        k = tf_get_k_planned(r->hs[0]) > 0 ? tf_get_k_planned(r->hs[0]) : 128;
    r->k = k;
    return 0;
}

static int create_algos(run *r, const tf_exec_args *a)
{
    /* All strategies live side by side: refuse in one line what would not
     * fit, before Linux grants it and kills the run when it is touched. */
    if (tf_exec_mem_check(r->comm, r->specs, r->nalg, r->hs, a->nplans, r->k)) {
        say_error(NULL, tf_error_message());
        return 1;
    }
    tf_exec_options opt;
    tf_exec_options_default(&opt);
    opt.threads = a->threads;
    opt.threads_fetch = a->threads_fetch;
    opt.select_calls = a->select_calls;
    opt.comm = a->comm;
    for (int x = 0; x < r->nalg; x++) {
        int st = tf_algo_create(&r->specs[x], r->hs, a->nplans, r->k, &opt, &r->algs[x]);
        if (st) { /* agreed */
            int idx = 0;
            tf_algo_pick_plan(&r->specs[x], r->hs, a->nplans, &idx);
            say_error(r->specs[x].kind <= TF_ALGO_COLLECTIVE ? a->plans[idx] : r->specs[x].name,
                      tf_error_message());
            return 1;
        }
    }
    return 0;
}

/* B of the round (generated or read once), one C per algorithm, the times. */
static int alloc_buffers(run *r, const tf_exec_args *a)
{
    int k = r->k;
    size_t bsz = (size_t)(r->nbrows > 0 ? r->nbrows : 1) * (size_t)k;
    r->bgen = calloc(bsz, sizeof *r->bgen);
    int st = r->bgen ? TF_OK : tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate B", g_rank);
    for (int x = 0; st == TF_OK && x < r->nalg; x++) {
        r->cs[x] = tf_kern_alloc_c(r->nrows, k); /* streamable (tf_kern_c_mode) */
        if (!r->cs[x])
            st = tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate C (%lld x %d)", g_rank,
                         (long long)r->nrows, k);
    }
    if (a->b_path) {
        st = tf_agree(r->comm, st);
        if (st == TF_OK)
            st = tf_exec_read_b(r->hs[0], a->b_path, k, r->bgen);
    }
    st = tf_agree(r->comm, st);
    r->cap = a->time_budget > 0 ? (a->max_iters < 1024 ? a->max_iters : 1024) : a->iters;
    if (st == TF_OK) {
        r->times = malloc((size_t)r->cap * (size_t)r->nalg * sizeof *r->times);
        r->btimes = malloc((size_t)r->cap * (size_t)r->nalg * sizeof *r->btimes);
        st = tf_agree(r->comm, r->times && r->btimes
                                   ? TF_OK
                                   : tf_fail(TF_ERR_NOMEM, "out of memory"));
    }
    if (st) {
        say_error(a->b_path, tf_error_message());
        return 1;
    }
    return 0;
}

/* Rounds: every algorithm once per round, same B. Warm-up lasts at least as
 * long as the start-up trials (every rank has the same numbers), so that
 * timed rounds measure the plan each trial kept; the trials' own times are
 * reported with the selection. A failed SpMM ends with MPI_Abort. */
static void run_rounds(run *r, const tf_exec_args *a)
{
    MPI_Comm comm = r->comm;
    int nalg = r->nalg, k = r->k;
    int64_t nbrows = r->nbrows;
    int warmup = a->warmup;
    for (int x = 0; x < nalg; x++) {
        tf_selection sel;
        if (tf_algo_selection(r->algs[x], &sel) && sel.trial && !sel.decided &&
            sel.calls_total - sel.calls_made > warmup)
            warmup = sel.calls_total - sel.calls_made;
    }
    int timed = 0;
    double t_start = 0.0;
    int round = 0;
    for (;; round++) {
        if (round == warmup) {
            for (int x = 0; x < nalg; x++)
                tf_algo_reset(r->algs[x]);
            MPI_Barrier(comm);
            t_start = MPI_Wtime();
        }
        if (round >= warmup) {
            /* Stop? Decided from values every rank has (the same on all). */
            int more;
            if (a->time_budget > 0) {
                double el = MPI_Wtime() - t_start;
                MPI_Allreduce(MPI_IN_PLACE, &el, 1, MPI_DOUBLE, MPI_MAX, comm);
                more = timed < a->iters || (el < a->time_budget && timed < a->max_iters);
            } else {
                more = timed < a->iters;
            }
            if (!more)
                break;
            if (timed == r->cap) {
                r->cap = r->cap * 2 < a->max_iters ? r->cap * 2 : a->max_iters;
                double *t2 = realloc(r->times, (size_t)r->cap * (size_t)nalg * sizeof *t2);
                if (t2)
                    r->times = t2;
                double *b2 = t2 ? realloc(r->btimes, (size_t)r->cap * (size_t)nalg * sizeof *b2)
                                : NULL;
                if (!b2) {
                    fprintf(stderr, PROG ": rank %d: out of memory for times\n", g_rank);
                    MPI_Abort(comm, 1);
                }
                r->btimes = b2;
            }
        }
        if (!a->b_path && nbrows > 0)
            tf_exec_fill_b(r->hs[0], a->seed + (uint64_t)round, k, r->bgen);
        /* The order rotates every round: the first algorithm after B is
         * refilled and the last before the next refill see different cache
         * and scheduler states, and a fixed order biased ratios by 5-15%
         * between two identical plans. */
        for (int y = 0; y < nalg; y++) {
            int x = (y + round) % nalg;
            float *b = tf_algo_b(r->algs[x]);
            /* Writing B is the caller's, but what it costs depends on the
             * algorithm: where peers read this rank's rows in place or
             * copy them straight from its B, the write first takes the
             * cache lines back from their caches. Timed apart. */
            double tb = MPI_Wtime();
            if (nbrows > 0)
                memcpy(b, r->bgen, (size_t)nbrows * (size_t)k * sizeof *b);
            tb = MPI_Wtime() - tb;
            MPI_Barrier(comm);
            double t0 = MPI_Wtime();
            int st = tf_algo_run(r->algs[x], r->cs[x]);
            double t = MPI_Wtime() - t0;
            if (st) {
                /* Other ranks may be blocked inside MPI: no agreement possible. */
                fprintf(stderr, PROG ": %s: rank %d: SpMM failed: %s\n", r->specs[x].name,
                        g_rank, tf_error_message());
                fflush(stderr);
                MPI_Abort(comm, 1);
            }
            if (round >= warmup) {
                double tt[2] = {t, tb};
                MPI_Allreduce(MPI_IN_PLACE, tt, 2, MPI_DOUBLE, MPI_MAX, comm);
                r->times[(size_t)timed * nalg + x] = tt[0];
                r->btimes[(size_t)timed * nalg + x] = tt[1];
            }
        }
        if (round >= warmup)
            timed++;
    }
    r->warmup = warmup;
    r->timed = timed;
    r->last_seed = a->seed + (uint64_t)(round - 1);
}

/* After the rounds: agreement between the algorithms, --check, --c-out, the
 * report. Returns the exit status (the same on every rank). */
static int finish_run(run *r, const tf_exec_args *a)
{
    MPI_Comm comm = r->comm;
    int nalg = r->nalg, k = r->k;
    const tf_algo_spec *specs = r->specs;
    int exit_code = 0;
    tf_exec_result *rep = calloc((size_t)nalg, sizeof *rep);
    if (!rep)
        MPI_Abort(comm, 1);

    /* Tolerances: float32 summation, plus the bf16 bound per side that
     * travelled in bf16. */
    for (int x = 0; x < nalg; x++) {
        int bf = tf_algo_comm(r->algs[x]) == TF_COMM_BF16;
        rep[x].tol_err = tf_exec_check_tol(bf);
        rep[x].tol_diff = tf_exec_check_tol(bf + (tf_algo_comm(r->algs[0]) == TF_COMM_BF16));
    }
    /* Agreement between algorithms: each C against the first one's. */
    double bmax = a->b_path ? tf_exec_bmax(comm, r->bgen, r->nbrows, k) : 1.0;
    if (nalg > 1) {
        double diffs[TF_ALGO_MAX];
        tf_exec_compare(r->hs[0], k, r->cs, nalg, bmax, diffs);
        for (int x = 0; x < nalg; x++) {
            rep[x].diff = diffs[x];
            if (!(diffs[x] <= rep[x].tol_diff)) {
                if (g_rank == 0)
                    fprintf(stderr,
                            PROG ": %s and %s disagree: max scaled difference %.3g > %g\n",
                            specs[0].name, specs[x].name, diffs[x], rep[x].tol_diff);
                exit_code = 1;
            }
        }
    }
    if (a->check) {
        double errs[TF_ALGO_MAX];
        int st = tf_exec_check_rows(r->hs[0], a->b_path, k, r->last_seed, r->cs, nalg, errs);
        if (st) {
            say_error(a->b_path ? a->b_path : a->plans[0], tf_error_message());
            exit_code = 1;
        }
        for (int x = 0; x < nalg; x++)
            rep[x].err = errs[x];
    }
    if (exit_code == 0 && a->c_path) {
        int st = tf_exec_write_c(r->hs[0], a->c_path, k, r->cs[0]);
        if (st) {
            say_error(a->c_path, tf_error_message());
            exit_code = 1;
        }
    }

    tf_exec_report report = {.args = a, .h = r->hs[0], .algs = r->algs, .specs = specs,
                             .nalg = nalg, .k = k, .nranks = r->nranks, .timed = r->timed,
                             .warmup = r->warmup, .times = r->times, .btimes = r->btimes,
                             .res = rep};
    tf_exec_report_gather(&report, comm);
    if (g_rank == 0)
        tf_exec_report_print(&report);
    if (a->check && exit_code == 0) {
        for (int x = 0; x < nalg; x++)
            if (!(rep[x].err <= rep[x].tol_err)) {
                if (g_rank == 0) {
                    fprintf(stderr, PROG ": %s: check failed: max scaled error %.3g > %g\n",
                            nalg == 1 ? a->plans[tf_algo_plan_index(r->algs[x])] : specs[x].name,
                            rep[x].err, rep[x].tol_err);
                    fflush(stderr);
                }
                exit_code = 1;
            }
    }
    free(rep);
    return exit_code;
}

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
    run r;
    memset(&r, 0, sizeof r);
    r.comm = MPI_COMM_WORLD;
    MPI_Comm_rank(r.comm, &g_rank);
    MPI_Comm_size(r.comm, &r.nranks);

    tf_exec_args a;
    int st = tf_exec_parse_args(argc, argv, &a);
    /* OMP_NUM_THREADS and the output folder are this rank's environment
     * and node: the ranks agree, so that none goes on alone into the
     * collective opening of the plans. */
    if (st != -1)
        st = tf_agree(r.comm, st);
    if (st == TF_OK)
        st = same_options(r.comm, &a);
    int code;
    if (st == -1) {
        if (g_rank == 0)
            tf_exec_usage(stdout);
        code = 0;
    } else if (st) {
        say_error(NULL, tf_error_message());
        code = 1;
    } else {
        code = open_plans(&r, &a) || choose_k(&r, &a) || create_algos(&r, &a) ||
               alloc_buffers(&r, &a);
        if (code == 0) {
            run_rounds(&r, &a);
            code = finish_run(&r, &a);
        }
        run_free(&r, a.nplans);
    }
    MPI_Finalize();
    return tf_cli_exit_status(PROG, code);
}
