/* twoface-exec in original ids: the B generator, --b, --c-out and --check
 * of a permuted plan (executor/tf_exec_perm.c) see the user's row numbers. Each is the
 * plain operation for a plan that does not permute. */
#ifndef TF_EXEC_IDS_H
#define TF_EXEC_IDS_H

#include "tf_csr.h"
#include "twoface.h"

#include <stdint.h>

/* This rank's B rows (nbrows x k) from the generator at seed: row i is
 * generator row tf_get_brow_ids(h)[i]. Local. */
void tf_exec_fill_b(const tf_handle *h, uint64_t seed, int64_t k, float *b);

/* Collective: this rank's B rows (nbrows x k) from dataset /B (n x k, in
 * original order) of path; a permuted plan reads even shares of the file
 * and redistributes them (tf_scatter_rows). Agrees on the outcome. */
int tf_exec_read_b(const tf_handle *h, const char *path, int64_t k, float *b);

/* Collective: C (this rank's nrows x k) to dataset /C of a new file, in
 * original row order (tf_gather_rows into even shares, then
 * tf_dense_h5_write_dist). Agrees on the outcome. */
int tf_exec_write_c(const tf_handle *h, const char *path, int64_t k, const float *c);

/* This rank's rows of A with columns in original ids (row r is still the
 * plan's row r, i.e. original row tf_get_row_ids(h)[r]): *rows points at
 * the handle's own rows when the plan does not permute, else at *copy,
 * which the caller frees with tf_csr_free (it is zeroed otherwise). Local. */
int tf_exec_rows_original(const tf_handle *h, tf_csr *copy, const tf_csr **rows);

#endif
