/* Turns a classified analysis into every rank's plan part: the CSR/CSC
 * arrays with renumbered columns, the fetch runs, the multicast schedule,
 * the stripe table and the predicted statistics. */
#ifndef TF_BUILD_H
#define TF_BUILD_H

#include "tf_analysis.h"
#include "tf_csr.h"
#include "tf_plan.h"

/* plan must already hold the header fields (nranks, offsets, coeffs, k,
 * gap); fills stripes, parts and all_stats. */
int tf_build_parts(const tf_csr *a, const tf_analysis *an, tf_plan *plan);

#endif
