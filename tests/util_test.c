#include "tf_test.h"
#include "tf_dense.h"
#include "tf_error.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tf_test_run_serial(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

int tf_test_run_mpi(int *argc, char ***argv, Suite *(*make_suite)(void))
{
    int provided, rank, size;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    SRunner *sr = srunner_create(make_suite());
    srunner_set_fork_status(sr, CK_NOFORK); /* fork inside MPI crashes */
    srunner_run_all(sr, CK_SILENT);
    int ntests = srunner_ntests_run(sr);
    TestResult **res = srunner_results(sr);
    int *mine = calloc((size_t)ntests + 1, sizeof *mine);
    int *any = calloc((size_t)ntests + 1, sizeof *any);
    for (int t = 0; t < ntests; t++) {
        int rt = tr_rtype(res[t]);
        mine[t] = rt == CK_PASS ? 0 : (rt == CK_FAILURE ? 1 : 2);
        if (rt != CK_PASS)
            fprintf(stderr, "rank %d/%d: %s:%d: %s: %s\n", rank, size, tr_lfile(res[t]),
                    tr_lno(res[t]), tr_tcname(res[t]), tr_msg(res[t]));
    }
    MPI_Allreduce(mine, any, ntests, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int fails = 0, errors = 0;
    for (int t = 0; t < ntests; t++) {
        fails += any[t] == 1;
        errors += any[t] == 2;
    }
    if (rank == 0)
        printf("%d%%: Checks: %d, Failures: %d, Errors: %d  [%s, %d ranks]\n",
               ntests ? 100 * (ntests - fails - errors) / ntests : 100, ntests, fails, errors,
               (*argv)[0], size);
    fflush(stdout);
    free(res);
    free(mine);
    free(any);
    srunner_free(sr);
    MPI_Finalize();
    return (fails || errors) ? EXIT_FAILURE : EXIT_SUCCESS;
}

void tf_test_csr_of_lengths(tf_csr *a, int64_t n, const int64_t *len)
{
    int64_t nnz = 0, maxlen = 1;
    for (int64_t i = 0; i < n; i++) {
        nnz += len[i];
        maxlen = len[i] > maxlen ? len[i] : maxlen;
    }
    tf_coo coo;
    ck_assert_int_eq(tf_coo_init(&coo, n, maxlen, nnz > 0 ? nnz : 1), TF_OK);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < len[i]; j++)
            ck_assert_int_eq(tf_coo_push(&coo, i, j, 1.0), TF_OK);
    ck_assert_int_eq(tf_csr_from_coo(a, &coo), TF_OK);
    tf_coo_free(&coo);
}

void tf_test_random_csr(tf_csr *a, int64_t m, int64_t n, int64_t nnz, uint64_t seed)
{
    tf_coo coo;
    if (tf_coo_init(&coo, m, n, nnz) != TF_OK)
        abort();
    uint64_t h = seed;
    for (int64_t e = 0; e < nnz && m > 0 && n > 0; e++) {
        h = tf_mix64(h + 0x9E3779B97F4A7C15ULL);
        int32_t r = (int32_t)(h % (uint64_t)m);
        h = tf_mix64(h + 1);
        int32_t c = (int32_t)(h % (uint64_t)n);
        double v = (double)(h >> 40) / (double)(1 << 24) * 4.0 - 2.0;
        if (tf_coo_push(&coo, r, c, v) != TF_OK)
            abort();
    }
    if (tf_csr_from_coo(a, &coo) != TF_OK)
        abort();
    tf_coo_free(&coo);
}

const char *tf_test_tmpfile(int slot, const char *suffix, const char *text, size_t len)
{
    static char paths[8][256];
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(paths[slot & 7], sizeof paths[0], "%s/tftest_%d_%d%s", dir, (int)getpid(), slot,
             suffix ? suffix : "");
    FILE *f = fopen(paths[slot & 7], "wb");
    if (!f)
        abort();
    if (len && fwrite(text, 1, len, f) != len)
        abort();
    fclose(f);
    return paths[slot & 7];
}

const char *tf_test_srcdir(void)
{
    const char *d = getenv("TF_SRCDIR");
    return d ? d : ".";
}

/* Why each setting: tf_test.h. */
void tf_test_reexec(char **argv)
{
    if (getenv("TF_TEST_REEXECED"))
        return;
    int again = 0;
    if (!getenv("OMP_WAIT_POLICY")) {
        setenv("OMP_WAIT_POLICY", "passive", 1);
        again = 1;
    }
    const char *lsan = getenv("LSAN_OPTIONS");
    if (lsan && !strstr(lsan, "fast_unwind_on_malloc")) {
        char buf[4096];
        snprintf(buf, sizeof buf, "%s:fast_unwind_on_malloc=0", lsan);
        setenv("LSAN_OPTIONS", buf, 1);
        again = 1;
    }
    if (again) {
        setenv("TF_TEST_REEXECED", "1", 1);
        execv("/proc/self/exe", argv);
        /* exec failed: run as is */
    }
}
