/* twoface-plan --bands-from FORWARD.h5: take the row bands of a new plan
 * from an existing plan of the same matrix, so that a backward plan
 * (--transpose) lines up with its forward plan (docs/normalization.md). */
#ifndef TF_BANDS_FROM_H
#define TF_BANDS_FROM_H

#include "tf_csr.h"
#include "tf_plan.h"
#include "tf_planner.h"

/* Checks that the forward plan `fwd` (a header, tf_plan_read with
 * TF_PLAN_READ_HEADER, of file fwd_path) is a plan of the matrix `a` was
 * prepared from (tf_matrix_prepare set o's normalization, transposed and
 * transpose_of; matrix_path names a's file in messages): same normalisation
 * and the same fingerprint, of Â itself when o->transposed, else of `a`.
 * Then points o->row_off and o->brow_off into fwd: when transposed, the new
 * rows of A are fwd's rows of B and vice versa; otherwise the same bands;
 * o->partition becomes fwd's (it names how the bands were made), and a
 * METIS forward plan's permutation becomes o->perm / o->iperm (the new plan
 * renumbers with it instead of running METIS).
 * fwd must outlive the use of o. TF_ERR_ARG with a one-line message naming
 * both files otherwise. o->nranks must already be fwd->nranks. */
int tf_bands_from(const tf_plan *fwd, const char *fwd_path, const char *matrix_path,
                  const tf_csr *a, tf_plan_options *o);

/* The same from the stored matrix's dimensions and plan fingerprint
 * (tf_plan_fingerprint; unused when o->transposed, whose forward
 * fingerprint is o->transpose_of): what the distributed planner knows. */
int tf_bands_from_dims(const tf_plan *fwd, const char *fwd_path, const char *matrix_path,
                       int64_t nrows, int64_t ncols, uint64_t fingerprint, tf_plan_options *o);

#endif
