/* Unit tests of the kernels' instruction-set variants (executor/tf_kernels.c):
 * every variant this CPU can run gives bitwise the same C as the baseline
 * variant, for the CSR (overwrite and add), CSC, CSC-with-map and merge
 * kernels at widths K that hit every tile size and the scalar tail, and the
 * baseline agrees with the independent serial reference (tf_reference.c);
 * selecting a variant by name or by TF_KERNEL, and the errors for names that
 * are unknown or that the CPU cannot run; the bfloat16 kernels (B rows
 * received with TF_COMM_BF16) are bitwise the float32 kernels on the
 * widened B in every variant, and the rounding is to nearest even within
 * 2^-8 relative; the fused two-part CSR kernel is bitwise the CSR kernel
 * then the adding one. The variants the CPU lacks are not
 * run (the test prints which ones ran). */
#include "tf_test.h"
#include "tf_bf16.h"
#include "tf_csr.h"
#include "tf_dense.h"
#include "tf_error.h"
#include "tf_kernels.h"
#include "tf_reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Widths around every tile boundary of every variant (4, 8, 16 floats per
 * register, tiles of 1, 2, 4, 8 registers). */
static const int64_t KS[] = {1, 3, 4, 5, 8, 12, 15, 16, 17, 31, 32, 33, 47, 64, 100, 127, 128, 129, 200, 257};
#define NK ((int)(sizeof KS / sizeof KS[0]))

/* A matrix with empty rows and columns, one long row and mixed signs. */
static void test_matrix(tf_csr *a)
{
    tf_test_random_csr(a, 97, 61, 700, 15);
}

/* Makes `name` the active variant if this CPU runs it: 1, else 0. */
static int use_variant(const char *name)
{
    if (!tf_kern_available(name))
        return 0;
    ck_assert_int_eq(tf_kern_select(name), TF_OK);
    return 1;
}

static float *filled(int64_t rows, int64_t k, uint64_t seed)
{
    float *x = malloc((size_t)(rows * k + 1) * sizeof *x);
    ck_assert_ptr_nonnull(x);
    tf_dense_fill(x, seed, 0, rows, k);
    return x;
}

/* CSC copy of a (column pointers, row indices, values). */
static void to_csc(const tf_csr *a, int64_t **ptr, int32_t **idx, float **val)
{
    *ptr = calloc((size_t)a->ncols + 1, sizeof **ptr);
    *idx = malloc((size_t)(a->nnz + 1) * sizeof **idx);
    *val = malloc((size_t)(a->nnz + 1) * sizeof **val);
    int64_t *pos = malloc((size_t)(a->ncols + 1) * sizeof *pos);
    ck_assert(*ptr && *idx && *val && pos);
    for (int64_t e = 0; e < a->nnz; e++)
        (*ptr)[a->col[e] + 1]++;
    for (int64_t j = 0; j < a->ncols; j++)
        (*ptr)[j + 1] += (*ptr)[j];
    memcpy(pos, *ptr, (size_t)a->ncols * sizeof *pos);
    for (int64_t i = 0; i < a->nrows; i++)
        for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++) {
            int64_t p = pos[a->col[e]]++;
            (*idx)[p] = (int32_t)i;
            (*val)[p] = a->val[e];
        }
    free(pos);
}

/* The four kernels in the active variant, for one K; every output in out[]
 * (4 buffers of a->nrows * k floats). */
static void run_all(const tf_csr *a, const int64_t *cptr, const int32_t *cidx,
                    const float *cval, int64_t k, float *out[5])
{
    const int64_t m = a->nrows, n = a->ncols;
    float *b = filled(n, k, 3);
    /* CSR: rows in two calls (a range that does not start at 0). */
    tf_kern_csr(0, m / 3, a->rowptr, a->col, a->val, b, k, out[0], 0);
    tf_kern_csr(m / 3, m, a->rowptr, a->col, a->val, b, k, out[0], 0);
    /* CSR adding into a filled C. */
    tf_dense_fill(out[1], 9, 0, m, k);
    tf_kern_csr(0, m, a->rowptr, a->col, a->val, b, k, out[1], 1);
    /* CSC into a zeroed buffer, columns in two calls. */
    memset(out[2], 0, (size_t)(m * k) * sizeof(float));
    tf_kern_csc(0, n / 2, cptr, cidx, cval, b, k, out[2]);
    tf_kern_csc(n / 2, n, cptr, cidx, cval, b, k, out[2]);
    /* CSC through a map reversing the rows, into a filled C. */
    int32_t *map = malloc((size_t)m * sizeof *map);
    ck_assert_ptr_nonnull(map);
    for (int64_t i = 0; i < m; i++)
        map[i] = (int32_t)(m - 1 - i);
    tf_dense_fill(out[3], 11, 0, m, k);
    tf_kern_csc_map(0, n, cptr, cidx, cval, b, k, map, out[3]);
    /* Merge: two accumulators (rows 0..m-1) into C rows map[i]. */
    float *acc0 = filled(m, k, 21), *acc1 = filled(m, k, 22);
    float *accs[2] = {acc0, acc1};
    tf_dense_fill(out[4], 13, 0, m, k);
    tf_kern_merge(0, m, map, accs, 2, k, out[4]);
    for (int64_t x = 0; x < m * k; x++)
        ck_assert(acc0[x] == 0.0f && acc1[x] == 0.0f);
    free(acc0);
    free(acc1);
    free(map);
    free(b);
}

