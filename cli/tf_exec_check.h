/* twoface-exec's verification of its results: every algorithm's C against
 * the first one's, and (--check) against a serial reference computed here.
 * Program-private: not part of libtwoface. */
#ifndef TF_EXEC_CHECK_H
#define TF_EXEC_CHECK_H

#include "tf_exec.h"

#include <stdint.h>

/* Tolerance of both comparisons (scaled by sum_j |A(i,j)| max|B|) when B
 * travels as float32: float32 summation. */
#define TF_EXEC_CHECK_TOL 1e-5

/* The tolerance of a result against the reference: TF_EXEC_CHECK_TOL, plus,
 * for each of `bf16_sides` results whose remote B rows travelled as bf16,
 * the bound of its rounding: every remote product a*b is off by at most
 * 2^-8 |a b|, so the row's error is at most 2^-8 sum_j |A(i,j)| max|B|,
 * 2^-8 in the scaled units (docs/executor.md). bf16_sides is 1 for a check
 * against the reference, 0-2 for two results compared with each other. */
double tf_exec_check_tol(int bf16_sides);

/* Collective. The largest |B| over every rank's nbrows x k rows of b, or 1.0
 * when it is 0; the generator's values lie in [-1, 1), so callers with a
 * generated B use 1.0 without calling this. */
double tf_exec_bmax(MPI_Comm comm, const float *b, int64_t nbrows, int k);

/* Collective. diffs[x] = max over ranks of |C_x - C_0| scaled, for the nc
 * algorithms' C rows cs[x] (this rank's rows of h); diffs[0] = 0. MPI_Abort
 * when out of memory (the ranks are past every agreement). */
void tf_exec_compare(const tf_handle *h, int k, float *const *cs, int nc, double bmax,
                     double *diffs);

/* Collective, agreed. errs[x] = max scaled error of cs[x] against the
 * reference with B from b_path (dataset /B) or, when b_path is NULL, the
 * generator at seed `seed`. */
int tf_exec_check_rows(const tf_handle *h, const char *b_path, int k, uint64_t seed,
                       float *const *cs, int nc, double *errs);

#endif
