/* Packing float32 rows into bfloat16 (tf_bf16.h): the owner rounds its
 * exported rows once per SpMM. Eight values at a time in GCC/Clang vector
 * types, so that the shipped -O2 build (which does not vectorise plain
 * loops) still runs it in SIMD registers on every architecture; the same
 * operations as tf_bf16_from_f32, so the same bits. */
#include "tf_bf16.h"

typedef uint32_t u32x8 __attribute__((vector_size(8 * sizeof(uint32_t))));
typedef int32_t i32x8 __attribute__((vector_size(8 * sizeof(int32_t))));
typedef uint16_t u16x8 __attribute__((vector_size(8 * sizeof(uint16_t))));

void tf_bf16_pack(const float *src, uint16_t *dst, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        u32x8 u;
        memcpy(&u, src + i, sizeof u);
        u32x8 rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
        u32x8 quiet = (u >> 16) | 0x0040u;
        /* All ones where NaN (|u| above the infinity's bits): the sign of
         * 0x7f800000 - |u|, spread by an arithmetic shift - shifts and
         * subtractions every SIMD set has, where a vector compare of eight
         * lanes was split into scalar ones for SSE2. */
        u32x8 nan = (u32x8)((i32x8)(0x7f800000u - (u & 0x7fffffffu)) >> 31);
        u16x8 h = __builtin_convertvector((quiet & nan) | (rounded & ~nan), u16x8);
        memcpy(dst + i, &h, sizeof h);
    }
    for (; i < n; i++)
        dst[i] = tf_bf16_from_f32(src[i]);
}
