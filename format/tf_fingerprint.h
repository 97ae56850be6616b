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
 * MPI_Allreduce(SUM) of the shares must equal the planner's value.
 *
 * A plan's checksum is fingerprint(A) + salt(normalisation) (mod 2^64), so
 * that plans of one file under two normalisations never share a checksum,
 * even where the normalised values happen to coincide (mean of a matrix
 * whose rows each hold a single 1). salt("none") = 0 keeps the checksums of
 * unnormalised plans (and of format 2.1 files) what they were. */
#ifndef TF_FINGERPRINT_H
#define TF_FINGERPRINT_H

#include <stdint.h>

/* Hash of one row: cols ascending, vals matching. */
uint64_t tf_row_hash(int64_t row, const int32_t *cols, const float *vals, int64_t len);

/* Sum of row hashes over rows [0, nrows) of a CSR whose row r is global row
 * row_begin + r. */
uint64_t tf_fingerprint_rows(const int64_t *rowptr, const int32_t *col, const float *val,
                             int64_t row_begin, int64_t nrows);

/* 0 for "none" (or NULL); otherwise h = mix64(0x6e6f726d), then
 * h = mix64(h ^ c) for every byte c of the name, then mix64(h ^ length). */
uint64_t tf_fingerprint_salt(const char *normalization);

#endif
