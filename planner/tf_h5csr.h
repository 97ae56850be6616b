/* A sparse matrix as an HDF5 CSR file, the binary input of twoface-plan for
 * graphs too large for text (docs/planning.md, "Input"). The layout is the
 * one h5py + scipy.sparse users write in three lines:
 *   dataset indptr   m + 1 integers (int64; int32 is accepted too)
 *   dataset indices  column of each entry (int32 or int64)
 *   dataset data     value of each entry (float32 or float64); absent: 1
 *   attribute shape  on the root group: 2 integers, rows and columns
 *                    (a root dataset named shape is accepted as well)
 * Within a row, columns need not be sorted or unique: duplicates are summed
 * in double and rounded to float once, as the Matrix Market reader does. */
#ifndef TF_H5CSR_H
#define TF_H5CSR_H

#include <stdint.h>

#include "tf_csr.h"

/* Does the file start with the HDF5 signature? (*is_h5 = 1 or 0; fails only
 * when the file cannot be opened or read.) */
int tf_h5csr_sniff(const char *path, int *is_h5);

/* Reads part `part` of nparts bands of rows of equal weight (entries plus
 * rows; band k starts at the first row r with indptr[r] + r >= k (nnz + m)
 * / nparts, found by a binary search over indptr): *loc gets them with
 * global columns (rowptr from 0), *row0 the first, m and n the dimensions.
 * Only that slice of indptr, indices and data is read, and a few dozen
 * single entries of indptr.
 * On failure *err_key is TF_KEY_FIRST for a problem of the whole file (not
 * HDF5, a dataset missing or of the wrong type or length, indptr's ends) and
 * 1 + the row otherwise, so that ranks reading different parts agree on the
 * message a serial read gives (tf_agree_key).
 * The part's row arrays follow 'shape', not what the file holds (a chunked
 * 'indptr' of 2^31 entries, never written, takes a few hundred bytes), so
 * before they are allocated their bytes times `sharers` (the processes of
 * this node reading a part alike; 1 when alone) must fit in max_memory, as
 * tf_mem_check takes it (0: what the node has available, -1: no bound);
 * otherwise TF_ERR_NOMEM with one line and *err_key TF_KEY_FIRST. */
int tf_h5csr_read_part(const char *path, int nparts, int part, int64_t max_memory, int sharers,
                       tf_csr *loc, int64_t *m, int64_t *n, int64_t *row0, int64_t *err_key);

/* The whole matrix, for a single process, its rows bounded by the node's
 * available memory (tf_h5csr_read_part with max_memory 0). */
int tf_h5csr_read(const char *path, tf_csr *out);

/* Writes an m x n matrix in that layout (shape as an attribute), replacing
 * `path` atomically: indptr has m + 1 entries; index_bytes is 4 (int32_t) or
 * 8 (int64_t); value_bytes 4 (float), 8 (double) or 0 (data == NULL, no
 * dataset: every value 1). Checks what the reader checks (indptr from 0 to
 * the entry count and monotone, indices in [0, n)). */
int tf_h5csr_write(const char *path, int64_t m, int64_t n, const int64_t *indptr,
                   const void *indices, int index_bytes, const void *data, int value_bytes);

#endif
