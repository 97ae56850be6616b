/* bfloat16: what B rows travel as when a context asks for it
 * (tf_exec_options.comm = TF_COMM_BF16; docs/executor.md, "Precision of
 * what travels"). A bf16 value is the upper 16 bits of a float32: the same
 * sign and exponent, 8 significant bits instead of 24. Widening is exact
 * (append 16 zero bits), so only the owner's rounding changes a value, by at
 * most 2^-8 of its magnitude (half a unit in the last place of 8 bits);
 * every kernel variant then computes with the same float32 numbers. */
#ifndef TF_BF16_H
#define TF_BF16_H

#include <stdint.h>
#include <string.h>

/* Round to nearest, ties to even. NaN stays NaN (quiet, sign kept);
 * values within half a bf16 unit of overflow become infinity, as IEEE
 * rounding does. */
static inline uint16_t tf_bf16_from_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float tf_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* f rounded to bf16 and widened back: the value a receiver computes with. */
static inline float tf_bf16_round_f32(float f) { return tf_bf16_to_f32(tf_bf16_from_f32(f)); }

/* dst[i] = bf16(src[i]) for i < n, with the fastest set this CPU runs
 * (the same bits from every one). */
void tf_bf16_pack(const float *src, uint16_t *dst, int64_t n);

/* The same with one vector set: "baseline" (the build's target), "avx2",
 * "avx512", "avx512bf16" (the CPU's own conversion; x86 only). Returns 0,
 * writing nothing, when this CPU or build cannot run it. For tests and
 * benchmarks. */
int tf_bf16_pack_isa(const char *isa, const float *src, uint16_t *dst, int64_t n);

/* The relative error bound of one rounded value: |bf16(b) - b| <= 2^-8 |b|
 * (for normal b; subnormals lose less in absolute terms). */
#define TF_BF16_REL_BOUND (1.0 / 256.0)

#endif
