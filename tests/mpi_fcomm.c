/* tf_open_fcomm (run by tests/run_tests.sh at 1-4 ranks): a plan opened
 * through the Fortran handle of a communicator is the plan tf_open gives
 * (same getters, same C up to summation order); a handle that is no communicator, a value outside
 * MPI_Fint and a NULL handle pointer fail with TF_ERR_ARG on the calling rank
 * without communicating; a missing file fails on every rank alike. */
#include "tf_test.h"

#include "tf_error.h"
#include "tf_plan_io.h"
#include "tf_planner.h"
#include "twoface.h"

#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_rank, g_size;
static char g_dir[256];

static int all_true(int v)
{
    int r = 0;
    MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return r;
}

/* Rank 0 writes the plan of a random 300 x 300 matrix for this many ranks. */
static void plan_file(char *path, size_t n)
{
    int st = TF_OK;
    snprintf(path, n, "%s/fcomm.h5", g_dir);
    if (g_rank == 0) {
        tf_csr a;
        tf_test_random_csr(&a, 300, 300, 6000, 19);
        tf_plan_options o;
        tf_plan_options_default(&o);
        o.nranks = g_size;
        tf_plan plan;
        st = tf_plan_build(&a, &o, &plan);
        if (st == TF_OK) {
            st = tf_plan_write(path, &plan, TF_PLAN_ZSTD_DEFAULT);
            tf_plan_free(&plan);
        }
        tf_csr_free(&a);
        if (st)
            fprintf(stderr, "plan_file: %s\n", tf_error_message());
    }
    ck_assert(all_true(st == TF_OK));
}

/* C = A * B through a handle, B filled from global row indices. */
static float *product(tf_handle *h, int k)
{
    tf_ctx *ctx = NULL;
    ck_assert_int_eq(tf_context_create(h, k, NULL, &ctx), TF_OK);
    int64_t b0, nb, r0, nr;
    float *b = tf_b_rows(ctx, &b0, &nb);
    for (int64_t i = 0; i < nb * k; i++)
        b[i] = (float)((b0 * k + i) % 13) - 6.0f;
    tf_get_rows(h, &r0, &nr);
    float *c = malloc((size_t)(nr > 0 ? nr * k : 1) * sizeof *c);
    ck_assert_int_eq(tf_spmm(ctx, c), TF_OK);
    tf_context_free(ctx);
    return c;
}

START_TEST(same_plan_as_tf_open)
{
    char path[512];
    plan_file(path, sizeof path);
    tf_handle *hc = NULL, *hf = NULL;
    ck_assert_int_eq(tf_open(path, MPI_COMM_WORLD, &hc), TF_OK);
    ck_assert_int_eq(tf_open_fcomm(path, (int64_t)MPI_Comm_c2f(MPI_COMM_WORLD), &hf), TF_OK);
    ck_assert_int_eq(tf_get_nranks(hf), g_size);
    ck_assert_int_eq(tf_get_rank(hf), g_rank);
    ck_assert_int_eq(tf_get_nnz(hf), tf_get_nnz(hc));
    int64_t a0, an, b0, bn;
    tf_get_rows(hc, &a0, &an);
    tf_get_rows(hf, &b0, &bn);
    ck_assert(a0 == b0 && an == bn);
    const int k = 3;
    float *cc = product(hc, k), *cf = product(hf, k);
    /* Equal up to summation order: fetched runs are added as they land, and
     * a plan with a runner-up alternates in its first calls. */
    for (int64_t i = 0; i < an * k; i++)
        ck_assert_msg(fabsf(cc[i] - cf[i]) <= 1e-5f * (1.0f + fabsf(cc[i])), "C[%lld]: %g vs %g",
                      (long long)i, cc[i], cf[i]);
    free(cc);
    free(cf);
    tf_close(hf);
    tf_close(hc);
    if (g_rank == 0)
        unlink(path);
}
END_TEST

START_TEST(bad_handles_fail_locally)
{
    tf_handle *h = (tf_handle *)&h;
    /* MPI_COMM_NULL's handle: not a communicator to open a plan on. */
    ck_assert_int_eq(tf_open_fcomm("x.h5", (int64_t)MPI_Comm_c2f(MPI_COMM_NULL), &h), TF_ERR_ARG);
    ck_assert(h == NULL);
    ck_assert_ptr_nonnull(strstr(tf_last_error(), "communicator"));
    h = (tf_handle *)&h;
    ck_assert_int_eq(tf_open_fcomm("x.h5", (int64_t)INT_MAX + 1, &h), TF_ERR_ARG);
    ck_assert(h == NULL);
    ck_assert_ptr_nonnull(strstr(tf_last_error(), "out of range"));
    ck_assert_int_eq(tf_open_fcomm("x.h5", (int64_t)MPI_Comm_c2f(MPI_COMM_WORLD), NULL),
                     TF_ERR_ARG);
}
END_TEST

START_TEST(missing_file_fails_everywhere)
{
    char path[512];
    snprintf(path, sizeof path, "%s/no-such-plan.h5", g_dir);
    tf_handle *h = NULL;
    int st = tf_open_fcomm(path, (int64_t)MPI_Comm_c2f(MPI_COMM_WORLD), &h);
    ck_assert(all_true(st == TF_ERR_IO && h == NULL));
    ck_assert_ptr_nonnull(strstr(tf_last_error(), "no-such-plan.h5"));
}
END_TEST

static Suite *make_suite(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    if (g_rank == 0) {
        const char *t = getenv("TMPDIR");
        snprintf(g_dir, sizeof g_dir, "%s/tf_fcomm.XXXXXX", t && t[0] ? t : "/tmp");
        if (!mkdtemp(g_dir))
            abort();
    }
    MPI_Bcast(g_dir, (int)sizeof g_dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    Suite *s = suite_create("mpi_fcomm");
    TCase *tc = tcase_create("fcomm");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, same_plan_as_tf_open);
    tcase_add_test(tc, bad_handles_fail_locally);
    tcase_add_test(tc, missing_file_fails_everywhere);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    int rc = tf_test_run_mpi(&argc, &argv, make_suite);
    if (g_rank == 0)
        rmdir(g_dir);
    return rc;
}
