/* What the cost model charges for bf16 (planner/tf_cost_model.c,
 * tf_cost_round): the rounding of the rows that travel, priced per element
 * at gamma_local - nothing for float32 - and what twoface-plan --explain
 * makes of it: whether bf16 pays for the plan. */
#include "tf_cost_model.h"
#include "tf_error.h"
#include "tf_explain.h"
#include "tf_plan.h"
#include "tf_planner.h"
#include "tf_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tf_rank_stats some_stats(void)
{
    tf_rank_stats s;
    memset(&s, 0, sizeof s);
    s.nnz_local = 1000;
    s.nnz_coll = 500;
    s.nnz_fetch = 200;
    s.coll_rows_recv = 40;
    s.coll_rows_sent = 70;
    s.coll_peers_recv = s.coll_peers_sent = 3;
    s.fetch_rows = 25;
    s.fetch_requests = 9;
    s.fetch_peers_recv = s.fetch_peers_sent = 2;
    return s;
}

START_TEST(rounding_is_charged_per_element_that_travels)
{
    tf_coeffs c;
    tf_coeffs_default(&c);
    const int k = 64;
    for (int bf = 0; bf < 2; bf++) {
        c.elem_bytes = bf ? 2 : 4;
        tf_rank_stats s = some_stats();
        /* Sent by the collective (once per recipient) and fetched. */
        double want = bf ? c.gamma_local * (70.0 + 25.0) * k : 0.0;
        ck_assert(fabs(tf_cost_round(&c, k, &s) - want) <= 1e-12 * want);
        tf_cost_predict(&c, k, &s);
        /* Added to the rank's time, before both halves. */
        double halves = tf_cost_rank_time(&c, s.t_local, s.t_coll_comm, s.t_coll_comp,
                                          s.t_fetch_comm, s.t_fetch_comp,
                                          tf_cost_fetch_bytes(&c, k, s.fetch_rows));
        ck_assert(fabs(s.t_total - halves - s.t_sync - want) <= 1e-12 * s.t_total);
    }
}
END_TEST

static char *explain_of(const tf_plan *plan)
{
    const char *path = tf_test_tmpfile(1, ".txt", "", 0);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    tf_explain_print(f, plan);
    ck_assert_int_eq(fclose(f), 0);
    f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    remove(path);
    return strstr(buf, "comm: ");
}

/* A bf16 plan where bytes are dear pays; one where moving a row costs
 * nothing but rounding it does is said not to. */
START_TEST(explain_says_when_bf16_does_not_pay)
{
    tf_csr a;
    tf_test_random_csr(&a, 200, 200, 1500, 7);
    for (int dear = 0; dear < 2; dear++) {
        tf_plan_options o;
        tf_plan_options_default(&o);
        o.nranks = 4;
        o.k = 32;
        o.stripe_width = 8;
        o.comm = TF_PREC_BF16;
        if (dear) { /* a slow network */
            o.coeffs.beta_coll = o.coeffs.beta_fetch = 1e-9;
            o.coeffs.gamma_local = 1e-12;
        } else { /* free transfers, costly rounding */
            o.coeffs.beta_coll = o.coeffs.beta_fetch = 1e-15;
            o.coeffs.gamma_local = 1e-9;
        }
        tf_plan plan;
        ck_assert_msg(tf_plan_build(&a, &o, &plan) == TF_OK, "%s", tf_error_message());
        const char *line = explain_of(&plan);
        ck_assert_ptr_nonnull(line);
        ck_assert_msg(strncmp(line, "comm: bf16 (", 12) == 0, "%.200s", line);
        ck_assert_msg(strstr(line, "rounding of the rows that travel included") != NULL, "%.300s",
                      line);
        const char *eol = strchr(line, '\n');
        const char *no = strstr(line, "bf16 does not pay here");
        ck_assert_msg(dear ? (no == NULL || no > eol) : (no != NULL && no < eol), "%.600s", line);
        /* Plans with a collective part say who rounds on one node. */
        int64_t coll_rows = 0;
        for (int p = 0; p < plan.nranks; p++)
            coll_rows += plan.all_stats[p].coll_rows_recv;
        const char *node = strstr(line, "comm: on one node");
        ck_assert_msg(coll_rows > 0 ? node != NULL : node == NULL, "%lld collective rows: %.600s",
                      (long long)coll_rows, line);
        if (node)
            ck_assert_msg(strstr(node, "falls on the receivers") != NULL, "%.300s", node);
        /* Every bf16 plan: on one node B is read in place, as float32. */
        ck_assert_msg(strstr(line, "comm: on a single node, where the executor reads B in "
                                   "place") != NULL,
                      "%.600s", line);
        tf_plan_free(&plan);
    }
    tf_csr_free(&a);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("bf16_model");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, rounding_is_charged_per_element_that_travels);
    tcase_add_test(tc, explain_says_when_bf16_does_not_pay);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tf_test_run_serial(suite()); }
