/* LSD radix sort of 32-bit keys, optionally carrying a 32-bit payload.
 * Planning sorts every rank's remote column list; a radix sort keeps that
 * O(nnz) so planning stays a small multiple of one SpMM. */
#ifndef TF_RADIX_H
#define TF_RADIX_H

#include <stdint.h>

/* Sorts keys[0..n) ascending (stable); payload may be NULL. tmp_keys and
 * tmp_payload (if payload) must hold n entries. */
void tf_radix_sort_u32(uint32_t *keys, uint32_t *payload, int64_t n, uint32_t *tmp_keys,
                       uint32_t *tmp_payload);

#endif