START_TEST(variants_agree_bitwise_and_with_reference)
{
    tf_csr a;
    test_matrix(&a);
    int64_t *cptr;
    int32_t *cidx;
    float *cval;
    to_csc(&a, &cptr, &cidx, &cval);
    int nvar;
    const char *const *vars = tf_kern_variants(&nvar);
    ck_assert_int_ge(nvar, 1);
    ck_assert_str_eq(vars[0], "baseline");
    const int64_t m = a.nrows;
    double *ref = malloc((size_t)(m * 257) * sizeof *ref);
    double *absrow = calloc((size_t)m, sizeof *absrow);
    ck_assert(ref && absrow);
    for (int64_t i = 0; i < m; i++)
        for (int64_t e = a.rowptr[i]; e < a.rowptr[i + 1]; e++)
            absrow[i] += fabs(a.val[e]);
    char ran[64] = "";
    for (int v = 0; v < nvar; v++)
        if (tf_kern_available(vars[v])) {
            strcat(ran, " ");
            strcat(ran, vars[v]);
        }
    for (int ik = 0; ik < NK; ik++) {
        const int64_t k = KS[ik];
        float *base[5], *got[5];
        for (int o = 0; o < 5; o++) {
            base[o] = malloc((size_t)(m * k) * sizeof(float));
            got[o] = malloc((size_t)(m * k) * sizeof(float));
            ck_assert(base[o] && got[o]);
        }
        ck_assert_int_eq(tf_kern_select("baseline"), TF_OK);
        run_all(&a, cptr, cidx, cval, k, base);
        /* The baseline against the serial reference (double sums). */
        float *b = filled(a.ncols, k, 3);
        tf_reference_spmm(&a, 0, m, b, k, ref);
        ck_assert_double_le(tf_reference_scaled_error(base[0], ref, absrow, m, k, 1.0), 1e-6);
        ck_assert_double_le(tf_reference_scaled_error(base[2], ref, absrow, m, k, 1.0), 1e-6);
        float *c0 = filled(m, k, 9);
        for (int64_t x = 0; x < m * k; x++)
            ck_assert_float_eq_tol(base[1][x], c0[x] + (float)ref[x], 1e-5f);
        float *c3 = filled(m, k, 11), *c4 = filled(m, k, 13), *a0 = filled(m, k, 21),
              *a1 = filled(m, k, 22);
        for (int64_t i = 0; i < m; i++)
            for (int64_t x = 0; x < k; x++) {
                int64_t r = (m - 1 - i) * k + x; /* map[i] = m - 1 - i */
                ck_assert_float_eq_tol(base[3][r], c3[r] + (float)ref[i * k + x], 1e-5f);
                ck_assert_float_eq(base[4][r], c4[r] + a0[i * k + x] + a1[i * k + x]);
            }
        free(c0);
        free(c3);
        free(c4);
        free(a0);
        free(a1);
        free(b);
        /* Every other variant the CPU runs: bitwise the baseline's C. */
        for (int v = 1; v < nvar; v++) {
            if (!use_variant(vars[v]))
                continue;
            ck_assert_str_eq(tf_kern_variant(), vars[v]);
            run_all(&a, cptr, cidx, cval, k, got);
            for (int o = 0; o < 5; o++)
                ck_assert_msg(memcmp(got[o], base[o], (size_t)(m * k) * sizeof(float)) == 0,
                              "variant %s, kernel %d, K = %lld: not bitwise the baseline's",
                              vars[v], o, (long long)k);
        }
        for (int o = 0; o < 5; o++) {
            free(base[o]);
            free(got[o]);
        }
    }
    fprintf(stderr, "test_kernels: variants run on this CPU:%s\n", ran);
    free(ref);
    free(absrow);
    free(cptr);
    free(cidx);
    free(cval);
    tf_csr_free(&a);
}
END_TEST

