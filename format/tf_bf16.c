/* Packing float32 rows into bfloat16 (tf_bf16.h). A plain loop the
 * compiler vectorises: the owner packs its exported rows once per SpMM. */
#include "tf_bf16.h"

void tf_bf16_pack(const float *src, uint16_t *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = tf_bf16_from_f32(src[i]);
}
