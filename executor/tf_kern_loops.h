/* The loop nests of the local kernels, compiled once per instruction set.
 *
 * Included by tf_kern_baseline.c, tf_kern_avx2.c and tf_kern_avx512.c, each
 * built with its own target flags (Makefile, "kernels" block) and defining
 *   TF_VW               floats per vector register (4, 8, 16)
 *   TF_KERN_OPS         the name of the variant's table (tf_kern_ops)
 *   TF_KERN_NAME        the variant's name as reported ("baseline", ...)
 * tf_kernels.c picks one table at run time.
 *
 * Summation order: every element of C is the sum over the row's (CSR) or
 * the column-sweep's (CSC) nonzeros in storage order, starting from 0 (or
 * from C when adding), one multiply and one add per nonzero. That order
 * does not depend on TF_VW or on the K tiling below, and the build does not
 * contract a*b+c into FMA (-std=c11 implies -ffp-contract=off; the block in
 * the Makefile says so explicitly), so all variants give bitwise the same C.
 * Why no FMA: docs/executor.md, "Kernels".
 *
 * The kernels that read B rows exist twice: B as float32, and B as
 * bfloat16 (the rows other ranks sent with TF_COMM_BF16), widened to
 * float32 in the loads. Widening is exact, so the bf16 kernels are the
 * float32 ones on the widened values, with the same order and the same
 * bits in every variant; no float32 copy of the received rows is made. */
#include "tf_kern_variants.h"
#include "tf_kernels.h"

#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* A GCC/Clang vector of TF_VW floats: `a * v` broadcasts the scalar a. */
typedef float vec __attribute__((vector_size(TF_VW * sizeof(float))));
/* TF_VW bf16 values, and the same widened to 32-bit lanes. */
typedef uint16_t hvec __attribute__((vector_size(TF_VW * sizeof(uint16_t))));
typedef uint32_t uvec __attribute__((vector_size(TF_VW * sizeof(uint32_t))));

/* Accumulators per K tile: 8 vector registers hold a tile of C's row (16 on
 * x86-64, 32 with AVX-512, so the loads and the broadcast still fit). */
#define NV_MAX 8

/* Prefetch distance in nonzeros for the B rows of the CSR kernel (0: none);
 * see docs/executor.md for the measurement that chose it. */
#ifndef TF_KERN_PREFETCH
#define TF_KERN_PREFETCH 0
#endif

/* Width of the K panel the CSR kernel sweeps over all its rows before the
 * next panel (0: the whole K at once); see docs/executor.md. */
#ifndef TF_KERN_PANEL
#define TF_KERN_PANEL 0
#endif

#define ALWAYS_INLINE static inline __attribute__((always_inline))

ALWAYS_INLINE vec vload(const float *p)
{
    vec v;
    memcpy(&v, p, sizeof v); /* an unaligned load */
    return v;
}

ALWAYS_INLINE void vstore(float *p, vec v) { memcpy(p, &v, sizeof v); }

/* Stores of C's rows in an overwriting kernel: with add == TF_KERN_STREAM,
 * non-temporal: C goes to memory without being read first (a normal store
 * reads the line it writes), and does not push B's rows out of the cache.
 * Only whole cache lines: a tile that starts on a 64-byte boundary and
 * fills its lines (k a multiple of 16 and C 64-byte aligned: every tile). A
 * partly written line costs a read at the memory (measured: no gain with
 * malloc's 16-byte alignment). Values are the same either way. */
ALWAYS_INLINE void cstore(float *cx, int nv, const vec *acc, int add)
{
#if defined(__x86_64__)
    if (add == TF_KERN_STREAM && ((uintptr_t)cx & 63) == 0 &&
        (nv * TF_VW * sizeof(float)) % 64 == 0) {
#pragma GCC unroll 8
        for (int v = 0; v < nv; v++) {
#if TF_VW == 16
            _mm512_stream_ps(cx + v * TF_VW, (__m512)acc[v]);
#elif TF_VW == 8
            _mm256_stream_ps(cx + v * TF_VW, (__m256)acc[v]);
#else
            _mm_stream_ps(cx + v * TF_VW, (__m128)acc[v]);
#endif
        }
        return;
    }
#endif
#pragma GCC unroll 8
    for (int v = 0; v < nv; v++)
        vstore(cx + v * TF_VW, acc[v]);
}

/* After a streaming kernel: its stores are weakly ordered, so they are
 * fenced before whoever reads C (another thread, the caller) can. */
ALWAYS_INLINE void cstore_fence(int add)
{
#if defined(__x86_64__)
    if (add == TF_KERN_STREAM)
        _mm_sfence();
#else
    (void)add;
#endif
}

