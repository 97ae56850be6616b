/* The public context (include/twoface.h, tf_ctx) is the layer that picks
 * the strategy an SpMM runs: the planner's choice, its runner-up, the same
 * plan read in place, or dense shifting (docs/executor.md, "Start-up
 * trial"). It sits above the executor, which runs one plan, and the
 * baselines, whose 1.5D shifting it can run (tf_shift.h). */
#ifndef TF_SELECT_H
#define TF_SELECT_H

#include "twoface.h"

/* Ends a running start-up trial at once, keeping the planner's choice
 * (which = 0) or the other side (1: the runner-up, the plan read in place,
 * or dense shifting): collective, the same `which` on every rank. Tests use
 * it to force either outcome. */
int tf_select_finish(tf_ctx *ctx, int which);

#endif
