/* twoface-calibrate internals: the measurements behind every coefficient of
 * the cost model (docs/cost-model.md), and the validation of a plan's
 * predictions against the executor.
 *
 * Conventions shared by every measurement, chosen to match how the executor
 * runs on the machine being calibrated:
 *  - every rank runs the measured operation at the same time (a barrier
 *    before each one), because in an SpMM all ranks communicate and compute
 *    at once; on an oversubscribed node a rank then gets only its share of a
 *    core, and the coefficients must include that;
 *  - one sample = from the first rank's start to the last rank's end (the
 *    SpMM waits for the slowest rank; see tf_cal_sample_times); a point's
 *    value = the median over repetitions;
 *  - the points of a sweep are measured interleaved (A B C A B C ...), so a
 *    drift of the machine's speed spreads over all points instead of bending
 *    the fit. */
#ifndef TF_CALIBRATE_H
#define TF_CALIBRATE_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "tf_fit.h"
#include "tf_median.h" /* the measurements summarise repetitions with tf_median */

#define TF_CAL_MAXK 16

typedef struct {
    MPI_Comm comm;
    int rank, nranks;
    int quick;             /* small sweeps, few repetitions */
    int reps;              /* repetitions of every point; 0: the sweep's default */
    int threads;           /* OpenMP threads per rank the executor will use */
    int nk;
    int k[TF_CAL_MAXK];    /* dense widths the compute kernels are measured at */
    FILE *log;             /* tables and progress, rank 0 only (NULL elsewhere) */
    int one_node;          /* all ranks on one node: timestamps comparable */
} tf_cal_config;

/* ---- tf_cal_common.c ---------------------------------------------------- */

/* cfg->reps when set (--reps), else the quick or full default of a sweep
 * (or of the in-situ rounds). */
int tf_cal_reps(const tf_cal_config *cfg, int quick_default, int full_default);

/* Every rank passes its status; all return the lowest failing rank's status
 * and message (TF_OK when none failed). Collective. */
int tf_cal_agree(MPI_Comm comm, int status);

/* A timestamp (s) comparable between the processes of one node
 * (CLOCK_MONOTONIC; MPI_Wtime has a per-process origin). */
double tf_cal_now(void);

/* 1 when every rank of comm shares this node. Collective. */
int tf_cal_one_node(MPI_Comm comm);

/* A communication or an SpMM failed on this rank (the program asks MPI to
 * return errors): the other ranks may be blocked waiting for it in that very
 * exchange, so there is no agreeing; prints the message (printf format)
 * with the rank and ends the job (MPI_Abort). */
