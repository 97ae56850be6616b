/* Agreements (mpi/tf_agree.c) and agreements carried by counts and sums
 * (mpi/tf_agree_carry.c), run by tests/run_tests.sh at 1-4 ranks: the
 * values a carrier exchanges arrive as MPI's own collective gives them
 * when every rank succeeded; when one or two ranks fail, every rank
 * returns the lowest failing rank's status and message, a failed rank
 * taking part without buffers of its own. */
#include "tf_test.h"

#include "tf_agree.h"
#include "tf_agree_carry.h"
#include "tf_error.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_size;

/* The status rank r fails with in the two-failure tests: the lowest of the
 * failing ranks must win, whatever its status. */
static int failure_of(int r) { return r == g_size - 1 ? TF_ERR_NOMEM : TF_ERR_PARSE; }

static int fail_here(int r)
{
    return tf_fail(failure_of(r), "rank %d: the step before failed", r);
}

/* Every rank returned the status and message of rank `first`. */
static void check_adopted(int st, int first)
{
    char want[64];
    snprintf(want, sizeof want, "rank %d: the step before failed", first);
    ck_assert_int_eq(st, failure_of(first));
    ck_assert_str_eq(tf_error_message(), want);
}

/* The failing ranks of a test: the last one, and rank 1 as well where
 * there are three ranks or more (so the last is not the lowest). */
static int fails(int r) { return r == g_size - 1 || (g_size >= 3 && r == 1); }
static int first_failing(void) { return g_size >= 3 ? 1 : g_size - 1; }

START_TEST(agree_takes_lowest_failing_rank)
{
    int st = tf_agree(MPI_COMM_WORLD, fails(g_rank) ? fail_here(g_rank) : TF_OK);
    check_adopted(st, first_failing());
    ck_assert_int_eq(tf_agree(MPI_COMM_WORLD, TF_OK), TF_OK);
}
END_TEST

START_TEST(allreduce_carries_sums_and_maxima)
{
    int64_t v[3] = {g_rank + 1, -(int64_t)g_rank, 7};
    ck_assert_int_eq(tf_agree_allreduce(MPI_COMM_WORLD, TF_OK, v, 3, MPI_INT64_T, MPI_SUM),
                     TF_OK);
    ck_assert_int_eq(v[0], (int64_t)g_size * (g_size + 1) / 2);
    ck_assert_int_eq(v[1], -(int64_t)g_size * (g_size - 1) / 2);
    ck_assert_int_eq(v[2], 7 * (int64_t)g_size);
    int64_t m[2] = {g_rank, 100 - g_rank};
    ck_assert_int_eq(tf_agree_allreduce(MPI_COMM_WORLD, TF_OK, m, 2, MPI_INT64_T, MPI_MAX),
                     TF_OK);
    ck_assert_int_eq(m[0], g_size - 1);
    ck_assert_int_eq(m[1], 100);
    /* Sums of unsigned values wrap, as a fingerprint's do. */
    uint64_t u = UINT64_MAX - (uint64_t)g_rank;
    ck_assert_int_eq(tf_agree_allreduce(MPI_COMM_WORLD, TF_OK, &u, 1, MPI_UINT64_T, MPI_SUM),
                     TF_OK);
    uint64_t want = 0;
    for (int r = 0; r < g_size; r++)
        want += UINT64_MAX - (uint64_t)r;
    ck_assert(u == want);
    /* Nothing but the agreement. */
    ck_assert_int_eq(tf_agree_allreduce(MPI_COMM_WORLD, TF_OK, NULL, 0, MPI_INT64_T, MPI_SUM),
                     TF_OK);
}
END_TEST

START_TEST(allreduce_carries_a_failure)
{
    int64_t v = 5;
    int st = fails(g_rank) ? fail_here(g_rank) : TF_OK;
    /* A failed rank's values are not for reading: it may pass none. */
    st = tf_agree_allreduce(MPI_COMM_WORLD, st, fails(g_rank) ? NULL : &v, 1, MPI_INT64_T,
                            MPI_MAX);
    check_adopted(st, first_failing());
    ck_assert_int_eq(v, 5);
}
END_TEST

/* More values than fit on the stack (TF_AGREE_CARRY_SMALL), and past a
 * failed rank's reserve: minima, as of the ends of bands. */
