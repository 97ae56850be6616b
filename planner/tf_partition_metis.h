/* Graph partitioning with METIS (--partition metis): a k-way partition of
 * the symmetrised graph of a square A that minimises the communication
 * volume, balanced on nonzeros, renumbered into contiguous bands
 * (tf_plan_perm.h). docs/partition.md says why and what it costs. */
#ifndef TF_PARTITION_METIS_H
#define TF_PARTITION_METIS_H

#include <stdint.h>
#include "tf_csr.h"

/* Balance constraints METIS holds per part within its tolerance (ubfactor
 * 1.03, METIS's default): nonzeros only, or nonzeros and rows. */
typedef enum { TF_METIS_BALANCE_NNZ = 0, TF_METIS_BALANCE_NNZ_ROWS = 1 } tf_metis_balance;

/* What METIS minimises: the edge cut, or the communication volume (the
 * number of (vertex, other part) pairs with a neighbour there: the B rows
 * all ranks receive). Measured on the eight graphs of docs/partition.md at
 * P = 64: with the cut the slowest part's volume was lower on five, equal
 * on one, higher on two (up to +19%), the mean 0-7% higher, and METIS took
 * up to 11x less time (soc-Slashdot0902: 9.5 s instead of 106 s), hence the
 * default. */
typedef enum { TF_METIS_OBJ_CUT = 0, TF_METIS_OBJ_VOL = 1 } tf_metis_objective;

typedef struct {
    int balance;   /* tf_metis_balance (default nnz) */
    int objective; /* tf_metis_objective (default cut) */
} tf_metis_options;

void tf_metis_options_default(tf_metis_options *mo);

/* part[j] in [0, nparts) for every row j of square A. The graph: vertex j
 * per row, an edge {i, j} wherever A(i, j) or A(j, i) is stored, i != j;
 * vertex weight = the row's nonzeros (and 1, with NNZ_ROWS); objective
 * METIS_OBJTYPE_CUT or _VOL; a fixed seed, so the result depends only on A,
 * nparts and the options. nparts == 1, nparts >= rows and a graph without
 * nonzeros need no METIS: all in part 0; one row per part (the last parts
 * empty); bands by rows. mo NULL: the defaults. */
int tf_partition_metis(const tf_csr *a, int nparts, const tf_metis_options *mo, int32_t *part);

/* The whole step: part, then perm/iperm/off as tf_perm_from_parts, then
 * ap = P A P^T. On success the caller owns *perm, *iperm (n each, malloc)
 * and ap; on failure nothing is left allocated. *metis_s: seconds spent in
 * METIS itself (may be NULL). */
int tf_metis_order(const tf_csr *a, int nparts, const tf_metis_options *mo, int64_t **perm,
                   int64_t **iperm, int64_t *off, tf_csr *ap, double *metis_s);

/* "cut" / "vol", "nnz" / "nnz+rows" (for --metis-objective / --metis-balance). */
int tf_metis_objective_parse(const char *s, int *objective);
int tf_metis_balance_parse(const char *s, int *balance);
const char *tf_metis_objective_name(int objective);
const char *tf_metis_balance_name(int balance);

#endif
