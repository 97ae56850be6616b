#include "tf_exec_report.h"

#include "tf_exec_check.h"
#include "tf_kernels.h"
#include "tf_median.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define PROG "twoface-exec"
/* Sizes are in MiB, as in twoface-plan --explain. */
#define MIB (1024.0 * 1024.0)

void tf_exec_say_error(int rank, const char *what, const char *msg)
{
    if (rank != 0)
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

void tf_exec_report_gather(tf_exec_report *r, MPI_Comm comm)
{
    tf_exec_result *rep = r->res;
    tf_algo *const *algs = r->algs;
    int nalg = r->nalg, nranks = r->nranks;
    for (int x = 0; x < nalg; x++) {
        tf_algo_stats s;
        tf_algo_stats_get(algs[x], &s);
        double calls = (double)(s.calls > 0 ? s.calls : 1);
        double per[10] = {s.detail.local_comp, s.detail.coll_wait,  s.detail.coll_comp,
                          s.detail.fetch_wait, s.detail.fetch_comp, s.detail.merge,
                          s.detail.sync,       s.comm,              s.compute,
                          s.detail.pack};
        for (int y = 0; y < 10; y++)
            per[y] /= calls;
        MPI_Reduce(per, rep[x].det_max, 10, MPI_DOUBLE, MPI_MAX, 0, comm);
        MPI_Reduce(per, rep[x].det_mean, 10, MPI_DOUBLE, MPI_SUM, 0, comm);
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
        for (int y = 0; y < 10; y++)
            rep[x].det_mean[y] /= nranks;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double rss = (double)ru.ru_maxrss / 1024.0, rss_max = 0, rss_sum = 0; /* KiB -> MiB */
    MPI_Reduce(&rss, &rss_max, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Reduce(&rss, &rss_sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);

    r->rss_max = rss_max;
    r->rss_mean = rss_sum / nranks;
}

static void print_json(const tf_exec_report *rp, int tf_idx)
{
    const tf_exec_result *rep = rp->res;
    tf_algo *const *algs = rp->algs;
    const tf_algo_spec *specs = rp->specs;
    int nalg = rp->nalg;
    const char *bnames[9] = {"local_comp_s", "coll_wait_s", "coll_comp_s",
                             "fetch_wait_s", "fetch_comp_s", "merge_s",
                             "sync_s",       "comm_s",      "compute_s"};
    for (int x = 0; x < nalg; x++) {
        const tf_exec_result *r = &rep[x];
        int fam = specs[x].kind <= TF_ALGO_COLLECTIVE;
        printf("{\"algo\": ");
        json_string(stdout, specs[x].name);
        printf(", \"plan\": ");
        json_string(stdout, rp->args->plans[tf_algo_plan_index(algs[x])]);
        printf(", \"m\": %lld, \"n\": %lld, \"nnz\": %lld", (long long)tf_get_m(rp->h), (long long)tf_get_n(rp->h),
               (long long)tf_get_nnz(rp->h));
        printf(", \"ranks\": %d, \"threads\": %d, \"threads_fetch\": %d, \"k\": %d",
               rp->nranks, tf_algo_threads(algs[x]), tf_algo_threads_fetch(algs[x]), rp->k);
        if (specs[x].kind == TF_ALGO_SHIFT)
            printf(", \"replication\": %d", specs[x].replication);
        printf(", \"iterations\": %d, \"warmup\": %d, \"interleaved\": %d", rp->timed,
               rp->warmup, nalg);
        printf(", \"kernel\": \"%s\"", tf_kern_variant());
        printf(", \"comm\": \"%s\"", tf_comm_precision_name(tf_algo_comm(algs[x])));
        if (tf_algo_coll_transport(algs[x]))
            printf(", \"coll_transport\": \"%s\"", tf_algo_coll_transport(algs[x]));
        printf(", \"median_s\": %.9g, \"min_s\": %.9g, \"max_s\": %.9g", r->med, r->tmin,
               r->tmax);
        printf(", \"b_write_s\": %.9g", r->b_write);
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
            if (fam)
                printf(", \"pack_s\": %.9g", d[9]);
            printf("}");
        }
        if (fam)
            printf(", \"bytes_received\": {\"collective\": %.0f, \"fetch\": %.0f, "
                   "\"total\": %.0f}",
                   r->bytes_coll_sum, r->bytes_fetch_sum, r->bytes_sum);
        else
            printf(", \"bytes_received\": {\"total\": %.0f}", r->bytes_sum);
        printf(", \"bytes_per_rank\": {\"max\": %.0f, \"mean\": %.0f}", r->bytes_max,
               r->bytes_sum / rp->nranks);
        if (fam)
            printf(", \"messages\": {\"collective\": %.0f, \"fetch\": %.0f, "
                   "\"total\": %.0f}",
                   r->msgs_coll_sum, r->msgs_fetch_sum, r->msgs_sum);
        else
            printf(", \"messages\": {\"total\": %.0f}", r->msgs_sum);
        printf(", \"messages_per_rank\": {\"max\": %.0f, \"mean\": %.4g}", r->msgs_max,
               r->msgs_sum / rp->nranks);
        if (nalg > 1) {
            printf(", \"max_diff_vs_first\": %.6g", r->diff);
        }
        if (rp->args->check)
            printf(", \"max_error\": %.6g, \"tolerance\": %.6g, \"check_passed\": %s", r->err,
                   r->tol_err, r->err <= r->tol_err ? "true" : "false");
        /* Last, so that the record's own keys come first for
         * line-oriented readers (bench/run takes the first match). */
        tf_selection sel;
        if (tf_algo_selection(algs[x], &sel)) { /* the plan-based ones (fam) */
            printf(", \"classes\": \"%s\"",
                   sel.classes[sel.decided && sel.chose_alternative]);
            if (sel.trial)
                printf(", \"selection\": {\"planned\": \"%s\", \"alternative\": \"%s\", "
                       "\"transports\": [\"%s\", \"%s\"], "
                       "\"chose\": \"%s\", \"trial_calls\": %d, \"trial_median_s\": "
                       "[%.9g, %.9g]}",
                       sel.classes[0], sel.classes[1], sel.transport[0], sel.transport[1],
                       !sel.decided            ? "undecided"
                       : sel.chose_alternative ? "alternative"
                                               : "planned",
                       sel.calls, sel.median[0], sel.median[1]);
            else
                printf(", \"selection\": null");
        }
        printf(", \"peak_rss_mib\": %.1f, \"peak_rss_mib_mean\": %.1f}\n", rp->rss_max,
               rp->rss_mean);
    }
}

static void print_table(const tf_exec_report *rp, int tf_idx)
{
    const tf_exec_args *a = rp->args;
    const tf_handle *h = rp->h;
    const tf_exec_result *rep = rp->res;
    tf_algo *const *algs = rp->algs;
    const tf_algo_spec *specs = rp->specs;
    int nalg = rp->nalg, nranks = rp->nranks, k = rp->k;
    int64_t m = tf_get_m(h), n = tf_get_n(h);
    int timed = rp->timed, warmup = rp->warmup;
    printf("%d plan(s), first %s: %d ranks, %lld x %lld with %lld nonzeros\n", a->nplans,
           a->plans[0], nranks, (long long)m, (long long)n, (long long)tf_get_nnz(h));
    printf("K = %d, %d thread(s) per rank, %d round(s) after %d warm-up round(s), "
           "%d algorithm(s) interleaved\n",
           k, tf_algo_threads(algs[0]), timed, warmup, nalg);
    printf("kernels: %s\n", tf_kern_variant());
    printf("B rows travel as:");
    for (int x = 0; x < nalg; x++)
        printf(" %s %s%s", specs[x].name, tf_comm_precision_name(tf_algo_comm(algs[x])),
               x + 1 < nalg ? "," : "\n");
    printf("%-14s %10s %10s %10s %8s %12s %10s %10s %10s\n", "algorithm", "median_ms",
           "min_ms", "max_ms", "vs_tf", "MiB/rank_max", "msgs_max", "comm_ms",
           "compute_ms");
    for (int x = 0; x < nalg; x++) {
        const tf_exec_result *r = &rep[x];
        char ratio[32] = "-";
        if (tf_idx >= 0)
            snprintf(ratio, sizeof ratio, "%.2f", r->med / rep[tf_idx].med);
        printf("%-14s %10.3f %10.3f %10.3f %8s %12.3f %10.0f %10.3f %10.3f\n",
               specs[x].name, r->med * 1e3, r->tmin * 1e3, r->tmax * 1e3, ratio,
               r->bytes_max / MIB, r->msgs_max, r->det_max[7] * 1e3,
               r->det_max[8] * 1e3);
    }
    for (int x = 0; x < nalg; x++) {
        if (specs[x].kind > TF_ALGO_COLLECTIVE)
            continue;
        const tf_exec_result *r = &rep[x];
        printf("%s breakdown per SpMM (ms, max / mean over ranks):\n", specs[x].name);
        const char *labels[7] = {"local compute", "collective wait",
                                 "collective compute", "fetch wait",
                                 "fetch compute", "merge", "final sync"};
        for (int y = 0; y < 7; y++)
            printf("  %-19s %9.3f %9.3f\n", labels[y], r->det_max[y] * 1e3,
                   r->det_mean[y] * 1e3);
        if (tf_algo_comm(algs[x]) == TF_COMM_BF16)
            printf("  %-19s %9.3f %9.3f\n", "bf16 rounding", r->det_max[9] * 1e3,
                   r->det_mean[9] * 1e3);
        printf("  received per SpMM (all ranks): collective %.3f MiB in %.0f messages "
               "(transport %s), fetch %.3f MiB in %.0f requests\n",
               r->bytes_coll_sum / MIB, r->msgs_coll_sum, tf_algo_coll_transport(algs[x]),
               r->bytes_fetch_sum / MIB, r->msgs_fetch_sum);
    }
    for (int x = 0; x < nalg; x++) {
        tf_selection sel;
        if (!tf_algo_selection(algs[x], &sel) || !sel.trial || !sel.decided)
            continue;
        printf("%s start-up trial (median of %d calls each, slowest rank): planned %s "
               "(transport %s) %.3f ms, alternative %s (transport %s) %.3f ms: kept the %s\n",
               specs[x].name, sel.calls, sel.classes[0], sel.transport[0], sel.median[0] * 1e3,
               sel.classes[1], sel.transport[1], sel.median[1] * 1e3,
               sel.chose_alternative ? "alternative" : "planned plan");
    }
    printf("peak memory per rank: max %.1f MiB, mean %.1f MiB\n", rp->rss_max, rp->rss_mean);
    if (nalg > 1) {
        double worst = 0, tol = TF_EXEC_CHECK_TOL;
        int ok = 1;
        for (int x = 1; x < nalg; x++) {
            if (!(rep[x].diff <= worst)) {
                worst = rep[x].diff;
                tol = rep[x].tol_diff;
            }
            ok = ok && rep[x].diff <= rep[x].tol_diff;
        }
        printf("agreement: max scaled difference vs %s %.3g (tolerance %g): %s\n",
               specs[0].name, worst, tol, ok ? "passed" : "FAILED");
    }
    if (a->check)
        for (int x = 0; x < nalg; x++)
            printf("check %s: max scaled error %.3g (tolerance %g%s): %s\n", specs[x].name,
                   rep[x].err, rep[x].tol_err,
                   tf_algo_comm(algs[x]) == TF_COMM_BF16 ? ", bf16 bound included" : "",
                   rep[x].err <= rep[x].tol_err ? "passed" : "FAILED");
}

void tf_exec_report_print(tf_exec_report *rp)
{
    const tf_handle *h = rp->h;
    tf_exec_result *rep = rp->res;
    const tf_algo_spec *specs = rp->specs;
    const double *times = rp->times;
    int nalg = rp->nalg, timed = rp->timed;
    double *col = malloc((size_t)(timed > 0 ? timed : 1) * sizeof *col);
    if (!col)
        MPI_Abort(h->comm, 1);
    int tf_idx = -1;
    for (int x = 0; x < nalg; x++) {
        for (int r = 0; r < timed; r++)
            col[r] = times[(size_t)r * nalg + x];
        rep[x].med = tf_median(col, timed); /* sorts col */
        rep[x].tmin = col[0];
        rep[x].tmax = col[timed - 1];
        for (int r = 0; r < timed; r++)
            col[r] = rp->btimes[(size_t)r * nalg + x];
        rep[x].b_write = tf_median(col, timed);
        if (specs[x].kind == TF_ALGO_TWOFACE && tf_idx < 0)
            tf_idx = x;
    }
    free(col);
    if (rp->args->json)
        print_json(rp, tf_idx);
    else
        print_table(rp, tf_idx);
    fflush(stdout);
}
