/* The collective's send pack (executor/tf_pack.h): runs cut where the
 * window's bf16 export begins and ends, and the fused pack-round, which
 * must give exactly the bits of the window's export (tf_bf16_pack, specials
 * included) whether a segment is rounded from B or copied from the window. */
#include "tf_test.h"

#include "tf_bf16.h"
#include "tf_pack.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Cuts runs by ranges and checks the segments against a row-by-row answer:
 * in pack order, every row once, each segment wholly in or out, and as few
 * segments as that allows (a segment ends only at a run's end or at a
 * range boundary). */
static void check_split(const int64_t *first, const int64_t *len, int64_t n, const int64_t *xf,
                        const int64_t *xr, int64_t nx)
{
    int64_t m = tf_pack_split(first, len, n, xf, xr, nx, NULL, NULL, NULL);
    int64_t *sf = malloc((size_t)(m + 1) * sizeof *sf), *sl = malloc((size_t)(m + 1) * sizeof *sl);
    char *from = malloc((size_t)m + 1);
    ck_assert(sf && sl && from);
    ck_assert_int_eq(tf_pack_split(first, len, n, xf, xr, nx, sf, sl, from), m);
    int64_t s = 0, at = 0; /* segment, row within it */
    int64_t cuts = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t row = first[i]; row < first[i] + len[i]; row++) {
            int in = 0;
            for (int64_t x = 0; x < nx; x++)
                in |= row >= xf[x] && row < xf[x] + xr[x];
            ck_assert_int_lt(s, m);
            ck_assert_int_gt(sl[s], 0);
            ck_assert_int_eq(sf[s] + at, row);
            ck_assert_int_eq(from[s], in);
            if (++at == sl[s]) {
                s++;
                at = 0;
            }
            if (row + 1 < first[i] + len[i]) {
                int next = 0;
                for (int64_t x = 0; x < nx; x++)
                    next |= row + 1 >= xf[x] && row + 1 < xf[x] + xr[x];
                cuts += next != in;
            }
        }
    ck_assert_int_eq(s, m);
    int64_t runs = 0;
    for (int64_t i = 0; i < n; i++)
        runs += len[i] > 0;
    ck_assert_int_eq(m, runs + cuts);
    free(sf);
    free(sl);
    free(from);
}

START_TEST(split_cuts_runs_at_the_export)
{
    /* Runs before, inside, across, around and after the ranges, in no
     * order (destinations revisit rows), one of them empty. */
    static const int64_t first[] = {0, 12, 3, 30, 8, 40, 21, 5, 0, 50};
    static const int64_t len[] = {2, 3, 6, 4, 15, 5, 0, 1, 60, 3};
    static const int64_t xf[] = {4, 10, 20, 33};
    static const int64_t xr[] = {3, 6, 2, 1};
    check_split(first, len, 10, xf, xr, 4);
    check_split(first, len, 10, xf, xr, 0); /* nothing exported: one segment a run */
    static const int64_t all_f[] = {0};
    static const int64_t all_r[] = {100};
    check_split(first, len, 10, all_f, all_r, 1); /* everything exported */
    ck_assert_int_eq(tf_pack_split(first, len, 0, xf, xr, 4, NULL, NULL, NULL), 0);
    /* Random runs against random disjoint ranges. */
    uint64_t x = 88172645463325252ull;
    for (int trial = 0; trial < 200; trial++) {
        int64_t f[12], l[12], rf[6], rr[6];
        int n = 1 + trial % 12, nx = trial % 6;
        for (int i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            f[i] = (int64_t)(x % 64);
            l[i] = (int64_t)((x >> 20) % 20);
        }
        int64_t at = 0;
        for (int i = 0; i < nx; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            rf[i] = at + 1 + (int64_t)(x % 8); /* a gap: merged ranges never touch */
            rr[i] = 1 + (int64_t)((x >> 20) % 9);
            at = rf[i] + rr[i];
        }
        check_split(f, l, n, rf, rr, nx);
    }
}
END_TEST

