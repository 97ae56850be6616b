/* The calibration's least-squares fits (calibrate/tf_fit.c) and the serial
 * helpers of the measurements (medians, synthetic sparse parts). */
#include "tf_test.h"
#include "tf_calibrate.h"
#include "tf_error.h"
#include "tf_fit.h"
#include "tf_insitu.h"
#include "tf_cost_model.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Deterministic noise in [-amp, amp]: tests must not depend on rand(). */
static double noise(uint64_t *s, double amp)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return amp * (2.0 * (double)(*s >> 11) / 9007199254740992.0 - 1.0);
}

/* A collective-like data set: messages 2..12, bytes 1 KB..12 MB. */
static int make_alpha_beta(double alpha, double beta, double amp, double *x, double *y)
{
    uint64_t s = 42;
    int n = 0;
    for (int d = 1; d <= 6; d++)
        for (double bytes = 1024; bytes <= 2e6; bytes *= 4) {
            x[2 * n] = 2.0 * d;
            x[2 * n + 1] = 2.0 * d * bytes;
            y[n] = (alpha * x[2 * n] + beta * x[2 * n + 1]) * (1.0 + noise(&s, amp));
            n++;
        }
    return n;
}

START_TEST(recovers_known_coefficients_with_noise)
{
    double x[2 * 64], y[64];
    int n = make_alpha_beta(20e-6, 0.4e-9, 0.03, x, y);
    tf_fit f;
    ck_assert_msg(tf_fit_linear(n, 2, x, y, 1, &f) == TF_OK, "%s", tf_error_message());
    ck_assert_int_eq(f.n, n);
    ck_assert_int_eq(f.np, 2);
    ck_assert_double_eq_tol(f.coef[0], 20e-6, 0.05 * 20e-6);
    ck_assert_double_eq_tol(f.coef[1], 0.4e-9, 0.05 * 0.4e-9);
    ck_assert(!f.clamped[0] && !f.clamped[1]);
    /* 3% uniform noise has an RMS of 1.7%: the residual reports about that. */
    ck_assert(f.rms_rel > 0.005 && f.rms_rel < 0.03);
    ck_assert(f.max_rel <= 0.035);

    /* Noise-free: exact to rounding, both relative and absolute. */
    n = make_alpha_beta(5e-6, 0.25e-9, 0.0, x, y);
    ck_assert_int_eq(tf_fit_linear(n, 2, x, y, 1, &f), TF_OK);
    ck_assert_double_eq_tol(f.coef[0], 5e-6, 1e-9 * 5e-6);
    ck_assert_double_eq_tol(f.coef[1], 0.25e-9, 1e-9 * 0.25e-9);
    ck_assert(f.rms_rel < 1e-9);
    ck_assert_int_eq(tf_fit_linear(n, 2, x, y, 0, &f), TF_OK);
    ck_assert_double_eq_tol(f.coef[0], 5e-6, 1e-6 * 5e-6);
    ck_assert_double_eq_tol(f.coef[1], 0.25e-9, 1e-6 * 0.25e-9);
}
END_TEST

START_TEST(one_and_three_parameters)
{
    /* gamma through the origin: t = gamma * nnz * K. */
    double x[40], y[40];
    uint64_t s = 7;
    for (int i = 0; i < 10; i++) {
        x[i] = 1e6 * (i + 1);
        y[i] = 0.9e-9 * x[i] * (1.0 + noise(&s, 0.02));
    }
    tf_fit f;
    ck_assert_int_eq(tf_fit_linear(10, 1, x, y, 1, &f), TF_OK);
    ck_assert_double_eq_tol(f.coef[0], 0.9e-9, 0.02 * 0.9e-9);

    /* Three parameters with very different scales. */
    double c[3] = {3e-3, 2e-6, 1e-10};
    int n = 0;
    for (int a = 1; a <= 3; a++)
        for (int b = 1; b <= 1000; b *= 10)
            for (int d = 1; d <= 1000000; d *= 100) {
                x[3 * n] = a;
                x[3 * n + 1] = b;
                x[3 * n + 2] = (double)d * a;
                y[n] = c[0] * a + c[1] * b + c[2] * x[3 * n + 2];
                n++;
                if (n == 13)
                    goto full;
            }
full:
    ck_assert_int_eq(tf_fit_linear(n, 3, x, y, 1, &f), TF_OK);
    for (int j = 0; j < 3; j++)
        ck_assert_double_eq_tol(f.coef[j], c[j], 1e-7 * c[j]);
}
END_TEST

