/* --partition auto: the choice between bands of equal nonzeros and bands of
 * equal work (planner/tf_partition_auto.h), by hand-computed weights. */
#include "tf_test.h"
#include "tf_coeffs.h"
#include "tf_csr.h"
#include "tf_error.h"
#include "tf_partition.h"
#include "tf_partition_auto.h"
#include "tf_planner.h"

#include <string.h>

/* Coefficients without the reuse term and a row of C worth 2 nonzeros:
 * every nonzero weighs 16, every row 32 (tf_cost_work_weights). */
static void coeffs_rows_2(tf_coeffs *c)
{
    tf_coeffs_default(c);
    c->gamma_cached = 0;
    c->cache_bytes = 0;
    c->gamma_row = 2 * c->gamma_local;
}

START_TEST(auto_kind_parses_and_names)
{
    int kind = -1;
    ck_assert_int_eq(tf_partition_parse("auto", &kind), TF_OK);
    ck_assert_int_eq(kind, TF_PART_AUTO);
    ck_assert_str_eq(tf_partition_name(TF_PART_AUTO), "auto");
    ck_assert_int_eq(tf_partition_parse("automatic", &kind), TF_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "'auto'"));
}
END_TEST

START_TEST(auto_pick_at_the_threshold)
{
    /* Heaviest nnz band 6, heaviest work band 5: exactly 6/5, not above. */
    double r = 0;
    ck_assert_int_eq(tf_partition_auto_pick((const int64_t[]){0, 6, 10},
                                            (const int64_t[]){0, 5, 10}, 2, &r),
                     TF_PART_NNZ);
    ck_assert(r > 1.199 && r < 1.201);
    /* 7 against 5: work. The heaviest band need not be the first. */
    ck_assert_int_eq(tf_partition_auto_pick((const int64_t[]){0, 3, 10, 12},
                                            (const int64_t[]){0, 4, 9, 12}, 3, &r),
                     TF_PART_WORK);
    ck_assert(r > 1.399 && r < 1.401);
    /* No weight at all: nnz, ratio 1. */
    ck_assert_int_eq(tf_partition_auto_pick((const int64_t[]){0, 0, 0},
                                            (const int64_t[]){0, 0, 0}, 2, &r),
                     TF_PART_NNZ);
    ck_assert(r == 1.0);
    ck_assert_int_eq(tf_partition_auto_pick((const int64_t[]){0, 9}, (const int64_t[]){0, 9},
                                            1, NULL),
                     TF_PART_NNZ);
}
END_TEST

START_TEST(auto_chooses_work_where_rows_pile_up)
{
    /* Rows 0-9 hold 5 nonzeros each, row 10 holds 50, rows 11-99 none.
     * By nonzeros (50 each side) band 0 is rows 0-9, 10 x 32 + 50 x 16 =
     * 1120, and band 1 rows 10-99, 90 x 32 + 50 x 16 = 3680. By work, the
     * total 4800 is cut at 2400: after row 10 the prefix is 1952, 14 empty
     * rows more reach 2400, so band 0 is rows 0-24. 3680 / 2400 = 1.53. */
    int64_t len[100] = {0};
    for (int i = 0; i < 10; i++)
        len[i] = 5;
    len[10] = 50;
    tf_csr a;
    tf_test_csr_of_lengths(&a, 100, len);
    tf_coeffs c;
    coeffs_rows_2(&c);
    int kind = -1;
    double r = 0;
    int64_t off[3];
    ck_assert_int_eq(tf_partition_auto(&a, &c, 32, 2, off, &kind, &r), TF_OK);
    ck_assert_int_eq(kind, TF_PART_WORK);
    ck_assert_int_eq(off[1], 25);
    ck_assert(r > 3680.0 / 2400 - 1e-9 && r < 3680.0 / 2400 + 1e-9);
    /* The planner records the kind it chose and cuts its bands. */
    tf_plan_options o;
    tf_plan_options_default(&o);
    o.nranks = 2;
    o.k = 32;
    o.coeffs = c;
    o.partition = TF_PART_AUTO;
    o.auto_ratio = &r;
    r = 0;
    tf_plan plan;
    ck_assert_int_eq(tf_plan_build(&a, &o, &plan), TF_OK);
    ck_assert_int_eq(plan.partition, TF_PART_WORK);
    ck_assert_int_eq(plan.row_off[1], 25);
    ck_assert(r > 1.5);
    /* Fixed bands name the partition that made them: auto is refused. */
    o.row_off = plan.row_off;
    o.brow_off = plan.brow_off;
    tf_plan again;
    ck_assert_int_eq(tf_plan_build(&a, &o, &again), TF_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "not auto"));
    tf_plan_free(&plan);
    tf_csr_free(&a);
}
END_TEST

START_TEST(auto_keeps_nnz_where_rows_are_even)
{
    /* One nonzero per row: both cuts are the same, ratio 1. */
    int64_t len[30];
    for (int i = 0; i < 30; i++)
        len[i] = 1;
    tf_csr a;
    tf_test_csr_of_lengths(&a, 30, len);
    tf_coeffs c;
    coeffs_rows_2(&c);
    int kind = -1;
    double r = 0;
    int64_t off[5];
    ck_assert_int_eq(tf_partition_auto(&a, &c, 32, 4, off, &kind, &r), TF_OK);
    ck_assert_int_eq(kind, TF_PART_NNZ);
    ck_assert(r == 1.0);
    /* The built-in coefficients (with the reuse term) agree. */
    tf_coeffs_default(&c);
    ck_assert_int_eq(tf_partition_auto(&a, &c, 128, 4, off, &kind, NULL), TF_OK);
    ck_assert_int_eq(kind, TF_PART_NNZ);
    tf_plan_options o;
    tf_plan_options_default(&o);
    o.nranks = 4;
    o.partition = TF_PART_AUTO;
    tf_plan plan;
    ck_assert_int_eq(tf_plan_build(&a, &o, &plan), TF_OK);
    ck_assert_int_eq(plan.partition, TF_PART_NNZ);
    tf_plan_free(&plan);
    tf_csr_free(&a);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("partition_auto");
    TCase *tc = tcase_create("partition_auto");
    tcase_add_test(tc, auto_kind_parses_and_names);
    tcase_add_test(tc, auto_pick_at_the_threshold);
    tcase_add_test(tc, auto_chooses_work_where_rows_pile_up);
    tcase_add_test(tc, auto_keeps_nnz_where_rows_are_even);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tf_test_run_serial(make_suite()); }
