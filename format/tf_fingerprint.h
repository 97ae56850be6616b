/* Matrix fingerprint: a checksum of A that any partition can compute.
 *
 *   fingerprint(A) = sum over rows i of rowhash(i, row i)   (mod 2^64)
 *   rowhash(i, row) = h, where h starts at mix64(i + 1) and, for each entry
 *                     (j, v) in increasing j, h = mix64(h ^ (j + 1)) then
 *                     h = mix64(h ^ bits(v)); bits(v) = the float32 bit
 *                     pattern of v; finally h = mix64(h ^ row length).
 *
 * A sum of per-row hashes lets the planner compute it from the whole CSR and
 * each executor rank compute its rows' share from what it loaded; an
 * MPI_Allreduce(SUM) of the shares must equal the planner's value. */
#ifndef TF_FINGERPRINT_H
#define TF_FINGERPRINT_H

#include <stdint.h>

/* Hash of one row: cols ascending, vals matching. */
uint64_t tf_row_hash(int64_t row, const int32_t *cols, const float *vals, int64_t len);

/* Sum of row hashes over rows [0, nrows) of a CSR whose row r is global row
 * row_begin + r. */
uint64_t tf_fingerprint_rows(const int64_t *rowptr, const int32_t *col, const float *val,
                             int64_t row_begin, int64_t nrows);

#endif
