/* The plan reports of planner/tf_explain.c: the --explain table (its column
 * names, the layout calibrate/validate.sh reads, MiB sizes matching the
 * plan's statistics) and the --svg picture (opaque background, cells
 * without outline, every class in the legend). */
#include "tf_balance.h"
#include "tf_error.h"
#include "tf_explain.h"
#include "tf_partition.h"
#include "tf_plan.h"
#include "tf_planner.h"
#include "tf_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A plan with local, collective and fetch parts, and ranks with no rows. */
static void make_plan(tf_plan *plan, int P, int mode)
{
    tf_csr a;
    tf_test_random_csr(&a, 200, 200, 1500, 7);
    tf_plan_options o;
    tf_plan_options_default(&o);
    o.nranks = P;
    o.mode = mode;
    o.k = 32;
    o.stripe_width = 8;
    ck_assert_msg(tf_plan_build(&a, &o, plan) == TF_OK, "%s", tf_error_message());
    tf_csr_free(&a);
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_int_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* What tf_explain_print writes. */
static char *capture_explain(const tf_plan *plan)
{
    const char *path = tf_test_tmpfile(1, ".txt", "", 0);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    tf_explain_print(f, plan);
    ck_assert_int_eq(fclose(f), 0);
    char *out = read_all(path);
    remove(path);
    return out;
}

static const char *const columns[13] = {
    "rank",         "nnz_local",     "nnz_coll",       "nnz_fetch",     "stripes_coll",
    "stripes_fetch", "coll_in_MiB",  "coll_out_MiB",   "fetch_in_MiB",  "fetch_requests",
    "t_loc+coll_ms", "t_fetch_ms",   "t_rank_ms"};

START_TEST(explain_columns_named_and_in_mib)
{
    for (int mode = 0; mode < 3; mode++) {
        tf_plan plan;
        make_plan(&plan, 5, mode);
        char *out = capture_explain(&plan);
        /* The header: the 13 names, in order. */
        char *line = strstr(out, "\n  rank ");
        ck_assert_msg(line != NULL, "no header in:\n%s", out);
        line++;
        char *eol = strchr(line, '\n');
        ck_assert_ptr_nonnull(eol);
        char header[512];
        snprintf(header, sizeof header, "%.*s", (int)(eol - line), line);
        char *save = NULL, *tok = strtok_r(header, " ", &save);
        for (int c = 0; c < 13; c++, tok = strtok_r(NULL, " ", &save)) {
            ck_assert_msg(tok != NULL, "column %d missing", c);
            ck_assert_str_eq(tok, columns[c]);
        }
        ck_assert_ptr_null(tok);
        /* One row of 13 numbers per rank, sizes in MiB of the plan's rows. */
        char *row = eol + 1;
        for (int p = 0; p < plan.nranks; p++) {
            int rank;
            long long nl, nc, nf, sc, sf, req;
            double cin, cout, fin, th, tfh, tt;
            int got = sscanf(row, "%d %lld %lld %lld %lld %lld %lf %lf %lf %lld %lf %lf %lf", &rank,
                             &nl, &nc, &nf, &sc, &sf, &cin, &cout, &fin, &req, &th, &tfh, &tt);
            ck_assert_int_eq(got, 13);
            const tf_rank_stats *s = &plan.all_stats[p];
            double row_mib = 4.0 * plan.k_planned / (1024.0 * 1024.0);
            ck_assert_int_eq(rank, p);
            ck_assert_int_eq(nl, s->nnz_local);
            ck_assert_int_eq(nc, s->nnz_coll);
            ck_assert_int_eq(nf, s->nnz_fetch);
            ck_assert_int_eq(sc, s->stripes_coll);
            ck_assert_int_eq(sf, s->stripes_fetch);
            ck_assert_int_eq(req, s->fetch_requests);
            ck_assert_double_eq_tol(cin, s->coll_rows_recv * row_mib, 6e-4);
            ck_assert_double_eq_tol(cout, s->coll_rows_sent * row_mib, 6e-4);
            ck_assert_double_eq_tol(fin, s->fetch_rows * row_mib, 6e-4);
            ck_assert_double_eq_tol(th, 1e3 * s->t_coll_half, 6e-4);
            ck_assert_double_eq_tol(tfh, 1e3 * s->t_fetch_half, 6e-4);
            ck_assert_double_eq_tol(tt, 1e3 * s->t_total, 6e-4);
            row = strchr(row, '\n');
            ck_assert_ptr_nonnull(row);
            row++;
        }
        ck_assert_msg(strncmp(row, "totals:", 7) == 0, "after the rows: %.60s", row);
        free(out);
        tf_plan_free(&plan);
    }
}
END_TEST

START_TEST(svg_rects_have_no_outline_and_legend_is_complete)
{
    const int ps[2] = {3, 40}; /* wide rows with labels; thin rows */
    for (int i = 0; i < 2; i++) {
        tf_plan plan;
        make_plan(&plan, ps[i], 0);
        const char *path = tf_test_tmpfile(0, ".svg", "", 0);
        ck_assert_msg(tf_explain_svg(path, &plan) == TF_OK, "%s", tf_error_message());
        char *svg = read_all(path);
        remove(path);
        /* Every rect says its stroke; only the white swatch has one. */
        int rects = 0, outlined = 0;
        for (char *r = strstr(svg, "<rect"); r; r = strstr(r + 1, "<rect")) {
            char *end = strchr(r, '>');
            ck_assert_ptr_nonnull(end);
            char tag[256];
            snprintf(tag, sizeof tag, "%.*s", (int)(end - r), r);
            ck_assert_msg(strstr(tag, " stroke=\"") != NULL, "rect without stroke: %s", tag);
            if (!strstr(tag, "stroke=\"none\""))
                outlined++;
            rects++;
        }
        ck_assert_int_gt(rects, 5);
        ck_assert_int_eq(outlined, 1);
        /* The first rect is an opaque background of the whole picture. */
        char *first = strstr(svg, "<rect");
        ck_assert_msg(strncmp(first, "<rect x=\"0\" y=\"0\"", 17) == 0 &&
                          strstr(first, "fill=\"#ffffff\"") < strchr(first, '>'),
                      "first rect: %.80s", first);
        const char *labels[4] = {">local<", ">collective<", ">fetch<", ">never moves<"};
        for (int c = 0; c < 4; c++)
            ck_assert_msg(strstr(svg, labels[c]) != NULL, "legend lacks %s", labels[c]);
        free(svg);
        tf_plan_free(&plan);
    }
}
END_TEST

/* The balance line's advice when the slowest rank has the mean nonzeros,
 * rows and rows received: with the reuse term in the coefficients the excess
 * is B rows read from memory, which --partition work weighs; without it the
 * line falls back on the rows received. */
static char *balance_line(const tf_plan *plan)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    ck_assert_ptr_nonnull(f);
    tf_balance_print(f, plan);
    fclose(f);
    return buf;
}

