/* Run-time choice of the kernels' instruction-set variant. The shipped build
 * has no -march: a binary built on a login node must run on every compute
 * node, so each variant is compiled with its own target flags and the CPU
 * is asked, once, which ones it can run (__builtin_cpu_supports checks the
 * OS's register state too). The kernels' loops: tf_kern_loops.h. */
#include "tf_kernels.h"

#include "tf_error.h"
#include "tf_kern_variants.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static const tf_kern_ops *const all_ops[] = {
    &tf_kern_ops_baseline,
#if defined(__x86_64__)
    &tf_kern_ops_avx2,
    &tf_kern_ops_avx512,
#endif
};
#define N_OPS ((int)(sizeof all_ops / sizeof all_ops[0]))

static const char *const all_names[] = {
    "baseline",
#if defined(__x86_64__)
    "avx2",
    "avx512",
#endif
};

/* The active table; NULL until the first selection. Atomic because the
 * first kernel calls may come from several OpenMP threads at once. */
static _Atomic(const tf_kern_ops *) active;

static int cpu_can(const tf_kern_ops *o)
{
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (o == &tf_kern_ops_avx2)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (o == &tf_kern_ops_avx512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
    return o == &tf_kern_ops_baseline;
}

static const tf_kern_ops *find(const char *name)
{
    for (int i = 0; i < N_OPS; i++)
        if (strcmp(all_ops[i]->name, name) == 0)
            return all_ops[i];
    return NULL;
}

static const tf_kern_ops *best(void)
{
    for (int i = N_OPS - 1; i > 0; i--)
        if (cpu_can(all_ops[i]))
            return all_ops[i];
    return all_ops[0];
}

const char *const *tf_kern_variants(int *n)
{
    if (n)
        *n = N_OPS;
    return all_names;
}

int tf_kern_available(const char *name)
{
    const tf_kern_ops *o = name ? find(name) : NULL;
    return o && cpu_can(o);
}

int tf_kern_select(const char *name)
{
    if (!name || !*name || strcmp(name, "auto") == 0) {
        atomic_store(&active, best());
        return TF_OK;
    }
    const tf_kern_ops *o = find(name);
    if (!o)
        return tf_fail(TF_ERR_ARG, "kernel variant '%s' unknown (expected auto, baseline%s)",
                       name, N_OPS > 1 ? ", avx2 or avx512" : "");
    if (!cpu_can(o))
        return tf_fail(TF_ERR_ARG, "kernel variant '%s': this CPU cannot run it (best: %s)",
                       name, best()->name);
    atomic_store(&active, o);
    return TF_OK;
}

/* TWOFACE_STREAM: -1 invalid, 0 auto (unset, empty or "auto"), 1 on, 2 off. */
static int stream_env(void)
{
    const char *s = getenv("TWOFACE_STREAM");
    if (!s || !*s || strcmp(s, "auto") == 0)
        return 0;
    return strcmp(s, "on") == 0 ? 1 : strcmp(s, "off") == 0 ? 2 : -1;
}

int tf_kern_init(void)
{
    const char *env = getenv("TF_KERNEL");
    if (tf_kern_select(env) != TF_OK)
        return tf_fail_prefix(TF_ERR_ARG, "TF_KERNEL");
    if (stream_env() < 0)
        return tf_fail(TF_ERR_ARG, "TWOFACE_STREAM=%s: expected auto, on or off",
                       getenv("TWOFACE_STREAM"));
    return TF_OK;
}

void *tf_kern_alloc_rows(int64_t nrows, int64_t k, size_t es)
{
    size_t r = (size_t)(nrows > 0 ? nrows : 1), w = (size_t)(k > 0 ? k : 1);
    if (es == 0 || w > SIZE_MAX / es || r > (SIZE_MAX - 64) / (w * es))
        return NULL;
    size_t bytes = (r * w * es + 63) / 64 * 64;
    void *p = aligned_alloc(64, bytes);
    if (p)
        memset(p, 0, bytes);
    return p;
}

float *tf_kern_alloc_c(int64_t nrows, int64_t k) { return tf_kern_alloc_rows(nrows, k, sizeof(float)); }

int tf_kern_c_mode(int64_t c_bytes)
{
    int e = stream_env();
    if (e == 1)
        return TF_KERN_STREAM;
    return e == 0 && c_bytes >= TF_KERN_STREAM_MIN ? TF_KERN_STREAM : 0;
}

static const tf_kern_ops *ops(void)
{
    const tf_kern_ops *o = atomic_load_explicit(&active, memory_order_acquire);
    if (o)
        return o;
    const char *env = getenv("TF_KERNEL");
    o = env && find(env) && cpu_can(find(env)) ? find(env) : best();
    atomic_store(&active, o);
    return o;
}

const char *tf_kern_variant(void) { return ops()->name; }

void tf_kern_csr(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                 const float *val, const float *b, int64_t k, float *c, int add)
{
    ops()->csr(r0, r1, ptr, idx, val, b, k, c, add);
}

void tf_kern_csc_map(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                     const float *val, const float *b, int64_t k, const int32_t *map,
                     float *out)
{
    ops()->csc_map(j0, j1, ptr, idx, val, b, k, map, out);
}

void tf_kern_csc(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                 const float *val, const float *b, int64_t k, float *out)
{
    ops()->csc(j0, j1, ptr, idx, val, b, k, out);
}

void tf_kern_merge(int64_t i0, int64_t i1, const int32_t *rows, float *const *acc, int nacc,
                   int64_t k, float *c)
{
    ops()->merge(i0, i1, rows, acc, nacc, k, c);
}

void tf_kern_csr_bf16(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                      const float *val, const uint16_t *b, int64_t k, float *c, int add)
{
    ops()->csr_bf16(r0, r1, ptr, idx, val, b, k, c, add);
}

void tf_kern_csc_map_bf16(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                          const float *val, const uint16_t *b, int64_t k, const int32_t *map,
                          float *out)
{
    ops()->csc_map_bf16(j0, j1, ptr, idx, val, b, k, map, out);
}

void tf_kern_csc_bf16(int64_t j0, int64_t j1, const int64_t *ptr, const int32_t *idx,
                      const float *val, const uint16_t *b, int64_t k, float *out)
{
    ops()->csc_bf16(j0, j1, ptr, idx, val, b, k, out);
}

void tf_kern_csr2(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                  const float *val, const float *b, const int64_t *ptr2, const int32_t *idx2,
                  const float *val2, const float *b2, int64_t k, float *c, int mode)
{
    ops()->csr2(r0, r1, ptr, idx, val, b, ptr2, idx2, val2, b2, k, c, mode);
}

void tf_kern_csr2_bf16(int64_t r0, int64_t r1, const int64_t *ptr, const int32_t *idx,
                       const float *val, const float *b, const int64_t *ptr2,
                       const int32_t *idx2, const float *val2, const uint16_t *b2, int64_t k,
                       float *c, int mode)
{
    ops()->csr2_bf16(r0, r1, ptr, idx, val, b, ptr2, idx2, val2, b2, k, c, mode);
}
