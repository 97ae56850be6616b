/* The serial reference SpMM every executor is checked against: a plain CSR
 * loop with double accumulation, written independently of the planner's
 * stripes and the executor's kernels so that it shares none of their bugs. */
#ifndef TF_REFERENCE_H
#define TF_REFERENCE_H

#include <stdint.h>
#include "tf_csr.h"

/* C = A * B for rows [row_begin, row_end) of A. B is the whole n x K matrix
 * (row-major); C holds (row_end - row_begin) x K doubles. */
void tf_reference_spmm(const tf_csr *a, int64_t row_begin, int64_t row_end, const float *b,
                       int64_t k, double *c);

/* The same, with B produced by the generator (no n x K buffer needed). */
void tf_reference_spmm_gen(const tf_csr *a, int64_t row_begin, int64_t row_end, uint64_t seed,
                           int64_t k, double *c);

/* The generator's B as a rank computes with it when B rows travel as
 * bfloat16 (tf_bf16.h): rows [own_begin, own_end) of B (the rank's own) as
 * they are, every other row rounded to bf16. */
void tf_reference_spmm_gen_bf16(const tf_csr *a, int64_t row_begin, int64_t row_end,
                                 uint64_t seed, int64_t k, int64_t own_begin, int64_t own_end,
                                 double *c);

/* Error of a float result against the reference, scaled so that float32
 * rounding gives about 1e-7 whatever the sizes: max over entries of
 * |C - Cref| / (sum_j |A(i,j)| * max|B| + tiny). absrow[i] = sum_j |A(i,j)|. */
double tf_reference_scaled_error(const float *c, const double *cref, const double *absrow,
                                 int64_t nrows, int64_t k, double bmax);

#endif
