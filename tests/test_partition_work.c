/* Unit tests: bands of equal work (--partition work, tf_partition_work) and
 * the weight of a row of C the planner gives them (tf_cost_row_weight). */
#include "tf_test.h"
#include "tf_cost_model.h"
#include "tf_csr.h"
#include "tf_error.h"
#include "tf_partition.h"
#include "tf_reuse.h"
#include "tf_work_bands.h"

#include <stdlib.h>
#include <string.h>

static void assert_bands(const int64_t *off, const int64_t *want, int P)
{
    for (int p = 0; p <= P; p++)
        ck_assert_msg(off[p] == want[p], "off[%d] = %lld, expected %lld", p, (long long)off[p],
                      (long long)want[p]);
}

START_TEST(work_bands_hand_computed)
{
    /* Rows of 5 and 3 nonzeros around six empty rows. By nonzeros the
     * first band is row 0 alone (5 >= 8 / 2) and the second holds seven
     * rows; with a row weighing 2 nonzeros (32/16), W(i) = 16 rowptr[i] +
     * 32 i, total 128 + 256 = 384, target 192: W(3) = 80 + 96 = 176,
     * W(4) = 208, so rows 0-3 (5 + 4 * 2 = 13) and rows 4-7 (3 + 8 = 11). */
    const int64_t len[8] = {5, 0, 0, 0, 0, 0, 0, 3};
    tf_csr a;
    tf_test_csr_of_lengths(&a, 8, len);
    int64_t off[3];
    ck_assert_int_eq(tf_partition_nnz(&a, 2, off), TF_OK);
    assert_bands(off, (const int64_t[]){0, 1, 8}, 2);
    ck_assert_int_eq(tf_partition_work(&a, 2, 32, 16, off), TF_OK);
    assert_bands(off, (const int64_t[]){0, 4, 8}, 2);
    /* A fractional weight: 3/2 per row, W(i) = 2 rowptr[i] + 3 i, total
     * 16 + 24 = 40, target 20: W(3) = 10 + 9 = 19, W(4) = 22. */
    ck_assert_int_eq(tf_partition_work(&a, 2, 3, 2, off), TF_OK);
    assert_bands(off, (const int64_t[]){0, 4, 8}, 2);
    /* A tiny weight, 1/1000: total 8008, target 4004, W(1) = 5001. */
    ck_assert_int_eq(tf_partition_work(&a, 2, 1, 1000, off), TF_OK);
    assert_bands(off, (const int64_t[]){0, 1, 8}, 2);
    tf_csr_free(&a);
}
END_TEST

START_TEST(work_bands_without_row_weight_are_nnz_bands)
{
    for (uint64_t seed = 1; seed <= 5; seed++) {
        tf_csr a;
        tf_test_random_csr(&a, 97, 60, 700, seed);
        for (int P = 1; P <= 9; P++) {
            int64_t x[10], y[10];
            ck_assert_int_eq(tf_partition_nnz(&a, P, x), TF_OK);
            ck_assert_int_eq(tf_partition_work(&a, P, 0, 7, y), TF_OK);
            assert_bands(y, x, P);
        }
        tf_csr_free(&a);
    }
}
END_TEST

START_TEST(work_bands_of_empty_rows_split_rows_evenly)
{
    const int64_t len[10] = {0};
    tf_csr a;
    tf_test_csr_of_lengths(&a, 10, len);
    int64_t off[4];
    /* W(i) = 16 i, total 160: targets 53, 106, 160. */
    ck_assert_int_eq(tf_partition_work(&a, 3, 16, 16, off), TF_OK);
    assert_bands(off, (const int64_t[]){0, 4, 7, 10}, 3);
    /* No weight at all: split by rows. */
    ck_assert_int_eq(tf_partition_work(&a, 3, 0, 16, off), TF_OK);
    assert_bands(off, (const int64_t[]){0, 4, 7, 10}, 3);
    tf_csr_free(&a);
    /* A matrix without rows: every band empty. */
    tf_csr z;
    tf_test_csr_of_lengths(&z, 0, len);
    ck_assert_int_eq(tf_partition_work(&z, 3, 16, 16, off), TF_OK);
    assert_bands(off, (const int64_t[]){0, 0, 0, 0}, 3);
    tf_csr_free(&z);
}
END_TEST

