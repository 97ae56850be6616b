/* --partition metis on more than one planning rank: the graph partition is
 * computed by PT-Scotch on the ranks' own rows (no rank holds the graph),
 * then renumbered and applied as tf_metis_order does serially
 * (docs/partition.md, docs/planning.md). The parts, and so the plan,
 * depend on the number of planning ranks. */
#ifndef TF_DIST_PARTITION_H
#define TF_DIST_PARTITION_H

#include "tf_dcsr.h"
#include "tf_partition_metis.h"

/* part[i] in [0, nparts) for each of this rank's rows of square *a (in the
 * block distribution). The graph is tf_partition_metis's: vertex per row, an
 * edge {i, j} where A(i, j) or A(j, i) is stored, i != j, vertex weight the
 * row's nonzeros; PT-Scotch's k-way mapping with imbalance 3 % (METIS's
 * ubfactor), one thread per rank, a fixed seed and its deterministic mode.
 * nparts == 1, nparts >= rows and a graph without nonzeros are decided as
 * tf_partition_metis decides them (bands by rows), so those plans do not
 * depend on the number of ranks. Only balance nnz and objective cut exist
 * in PT-Scotch; the others fail with TF_ERR_ARG. Collective. */
int tf_dist_partition_parts(MPI_Comm comm, const tf_dcsr *a, int nparts,
                            const tf_metis_options *mo, int32_t *part);

/* The renumbering of parts (tf_perm_from_parts, distributed): off[0..nparts]
 * on every rank, and on rank 0 perm and iperm (n each, malloc; NULL on the
 * other ranks); *ap = P A P^T with planning rank r holding new rows
 * [off[tf_dist_first_part(nparts, Q, r)], off[tf_dist_first_part(nparts, Q,
 * r + 1)]), columns renumbered and sorted. Each rank holds only its own
 * rows' new ids; a column's new id is asked of the rank that owns its row.
 * *a (block distribution) is consumed. Collective. */
int tf_dist_perm_apply(MPI_Comm comm, tf_dcsr *a, int nparts, const int32_t *part,
                       int64_t *off, int64_t **perm, int64_t **iperm, tf_dcsr *ap);

/* As tf_dist_perm_apply for a given renumbering instead of parts (a
 * --bands-from metis plan): perm_in, iperm_in (n each, the same on every
 * rank; rank 0 checks them) and the bands off_in[0..nparts], copied to
 * off. Collective. */
int tf_dist_perm_given(MPI_Comm comm, tf_dcsr *a, int nparts, const int64_t *perm_in,
                       const int64_t *iperm_in, const int64_t *off_in, int64_t *off,
                       int64_t **perm, int64_t **iperm, tf_dcsr *ap);

/* Both: the distributed tf_metis_order. *a is consumed. Collective. */
int tf_dist_metis_order(MPI_Comm comm, tf_dcsr *a, int nparts, const tf_metis_options *mo,
                        int64_t *off, int64_t **perm, int64_t **iperm, tf_dcsr *ap);

#endif
