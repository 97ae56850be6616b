/* Packing float32 rows into bfloat16 (tf_bf16.h): the owner rounds the rows
 * it exports once per SpMM, and the collective rounds as it packs. The
 * operations are tf_bf16_from_f32's on GCC/Clang vector types, so every
 * width gives the same bits, and the shipped -O2 build (no -march, which
 * does not vectorise plain loops) still runs them in SIMD registers. The
 * baseline is compiled for the build's target (SSE2 on x86-64: two 4-lane
 * registers per 8 values and a shuffle sequence to narrow); on x86 the same
 * body is also compiled for AVX2 (8 lanes in one register) and AVX-512 (16),
 * picked once by what the CPU runs; a CPU with AVX512_BF16 converts with
 * its own instruction instead. On rows in cache the rounding is bound by
 * its arithmetic, and the baseline's narrowing shuffles are half of it:
 * AVX2 and AVX-512 took half the baseline's time per value, the CPU's
 * conversion half again, less than float32's copy (bench/bf16_pack.sh,
 * docs/benchmarks.md, "bfloat16"), which matters since the collective's
 * pack rounds a row once per recipient.
 */
#include "tf_bf16.h"

#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>
#endif

/* dst[0, n) = bf16(src[0, n)) in steps of L lanes, the scalar rounding for
 * the tail. NaN lanes are all ones where |u| is above the infinity's bits:
 * the sign of 0x7f800000 - |u|, spread by an arithmetic shift - shifts and
 * subtractions every SIMD set has, where a vector compare was split into
 * scalar ones for SSE2. */
#define TF_BF16_PACK_BODY(L)                                                                  \
    typedef uint32_t u32v __attribute__((vector_size(L * sizeof(uint32_t))));                \
    typedef int32_t i32v __attribute__((vector_size(L * sizeof(int32_t))));                  \
    typedef uint16_t u16v __attribute__((vector_size(L * sizeof(uint16_t))));                \
    int64_t i = 0;                                                                            \
    for (; i + (L) <= n; i += (L)) {                                                          \
        u32v u;                                                                               \
        memcpy(&u, src + i, sizeof u);                                                        \
        u32v rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;                                \
        u32v quiet = (u >> 16) | 0x0040u;                                                     \
        u32v nan = (u32v)((i32v)(0x7f800000u - (u & 0x7fffffffu)) >> 31);                    \
        u16v h = __builtin_convertvector((quiet & nan) | (rounded & ~nan), u16v);             \
        memcpy(dst + i, &h, sizeof h);                                                        \
    }                                                                                         \
    for (; i < n; i++)                                                                        \
        dst[i] = tf_bf16_from_f32(src[i]);

static void pack_baseline(const float *src, uint16_t *dst, int64_t n) { TF_BF16_PACK_BODY(8) }

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define TF_BF16_X86 1
__attribute__((target("avx2"))) static void pack_avx2(const float *src, uint16_t *dst, int64_t n)
{
    TF_BF16_PACK_BODY(8)
}
__attribute__((target("avx512f,avx512bw"))) static void pack_avx512(const float *src,
                                                                     uint16_t *dst, int64_t n)
{
    TF_BF16_PACK_BODY(16)
}
/* The CPU's own conversion (VCVTNEPS2BF16, AVX512_BF16): round to nearest
 * even and NaN quieting as tf_bf16_from_f32, but a subnormal input becomes
 * a zero of its sign. Blocks holding a subnormal take the arithmetic path,
 * so the bits stay those of every other variant. One instruction per 16
 * values where the arithmetic takes seven, and the pack then moves at the
 * speed of a copy. */
__attribute__((target("avx512f,avx512bw,avx512bf16"))) static void
pack_avx512bf16(const float *src, uint16_t *dst, int64_t n)
{
    const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff);
    const __m512i one = _mm512_set1_epi32(1);
    const __m512i sub_max = _mm512_set1_epi32(0x007fffff);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 f = _mm512_loadu_ps(src + i);
        /* |u| - 1 < 0x7fffff (unsigned): exactly the nonzero subnormals. */
        __m512i m = _mm512_sub_epi32(_mm512_and_si512(_mm512_castps_si512(f), abs_mask), one);
        if (_mm512_cmplt_epu32_mask(m, sub_max)) {
            for (int64_t x = i; x < i + 16; x++)
                dst[x] = tf_bf16_from_f32(src[x]);
            continue;
        }
        __m256bh h = _mm512_cvtneps_pbh(f);
        _mm256_storeu_si256((__m256i *)(void *)(dst + i), (__m256i)h);
    }
    for (; i < n; i++)
        dst[i] = tf_bf16_from_f32(src[i]);
}
#endif

typedef void (*pack_fn)(const float *, uint16_t *, int64_t);

/* The variant named isa if this CPU runs it, else NULL. */
static pack_fn pack_of(const char *isa)
{
    if (strcmp(isa, "baseline") == 0)
        return pack_baseline;
#ifdef TF_BF16_X86
    __builtin_cpu_init();
    if (strcmp(isa, "avx2") == 0 && __builtin_cpu_supports("avx2"))
        return pack_avx2;
    if (strcmp(isa, "avx512") == 0 && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512bw"))
        return pack_avx512;
    if (strcmp(isa, "avx512bf16") == 0 && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512bf16"))
        return pack_avx512bf16;
#endif
    return NULL;
}

int tf_bf16_pack_isa(const char *isa, const float *src, uint16_t *dst, int64_t n)
{
    pack_fn f = isa ? pack_of(isa) : NULL;
    if (!f)
        return 0;
    f(src, dst, n);
    return 1;
}

void tf_bf16_pack(const float *src, uint16_t *dst, int64_t n)
{
    /* Chosen on first use; every thread would choose the same. */
    static _Atomic(pack_fn) best;
    pack_fn f = best;
    if (!f) {
        f = pack_of("avx512bf16");
        if (!f)
            f = pack_of("avx512");
        if (!f)
            f = pack_of("avx2");
        if (!f)
            f = pack_baseline;
        best = f;
    }
    f(src, dst, n);
}
