/* Kernels. Every inner loop runs over the K columns of one dense row with
 * restrict pointers and `omp simd` (gcc's -O2 cost model vectorises none of
 * them otherwise; the build compiles with -fopenmp). */
#include "tf_kernels.h"

#include <string.h>

void tf_kern_csr(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                 const float *val, const float *b, int64_t k, float *c, int add)
{
    float acc[TF_KB];
    for (int64_t i = r0; i < r1; i++) {
        const int64_t e0 = ptr[i], e1 = ptr[i + 1];
        float *restrict ci = c + i * k;
        if (e0 == e1) {
            if (!add)
                memset(ci, 0, (size_t)k * sizeof *ci);
            continue;
        }
        for (int64_t x0 = 0; x0 < k; x0 += TF_KB) {
            const int64_t kl = k - x0 < TF_KB ? k - x0 : TF_KB;
            {
                const float v = val[e0];
                const float *restrict bj = b + (int64_t)idx[e0] * k + x0;
#pragma omp simd
                for (int64_t x = 0; x < kl; x++)
                    acc[x] = v * bj[x];
            }
            for (int64_t e = e0 + 1; e < e1; e++) {
                const float v = val[e];
                const float *restrict bj = b + (int64_t)idx[e] * k + x0;
#pragma omp simd
                for (int64_t x = 0; x < kl; x++)
                    acc[x] += v * bj[x];
            }
            float *restrict cx = ci + x0;
            if (add) {
#pragma omp simd
                for (int64_t x = 0; x < kl; x++)
                    cx[x] += acc[x];
            } else {
#pragma omp simd
                for (int64_t x = 0; x < kl; x++)
                    cx[x] = acc[x];
            }
        }
    }
}

void tf_kern_csc_map(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                     const float *val, const float *b, int64_t k, const int32_t *map,
                     float *out)
{
    for (int64_t j = j0; j < j1; j++) {
        const float *restrict bj = b + j * k;
        for (int64_t e = ptr[j]; e < ptr[j + 1]; e++) {
            const float v = val[e];
            float *restrict o = out + (int64_t)map[idx[e]] * k;
#pragma omp simd
            for (int64_t x = 0; x < k; x++)
                o[x] += v * bj[x];
        }
    }
}

void tf_kern_csc(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                 const float *val, const float *b, int64_t k, float *out)
{
    for (int64_t j = j0; j < j1; j++) {
        const float *restrict bj = b + j * k;
        for (int64_t e = ptr[j]; e < ptr[j + 1]; e++) {
            const float v = val[e];
            float *restrict o = out + (int64_t)idx[e] * k;
#pragma omp simd
            for (int64_t x = 0; x < k; x++)
                o[x] += v * bj[x];
        }
    }
}

void tf_kern_merge(int64_t i0, int64_t i1, const int32_t *rows, float *const *acc, int nacc,
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