START_TEST(select_by_name_and_environment)
{
    ck_assert_int_eq(tf_kern_select("auto"), TF_OK);
    const char *best = tf_kern_variant();
    ck_assert(tf_kern_available(best));
    ck_assert_int_eq(tf_kern_select(NULL), TF_OK);
    ck_assert_str_eq(tf_kern_variant(), best);
    ck_assert_int_eq(tf_kern_select("baseline"), TF_OK);
    ck_assert_str_eq(tf_kern_variant(), "baseline");

    /* An unknown name fails with a message and leaves the variant alone. */
    ck_assert_int_eq(tf_kern_select("sse9"), TF_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "'sse9' unknown"));
    ck_assert_str_eq(tf_kern_variant(), "baseline");
    ck_assert(!tf_kern_available("sse9"));
    ck_assert(!tf_kern_available(NULL));

    /* A name the CPU cannot run (if it lacks one) fails the same way. */
    int nvar;
    const char *const *vars = tf_kern_variants(&nvar);
    for (int v = 0; v < nvar; v++)
        if (!tf_kern_available(vars[v])) {
            ck_assert_int_eq(tf_kern_select(vars[v]), TF_ERR_ARG);
            ck_assert_ptr_nonnull(strstr(tf_error_message(), "cannot run it"));
        }

    setenv("TF_KERNEL", "baseline", 1);
    ck_assert_int_eq(tf_kern_select(best), TF_OK);
    ck_assert_int_eq(tf_kern_init(), TF_OK);
    ck_assert_str_eq(tf_kern_variant(), "baseline");
    setenv("TF_KERNEL", "bogus", 1);
    ck_assert_int_eq(tf_kern_init(), TF_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "TF_KERNEL: kernel variant 'bogus'"));
    ck_assert_ptr_null(strchr(tf_error_message(), '\n'));
    setenv("TF_KERNEL", "auto", 1);
    ck_assert_int_eq(tf_kern_init(), TF_OK);
    ck_assert_str_eq(tf_kern_variant(), best);
    unsetenv("TF_KERNEL");
}
END_TEST

/* The first kernel call without any selection applies a valid TF_KERNEL
 * (nothing is selected yet: each test forks, and this one runs first). */
START_TEST(first_call_applies_environment)
{
    setenv("TF_KERNEL", "baseline", 1);
    ck_assert_str_eq(tf_kern_variant(), "baseline");
    unsetenv("TF_KERNEL");
}
END_TEST

