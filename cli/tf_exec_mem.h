/* twoface-exec's memory preflight: before any strategy is created, about
 * how much each will hold on this rank, against this rank's share of what
 * its node has available (docs/baselines.md, "Memory"). The strategies run
 * side by side in one process, so their buffers add up: six at K = 512 on a
 * 3.2 M-nonzero graph took about 7 GB per rank, and Linux's out-of-memory
 * killer ended the run with no message. */
#ifndef TF_EXEC_MEM_H
#define TF_EXEC_MEM_H

#include "tf_algo.h"

#include <mpi.h>
#include <stdint.h>

/* This rank's estimate in bytes for spec run at width k on the plan
 * tf_algo_pick_plan gives it, twoface-exec's own B and C for it included
 * (float32 throughout: bf16 needs less). Local. */
int64_t tf_exec_mem_estimate(const tf_algo_spec *spec, tf_handle *const *plans, int nplans,
                             int k);

/* Collective. The estimates of every strategy plus the generated B, summed
 * over the ranks of comm on each node, against the memory that node has
 * available (tf_mem_available, the least its ranks read); TF_ERR_NOMEM with
 * one line, the same on every rank, when some node's sum is above it. TF_OK
 * when the node's figure is not known. */
int tf_exec_mem_check(MPI_Comm comm, const tf_algo_spec *specs, int nalg,
                      tf_handle *const *plans, int nplans, int k);

#endif