/* The kernel sweep's joint fit separates a cost per row of C from the cost
 * per nonzero: points shaped like the sweep's (bands of 8 and 3 nonzeros
 * per row, short rows of 2 and 1 at the same nonzeros, an in-cache band)
 * timed by a known model with 2% noise give the model back. */
START_TEST(kernel_fit_recovers_a_cost_per_row)
{
    const double g_local = 0.5e-9, g_coll = 0.7e-9, g_cached = 0.15e-9, g_row = 1.2e-9;
    const int k = 128;
    double x[4 * 32], y[32];
    uint64_t s = 11;
    int n = 0;
    for (int coll = 0; coll <= 1; coll++) {
        const int64_t deg = coll ? 3 : 8, shortdeg = coll ? 1 : 2;
        for (int64_t m = 1024; m <= 32768; m *= 2) {
            for (int shape = 0; shape < 2; shape++) {
                int64_t nnz = m * deg, rows = shape ? nnz / shortdeg : m;
                int64_t miss = nnz / (m < 4096 ? 4 : 2); /* small bands stay in cache */
                double *r = x + 4 * n;
                ck_assert_int_eq(tf_cal_kernel_nparams(1), 4);
                tf_cal_kernel_xrow(1, coll, nnz, miss, rows, k, r);
                double t = ((coll ? g_coll : g_local) * (double)miss +
                            g_cached * (double)(nnz - miss) + g_row * (double)rows) * k;
                y[n++] = t * (1.0 + noise(&s, 0.02));
            }
        }
        /* The in-cache band: no misses. */
        tf_cal_kernel_xrow(1, coll, 16384 * deg, 0, 16384, k, x + 4 * n);
        y[n++] = (g_cached * 16384.0 * (double)deg + g_row * 16384.0) * k * (1.0 + noise(&s, 0.02));
    }
    tf_fit f;
    ck_assert_msg(tf_fit_linear(n, 4, x, y, 1, &f) == TF_OK, "%s", tf_error_message());
    const double want[4] = {g_local, g_coll, g_cached, g_row};
    for (int j = 0; j < 4; j++)
        ck_assert_msg(fabs(f.coef[j] - want[j]) < 0.1 * want[j], "coefficient %d: %g, want %g", j,
                      f.coef[j], want[j]);

    /* Without a cache the row term is the last of three. */
    double r3[3];
    ck_assert_int_eq(tf_cal_kernel_nparams(0), 3);
    tf_cal_kernel_xrow(0, 1, 30, 30, 10, 2, r3);
    ck_assert_double_eq(r3[0], 0);
    ck_assert_double_eq(r3[1], 60);
    ck_assert_double_eq(r3[2], 20);
}
END_TEST

START_TEST(residuals_are_relative_rms_and_max)
{
    /* Predictions 1.1, 1.8 and 3 for observations 1, 2, 3: relative errors
     * +10%, -10%, 0. */
    double x[3] = {1.1, 1.8, 3.0}, y[3] = {1.0, 2.0, 3.0}, c = 1.0, rms, mx;
    ck_assert_int_eq(tf_fit_residuals(3, 1, x, y, &c, &rms, &mx), TF_OK);
    ck_assert_double_eq_tol(rms, sqrt(0.02 / 3.0), 1e-12);
    ck_assert_double_eq_tol(mx, 0.1, 1e-12);
    double ybad[3] = {1.0, 0.0, 3.0};
    ck_assert_int_eq(tf_fit_residuals(3, 1, x, ybad, &c, &rms, &mx), TF_ERR_ARG);
    ck_assert_int_eq(tf_fit_residuals(0, 1, x, y, &c, &rms, &mx), TF_ERR_ARG);
    ck_assert_double_eq(tf_fit_eval(1, &c, x + 2), 3.0);
}
END_TEST

