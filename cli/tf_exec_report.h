/* What twoface-exec prints: error lines, and after the rounds the times,
 * breakdowns, volumes, start-up trials and checks of every algorithm, as a
 * table or as one JSON object per algorithm (docs/executor.md).
 * Program-private: not part of libtwoface. */
#ifndef TF_EXEC_REPORT_H
#define TF_EXEC_REPORT_H

#include "tf_algo.h"
#include "tf_exec_opts.h"

/* One algorithm, after the runs: what rank 0 prints. */
typedef struct {
    double med, tmin, tmax;         /* seconds per SpMM, slowest rank of each call */
    double b_write;                 /* median seconds to write B before a call, slowest rank */
    double det_max[10], det_mean[10]; /* 7 executor parts + comm + compute + bf16
                                         rounding (pack), per SpMM */
    double bytes_sum, bytes_max, bytes_coll_sum, bytes_fetch_sum;
    double msgs_sum, msgs_max, msgs_coll_sum, msgs_fetch_sum;
    double diff; /* vs the first algorithm */
    double err;  /* vs the reference (--check) */
    double tol_diff, tol_err; /* their tolerances (tf_exec_check_tol) */
} tf_exec_result;

/* The run being reported. */
typedef struct {
    const tf_exec_args *args;
    const tf_handle *h; /* the first plan */
    tf_algo *const *algs;
    const tf_algo_spec *specs;
    int nalg, k, nranks;
    int timed, warmup;
    const double *times;    /* timed x nalg: slowest rank's seconds per call */
    const double *btimes;   /* timed x nalg: the same for writing B before the call */
    tf_exec_result *res;    /* nalg; diff and err filled by the caller */
    double rss_max, rss_mean; /* peak resident memory per rank, MiB */
} tf_exec_report;

/* "twoface-exec: WHAT: MSG" on stderr, by rank 0 only (every rank has
 * agreed on the failure before). WHAT (a file, an algorithm) may be NULL, and
 * is left out when MSG already starts with it. */
void tf_exec_say_error(int rank, const char *what, const char *msg);

/* Collective: every algorithm's statistics reduced to rank 0 (res[x]'s
 * det_*, bytes_* and msgs_*), and the peak memory. */
void tf_exec_report_gather(tf_exec_report *r, MPI_Comm comm);

/* Rank 0: the medians from r->times, then the table or the JSON records on
 * stdout. */
void tf_exec_report_print(tf_exec_report *r);

#endif