START_TEST(work_bands_one_heavy_row)
{
    /* Row 2 holds 100 of 109 nonzeros; a row weighs 1 nonzero. W(i) / 16 =
     * rowptr[i] + i: 0, 2, 4, 105, ...; total 119, so the targets 29.75,
     * 59.5 and 89.25 all fall on row 3: the heavy row ends band 0, bands 1
     * and 2 are empty, band 3 takes the rest. Rows are never split. */
    const int64_t len[10] = {1, 1, 100, 1, 1, 1, 1, 1, 1, 1};
    tf_csr a;
    tf_test_csr_of_lengths(&a, 10, len);
    int64_t off[5];
    ck_assert_int_eq(tf_partition_work(&a, 4, 16, 16, off), TF_OK);
    assert_bands(off, (const int64_t[]){0, 3, 3, 3, 10}, 4);
    ck_assert_int_eq(tf_partition_owner(off, 4, 2), 0);
    ck_assert_int_eq(tf_partition_owner(off, 4, 3), 3);
    tf_csr_free(&a);
}
END_TEST

START_TEST(work_bands_more_bands_than_rows)
{
    /* Three rows of one nonzero, weight 1: W(i) = 2 i (units of 16), total
     * 6; targets 1.2, 2.4, 3.6, 4.8, 6. */
    const int64_t len[3] = {1, 1, 1};
    tf_csr a;
    tf_test_csr_of_lengths(&a, 3, len);
    int64_t off[6];
    ck_assert_int_eq(tf_partition_work(&a, 5, 16, 16, off), TF_OK);
    assert_bands(off, (const int64_t[]){0, 1, 2, 2, 3, 3}, 5);
    for (int64_t i = 0; i < 3; i++) {
        int q = tf_partition_owner(off, 5, i);
        ck_assert(off[q] <= i && i < off[q + 1]);
    }
    tf_csr_free(&a);
}
END_TEST

START_TEST(work_bands_refuse_bad_weights)
{
    const int64_t len[2] = {1, 2};
    tf_csr a;
    tf_test_csr_of_lengths(&a, 2, len);
    int64_t off[3];
    ck_assert_int_eq(tf_partition_work(&a, 0, 1, 1, off), TF_ERR_ARG);
    ck_assert_int_eq(tf_partition_work(&a, 2, 1, 0, off), TF_ERR_ARG);
    ck_assert_ptr_null(strchr(tf_error_message(), '\n'));
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "denominator"));
    ck_assert_int_eq(tf_partition_work(&a, 2, -1, 16, off), TF_ERR_ARG);
    int64_t den = 16, total = 0;
    ck_assert_int_eq(tf_partition_work_total(INT64_MAX / 8, 1000, 16, &den, &total),
                     TF_ERR_RANGE);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "2^63"));
    ck_assert_int_eq(
        tf_partition_work_total(INT64_MAX / 32, INT64_MAX / 64, 16, &den, &total), TF_OK);
    ck_assert_int_eq(total, INT64_MAX / 32 * 16 + INT64_MAX / 64 * 16);
    tf_csr_free(&a);
}
END_TEST

START_TEST(work_kind_parses_and_names)
{
    int kind = -1;
    ck_assert_int_eq(tf_partition_parse("work", &kind), TF_OK);
    ck_assert_int_eq(kind, TF_PART_WORK);
    ck_assert_str_eq(tf_partition_name(TF_PART_WORK), "work");
    ck_assert_int_eq(tf_partition_parse("Work", &kind), TF_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "'work'"));
    ck_assert_ptr_null(strchr(tf_error_message(), '\n'));
}
END_TEST

START_TEST(row_weight_from_the_coefficients)
{
    tf_coeffs c;
    tf_coeffs_default(&c);
    int64_t num = -1, den = -1;
    /* The built-in set has no gamma_row: the measured ratio. */
    c.gamma_row = 0;
    ck_assert_int_eq(tf_cost_row_weight(&c, &num, &den), 0);
    ck_assert_int_eq(den, TF_ROW_WEIGHT_DEN);
    ck_assert_int_eq(num, TF_ROW_WEIGHT_BUILTIN);
    c.gamma_local = 4e-10;
    c.gamma_row = 1e-9; /* 2.5 nonzeros */
    ck_assert_int_eq(tf_cost_row_weight(&c, &num, &den), 1);
    ck_assert_int_eq(num, 40);
    ck_assert_int_eq(den, 16);
    c.gamma_row = 4e-10 / 3; /* 0.333: rounded to 5/16 */
    tf_cost_row_weight(&c, &num, &den);
    ck_assert_int_eq(num, 5);
    c.gamma_row = 1.0; /* absurd: capped */
    tf_cost_row_weight(&c, &num, &den);
    ck_assert_int_eq(num, (int64_t)TF_ROW_WEIGHT_MAX * TF_ROW_WEIGHT_DEN);
    c.gamma_local = 0; /* no per-nonzero price: the measured ratio */
    tf_cost_row_weight(&c, &num, &den);
    ck_assert_int_eq(num, TF_ROW_WEIGHT_BUILTIN);
}
END_TEST