START_TEST(negative_coefficient_is_clamped)
{
    /* Times that fall with the message count: the unconstrained fit gives a
     * negative alpha; the clamped fit holds it at 0 and refits beta. */
    double x[2 * 8], y[8];
    for (int i = 0; i < 8; i++) {
        x[2 * i] = 1.0 + i;
        x[2 * i + 1] = 1e6 * (8 - i);
        y[i] = 1e-9 * x[2 * i + 1] - 1e-5 * x[2 * i];
    }
    tf_fit f;
    ck_assert_int_eq(tf_fit_linear(8, 2, x, y, 1, &f), TF_OK);
    ck_assert(f.raw[0] < 0.0);
    ck_assert(f.clamped[0]);
    ck_assert(!f.clamped[1]);
    ck_assert_double_eq(f.coef[0], 0.0);
    ck_assert(f.coef[1] > 0.0);
    ck_assert(f.rms_rel > 0.0);
}
END_TEST

START_TEST(degenerate_input_is_an_error)
{
    double x[2 * 8], y[8];
    tf_fit f;
    /* Too few points. */
    x[0] = 1;
    x[1] = 2;
    y[0] = 1;
    ck_assert_int_eq(tf_fit_linear(1, 2, x, y, 1, &f), TF_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "too few"));
    ck_assert_int_eq(tf_fit_linear(0, 1, x, y, 1, &f), TF_ERR_ARG);
    /* Singular: the second column is a multiple of the first (every
     * pattern had the same bytes per message). */
    for (int i = 0; i < 8; i++) {
        x[2 * i] = 1.0 + i;
        x[2 * i + 1] = 4096.0 * (1.0 + i);
        y[i] = 1e-5 * (1.0 + i);
    }
    ck_assert_int_eq(tf_fit_linear(8, 2, x, y, 1, &f), TF_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "singular"));
    ck_assert_double_eq(f.coef[0], 0.0);
    /* A parameter that is zero everywhere. */
    for (int i = 0; i < 8; i++)
        x[2 * i + 1] = 0.0;
    ck_assert_int_eq(tf_fit_linear(8, 2, x, y, 1, &f), TF_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "not determined"));
    /* Relative fit of a zero time; non-finite data; bad parameter count. */
    for (int i = 0; i < 8; i++)
        x[2 * i + 1] = 3.0 * i * i;
    y[3] = 0.0;
    ck_assert_int_eq(tf_fit_linear(8, 2, x, y, 1, &f), TF_ERR_ARG);
    y[3] = NAN;
    ck_assert_int_eq(tf_fit_linear(8, 2, x, y, 0, &f), TF_ERR_ARG);
    y[3] = 1e-5;
    x[5] = INFINITY;
    ck_assert_int_eq(tf_fit_linear(8, 2, x, y, 0, &f), TF_ERR_ARG);
    ck_assert_int_eq(tf_fit_linear(8, 0, x, y, 0, &f), TF_ERR_ARG);
    ck_assert_int_eq(tf_fit_linear(8, TF_FIT_MAXP + 1, x, y, 0, &f), TF_ERR_ARG);
}
END_TEST

START_TEST(median_of_samples)
{
    double a[5] = {5, 1, 4, 2, 3}, b[4] = {10, 1, 3, 2};
    ck_assert_double_eq(tf_median(a, 5), 3.0);
    ck_assert_double_eq(tf_median(b, 4), 2.5);
    ck_assert_double_eq(tf_median(b, 0), 0.0);
    ck_assert_double_eq(a[0], 1.0); /* sorted in place: a[0] is the minimum */
}
END_TEST

