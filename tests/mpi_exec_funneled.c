/* The executor under MPI_THREAD_FUNNELED: a context asking for a fetch
 * thread group must fall back to the single-thread-MPI path (its compute
 * loops still multi-threaded) and stay correct. tf_test_run_mpi always asks
 * for MPI_THREAD_MULTIPLE, so this file has its own small runner printing
 * the same summary line. */
#include "tf_test.h"

#include "tf_dense.h"
#include "tf_error.h"
#include "tf_exec.h"
#include "tf_planner.h"
#include "tf_reference.h"
#include "twoface.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int all_true(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

START_TEST(funneled_falls_back)
{
    int rank, size, provided;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Query_thread(&provided);
    ck_assert_int_lt(provided, MPI_THREAD_MULTIPLE);

    tf_csr a;
    tf_test_random_csr(&a, 400, 400, 1200, 11);
    tf_plan_options o;
    tf_plan_options_default(&o);
    o.nranks = size;
    o.k = 32;
    o.stripe_width = 8;
    o.gap = 2;
    o.coeffs.alpha_fetch *= 0.1; /* a plan with both halves */
    o.coeffs.beta_fetch *= 0.1;
    o.coeffs.alpha_sync = 0;
    o.no_pure_check = 1;
    tf_plan plan;
    ck_assert(tf_plan_build(&a, &o, &plan) == TF_OK);
    tf_handle *h = NULL;
    ck_assert(all_true(tf_open_plan(&plan, MPI_COMM_WORLD, &h) == TF_OK));
    tf_plan_free(&plan);

    const int k = 9;
    tf_exec_options opt;
    tf_exec_options_default(&opt);
    opt.threads = 2;
    opt.threads_fetch = 1;
    tf_ctx *ctx = NULL;
    ck_assert(all_true(tf_context_create(h, k, &opt, &ctx) == TF_OK));
    ck_assert_int_eq(tf_ctx_threads_fetch(ctx), 0);
    ck_assert_int_eq(tf_ctx_threads(ctx), 2);

    int64_t r0, nr, b0, nb;
    tf_get_rows(h, &r0, &nr);
    float *b = tf_b_rows(ctx, &b0, &nb);
    float *c = malloc((size_t)(nr > 0 ? nr : 1) * k * sizeof *c);
    double *cref = malloc((size_t)(nr > 0 ? nr : 1) * k * sizeof *cref);
    double *absrow = malloc((size_t)(nr > 0 ? nr : 1) * sizeof *absrow);
    for (int64_t i = 0; i < nr; i++) {
        absrow[i] = 0.0;
        for (int64_t e = a.rowptr[r0 + i]; e < a.rowptr[r0 + i + 1]; e++)
            absrow[i] += fabs((double)a.val[e]);
    }
    double worst = 0.0;
    int ok = 1;
    for (int it = 0; it < 20 && ok; it++) {
        if (nb > 0)
            tf_dense_fill(b, (uint64_t)it, b0, nb, k);
        ok = tf_spmm(ctx, c) == TF_OK;
        tf_reference_spmm_gen(&a, r0, r0 + nr, (uint64_t)it, k, cref);
        double e = tf_reference_scaled_error(c, cref, absrow, nr, k, 1.0);
        if (!(e <= worst))
            worst = e;
    }
    free(c);
    free(cref);
    free(absrow);
    tf_context_free(ctx);
    tf_close(h);
    tf_csr_free(&a);
    ck_assert(all_true(ok));
    ck_assert_msg(all_true(worst < 1e-5), "error %g", worst);
}
END_TEST

int main(int argc, char **argv)
{
    tf_test_reexec(argv);
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    Suite *s = suite_create("mpi_exec_funneled");
    TCase *tc = tcase_create("funneled");
    tcase_add_test(tc, funneled_falls_back);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* fork inside MPI crashes */
    srunner_run_all(sr, CK_SILENT);
    int ntests = srunner_ntests_run(sr), nfail = srunner_ntests_failed(sr);
    if (nfail) {
        TestResult **res = srunner_failures(sr);
        for (int t = 0; t < nfail; t++)
            fprintf(stderr, "rank %d/%d: %s:%d: %s\n", rank, size, tr_lfile(res[t]),
                    tr_lno(res[t]), tr_msg(res[t]));
        free(res);
    }
    int any = 0;
    MPI_Allreduce(&nfail, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d%%: Checks: %d, Failures: %d, Errors: 0  [%s, %d ranks]\n",
               ntests ? 100 * (ntests - any) / ntests : 100, ntests, any, argv[0], size);
    fflush(stdout);
    srunner_free(sr);
    MPI_Finalize();
    return any ? EXIT_FAILURE : EXIT_SUCCESS;
}
