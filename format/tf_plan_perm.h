/* Row permutations: the renumbering of a graph partition (--partition metis)
 * into contiguous bands, applied to a square matrix as P A P^T.
 *
 * Vocabulary (the same in the plan file and the public API):
 *   perm[i]  = the original (input-file) id of new row i          (new -> old)
 *   iperm[j] = the new id of original row j                        (old -> new)
 * Both are bijections of [0, n) and inverse to each other. A permuted plan
 * is an ordinary plan of Ap = P A P^T, Ap(i, j) = A(perm[i], perm[j]): the
 * same permutation renumbers rows (A and C) and columns (B rows), which is
 * why only square matrices can be permuted. A NULL perm means the identity. */
#ifndef TF_PLAN_PERM_H
#define TF_PLAN_PERM_H

#include <stdint.h>
#include "tf_csr.h"

/* TF_OK when perm is a bijection of [0, n) and iperm its inverse; else
 * TF_ERR_FORMAT naming the first bad entry ("perm[7] = 3 appears twice",
 * "iperm[3] = 5, expected 7"). iperm may be NULL (perm checked alone). */
int tf_perm_check(const int64_t *perm, const int64_t *iperm, int64_t n);

/* Renumbers vertices so that each part is a contiguous band, keeping the
 * original order inside a part (a stable counting sort by part): part[j] in
 * [0, nparts) for every original row j; fills perm, iperm (n each) and the
 * band offsets off[0..nparts] (part p = new rows [off[p], off[p+1])). */
int tf_perm_from_parts(const int32_t *part, int64_t n, int nparts, int64_t *perm,
                       int64_t *iperm, int64_t *off);

/* out = P A P^T for square A (columns sorted within each row, values
 * carried). Fails with TF_ERR_ARG for a rectangular A. */
int tf_csr_permute(const tf_csr *a, const int64_t *perm, const int64_t *iperm, tf_csr *out);

/* The fingerprint share (tf_fingerprint.h) of rows given in new ids: row r
 * of `rows` is new row row_begin + r, its columns are new ids; the hash is
 * taken of the original rows perm[row_begin + r] with columns perm[col],
 * so a permuted plan carries, and its executor checks, the fingerprint of
 * the user's matrix. perm NULL: the plain tf_fingerprint_rows. */
int tf_perm_fingerprint_rows(const tf_csr *rows, int64_t row_begin, const int64_t *perm,
                             uint64_t *share);

/* Original id of new row i. */
static inline int64_t tf_perm_orig(const int64_t *perm, int64_t i) { return perm ? perm[i] : i; }

#endif
