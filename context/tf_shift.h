/* The dense face: 1.5D dense shifting (the shift baseline,
 * baselines/tf_baseline.h) as the start-up trial's other side, where B
 * rows are wanted by so many ranks that moving whole bands around rings
 * costs less than sending each rank its own rows (docs/executor.md,
 * "Dense shifting"). */
#ifndef TF_SHIFT_H
#define TF_SHIFT_H

#include "tf_baseline.h"
#include "tf_exec.h"

/* Largest replication the model considers: every c up to 4 dividing P,
 * the replications `--algo shift` tries by default. The volume model leaves out
 * the reduce-scatter's own cost, which grows with c: at 64 simulated ranks
 * (cit-HepPh, K = 128) c = 16 took 1.44x c = 4's time where the model
 * predicted 1.17x, and c = 8, predicted best, lost the trial that c = 4
 * would have won. */
#define TF_SHIFT_MAX_C 4

/* TWOFACE_SHIFT: unset or "auto" -> 0 (the cost model decides, where the
 * ranks span more than one node), "never" -> -1, a number c >= 1 -> c
 * (shift(c) is the trial's other side wherever a trial runs; c must divide
 * the plan's ranks). Collective; the same setting on every rank, or
 * TF_ERR_ARG on every rank. */
int tf_shift_setting(tf_handle *h, int *c);

/* The replication (every c up to TF_SHIFT_MAX_C dividing P) whose shift the cost model
 * predicts fastest, and that time at the planned K (the slowest rank's,
 * tf_cost_shift with the plan's coefficients and statistics). Local: every
 * rank holds every rank's statistics, so every rank gets the same. */
void tf_shift_predict(const tf_handle *h, int *c, double *t);

/* Collective: the shift baseline with replication c on h's rows and
 * partition at width k, B rows travelling as bf16 when bf16 is set.
 * Agreed like tf_baseline_create. */
int tf_shift_create(tf_handle *h, int k, int c, int bf16, tf_baseline **out);

/* Collective: one SpMM by shift into c (this rank's rows) from b (this
 * rank's float32 B rows) with `threads` OpenMP threads (the caller's
 * setting is restored), accumulated into t as tf_timing counts: the wait
 * for blocks and partials as coll_wait, the multiply as local_comp, the
 * bytes and messages received as the collective's. */
int tf_shift_run(tf_baseline *bl, const float *b, float *c, int threads, tf_timing *t);

#endif