static void many_minima(int n, int with_failure)
{
    int64_t *v = malloc((size_t)n * sizeof *v);
    ck_assert_ptr_nonnull(v);
    for (int i = 0; i < n; i++)
        v[i] = (int64_t)i * 10 + (g_rank + i) % (g_size + 1);
    int failed = with_failure && fails(g_rank);
    int st = failed ? fail_here(g_rank) : TF_OK;
    st = tf_agree_allreduce(MPI_COMM_WORLD, st, failed ? NULL : v, n, MPI_INT64_T, MPI_MIN);
    if (with_failure) {
        check_adopted(st, first_failing());
    } else {
        ck_assert_int_eq(st, TF_OK);
        for (int i = 0; i < n; i++) {
            int64_t want = INT64_MAX;
            for (int r = 0; r < g_size; r++) {
                int64_t x = (int64_t)i * 10 + (r + i) % (g_size + 1);
                want = x < want ? x : want;
            }
            ck_assert_int_eq(v[i], want);
        }
    }
    free(v);
}

START_TEST(allreduce_carries_many_minima)
{
    many_minima(TF_AGREE_CARRY_SMALL + 1, 0);
    many_minima(64, 0);
    many_minima(5000, 0);
}
END_TEST

START_TEST(allreduce_carries_a_failure_with_many_values)
{
    many_minima(64, 1);
    many_minima(5000, 1);
}
END_TEST

/* An all-to-all of n values per pair, value (sender, receiver, i). */
static int64_t a2a_value(int from, int to, int i) { return 1000000 * from + 1000 * to + i; }

static void alltoall_case(int n, int with_failure)
{
    int64_t *send = malloc((size_t)g_size * (size_t)n * sizeof *send);
    int64_t *recv = malloc((size_t)g_size * (size_t)n * sizeof *recv);
    ck_assert(send && recv);
    for (int q = 0; q < g_size; q++)
        for (int i = 0; i < n; i++)
            send[q * n + i] = a2a_value(g_rank, q, i);
    int failed = with_failure && fails(g_rank);
    int st = failed ? fail_here(g_rank) : TF_OK;
    st = tf_agree_alltoall_i64(MPI_COMM_WORLD, st, failed ? NULL : send, failed ? NULL : recv,
                               n);
    if (with_failure) {
        check_adopted(st, first_failing());
    } else {
        ck_assert_int_eq(st, TF_OK);
        for (int q = 0; q < g_size; q++)
            for (int i = 0; i < n; i++)
                ck_assert_int_eq(recv[q * n + i], a2a_value(q, g_rank, i));
    }
    free(send);
    free(recv);
}

START_TEST(alltoall_carries_counts) { alltoall_case(2, 0); }
END_TEST

START_TEST(alltoall_carries_a_failure) { alltoall_case(2, 1); }
END_TEST

/* More values than a failed rank's reserve holds: its buffers come from
 * the heap. */
START_TEST(alltoall_carries_a_failure_past_the_reserve) { alltoall_case(3000, 1); }
END_TEST

static void allgather_case(int with_failure)
{
    int64_t send[2] = {10 * g_rank, 10 * g_rank + 1}, recv[8];
    int failed = with_failure && fails(g_rank);
    int st = failed ? fail_here(g_rank) : TF_OK;
    st = tf_agree_allgather_i64(MPI_COMM_WORLD, st, failed ? NULL : send, failed ? NULL : recv,
                                2);
    if (with_failure) {
        check_adopted(st, first_failing());
        return;
    }
    ck_assert_int_eq(st, TF_OK);
    for (int q = 0; q < g_size; q++) {
        ck_assert_int_eq(recv[2 * q], 10 * q);
        ck_assert_int_eq(recv[2 * q + 1], 10 * q + 1);
    }
}

START_TEST(allgather_carries_values) { allgather_case(0); }
END_TEST

START_TEST(allgather_carries_a_failure) { allgather_case(1); }
END_TEST

static Suite *make_suite(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    Suite *s = suite_create("mpi_agree");
    TCase *tc = tcase_create("agree");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, agree_takes_lowest_failing_rank);
    tcase_add_test(tc, allreduce_carries_sums_and_maxima);
    tcase_add_test(tc, allreduce_carries_a_failure);
    tcase_add_test(tc, allreduce_carries_many_minima);
    tcase_add_test(tc, allreduce_carries_a_failure_with_many_values);
    tcase_add_test(tc, alltoall_carries_counts);
    tcase_add_test(tc, alltoall_carries_a_failure);
    tcase_add_test(tc, alltoall_carries_a_failure_past_the_reserve);
    if (g_size <= 4) { /* the test's arrays */
        tcase_add_test(tc, allgather_carries_values);
        tcase_add_test(tc, allgather_carries_a_failure);
    }
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv) { return tf_test_run_mpi(&argc, &argv, make_suite); }
