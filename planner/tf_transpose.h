/* The transpose of a CSR matrix and the exact symmetry test the planner
 * records in a plan (backward products dH = A^T dZ, docs/normalization.md). */
#ifndef TF_TRANSPOSE_H
#define TF_TRANSPOSE_H

#include "tf_csr.h"

/* t = a^T (ncols x nrows, columns ascending within each row). */
int tf_csr_transpose(const tf_csr *a, tf_csr *t);

/* *symmetric = 1 when a is square and equals its transpose: the same
 * pattern and, entry by entry, the same float32 bit pattern (so -0 and +0
 * differ: the test never claims more than the stored bits show). */
int tf_csr_is_symmetric(const tf_csr *a, int *symmetric);

/* A necessary condition for symmetry that needs no transpose: the sum over
 * the stored entries (i, j, v) of hash(i, j, bits(v)), minus the same sum
 * with i and j swapped, over rows [0, nrows) of a CSR whose row r is global
 * row row0 + r. A symmetric matrix gives 0 (summed over all rows); any
 * other value proves the matrix is not symmetric, so the exact test with its
 * transpose only runs when the two sums agree. */
uint64_t tf_csr_symmetry_residue(const tf_csr *a, int64_t row0);

#endif