START_TEST(synthetic_parts_are_well_formed)
{
    tf_cal_sparse s, t;
    ck_assert_int_eq(tf_cal_synth(&s, 2000, 1000, 8.0, 0.5, 64, 3), TF_OK);
    ck_assert_int_eq(s.nouter, 2000);
    ck_assert_int_eq(s.ptr[0], 0);
    ck_assert_int_eq(s.ptr[s.nouter], s.nnz);
    for (int64_t i = 0; i < s.nouter; i++) {
        ck_assert(s.ptr[i + 1] > s.ptr[i]); /* at least one per list */
        for (int64_t e = s.ptr[i]; e < s.ptr[i + 1]; e++) {
            ck_assert(s.idx[e] >= 0 && s.idx[e] < 1000);
            if (e > s.ptr[i])
                ck_assert(s.idx[e] > s.idx[e - 1]); /* sorted, distinct */
            ck_assert(s.val[e] >= -1.0f && s.val[e] < 1.0f);
        }
    }
    /* Mean degree close to the asked one (duplicates removed lower it a
     * little), and a deterministic result. */
    double mean = (double)s.nnz / (double)s.nouter;
    ck_assert(mean > 7.0 && mean <= 8.5);
    ck_assert_int_eq(tf_cal_synth(&t, 2000, 1000, 8.0, 0.5, 64, 3), TF_OK);
    ck_assert_int_eq(t.nnz, s.nnz);
    ck_assert(memcmp(t.idx, s.idx, (size_t)s.nnz * sizeof *s.idx) == 0);
    tf_cal_sparse_free(&t);
    tf_cal_sparse_free(&s);
    ck_assert_ptr_null(s.ptr);
    ck_assert_int_eq(tf_cal_synth(&s, 0, 10, 2.0, 0.5, 4, 1), TF_ERR_ARG);
    ck_assert_int_eq(tf_cal_synth(&s, 10, 10, 0.5, 0.5, 4, 1), TF_ERR_ARG);
}
END_TEST

/* The time the in-situ handshake is read against: no handshake, and the
 * fetch kernel at the rate it measured on the synthetic graph. Both matter:
 * with the handshake in it, the excess would never exceed what is already
 * charged; with the kernel at its fit, the synthetic kernel's error became
 * the handshake (2.8x the microbenchmark in a simulated calibration). */
START_TEST(insitu_handshake_reads_against_the_plain_time)
{
    tf_coeffs c;
    tf_coeffs_default(&c);
    c.alpha_sync = 1e-3; /* dear enough to dominate if it leaked in */
    tf_rank_stats s;
    memset(&s, 0, sizeof s);
    s.nnz_local = 4000;
    s.nnz_fetch = 3000;
    s.nnz_fetch_miss = 1000;
    s.rows_local = 500;
    s.fetch_rows = 300;
    s.fetch_requests = 20;
    s.fetch_peers_recv = s.fetch_peers_sent = 3;
    const int k = 64;
    /* At the fit: the model without its handshake term. */
    tf_coeffs c0 = c;
    c0.alpha_sync = 0;
    tf_rank_stats p0 = s;
    tf_cost_predict(&c0, k, &p0);
    ck_assert_double_eq_tol(tf_insitu_plain_time(&c, k, s, 1.0), p0.t_total, 1e-15);
    tf_rank_stats pc = s;
    tf_cost_predict(&c, k, &pc);
    ck_assert(pc.t_total > p0.t_total + 1e-3); /* the handshake was charged there */
    /* At twice the fit: the fetch kernel's two rates doubled, nothing else. */
    tf_coeffs c2 = c0;
    c2.gamma_fetch *= 2.0;
    c2.gamma_fetch_cached *= 2.0;
    tf_rank_stats p2 = s;
    tf_cost_predict(&c2, k, &p2);
    ck_assert(p2.t_fetch_comp > 1.5 * p0.t_fetch_comp);
    ck_assert_double_eq_tol(tf_insitu_plain_time(&c, k, s, 2.0), p2.t_total, 1e-15);
    ck_assert(tf_insitu_plain_time(&c, k, s, 2.0) > tf_insitu_plain_time(&c, k, s, 1.0));
    /* The caller's coefficients are left as they were. */
    ck_assert_double_eq(c.alpha_sync, 1e-3);
    ck_assert_double_eq(c.gamma_fetch, c0.gamma_fetch);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("calibrate");
    TCase *tc = tcase_create("fit");
    tcase_add_test(tc, recovers_known_coefficients_with_noise);
    tcase_add_test(tc, one_and_three_parameters);
    tcase_add_test(tc, kernel_fit_recovers_a_cost_per_row);
    tcase_add_test(tc, residuals_are_relative_rms_and_max);
    tcase_add_test(tc, negative_coefficient_is_clamped);
    tcase_add_test(tc, degenerate_input_is_an_error);
    suite_add_tcase(s, tc);
    TCase *tm = tcase_create("measure");
    tcase_add_test(tm, median_of_samples);
    tcase_add_test(tm, synthetic_parts_are_well_formed);
    tcase_add_test(tm, insitu_handshake_reads_against_the_plain_time);
    suite_add_tcase(s, tm);
    return s;
}

int main(void) { return tf_test_run_serial(suite()); }