/* TF_VW elements of B from element i on: float32 (bf == 0) or bf16 whose
 * bits become the upper half of a float32. bf is a constant at every call
 * site, so each kernel compiles to one kind of load. */
ALWAYS_INLINE vec bload(const void *b, int bf, int64_t i)
{
    if (!bf)
        return vload((const float *)b + i);
    hvec h;
    memcpy(&h, (const uint16_t *)b + i, sizeof h);
    uvec u = __builtin_convertvector(h, uvec) << 16;
    return (vec)u;
}

/* One element of B. */
ALWAYS_INLINE float bscalar(const void *b, int bf, int64_t i)
{
    if (!bf)
        return ((const float *)b)[i];
    uint32_t u = (uint32_t)((const uint16_t *)b)[i] << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* C(i, x0 : x0 + nv*TF_VW) (+)= sum_e val[e] * B(idx[e], same columns), the
 * tile accumulated in nv vector registers. nv is a constant at every call
 * site, so the v loops unroll and acc[] lives in registers. */
ALWAYS_INLINE void csr_tile(int nv, int64_t e0, int64_t e1, const int32_t *idx,
                            const float *val, const void *b, int bf, int64_t k, int64_t x0,
                            float *cx, int add)
{
    vec acc[NV_MAX];
#pragma GCC unroll 8
    for (int v = 0; v < nv; v++)
        acc[v] = add == 1 ? vload(cx + v * TF_VW) : (vec){0};
    for (int64_t e = e0; e < e1; e++) {
        const float a = val[e];
        const int64_t bj = (int64_t)idx[e] * k + x0;
        if (TF_KERN_PREFETCH > 0 && e + TF_KERN_PREFETCH < e1)
            __builtin_prefetch((const char *)b + ((int64_t)idx[e + TF_KERN_PREFETCH] * k + x0) *
                                                     (bf ? 2 : 4));
#pragma GCC unroll 8
        for (int v = 0; v < nv; v++)
            acc[v] += a * bload(b, bf, bj + v * TF_VW);
    }
    cstore(cx, nv, acc, add);
}

/* The last k - x0 < TF_VW columns, in scalars. */
ALWAYS_INLINE void csr_tail(int64_t e0, int64_t e1, const int32_t *idx, const float *val,
                            const void *b, int bf, int64_t k, int64_t x0, float *cx, int add)
{
    const int64_t w = k - x0;
    float acc[TF_VW];
    for (int64_t x = 0; x < w; x++)
        acc[x] = add == 1 ? cx[x] : 0.0f;
    for (int64_t e = e0; e < e1; e++) {
        const float a = val[e];
        const int64_t bj = (int64_t)idx[e] * k + x0;
        for (int64_t x = 0; x < w; x++)
            acc[x] += a * bscalar(b, bf, bj + x);
    }
    for (int64_t x = 0; x < w; x++)
        cx[x] = acc[x];
}

/* Columns [x0, x1) of rows [r0, r1): full tiles of NV_MAX vectors, then one
 * tile of 4, 2, 1 vectors for what is left, then scalars. */
ALWAYS_INLINE void csr_cols(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                            const float *val, const void *b, int bf, int64_t k, float *c,
                            int add, int64_t x0, int64_t x1)
{
    for (int64_t i = r0; i < r1; i++) {
        const int64_t e0 = ptr[i], e1 = ptr[i + 1];
        float *ci = c + i * k;
        if (add == 1 && e0 == e1)
            continue;
        int64_t x = x0;
        for (; x + NV_MAX * TF_VW <= x1; x += NV_MAX * TF_VW)
            csr_tile(NV_MAX, e0, e1, idx, val, b, bf, k, x, ci + x, add);
        if (x + 4 * TF_VW <= x1) {
            csr_tile(4, e0, e1, idx, val, b, bf, k, x, ci + x, add);
            x += 4 * TF_VW;
        }
        if (x + 2 * TF_VW <= x1) {
            csr_tile(2, e0, e1, idx, val, b, bf, k, x, ci + x, add);
            x += 2 * TF_VW;
        }
        if (x + TF_VW <= x1) {
            csr_tile(1, e0, e1, idx, val, b, bf, k, x, ci + x, add);
            x += TF_VW;
        }
        if (x < x1)
            csr_tail(e0, e1, idx, val, b, bf, k, x, ci + x, add);
    }
}

ALWAYS_INLINE void csr_any(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                           const float *val, const void *b, int bf, int64_t k, float *c, int add)
{
    const int64_t kp = TF_KERN_PANEL > 0 && k > TF_KERN_PANEL ? TF_KERN_PANEL : k;
    for (int64_t x0 = 0; x0 < k; x0 += kp)
        csr_cols(r0, r1, ptr, idx, val, b, bf, k, c, add, x0, x0 + kp < k ? x0 + kp : k);
}

static void csr(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                const float *val, const float *b, int64_t k, float *c, int add)
{
    csr_any(r0, r1, ptr, idx, val, b, 0, k, c, add);
    cstore_fence(add);
}

static void csr_bf16(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                     const float *val, const uint16_t *b, int64_t k, float *c, int add)
{
    csr_any(r0, r1, ptr, idx, val, b, 1, k, c, add);
    cstore_fence(add);
}

/* Two CSR parts of the same rows in one pass: C(i, tile) = the row of the
 * first part (B float32) followed by the row of the second (B2 float32 or
 * bf16 when bf2), in storage order. The tile stays in registers between
 * the parts, and a float32 register holds exactly what a store and a
 * reload would, so C is bitwise csr(part 1) then csr(part 2, add) - one
 * write of C's row instead of two and one read fewer. */
ALWAYS_INLINE void csr2_tile(int nv, int64_t e0, int64_t e1, const int32_t *idx,
                             const float *val, const float *b, int64_t f0, int64_t f1,
                             const int32_t *idx2, const float *val2, const void *b2, int bf2,
                             int64_t k, int64_t x0, float *cx, int mode)
{
    vec acc[NV_MAX];
#pragma GCC unroll 8
    for (int v = 0; v < nv; v++)
        acc[v] = (vec){0};
    for (int64_t e = e0; e < e1; e++) {
        const float a = val[e];
        const int64_t bj = (int64_t)idx[e] * k + x0;
#pragma GCC unroll 8
        for (int v = 0; v < nv; v++)
            acc[v] += a * vload(b + bj + v * TF_VW);
    }
    for (int64_t e = f0; e < f1; e++) {
        const float a = val2[e];
        const int64_t bj = (int64_t)idx2[e] * k + x0;
#pragma GCC unroll 8
        for (int v = 0; v < nv; v++)
            acc[v] += a * bload(b2, bf2, bj + v * TF_VW);
    }
    cstore(cx, nv, acc, mode);
}

ALWAYS_INLINE void csr2_cols(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                             const float *val, const float *b, const int64_t *ptr2,
                             const int32_t *idx2, const float *val2, const void *b2, int bf2,
                             int64_t k, float *c, int64_t x0, int64_t x1, int mode)
{
    for (int64_t i = r0; i < r1; i++) {
        const int64_t e0 = ptr[i], e1 = ptr[i + 1], f0 = ptr2[i], f1 = ptr2[i + 1];
        float *ci = c + i * k;
        if (f0 == f1) { /* the common row with nothing of part 2: csr's own loop */
            csr_cols(i, i + 1, ptr, idx, val, b, 0, k, c, mode, x0, x1);
            continue;
        }
        int64_t x = x0;
        for (; x + NV_MAX * TF_VW <= x1; x += NV_MAX * TF_VW)
            csr2_tile(NV_MAX, e0, e1, idx, val, b, f0, f1, idx2, val2, b2, bf2, k, x, ci + x, mode);
        if (x + 4 * TF_VW <= x1) {
            csr2_tile(4, e0, e1, idx, val, b, f0, f1, idx2, val2, b2, bf2, k, x, ci + x, mode);
            x += 4 * TF_VW;
        }
        if (x + 2 * TF_VW <= x1) {
            csr2_tile(2, e0, e1, idx, val, b, f0, f1, idx2, val2, b2, bf2, k, x, ci + x, mode);
            x += 2 * TF_VW;
        }
        if (x + TF_VW <= x1) {
            csr2_tile(1, e0, e1, idx, val, b, f0, f1, idx2, val2, b2, bf2, k, x, ci + x, mode);
            x += TF_VW;
        }
        if (x < x1) {
            csr_tail(e0, e1, idx, val, b, 0, k, x, ci + x, 0);
            csr_tail(f0, f1, idx2, val2, b2, bf2, k, x, ci + x, 1);
        }
    }
}

ALWAYS_INLINE void csr2_any(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                            const float *val, const float *b, const int64_t *ptr2,
                            const int32_t *idx2, const float *val2, const void *b2, int bf2,
                            int64_t k, float *c, int mode)
{
    const int64_t kp = TF_KERN_PANEL > 0 && k > TF_KERN_PANEL ? TF_KERN_PANEL : k;
    for (int64_t x0 = 0; x0 < k; x0 += kp)
        csr2_cols(r0, r1, ptr, idx, val, b, ptr2, idx2, val2, b2, bf2, k, c, x0,
                  x0 + kp < k ? x0 + kp : k, mode);
    cstore_fence(mode);
}

static void csr2(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                 const float *val, const float *b, const int64_t *ptr2, const int32_t *idx2,
                 const float *val2, const float *b2, int64_t k, float *c, int mode)
{
    csr2_any(r0, r1, ptr, idx, val, b, ptr2, idx2, val2, b2, 0, k, c, mode);
}

static void csr2_bf16(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                      const float *val, const float *b, const int64_t *ptr2, const int32_t *idx2,
                      const float *val2, const uint16_t *b2, int64_t k, float *c, int mode)
{
    csr2_any(r0, r1, ptr, idx, val, b, ptr2, idx2, val2, b2, 1, k, c, mode);
}

/* out(row(e), x0 : x0 + nv*TF_VW) += val[e] * B(j, same columns) for the
 * nonzeros e of column j, the B tile held in nv registers; row(e) is
 * map[idx[e]] or, without a map, idx[e]. */
ALWAYS_INLINE void csc_tile(int nv, int64_t e0, int64_t e1, const int32_t *idx,
                            const int32_t *map, const float *val, const void *b, int bf,
                            int64_t bj, int64_t k, int64_t x0, float *out)
{
    vec bv[NV_MAX];
#pragma GCC unroll 8
    for (int v = 0; v < nv; v++)
        bv[v] = bload(b, bf, bj + x0 + v * TF_VW);
    for (int64_t e = e0; e < e1; e++) {
        const float a = val[e];
        float *o = out + (int64_t)(map ? map[idx[e]] : idx[e]) * k + x0;
#pragma GCC unroll 8
        for (int v = 0; v < nv; v++)
            vstore(o + v * TF_VW, vload(o + v * TF_VW) + a * bv[v]);
    }
}

ALWAYS_INLINE void csc_cols(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                            const float *val, const void *b, int bf, int64_t k,
                            const int32_t *map, float *out)
{
    for (int64_t j = j0; j < j1; j++) {
        const int64_t e0 = ptr[j], e1 = ptr[j + 1];
        const int64_t bj = j * k;
        int64_t x = 0;
        for (; x + NV_MAX * TF_VW <= k; x += NV_MAX * TF_VW)
            csc_tile(NV_MAX, e0, e1, idx, map, val, b, bf, bj, k, x, out);
        if (x + 4 * TF_VW <= k) {
            csc_tile(4, e0, e1, idx, map, val, b, bf, bj, k, x, out);
            x += 4 * TF_VW;
        }
        if (x + 2 * TF_VW <= k) {
            csc_tile(2, e0, e1, idx, map, val, b, bf, bj, k, x, out);
            x += 2 * TF_VW;
        }
        if (x + TF_VW <= k) {
            csc_tile(1, e0, e1, idx, map, val, b, bf, bj, k, x, out);
            x += TF_VW;
        }
        for (int64_t e = e0; x < k && e < e1; e++) {
            const float a = val[e];
            float *o = out + (int64_t)(map ? map[idx[e]] : idx[e]) * k;
            for (int64_t y = x; y < k; y++)
                o[y] += a * bscalar(b, bf, bj + y);
        }
    }
}

static void csc_map(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                    const float *val, const float *b, int64_t k, const int32_t *map, float *out)
{
    csc_cols(j0, j1, ptr, idx, val, b, 0, k, map, out);
}

static void csc(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                const float *val, const float *b, int64_t k, float *out)
{
    csc_cols(j0, j1, ptr, idx, val, b, 0, k, NULL, out);
}

static void csc_map_bf16(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                         const float *val, const uint16_t *b, int64_t k, const int32_t *map,
                         float *out)
{
    csc_cols(j0, j1, ptr, idx, val, b, 1, k, map, out);
}

static void csc_bf16(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                     const float *val, const uint16_t *b, int64_t k, float *out)
{
    csc_cols(j0, j1, ptr, idx, val, b, 1, k, NULL, out);
}

static void merge(int64_t i0, int64_t i1, const int32_t *rows, float *const *acc, int nacc,
                  int64_t k, float *c)
{
    for (int64_t i = i0; i < i1; i++) {
        float *restrict ci = c + (int64_t)rows[i] * k;
        for (int a = 0; a < nacc; a++) {
            float *restrict ai = acc[a] + i * k;
#pragma omp simd
            for (int64_t x = 0; x < k; x++) {
                ci[x] += ai[x];
                ai[x] = 0.0f;
            }
        }
    }
}

const tf_kern_ops TF_KERN_OPS = {TF_KERN_NAME, csr,      csc_map,      csc,      merge,
                                 csr_bf16,     csc_map_bf16, csc_bf16, csr2, csr2_bf16};