void tf_cal_abort(MPI_Comm comm, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Turns each rank's (start, end) timestamps of n samples into the samples'
 * times, in start[]: on one node, the span from the earliest start to the
 * latest end over all ranks; across nodes (clocks not comparable), the
 * longest duration of any rank. The span is the right measure on an
 * oversubscribed node: there a rank may be descheduled between leaving the
 * barrier and reading its clock, and its own duration then hides the wait
 * for a core, which in an SpMM all ranks pay. Collective. */
void tf_cal_sample_times(MPI_Comm comm, int one_node, double *start, double *end, int n);

/* Prints "name: coef = ..., RMS relative error x%" with each clamped
 * coefficient noted. rank 0 only (f may be NULL elsewhere). */
void tf_cal_print_fit(FILE *f, const char *what, const tf_fit *fit, const char *const *names,
                      const char *const *units);

/* ---- tf_cal_synth.c ----------------------------------------------------- */

/* A compressed sparse part (CSR, or CSC read with rows and columns swapped):
 * nouter lists of indices in [0, ninner), values in [-1, 1). */
typedef struct {
    int64_t nouter, ninner, nnz;
    int64_t *ptr;
    int32_t *idx;
    float *val;
} tf_cal_sparse;

/* Graph-like synthetic data: outer entry i has a degree drawn uniformly from
 * 1 .. 2*deg-1 (mean deg); a share `near` of its indices lie within
 * +-window of its diagonal position i*ninner/nouter (the locality a
 * reordered graph has), the rest anywhere. Sorted and distinct within each
 * list; deterministic in seed. */
int tf_cal_synth(tf_cal_sparse *s, int64_t nouter, int64_t ninner, double deg, double near,
                 int64_t window, uint64_t seed);
void tf_cal_sparse_free(tf_cal_sparse *s);

/* ---- measurements (collective over cfg->comm) --------------------------- */

/* Collective half: coef[0] = alpha_coll (s per peer, each side),
 * coef[1] = beta_coll (s per byte sent or received), coef[2] =
 * beta_coll_max (s per byte of the busier direction; 0 where the data do
 * not support that term). */
int tf_measure_coll(const tf_cal_config *cfg, tf_fit *fit);

/* ---- tf_cal_window.c ---------------------------------------------------- */

/* A window of `rows` B rows of k floats per rank, filled from seed, its
 * row type, and a lock_all epoch open on it. */
typedef struct {
    MPI_Datatype row;
    MPI_Win win;
    float *base;
    int locked;
} tf_cal_window;

/* Collective; every rank returns the lowest failing rank's status, and on
 * failure nothing is left open. `what` names the measurement in messages. */
int tf_cal_window_open(const tf_cal_config *cfg, int k, int64_t rows, uint64_t seed,
                       const char *what, tf_cal_window *w);
/* Ends the epoch and frees the window and type (collective). */
void tf_cal_window_close(tf_cal_window *w);

/* One-sided fetch: coef[0] = alpha_fetch (s per request), coef[1] =
 * beta_fetch (s per byte). */
int tf_measure_fetch(const tf_cal_config *cfg, tf_fit *fit);

/* overlap_fetch: the share of one-sided gets' per-byte transfer time
 * (beyond alpha_fetch per request) that proceeds while the rank that
 * posted them computes, from gets alone, compute alone and the two
 * together (gets posted, compute, wait). 0-1; 0 with one rank. */
int tf_measure_overlap(const tf_cal_config *cfg, double alpha_fetch, double *overlap);

/* fits[0..2]: gamma_local, gamma_coll, gamma_fetch (per nonzero that loads
 * its row - B's for the CSR kernels, C's for the CSC one - from memory);
 * with a cache size fits[2] has a second coefficient, gamma_fetch_cached
 * (coef[1], np = 2), the CSC kernel per nonzero whose C row is in cache; *gamma_cached: either CSR
 * kernel per nonzero whose row is in cache; *cache_bytes: the per-core
 * cache the reuse count assumes (level 2, 0 when the system does not say,
 * which leaves the single-gamma model); *gamma_row: either CSR kernel per
 * row of C it writes, per column. */
int tf_measure_kernels(const tf_cal_config *cfg, tf_fit fits[3], double *gamma_cached,
                       double *cache_bytes, double *gamma_row);

/* The joint fit of the two CSR kernels: its parameters are [gamma_local,
 * gamma_coll, gamma_cached (with a cache size only), gamma_row], and one
 * timed point of the local (coll = 0) or collective kernel is the row
 * [local misses, collective misses, hits, rows] x K of those, written to
 * r[0 .. tf_cal_kernel_nparams(use_cache)). Without a cache every nonzero
 * counts as a miss (pass miss = nnz). */
int tf_cal_kernel_nparams(int use_cache);
void tf_cal_kernel_xrow(int use_cache, int coll, int64_t nnz, int64_t miss, int64_t rows, int k,
                        double *r);

/* alpha_sync (s per fetch peer) from the READY/DONE handshake with every
 * peer, and one MPI_Ibarrier round (s, reported only); medians of the
 * slowest rank. */
int tf_measure_sync(const tf_cal_config *cfg, double *alpha_sync, double *barrier_s);

/* ---- tf_validate.c ------------------------------------------------------ */

typedef struct {
    int k;       /* dense width; 0 = each plan's planned K */
    int iters;   /* timed SpMMs per plan */
    int warmup;  /* untimed SpMMs per plan first */
    int threads; /* OpenMP threads per rank; 0 = omp_get_max_threads() */
    int json;    /* one JSON line per plan instead of tables */
    uint64_t seed;
} tf_validate_options;

/* Runs each plan with the executor API, the plans interleaved SpMM by SpMM,
 * and prints, per rank, the planner's predicted time of each half beside the
 * measured one. Collective; every rank returns the same status. */
int tf_validate(MPI_Comm comm, int nplans, char *const *paths, const tf_validate_options *o,
                FILE *out);

#endif