/* Float32 rows whose values include every special case of the rounding. */
static float *rows_with_specials(int64_t nrows, int64_t k)
{
    static const uint32_t specials[] = {
        0x3f808000u, 0x3f818000u, 0x3f808001u, 0x3f807fffu, 0x80000000u, 0x7f800000u,
        0xff800000u, 0x7f7fffffu, 0x00000001u, 0x7f800001u, 0x7fc00000u, 0xffc00000u,
        0xff800001u, 0x807fffffu, 0x00008000u, 0x7f7f8000u};
    float *b = malloc((size_t)(nrows * k) * sizeof *b);
    ck_assert_ptr_nonnull(b);
    for (int64_t i = 0; i < nrows * k; i++) {
        if (i % 5 == 2) {
            memcpy(&b[i], &specials[(i / 5) % (sizeof specials / sizeof specials[0])],
                   sizeof(float));
        } else {
            b[i] = (float)sin((double)i * 0.37) * ldexpf(1.0f, (int)(i % 60) - 30);
        }
    }
    return b;
}

/* bf16: segments rounded from B and segments copied from the window give
 * the window's bits, at K = 1 (scalar tails only), 8, 13 and 64. */
START_TEST(fused_pack_round_is_the_window_export)
{
    static const int64_t ks[] = {1, 8, 13, 64};
    const int64_t nrows = 40;
    static const int64_t first[] = {3, 0, 17, 39, 5, 20, 3};
    static const int64_t len[] = {4, 2, 9, 1, 12, 6, 4};
    static const char from[] = {0, 1, 0, 1, 1, 0, 1};
    const int64_t n = 7;
    int64_t rows = 0;
    for (int64_t s = 0; s < n; s++)
        rows += len[s];
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
        const int64_t k = ks[ki];
        float *b = rows_with_specials(nrows, k);
        uint16_t *win = malloc((size_t)(nrows * k) * sizeof *win);
        uint16_t *pack = malloc((size_t)(rows * k + 1) * sizeof *pack);
        uint16_t *pack2 = malloc((size_t)(rows * k + 1) * sizeof *pack2);
        ck_assert(win && pack && pack2);
        tf_bf16_pack(b, win, nrows * k); /* the window's export: every row */
        pack[rows * k] = pack2[rows * k] = 0xabcd; /* nothing written past the end */
        tf_pack_rows(1, sizeof(uint16_t), k, win, b, n, first, len, from, pack);
        tf_pack_rows(1, sizeof(uint16_t), k, win, b, n, first, len, NULL, pack2);
        int64_t at = 0;
        for (int64_t s = 0; s < n; s++)
            for (int64_t x = 0; x < len[s] * k; x++, at++) {
                uint16_t want = tf_bf16_from_f32(b[first[s] * k + x]);
                ck_assert_msg(pack[at] == want && pack2[at] == want,
                              "K=%lld segment %lld element %lld: %04x, %04x, expected %04x",
                              (long long)k, (long long)s, (long long)x, pack[at], pack2[at],
                              want);
            }
        ck_assert(pack[rows * k] == 0xabcd && pack2[rows * k] == 0xabcd);
        /* A segment marked "from the window" is copied, not rounded: a window
         * holding other bits shows through. */
        memset(win, 0x5a, (size_t)(nrows * k) * sizeof *win);
        tf_pack_rows(1, sizeof(uint16_t), k, win, b, n, first, len, from, pack);
        at = 0;
        for (int64_t s = 0; s < n; s++)
            for (int64_t x = 0; x < len[s] * k; x++, at++)
                ck_assert(from[s] ? pack[at] == 0x5a5a
                                  : pack[at] == tf_bf16_from_f32(b[first[s] * k + x]));
        free(b);
        free(win);
        free(pack);
        free(pack2);
    }
}
END_TEST

