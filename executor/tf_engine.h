/* What the engine exports to the library rooms built on it (baselines/,
 * calibrate/, gnn/) and to the programs, beyond include/twoface.h: read
 * access to an open plan and the choices a context would make, so that a
 * baseline runs on exactly the rows, threads and precision twoface would. */
#ifndef TF_ENGINE_H
#define TF_ENGINE_H

#include "tf_csr.h"
#include "tf_plan.h"
#include "twoface.h"

/* The plan as opened: the header of every rank (partitions, permutation,
 * mode, fingerprint) and this rank's part only. */
const tf_plan *tf_handle_plan(const tf_handle *h);

/* The reconstructed rows of A of this rank, with global columns ascending
 * per row (row r is global row row_begin + r). */
const tf_csr *tf_handle_rows(const tf_handle *h);

/* The OpenMP threads a context takes when tf_exec_options.threads is 0:
 * OMP_NUM_THREADS when set, else at most the node's processors divided by
 * the plan's ranks on the node. */
int tf_default_threads(const tf_handle *h);

/* The precision a context runs with, TF_COMM_F32 or TF_COMM_BF16, from what
 * this rank asks (tf_exec_options.comm; TF_COMM_PLAN = the plan's choice).
 * Collective: an invalid value, or ranks resolving to different precisions,
 * fail on every rank alike. */
int tf_comm_resolve(tf_handle *h, int asked, int *comm);

#endif