/* A CSR from explicit rows: row i holds cols[rp[i]..rp[i+1]), ncols wide. */
static void csr_of_rows(tf_csr *a, int64_t n, int64_t ncols, const int64_t *rp, const int32_t *cols)
{
    tf_coo coo;
    ck_assert_int_eq(tf_coo_init(&coo, n, ncols, rp[n] > 0 ? rp[n] : 1), TF_OK);
    for (int64_t i = 0; i < n; i++)
        for (int64_t x = rp[i]; x < rp[i + 1]; x++)
            ck_assert_int_eq(tf_coo_push(&coo, i, cols[x], 1.0), TF_OK);
    ck_assert_int_eq(tf_csr_from_coo(a, &coo), TF_OK);
    tf_coo_free(&coo);
}

START_TEST(row_misses_hand_computed)
{
    /* Reads 0 1 | 0 2 | 3 | 1 0 (rows of 2, 2, 1, 2) with a window of 2:
     * 0 miss, 1 miss | 0 hit (2 back), 2 miss | 3 miss | 1 miss (4 back),
     * 0 miss (4 back). */
    const int64_t rp[5] = {0, 2, 4, 5, 7};
    const int32_t col[7] = {0, 1, 0, 2, 3, 1, 0};
    uint32_t last[4];
    int64_t miss[4];
    tf_reuse_row_misses(rp, col, 4, NULL, 0, 2, last, 4, miss);
    ck_assert_int_eq(miss[0], 2);
    ck_assert_int_eq(miss[1], 1);
    ck_assert_int_eq(miss[2], 1);
    ck_assert_int_eq(miss[3], 2);
    /* A window of 4 reaches back to the first reads of 1 and 0. */
    tf_reuse_row_misses(rp, col, 4, NULL, 0, 4, last, 4, miss);
    ck_assert_int_eq(miss[3], 0);
    /* The last two rows after the first two as a halo: the same counts as
     * the whole stream's. */
    tf_reuse_row_misses(rp + 2, col, 2, col, 4, 2, last, 4, miss);
    ck_assert_int_eq(miss[0], 1);
    ck_assert_int_eq(miss[1], 2);
    tf_reuse_row_misses(rp + 2, col, 2, col, 4, 4, last, 4, miss);
    ck_assert_int_eq(miss[1], 0);
    /* Without a window every nonzero misses. */
    tf_reuse_row_misses(rp, col, 4, NULL, 0, 0, last, 4, miss);
    ck_assert_int_eq(miss[0] + miss[1] + miss[2] + miss[3], 7);
}
END_TEST

START_TEST(work_weights_from_the_coefficients)
{
    tf_coeffs c;
    tf_coeffs_default(&c);
    c.gamma_local = 4e-10;
    c.gamma_row = 6e-10;     /* 1.5 nonzeros: 24 sixteenths */
    c.gamma_cached = 1e-10;  /* a quarter: 4 */
    c.cache_bytes = 1 << 20; /* 2048 rows of 128 floats */
    tf_work_weights w;
    tf_cost_work_weights(&c, 128, &w);
    ck_assert_int_eq(w.row, 24);
    ck_assert_int_eq(w.miss, TF_ROW_WEIGHT_DEN);
    ck_assert_int_eq(w.hit, 4);
    ck_assert_int_eq(w.window, 2048);
    tf_cost_work_weights(&c, 32, &w);
    ck_assert_int_eq(w.window, 8192);
    c.gamma_cached = 1e-14; /* never below a sixteenth */
    tf_cost_work_weights(&c, 128, &w);
    ck_assert_int_eq(w.hit, 1);
    /* No reuse term (files from before it): every nonzero the same. */
    c.gamma_cached = 0;
    tf_cost_work_weights(&c, 128, &w);
    ck_assert_int_eq(w.hit, w.miss);
    ck_assert_int_eq(w.window, 0);
    c.gamma_cached = 1e-10;
    c.cache_bytes = 0;
    tf_cost_work_weights(&c, 128, &w);
    ck_assert_int_eq(w.window, 0);
    /* A cached read no cheaper than a miss: no reuse either. */
    c.cache_bytes = 1 << 20;
    c.gamma_cached = 5e-10;
    tf_cost_work_weights(&c, 128, &w);
    ck_assert_int_eq(w.hit, w.miss);
    ck_assert_int_eq(w.window, 0);
}
END_TEST

