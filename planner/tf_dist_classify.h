/* The sums of the classification (tf_classify_part's tf_classify_sum_fn)
 * over the planning ranks: integer counts, so the result is the same
 * whatever the number of ranks.
 *
 * Why not one all-reduce of the tables: at P = 64 a table of P rows of 17
 * counts is 8.7 kB, and the first sum adds two of them; an all-reduce of
 * that size costs many latencies or bandwidth-bound steps, and most of it
 * is the receivers' columns, each nonzero on one planning rank only
 * (tf_classify.h). Those are gathered from their holders, and only the
 * owners' three columns are added up. */
#ifndef TF_DIST_CLASSIFY_H
#define TF_DIST_CLASSIFY_H

#include <mpi.h>
#include <stdint.h>

typedef struct {
    MPI_Comm comm;
    int P;                 /* plan ranks: rows of a table */
    const int *first_part; /* planning rank r holds plan ranks [first_part[r], first_part[r + 1]) */
    int calls;
    int block;             /* the most plan ranks one planning rank holds */
    int64_t *scratch;      /* the owners' sums, this rank's rows, every rank's rows */
    int status;            /* of the scratch's allocation: agreed at the first call */
} tf_dist_classify_ctx;

/* Allocates the scratch for comm's ranks; a failure is kept and agreed on
 * at the first sum (every rank makes it). Not collective. */
void tf_dist_classify_init(tf_dist_classify_ctx *x, MPI_Comm comm, int P, const int *first_part);
void tf_dist_classify_free(tf_dist_classify_ctx *x);

/* tf_classify_sum_fn over x's ranks (ctx: a tf_dist_classify_ctx). */
int tf_dist_classify_sum(int64_t *v, int64_t n, int op, int status, void *ctx);

#endif
