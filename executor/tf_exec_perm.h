/* The original ids of an open handle's rows (tf_exec_perm.c); the moves
 * between original order and the plan's are public (include/twoface.h,
 * "Permuted plans"). */
#ifndef TF_EXEC_PERM_H
#define TF_EXEC_PERM_H

#include "twoface.h"

/* Fills / frees h->row_ids and h->brow_ids from the plan's permutation (the
 * identity when it has none). Local. */
int tf_perm_handle_init(tf_handle *h);
void tf_perm_handle_free(tf_handle *h);

#endif