START_TEST(reuse_bands_hand_computed)
{
    /* Four rows of 4 nonzeros: the first two read columns 0-3 twice (the
     * second row all hits), the last two read 4-7 then 8-11 (all misses).
     * Window 4, miss 16, hit 4, row 0: weights 64, 16, 64, 64, total 208;
     * two bands, target 104: prefix 0, 64, 80, 144 -> band 0 = rows 0-2.
     * By nonzeros the cut is after row 1. */
    const int64_t rp[5] = {0, 4, 8, 12, 16};
    const int32_t col[16] = {0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    tf_csr a;
    csr_of_rows(&a, 4, 12, rp, col);
    tf_work_weights w = {.row = 0, .miss = 16, .hit = 4, .window = 4};
    int64_t prefix[5], off[3];
    ck_assert_int_eq(tf_work_prefix(&a, 12, NULL, 0, &w, prefix), TF_OK);
    assert_bands(prefix, (const int64_t[]){0, 64, 80, 144, 208}, 4);
    ck_assert_int_eq(tf_work_bands(&a, &w, 2, off), TF_OK);
    assert_bands(off, (const int64_t[]){0, 3, 4}, 2);
    ck_assert_int_eq(tf_partition_nnz(&a, 2, off), TF_OK);
    assert_bands(off, (const int64_t[]){0, 2, 4}, 2);
    /* A row weight of 48 (3 nonzeros): 112, 64, 112, 112, total 400, target
     * 200: prefix 112, 176, 288 -> the cut after row 2 still. */
    w.row = 48;
    ck_assert_int_eq(tf_work_bands(&a, &w, 2, off), TF_OK);
    assert_bands(off, (const int64_t[]){0, 3, 4}, 2);
    /* A window too short to see the repeat: the nnz bands. */
    w.row = 0;
    w.window = 3;
    ck_assert_int_eq(tf_work_bands(&a, &w, 2, off), TF_OK);
    assert_bands(off, (const int64_t[]){0, 2, 4}, 2);
    tf_csr_free(&a);
}
END_TEST

/* Without the reuse term the work bands are tf_partition_work's, empty
 * rows of no weight included, where the prefix's cut could differ. */
START_TEST(work_bands_without_reuse_are_row_and_nnz_bands)
{
    const int64_t len[12] = {0, 5, 0, 0, 1, 7, 0, 2, 0, 0, 3, 0};
    tf_csr a;
    tf_test_csr_of_lengths(&a, 12, len);
    for (int64_t row = 0; row <= 3; row += 3)
        for (int P = 1; P <= 9; P++) {
            tf_work_weights w = {.row = row, .miss = 7, .hit = 7, .window = 0};
            int64_t x[10], y[10];
            ck_assert_int_eq(tf_work_bands(&a, &w, P, x), TF_OK);
            ck_assert_int_eq(tf_partition_work(&a, P, row, 7, y), TF_OK);
            assert_bands(x, y, P);
        }
    tf_csr_free(&a);
}
END_TEST

START_TEST(prefix_bands_of_zero_weight_split_rows)
{
    const int64_t prefix[6] = {0, 0, 0, 0, 0, 0};
    int64_t off[3];
    ck_assert_int_eq(tf_partition_prefix(prefix, 5, 2, off), TF_OK);
    assert_bands(off, (const int64_t[]){0, 3, 5}, 2);
    ck_assert_int_ne(tf_partition_prefix(prefix, 5, 0, off), TF_OK);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("partition_work");
    TCase *tc = tcase_create("partition_work");
    tcase_add_test(tc, work_bands_hand_computed);
    tcase_add_test(tc, work_bands_without_row_weight_are_nnz_bands);
    tcase_add_test(tc, work_bands_of_empty_rows_split_rows_evenly);
    tcase_add_test(tc, work_bands_one_heavy_row);
    tcase_add_test(tc, work_bands_more_bands_than_rows);
    tcase_add_test(tc, work_bands_refuse_bad_weights);
    tcase_add_test(tc, work_kind_parses_and_names);
    tcase_add_test(tc, row_weight_from_the_coefficients);
    tcase_add_test(tc, row_misses_hand_computed);
    tcase_add_test(tc, work_weights_from_the_coefficients);
    tcase_add_test(tc, reuse_bands_hand_computed);
    tcase_add_test(tc, work_bands_without_reuse_are_row_and_nnz_bands);
    tcase_add_test(tc, prefix_bands_of_zero_weight_split_rows);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tf_test_run_serial(make_suite()); }
