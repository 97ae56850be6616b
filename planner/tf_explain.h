/* Human-readable reports of a plan: the --explain table and the --svg
 * picture of the matrix as ranks x column stripes coloured by class. */
#ifndef TF_EXPLAIN_H
#define TF_EXPLAIN_H

#include <stdio.h>
#include "tf_plan.h"

/* Per-rank table and totals beside the allgather volume and the exact
 * sparsity-aware minimum, at the planned K. Needs only the header and
 * all_stats, so it also works on a plan read back with TF_PLAN_READ_HEADER. */
void tf_explain_print(FILE *f, const tf_plan *plan);

/* One line: normalisation, symmetry, transposition and fingerprint (the
 * second line of tf_explain_print). */
void tf_explain_matrix(FILE *f, const tf_plan *plan);

/* Writes an SVG; needs every rank's part (a freshly built plan). */
int tf_explain_svg(const char *path, const tf_plan *plan);
/* The picture in two steps, for a plan whose parts lie on several ranks:
 * each part's row of bins x 4 class weights (zeroed by the caller), then
 * the drawing from all P rows in rank order. */
int tf_explain_svg_bins(const tf_plan *plan);
void tf_explain_svg_row(const tf_plan *plan, const tf_rank_plan *rp, double *row);
int tf_explain_svg_draw(const char *path, const tf_plan *plan, const double *acc);

#endif
