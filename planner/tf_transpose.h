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

#endif