/* Round to nearest even, specials, and the bound. */
START_TEST(bf16_rounding)
{
    static const struct {
        uint32_t in;
        uint16_t out;
    } cases[] = {
        {0x3f800000u, 0x3f80}, /* 1 */
        {0x3f808000u, 0x3f80}, /* 1 + 2^-8: a tie, to the even 1 */
        {0x3f818000u, 0x3f82}, /* 1 + 3 * 2^-8: a tie, to the even 1 + 2^-6 */
        {0x3f808001u, 0x3f81}, /* just above the tie: up */
        {0x3f807fffu, 0x3f80}, /* just below: down */
        {0x80000000u, 0x8000}, /* -0 */
        {0x7f800000u, 0x7f80}, /* inf */
        {0xff800000u, 0xff80}, /* -inf */
        {0x7f7fffffu, 0x7f80}, /* FLT_MAX rounds to inf */
        {0x00000001u, 0x0000}, /* the least subnormal: to 0 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float f;
        memcpy(&f, &cases[i].in, sizeof f);
        ck_assert_msg(tf_bf16_from_f32(f) == cases[i].out, "%08x -> %04x, expected %04x",
                      cases[i].in, tf_bf16_from_f32(f), cases[i].out);
    }
    ck_assert(isnan(tf_bf16_round_f32(NAN)));
    ck_assert(isnan(tf_bf16_round_f32(-NAN)));
    uint32_t u = 0x7f800001u; /* a NaN whose payload is all in the low bits */
    float f;
    memcpy(&f, &u, sizeof f);
    ck_assert(isnan(tf_bf16_to_f32(tf_bf16_from_f32(f))));
    /* The bound over many values, normal ones of every exponent. */
    float *x = filled(1000, 64, 5);
    for (int64_t i = 0; i < 64000; i++) {
        float v = x[i] * ldexpf(1.0f, (int)(i % 200) - 100);
        double d = fabs((double)tf_bf16_round_f32(v) - (double)v);
        ck_assert_msg(d <= TF_BF16_REL_BOUND * fabs((double)v), "%a: off by %g", v, d);
    }
    /* tf_bf16_pack is the scalar rounding, specials included, in its vector
     * body and its tail. */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        memcpy(&x[7 * i + 3], &cases[i].in, sizeof(float));
    memcpy(&x[100], &u, sizeof u);
    x[101] = NAN;
    x[63999] = -NAN;
    uint16_t *h = malloc(64000 * sizeof *h);
    ck_assert_ptr_nonnull(h);
    tf_bf16_pack(x, h, 64000);
    for (int64_t i = 0; i < 64000; i++)
        ck_assert(h[i] == tf_bf16_from_f32(x[i]));
    free(h);
    free(x);
}
END_TEST

/* The bf16 kernels in every variant: bitwise the float32 kernels on the
 * widened B (CSR overwrite and add, CSC, CSC with map), at every K. */
START_TEST(bf16_kernels_are_float32_on_widened_b)
{
    tf_csr a;
    test_matrix(&a);
    int64_t *cptr;
    int32_t *cidx;
    float *cval;
    to_csc(&a, &cptr, &cidx, &cval);
    const int64_t m = a.nrows, n = a.ncols;
    int32_t *map = malloc((size_t)m * sizeof *map);
    ck_assert_ptr_nonnull(map);
    for (int64_t i = 0; i < m; i++)
        map[i] = (int32_t)(m - 1 - i);
    int nvar;
    const char *const *vars = tf_kern_variants(&nvar);
    for (int v = 0; v < nvar; v++) {
        if (!use_variant(vars[v]))
            continue;
        for (int ik = 0; ik < NK; ik++) {
            const int64_t k = KS[ik];
            float *b = filled(n, k, 3), *w = malloc((size_t)(n * k + 1) * sizeof *w);
            uint16_t *h = malloc((size_t)(n * k + 1) * sizeof *h);
            float *x[4], *y[4];
            for (int o = 0; o < 4; o++) {
                x[o] = filled(m, k, 40 + (uint64_t)o);
                y[o] = filled(m, k, 40 + (uint64_t)o);
            }
            ck_assert(w && h);
            tf_bf16_pack(b, h, n * k);
            for (int64_t e = 0; e < n * k; e++)
                w[e] = tf_bf16_to_f32(h[e]);
            tf_kern_csr(0, m, a.rowptr, a.col, a.val, w, k, x[0], 0);
            tf_kern_csr_bf16(0, m, a.rowptr, a.col, a.val, h, k, y[0], 0);
            tf_kern_csr(0, m, a.rowptr, a.col, a.val, w, k, x[1], 1);
            tf_kern_csr_bf16(0, m, a.rowptr, a.col, a.val, h, k, y[1], 1);
            tf_kern_csc(0, n, cptr, cidx, cval, w, k, x[2]);
            tf_kern_csc_bf16(0, n, cptr, cidx, cval, h, k, y[2]);
            tf_kern_csc_map(0, n, cptr, cidx, cval, w, k, map, x[3]);
            tf_kern_csc_map_bf16(0, n, cptr, cidx, cval, h, k, map, y[3]);
            for (int o = 0; o < 4; o++) {
                ck_assert_msg(memcmp(x[o], y[o], (size_t)(m * k) * sizeof(float)) == 0,
                              "variant %s, kernel %d, K = %lld: bf16 is not float32 on the "
                              "widened B",
                              vars[v], o, (long long)k);
                free(x[o]);
                free(y[o]);
            }
            free(b);
            free(w);
            free(h);
        }
    }
    free(map);
    free(cptr);
    free(cidx);
    free(cval);
    tf_csr_free(&a);
}
END_TEST

/* The fused kernel in every variant, at every K: bitwise the CSR kernel
 * over the first part followed by the CSR kernel adding the second (B2 as
 * float32 and as bf16), for rows with both parts, either part alone or
 * neither, in a range that does not start at row 0. */
START_TEST(fused_csr2_is_csr_then_csr_add)
{
    tf_csr a, a2;
    test_matrix(&a);
    tf_test_random_csr(&a2, 97, 43, 300, 16);
    const int64_t m = a.nrows, n = a.ncols, n2 = a2.ncols;
    int nvar;
    const char *const *vars = tf_kern_variants(&nvar);
    for (int v = 0; v < nvar; v++) {
        if (!use_variant(vars[v]))
            continue;
        for (int ik = 0; ik < NK; ik++) {
            const int64_t k = KS[ik];
            float *b = filled(n, k, 3), *b2 = filled(n2, k, 5), *w = filled(n2, k, 6);
            uint16_t *h = malloc((size_t)(n2 * k + 1) * sizeof *h);
            ck_assert_ptr_nonnull(h);
            tf_bf16_pack(b2, h, n2 * k);
            for (int64_t e = 0; e < n2 * k; e++)
                w[e] = tf_bf16_to_f32(h[e]);
            float *x = filled(m, k, 50), *y = filled(m, k, 50);
            float *xb = filled(m, k, 51), *yb = filled(m, k, 51);
            tf_kern_csr(5, m, a.rowptr, a.col, a.val, b, k, x, 0);
            tf_kern_csr(5, m, a2.rowptr, a2.col, a2.val, b2, k, x, 1);
            tf_kern_csr2(5, m, a.rowptr, a.col, a.val, b, a2.rowptr, a2.col, a2.val, b2, k, y, 0);
            tf_kern_csr(5, m, a.rowptr, a.col, a.val, b, k, xb, 0);
            tf_kern_csr(5, m, a2.rowptr, a2.col, a2.val, w, k, xb, 1);
            tf_kern_csr2_bf16(5, m, a.rowptr, a.col, a.val, b, a2.rowptr, a2.col, a2.val, h, k,
                              yb, 0);
            ck_assert_msg(memcmp(x, y, (size_t)(m * k) * sizeof(float)) == 0,
                          "variant %s, K = %lld: fused is not csr then csr add", vars[v],
                          (long long)k);
            ck_assert_msg(memcmp(xb, yb, (size_t)(m * k) * sizeof(float)) == 0,
                          "variant %s, K = %lld: fused bf16 is not csr then csr add on the "
                          "widened B",
                          vars[v], (long long)k);
            free(b);
            free(b2);
            free(w);
            free(h);
            free(x);
            free(y);
            free(xb);
            free(yb);
        }
    }
    tf_csr_free(&a);
    tf_csr_free(&a2);
}
END_TEST

/* C in a 64-byte aligned block, from float `shift` on (0: every vector
 * aligned when k is a multiple of 16; 1: none). */
static float *aligned_c(int64_t m, int64_t k, int shift, float **block)
{
    *block = aligned_alloc(64, (size_t)((m * k + 16) * (int64_t)sizeof(float) + 63) / 64 * 64);
    ck_assert_ptr_nonnull(*block);
    tf_dense_fill(*block, 77, 0, 1, m * k + 16);
    return *block + shift;
}

/* Non-temporal stores (TF_KERN_STREAM) change no value: every variant, every
 * K, C aligned and not, the CSR kernel over float32 and bf16 B and the
 * fused one, bitwise the kernels with ordinary stores; rows outside the
 * range are left alone. */
START_TEST(streaming_stores_change_nothing)
{
    tf_csr a, a2;
    test_matrix(&a);
    tf_test_random_csr(&a2, 97, 43, 300, 16);
    const int64_t m = a.nrows, n = a.ncols, n2 = a2.ncols;
    int nvar;
    const char *const *vars = tf_kern_variants(&nvar);
    for (int v = 0; v < nvar; v++) {
        if (!use_variant(vars[v]))
            continue;
        for (int ik = 0; ik < NK; ik++) {
            const int64_t k = KS[ik];
            float *b = filled(n, k, 3), *b2 = filled(n2, k, 5);
            uint16_t *h = malloc((size_t)(n2 * k + 1) * sizeof *h);
            ck_assert_ptr_nonnull(h);
            tf_bf16_pack(b2, h, n2 * k);
            for (int shift = 0; shift < 2; shift++) {
                float *blk[8], *c[8];
                for (int x = 0; x < 8; x++)
                    c[x] = aligned_c(m, k, shift, &blk[x]);
                tf_kern_csr(5, m, a.rowptr, a.col, a.val, b, k, c[0], 0);
                tf_kern_csr(5, m, a.rowptr, a.col, a.val, b, k, c[1], TF_KERN_STREAM);
                tf_kern_csr_bf16(5, m, a2.rowptr, a2.col, a2.val, h, k, c[2], 0);
                tf_kern_csr_bf16(5, m, a2.rowptr, a2.col, a2.val, h, k, c[3], TF_KERN_STREAM);
                tf_kern_csr2(5, m, a.rowptr, a.col, a.val, b, a2.rowptr, a2.col, a2.val, b2, k,
                             c[4], 0);
                tf_kern_csr2(5, m, a.rowptr, a.col, a.val, b, a2.rowptr, a2.col, a2.val, b2, k,
                             c[5], TF_KERN_STREAM);
                tf_kern_csr2_bf16(5, m, a.rowptr, a.col, a.val, b, a2.rowptr, a2.col, a2.val, h,
                                  k, c[6], 0);
                tf_kern_csr2_bf16(5, m, a.rowptr, a.col, a.val, b, a2.rowptr, a2.col, a2.val, h,
                                  k, c[7], TF_KERN_STREAM);
                for (int x = 0; x < 8; x += 2)
                    ck_assert_msg(memcmp(c[x], c[x + 1], (size_t)(m * k) * sizeof(float)) == 0,
                                  "variant %s, K = %lld, C shifted by %d: kernel %d streamed "
                                  "differs",
                                  vars[v], (long long)k, shift, x / 2);
                for (int x = 0; x < 8; x++)
                    free(blk[x]);
            }
            free(b);
            free(b2);
            free(h);
        }
    }
    tf_csr_free(&a);
    tf_csr_free(&a2);
}
END_TEST

/* TWOFACE_STREAM decides tf_kern_c_mode; auto by size. */
START_TEST(stream_mode_by_size_and_environment)
{
    unsetenv("TWOFACE_STREAM");
    ck_assert_int_eq(tf_kern_c_mode(TF_KERN_STREAM_MIN - 1), 0);
    ck_assert_int_eq(tf_kern_c_mode(TF_KERN_STREAM_MIN), TF_KERN_STREAM);
    setenv("TWOFACE_STREAM", "on", 1);
    ck_assert_int_eq(tf_kern_c_mode(4), TF_KERN_STREAM);
    ck_assert_int_eq(tf_kern_init(), TF_OK);
    setenv("TWOFACE_STREAM", "off", 1);
    ck_assert_int_eq(tf_kern_c_mode(TF_KERN_STREAM_MIN * 4), 0);
    setenv("TWOFACE_STREAM", "sometimes", 1);
    ck_assert_int_eq(tf_kern_init(), TF_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "TWOFACE_STREAM=sometimes"));
    unsetenv("TWOFACE_STREAM");
    ck_assert_int_eq(tf_kern_init(), TF_OK);
}
END_TEST

