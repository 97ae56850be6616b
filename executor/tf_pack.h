/* The collective's send pack (tf_collective.c): the rows of packed
 * destinations copied, run by run, into one contiguous buffer at the start
 * of every SpMM. With TF_COMM_BF16 the pack is where the rounding happens:
 * a segment is either rounded from the float32 B straight into the pack
 * buffer (read 4 bytes, write 2 per element) or, when fetchers also read
 * those rows and they are therefore already rounded in the window, copied
 * from the window (read 2, write 2). Pure functions over plain arrays, so
 * they are tested without MPI (tests/test_pack.c). */
#ifndef TF_PACK_H
#define TF_PACK_H

#include <stddef.h>
#include <stdint.h>

/* Cuts n runs (first[i], len[i]: owner-local rows, in pack order) at the
 * boundaries of n_xr sorted, disjoint, non-adjacent ranges (xr_first,
 * xr_rows), so that every segment lies wholly inside a range (from[s] = 1)
 * or wholly outside all of them (from[s] = 0); pack order is kept. With
 * out_first == NULL only counts the segments. Returns the segment count. */
int64_t tf_pack_split(const int64_t *first, const int64_t *len, int64_t n,
                      const int64_t *xr_first, const int64_t *xr_rows, int64_t n_xr,
                      int64_t *out_first, int64_t *out_len, char *from);

/* Writes n segments of rows of k elements one after the other into dst.
 * bf16 = 0: es-byte elements copied from win (the window: B itself).
 * bf16 = 1: 2-byte elements; segment s is copied from win (the window's
 * bf16 export) when from && from[s], else rounded from b (float32) with
 * tf_bf16_pack: the bits the window's export would hold. */
void tf_pack_rows(int bf16, size_t es, int64_t k, const void *win, const float *b,
                  int64_t n, const int64_t *first, const int64_t *len, const char *from,
                  void *dst);

#endif
