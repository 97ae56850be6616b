/* The executor's compute kernels: plain loops over plain arrays, the inner
 * loop always over the K columns of a dense row (contiguous, vectorised).
 * No MPI, no OpenMP inside: callers split the work.
 *
 * Each kernel exists in several instruction-set variants ("baseline",
 * "avx2", "avx512" on x86-64); the first call, tf_kern_init or
 * tf_kern_select picks one for the process. All variants give bitwise the
 * same results (tf_kern_loops.h says why). */
#ifndef TF_KERNELS_H
#define TF_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* `add` of an overwriting kernel that stores C's rows with non-temporal
 * stores where a vector of C is aligned to its size (with k a multiple of
 * 16 and C 64-byte aligned, every row): C is not read before it is written
 * and does not evict B's rows from the cache. Worth it when the C a caller
 * overwrites will not be in cache when it is next read: tf_kern_c_mode. */
#define TF_KERN_STREAM 2

/* What an overwriting kernel call over a C of c_bytes in all should pass as
 * `add` (or `mode`): TF_KERN_STREAM from TF_KERN_STREAM_MIN bytes on, else
 * 0; TWOFACE_STREAM=on|off forces it (tf_kern_init checks the value). The
 * size: below 4 MiB a rank's C may still be in cache when it is next read,
 * and streaming measured no faster (docs/executor.md, "Stores of C"). */
#define TF_KERN_STREAM_MIN ((int64_t)4 << 20)
int tf_kern_c_mode(int64_t c_bytes);

/* nrows x k elements of es bytes (at least one element), zeroed (so its
 * pages are touched) and on a cache-line boundary, so that with rows of a
 * multiple of 64 bytes every row is whole lines: a vector load of B then
 * never straddles two lines (a B whose rows began 8 bytes past a line took
 * 1.16x the time at K = 512: docs/executor.md, "Rows on cache lines"), and
 * C can be streamed. NULL when memory runs out or the size overflows;
 * free() releases it. */
void *tf_kern_alloc_rows(int64_t nrows, int64_t k, size_t es);

/* A C of nrows x k floats as the kernels stream it best (above). */
float *tf_kern_alloc_c(int64_t nrows, int64_t k);

/* Rows [r0, r1) of a CSR part: C(i,:) = sum_e val[e] * B(idx[e],:) when
 * add is 0 or TF_KERN_STREAM, C(i,:) += that sum when add is 1. B and C are
 * row-major with k columns; C row i is c + i * k. */
void tf_kern_csr(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                 const float *val, const float *b, int64_t k, float *c, int add);

/* Columns [j0, j1) of a CSC part: for every nonzero e of column j,
 * out(map[idx[e]],:) += val[e] * B(j,:). */
void tf_kern_csc_map(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                     const float *val, const float *b, int64_t k, const int32_t *map,
                     float *out);

/* The same into a compact buffer: out(idx[e],:) += val[e] * B(j,:). */
void tf_kern_csc(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                 const float *val, const float *b, int64_t k, float *out);

/* Rows [i0, i1) of the compact accumulators: C(rows[i],:) += sum over a of
 * acc[a](i,:), then acc[a](i,:) = 0 (ready for the next SpMM). */
void tf_kern_merge(int64_t i0, int64_t i1, const int32_t *rows, float *const *acc, int nacc,
                   int64_t k, float *c);

/* The three B-reading kernels with B as bfloat16 (rows received with
 * TF_COMM_BF16, tf_bf16.h), widened to float32 in the loads: bitwise the
 * float32 kernels applied to the widened B. */
void tf_kern_csr_bf16(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                      const float *val, const uint16_t *b, int64_t k, float *c, int add);
void tf_kern_csc_map_bf16(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                          const float *val, const uint16_t *b, int64_t k, const int32_t *map,
                          float *out);
void tf_kern_csc_bf16(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                      const float *val, const uint16_t *b, int64_t k, float *out);

/* Rows [r0, r1) of two CSR parts of the same rows in one pass over C:
 * C(i,:) = sum over part 1's row i (B float32) then part 2's row i (B2
 * float32, or bf16 for tf_kern_csr2_bf16), in storage order - bitwise
 * tf_kern_csr(part 1, add 0) followed by tf_kern_csr(part 2, add 1), with
 * each row of C written once; mode is 0 or TF_KERN_STREAM, as add. */
void tf_kern_csr2(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                  const float *val, const float *b, const int64_t *ptr2, const int32_t *idx2,
                  const float *val2, const float *b2, int64_t k, float *c, int mode);
void tf_kern_csr2_bf16(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                       const float *val, const float *b, const int64_t *ptr2,
                       const int32_t *idx2, const float *val2, const uint16_t *b2, int64_t k,
                       float *c, int mode);

/* ---- Variants ----------------------------------------------------------- */

/* Names of the variants this build has, best last; *n gets their count. */
const char *const *tf_kern_variants(int *n);

/* 1 if the variant is in this build and the CPU can run it, else 0. */
int tf_kern_available(const char *name);

/* Makes `name` the process's variant; NULL, "" or "auto" picks the best the
 * CPU can run. TF_ERR_ARG (with a message) for an unknown name or one the
 * CPU cannot run; the variant is then unchanged. */
int tf_kern_select(const char *name);

/* tf_kern_select(getenv("TF_KERNEL")): the environment variable forces a
 * variant (benchmarks, tests). tf_open calls it, so a bad value fails
 * there. Without a call the first kernel call applies a valid TF_KERNEL and
 * ignores a bad one. The same for TWOFACE_STREAM (tf_kern_c_mode). */
int tf_kern_init(void);

/* The variant the kernels run ("baseline", "avx2", "avx512"). */
const char *tf_kern_variant(void);

#endif