/* float32: a plain copy of the window's rows; `from` and b are ignored. */
START_TEST(f32_pack_copies_the_window)
{
    const int64_t k = 5, nrows = 12;
    float *win = rows_with_specials(nrows, k);
    static const int64_t first[] = {7, 0, 7};
    static const int64_t len[] = {5, 3, 1};
    float out[9 * 5];
    tf_pack_rows(0, sizeof(float), k, win, NULL, 3, first, len, NULL, out);
    ck_assert(memcmp(out, win + 7 * k, 5 * k * sizeof(float)) == 0);
    ck_assert(memcmp(out + 5 * k, win, 3 * k * sizeof(float)) == 0);
    ck_assert(memcmp(out + 8 * k, win + 7 * k, k * sizeof(float)) == 0);
    free(win);
}
END_TEST

/* Every vector set this CPU runs gives tf_bf16_from_f32's bits, specials
 * included, in its vector body and its tail, at any alignment. */
START_TEST(every_vector_set_rounds_alike)
{
    static const char *const isa[] = {"baseline", "avx2", "avx512", "avx512bf16"};
    const int64_t n = 4099;
    float *b = rows_with_specials(n + 1, 1);
    uint16_t *h = malloc((size_t)(n + 1) * sizeof *h);
    ck_assert_ptr_nonnull(h);
    int ran = 0;
    for (size_t v = 0; v < sizeof isa / sizeof isa[0]; v++)
        for (int64_t off = 0; off < 2; off++)
            for (int64_t len = n - 40; len <= n - off; len += 13) {
                memset(h, 0, (size_t)(n + 1) * sizeof *h);
                if (!tf_bf16_pack_isa(isa[v], b + off, h + off, len))
                    continue;
                ran++;
                for (int64_t i = 0; i < len; i++)
                    ck_assert_msg(h[off + i] == tf_bf16_from_f32(b[off + i]),
                                  "%s, value %lld: %04x, expected %04x", isa[v],
                                  (long long)(off + i), h[off + i],
                                  tf_bf16_from_f32(b[off + i]));
                ck_assert(h[off + len] == 0); /* nothing past the end */
            }
    ck_assert_int_gt(ran, 0); /* the baseline runs everywhere */
    ck_assert(!tf_bf16_pack_isa("sse9", b, h, n));
    free(b);
    free(h);
}
END_TEST

/* Every sign and exponent, each upper half with the lower halves where
 * rounding turns (below, at and above the tie, odd and even upper halves
 * alike): the CPU's own conversion, whose subnormal blocks take the
 * arithmetic path, gives the scalar rounding's bits like every other set. */
START_TEST(every_upper_half_rounds_alike)
{
    static const char *const isa[] = {"baseline", "avx2", "avx512", "avx512bf16"};
    static const uint32_t low[] = {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu};
    const int64_t nl = sizeof low / sizeof low[0], n = 65536 * nl;
    float *b = malloc((size_t)n * sizeof *b);
    uint16_t *h = malloc((size_t)n * sizeof *h);
    ck_assert(b && h);
    /* Low halves innermost, so a 16-value block mixes subnormals with zeros
     * and normals at the subnormal range's two ends. */
    for (int64_t i = 0; i < n; i++) {
        uint32_t u = ((uint32_t)(i / nl) << 16) | low[i % nl];
        memcpy(&b[i], &u, sizeof u);
    }
    for (size_t v = 0; v < sizeof isa / sizeof isa[0]; v++) {
        if (!tf_bf16_pack_isa(isa[v], b, h, n))
            continue;
        for (int64_t i = 0; i < n; i++)
            ck_assert_msg(h[i] == tf_bf16_from_f32(b[i]), "%s, bits %08x: %04x, expected %04x",
                          isa[v], (unsigned)(((uint32_t)(i / nl) << 16) | low[i % nl]), h[i],
                          tf_bf16_from_f32(b[i]));
    }
    free(b);
    free(h);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pack");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, split_cuts_runs_at_the_export);
    tcase_add_test(tc, fused_pack_round_is_the_window_export);
    tcase_add_test(tc, f32_pack_copies_the_window);
    tcase_add_test(tc, every_vector_set_rounds_alike);
    tcase_add_test(tc, every_upper_half_rounds_alike);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tf_test_run_serial(suite()); }