/* Buffers of rows: on a cache line, zeroed, at least one element, and
 * NULL (not a wrapped size) when the size does not fit. */
START_TEST(row_buffers_on_cache_lines)
{
    static const int64_t shapes[][3] = {{0, 0, 4}, {1, 1, 1}, {3, 7, 2}, {5, 16, 4}, {1000, 33, 4}};
    for (size_t x = 0; x < sizeof shapes / sizeof shapes[0]; x++) {
        const int64_t r = shapes[x][0], k = shapes[x][1];
        const size_t es = (size_t)shapes[x][2];
        unsigned char *p = tf_kern_alloc_rows(r, k, es);
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq((uintptr_t)p % 64, 0);
        size_t n = (size_t)(r > 0 ? r : 1) * (size_t)(k > 0 ? k : 1) * es;
        for (size_t i = 0; i < n; i++)
            ck_assert_uint_eq(p[i], 0);
        free(p);
    }
    float *c = tf_kern_alloc_c(9, 48);
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq((uintptr_t)c % 64, 0);
    free(c);
    ck_assert_ptr_null(tf_kern_alloc_rows(INT64_MAX / 2, 4, 4));
    ck_assert_ptr_null(tf_kern_alloc_rows(4, 4, 0));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kernels");
    TCase *tc = tcase_create("kernels");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, first_call_applies_environment); /* first: also right with CK_FORK=no */
    tcase_add_test(tc, variants_agree_bitwise_and_with_reference);
    tcase_add_test(tc, select_by_name_and_environment);
    tcase_add_test(tc, bf16_rounding);
    tcase_add_test(tc, bf16_kernels_are_float32_on_widened_b);
    tcase_add_test(tc, fused_csr2_is_csr_then_csr_add);
    tcase_add_test(tc, streaming_stores_change_nothing);
    tcase_add_test(tc, stream_mode_by_size_and_environment);
    tcase_add_test(tc, row_buffers_on_cache_lines);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tf_test_run_serial(suite()); }
