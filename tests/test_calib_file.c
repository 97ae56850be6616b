/* Calibration file parser and writer. */
#include "tf_test.h"
#include "tf_calib_file.h"
#include "tf_error.h"

#include <stdio.h>
#include <string.h>

static const char *good =
    "# twoface calibration\n"
    "date = 2026-12-02T12:00:00Z\n"
    "host = node1\n"
    "\n"
    "alpha_coll = 2.0e-05  # s/message\n"
    "beta_coll = 4e-10\n"
    "alpha_fetch=5e-6\n"
    "  beta_fetch   =   2.5e-10   \r\n"
    "gamma_local = 6e-10\n"
    "gamma_coll = 6e-10\n"
    "gamma_fetch = 9e-10 # s/nnz-col\n"
    "alpha_sync = 3e-6 # s/peer\n"
    "threads = 2\n";

/* The good file with the optional keys `extra` appended, parsed into c. */
static void parse_with(const char *extra, tf_calibration *c)
{
    char text[1024];
    snprintf(text, sizeof text, "%s%s", good, extra);
    ck_assert_msg(tf_calib_parse("c.txt", text, c) == TF_OK, "%s", tf_error_message());
}

START_TEST(parses_good_file)
{
    tf_calibration c;
    ck_assert_msg(tf_calib_parse("c.txt", good, &c) == TF_OK, "%s", tf_error_message());
    ck_assert_double_eq(c.coeffs.alpha_coll, 2e-5);
    ck_assert_double_eq(c.coeffs.beta_fetch, 2.5e-10);
    ck_assert_double_eq(c.coeffs.gamma_fetch, 9e-10);
    ck_assert_double_eq(c.coeffs.alpha_sync, 3e-6);
    ck_assert_int_eq(c.coeffs.threads, 2);
    ck_assert_str_eq(c.prov[1], "node1");
    /* beta_coll_max came later: files without it have the model without it */
    ck_assert_double_eq(c.coeffs.beta_coll_max, 0);
    parse_with("beta_coll_max = 8e-11\n", &c);
    ck_assert_double_eq(c.coeffs.beta_coll_max, 8e-11);
    ck_assert_double_eq(c.coeffs.alpha_sync, 3e-6);
    /* So did the cache: without it every nonzero loads its B row. */
    ck_assert_double_eq(c.coeffs.gamma_cached, 0);
    ck_assert_double_eq(c.coeffs.cache_bytes, 0);
    parse_with("gamma_cached = 5e-11\ncache_bytes = 2097152\n", &c);
    ck_assert_double_eq(c.coeffs.gamma_cached, 5e-11);
    ck_assert_double_eq(c.coeffs.cache_bytes, 2097152);
    /* And the cost per row of C. */
    ck_assert_double_eq(c.coeffs.gamma_row, 0);
    parse_with("gamma_row = 4.5e-10\n", &c);
    ck_assert_double_eq(c.coeffs.gamma_row, 4.5e-10);
    /* And the fetch kernel's cached rate and the transfer's overlap. */
    ck_assert_double_eq(c.coeffs.gamma_fetch_cached, 0);
    ck_assert_double_eq(c.coeffs.overlap_fetch, 0);
    parse_with("gamma_fetch_cached = 3e-10\noverlap_fetch = 0.75\n", &c);
    ck_assert_double_eq(c.coeffs.gamma_fetch_cached, 3e-10);
    ck_assert_double_eq(c.coeffs.overlap_fetch, 0.75);
}
END_TEST

static void expect_error(const char *text, const char *needle)
{
    tf_calibration c;
    ck_assert_int_eq(tf_calib_parse("c.txt", text, &c), TF_ERR_PARSE);
    ck_assert_msg(strstr(tf_error_message(), needle) != NULL, "'%s' lacks '%s'",
                  tf_error_message(), needle);
}

START_TEST(rejects_bad_files)
{
    char buf[2048];
    snprintf(buf, sizeof buf, "%sbogus = 3\n", good);
    expect_error(buf, "c.txt:14: unknown key 'bogus'");
    expect_error("alpha_coll = fast\n", "c.txt:1: 'alpha_coll' needs a finite non-negative number");
    expect_error("alpha_coll = 1e999\n", "needs a finite");
    expect_error("alpha_coll = -1\n", "non-negative");
    expect_error("alpha_coll 3\n", "c.txt:1: expected 'name = value'");
    snprintf(buf, sizeof buf, "%s", good);
    char *t = strstr(buf, "threads = 2\n");
    *t = '\0';
    expect_error(buf, "missing key 'threads'");
    snprintf(buf, sizeof buf, "%sthreads = 1.5\n", "alpha_coll = 1\n");
    expect_error(buf, "whole number");
    snprintf(buf, sizeof buf, "%salpha_coll = 1\n", good);
    expect_error(buf, "given twice");
    snprintf(buf, sizeof buf, "%soverlap_fetch = 1.5\n", good);
    expect_error(buf, "c.txt:14: 'overlap_fetch' is a share, 0..1, found '1.5'");
    /* Finite but no machine: the model's predictions became inf and its
     * ratios NaN ("predicted time -nan ... balanced"), and a huge cache
     * overflowed the reuse window's integer conversion. */
    expect_error("beta_coll = 1e308\n", "c.txt:1: 'beta_coll' is seconds per byte, at most 1, "
                 "found '1e308'");
    expect_error("gamma_row = 2\n", "'gamma_row' is seconds per row-col, at most 1");
    snprintf(buf, sizeof buf, "%scache_bytes = 1e308\n", good);
    expect_error(buf, "c.txt:14: 'cache_bytes' at most 2^50, found '1e308'");
    tf_calibration c;
    parse_with("cache_bytes = 1125899906842624\ngamma_row = 1\n", &c);
    ck_assert_double_eq(c.coeffs.gamma_row, 1.0);
}
END_TEST

START_TEST(write_then_read_round_trips)
{
    tf_calibration c, d;
    ck_assert_int_eq(tf_calib_parse("c.txt", good, &c), TF_OK);
    const char *path = tf_test_tmpfile(0, ".calib", "", 0);
    ck_assert_int_eq(tf_calib_write(path, &c), TF_OK);
    ck_assert_msg(tf_calib_read(path, &d) == TF_OK, "%s", tf_error_message());
    for (int i = 0; i < TF_NCOEFFS; i++)
        ck_assert_double_eq_tol(tf_coeffs_get(&c.coeffs, i), tf_coeffs_get(&d.coeffs, i),
                                1e-6 * tf_coeffs_get(&c.coeffs, i) + 1e-300);
    ck_assert_str_eq(d.prov[0], c.prov[0]);
    remove(path);
    ck_assert_int_eq(tf_calib_read("/nonexistent/x.calib", &d), TF_ERR_IO);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "/nonexistent/x.calib"));
    /* A directory opens but does not read: the reason, not "read error". */
    ck_assert_int_eq(tf_calib_read("/", &d), TF_ERR_IO);
    ck_assert_str_eq(tf_error_message(), "/: cannot read: Is a directory");
    const char bin[] = "alpha_coll = 1\n\0\x01\x02";
    path = tf_test_tmpfile(1, ".calib", bin, sizeof bin);
    ck_assert_int_eq(tf_calib_read(path, &d), TF_ERR_PARSE);
    remove(path);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("calib_file");
    TCase *tc = tcase_create("calib_file");
    tcase_add_test(tc, parses_good_file);
    tcase_add_test(tc, rejects_bad_files);
    tcase_add_test(tc, write_then_read_round_trips);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tf_test_run_serial(suite()); }
