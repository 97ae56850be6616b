/* Internal to the kernels: one table of kernel functions per instruction
 * set (tf_kern_loops.h compiled three times), chosen by tf_kernels.c. */
#ifndef TF_KERN_VARIANTS_H
#define TF_KERN_VARIANTS_H

#include <stdint.h>

typedef struct {
    const char *name;
    void (*csr)(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                const float *val, const float *b, int64_t k, float *c, int add);
    void (*csc_map)(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                    const float *val, const float *b, int64_t k, const int32_t *map,
                    float *out);
    void (*csc)(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                const float *val, const float *b, int64_t k, float *out);
    void (*merge)(int64_t i0, int64_t i1, const int32_t *rows, float *const *acc, int nacc,
                  int64_t k, float *c);
    /* The same B-reading kernels with B as bf16 (tf_bf16.h). */
    void (*csr_bf16)(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                     const float *val, const uint16_t *b, int64_t k, float *c, int add);
    void (*csc_map_bf16)(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                         const float *val, const uint16_t *b, int64_t k, const int32_t *map,
                         float *out);
    void (*csc_bf16)(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                     const float *val, const uint16_t *b, int64_t k, float *out);
    /* Two CSR parts of the same rows in one pass (tf_kern_csr2). */
    void (*csr2)(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                 const float *val, const float *b, const int64_t *ptr2, const int32_t *idx2,
                 const float *val2, const float *b2, int64_t k, float *c, int mode);
    void (*csr2_bf16)(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                      const float *val, const float *b, const int64_t *ptr2,
                      const int32_t *idx2, const float *val2, const uint16_t *b2, int64_t k,
                      float *c, int mode);
} tf_kern_ops;

extern const tf_kern_ops tf_kern_ops_baseline;
#if defined(__x86_64__)
extern const tf_kern_ops tf_kern_ops_avx2;
extern const tf_kern_ops tf_kern_ops_avx512;
#endif

#endif
