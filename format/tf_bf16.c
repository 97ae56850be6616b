/* Packing float32 rows into bfloat16 (tf_bf16.h): the owner rounds the rows
 * it exports once per SpMM, and the collective rounds as it packs. The
 * operations are tf_bf16_from_f32's on GCC/Clang vector types, so every
 * width gives the same bits, and the shipped -O2 build (no -march, which
 * does not vectorise plain loops) still runs them in SIMD registers. The
 * baseline is compiled for the build's target (SSE2 on x86-64: two 4-lane
 * registers per 8 values and a shuffle sequence to narrow); on x86 the same
 * body is also compiled for AVX2 (8 lanes in one register) and AVX-512 (16),
 * picked once by what the CPU runs. On rows in cache the rounding is
 * bound by its arithmetic, and the baseline's narrowing shuffles are half of
 * it: AVX2 and AVX-512 took half the baseline's time per value
 * (bench/bf16_pack.sh, docs/benchmarks.md, "bfloat16"), which matters
 * since the collective's pack rounds a row once per recipient.
 */
#include "tf_bf16.h"

#include <string.h>

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
        f = pack_of("avx512");
        if (!f)
            f = pack_of("avx2");
        if (!f)
            f = pack_baseline;
        best = f;
    }
    f(src, dst, n);
}