START_TEST(balance_names_b_rows_from_memory)
{
    tf_plan plan;
    make_plan(&plan, 2, TF_MODE_TWOFACE);
    plan.partition = TF_PART_NNZ;
    plan.row_off[1] = plan.m / 2;
    for (int p = 0; p < 2; p++) {
        tf_rank_stats *s = &plan.all_stats[p];
        s->nnz_local = 500;
        s->nnz_coll = 250;
        s->nnz_fetch = 0;
        s->coll_rows_recv = 80;
        s->fetch_rows = 0;
        s->t_total = p == 1 ? 2e-3 : 1e-3;
    }
    ck_assert(plan.coeffs.gamma_cached > 0 && plan.coeffs.cache_bytes > 0);
    char *line = balance_line(&plan);
    ck_assert_msg(strstr(line, "IMBALANCED, rank 1") &&
                      strstr(line, "(the excess: B rows read from memory); try --partition work"),
                  "%s", line);
    free(line);
    plan.coeffs.gamma_cached = 0;
    line = balance_line(&plan);
    ck_assert_msg(strstr(line, "(the excess: B rows received); try --partition metis"), "%s", line);
    free(line);
    tf_plan_free(&plan);
}
END_TEST

static Suite *explain_suite(void)
{
    Suite *s = suite_create("explain");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, explain_columns_named_and_in_mib);
    tcase_add_test(tc, svg_rects_have_no_outline_and_legend_is_complete);
    tcase_add_test(tc, balance_names_b_rows_from_memory);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tf_test_run_serial(explain_suite()); }
