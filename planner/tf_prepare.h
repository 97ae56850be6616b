/* From the matrix read from a file to the matrix a plan stores: the
 * normalisation, the transpose for a backward plan, and the symmetry the
 * plan records (docs/normalization.md). */
#ifndef TF_PREPARE_H
#define TF_PREPARE_H

#include "tf_csr.h"
#include "tf_planner.h"

#include <stdint.h>

/* The checksum a plan of `a` (as stored) carries: tf_fingerprint_rows over
 * all rows plus tf_fingerprint_salt of the normalisation's name. */
uint64_t tf_plan_fingerprint(const tf_csr *a, int normalization);

/* Normalises *a (tf_normalize), then, when `transpose`, replaces it by its
 * transpose (so Â^T carries the values of Â). Records in o: normalization,
 * transposed, transpose_of (the checksum of the untransposed Â, which is
 * what Â's own plan carries) and symmetric (of the result). On failure o
 * is untouched and *a is still a matrix to free (possibly normalised). */
int tf_matrix_prepare(tf_csr *a, int normalization, int transpose, tf_plan_options *o);

/* The same for a matrix as read: `mirrored` when the reader added the
 * mirror of every off-diagonal entry of a symmetric Matrix Market file. Such
 * a matrix equals its transpose exactly (a position's duplicates arrive in
 * file order at both, so they add up alike), and so does its gcn
 * normalisation (a row's and a column's sums add the same values in the
 * same order, and an entry is scaled by the product of its row's and its
 * column's factor, which commutes); not transposed and not mean-normalised,
 * it skips the symmetry test, which builds the transpose; otherwise as
 * tf_matrix_prepare. */
int tf_matrix_prepare_read(tf_csr *a, int normalization, int transpose, int mirrored,
                           tf_plan_options *o);

/* Whether the matrix prepared from one read from a symmetric file
 * (`mirrored`, as above) is symmetric without the test: not transposed and
 * not mean-normalised. One rule for both planners (tf_dist_prepare). */
static inline int tf_prepare_symmetric_as_read(int mirrored, int normalization, int transpose)
{
    return mirrored && normalization != TF_NORM_MEAN && !transpose;
}

#endif
