/* The executor's compute kernels: plain loops over plain arrays, the inner
 * loop always over the K columns of a dense row (contiguous, vectorisable).
 * No MPI, no OpenMP inside: callers split the work. */
#ifndef TF_KERNELS_H
#define TF_KERNELS_H

#include <stdint.h>

/* Row block of the CSR kernels: a row of C is accumulated TF_KB columns at a
 * time in a small stack buffer and written once. */
#define TF_KB 256

/* Rows [r0, r1) of a CSR part: C(i,:) = sum_e val[e] * B(idx[e],:), or
 * C(i,:) += that sum when add is nonzero. B and C are row-major with k
 * columns; C row i is c + i * k. */
void tf_kern_csr(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                 const float *val, const float *b, int64_t k, float *c, int add);

/* Columns [j0, j1) of a CSC part: for every nonzero e of column j,
 * out(map[idx[e]],:) += val[e] * B(j,:). */
void tf_kern_csc_map(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                     const float *val, const float *b, int64_t k, const int32_t *map,
                     float *out);

/* The same into a compact buffer: out(idx[e],:) += val[e] * B(j,:). */
void tf_kern_csc(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                 const float *val, const float *b, int64_t k, float *out);

/* Rows [i0, i1) of the compact accumulators: C(rows[i],:) += sum over a of
 * acc[a](i,:), then acc[a](i,:) = 0 (ready for the next SpMM). */
void tf_kern_merge(int64_t i0, int64_t i1, const int32_t *rows, float *const *acc, int nacc,
                   int64_t k, float *c);

#endif
