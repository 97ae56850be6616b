/* A baseline's input from an open plan: the rank's rows of A (rebuilt with
 * global columns) and the plan's partition. What tf_algo_create gives a
 * baseline, and what the context's dense shifting (context/tf_shift.c)
 * runs on: one object that both call, so that neither calls the other. */
#ifndef TF_BL_INPUT_H
#define TF_BL_INPUT_H

#include "tf_baseline.h"
#include "twoface.h"

/* Fills *in for h at width k (replication: shift's c, else 1; bf16: B rows
 * travel as bfloat16). Points into h, which must outlive the
 * tf_baseline_create it is given to. */
void tf_bl_input_of(tf_handle *h, int k, int replication, int bf16, tf_baseline_input *in);

#endif
