/* Sending matrix entries to the ranks that own their rows (a band per rank,
 * the block distribution tf_dcsr_block by default), keeping file order: the entries a rank
 * receives are those of rank 0 first, then rank 1, ..., each in the order it
 * sent them. The distributed reader relies on that to sum duplicates in the
 * same order as a serial read. */
#ifndef TF_ROW_EXCHANGE_H
#define TF_ROW_EXCHANGE_H

#include <mpi.h>
#include <stdint.h>

#include "tf_csr.h"

/* The rank owning global row i of m rows over Q ranks. */
int tf_row_owner(int64_t m, int Q, int64_t i);

/* Collective. Sends every entry of *in (global rows in [0, m)) to its row's
 * owner (the band [off[r], off[r + 1]) holding it; off NULL: the block
 * distribution, tf_row_owner) and appends the entries this rank receives to *out (global rows,
 * which tf_coo_init made; it grows as needed). *in is freed (tf_coo_free)
 * as soon as its entries are packed. At most round_entries entries travel
 * between two ranks per round. Returns TF_OK, a local failure, or
 * TF_ERR_MPI when another rank failed: every rank knows whether any failed,
 * and the caller agrees on the message (tf_agree_key). */
int tf_row_exchange(MPI_Comm comm, int64_t m, const int64_t *off, tf_coo *in, tf_coo *out,
                    int64_t round_entries);

#endif
