/* tf_mpi_wait_idle (mpi/tf_idle.c; run by tests/run_tests.sh at 1-4 ranks):
 * a message that comes late (after the first millisecond, when the wait
 * sleeps between tests) and one that is already there both complete with
 * their data and status; a null request returns at once. The all-to-all
 * and all-reduce of counts built on it deliver every rank's block when one
 * rank arrives late. */
#include "tf_test.h"

#include "tf_idle.h"

#include <mpi.h>
#include <stdint.h>
#include <time.h>

static int g_rank, g_size;

/* Every rank receives from the next one (itself at one rank), which sends
 * after `delay_ms`. */
static void ring(int delay_ms)
{
    int to = (g_rank + g_size - 1) % g_size, from = (g_rank + 1) % g_size;
    int got = -1, mine = 1000 + g_rank;
    MPI_Request rq, sq;
    ck_assert_int_eq(MPI_Irecv(&got, 1, MPI_INT, from, 7, MPI_COMM_WORLD, &rq), MPI_SUCCESS);
    if (delay_ms > 0) {
        struct timespec d = {0, (long)delay_ms * 1000000L};
        nanosleep(&d, NULL);
    }
    ck_assert_int_eq(MPI_Isend(&mine, 1, MPI_INT, to, 7, MPI_COMM_WORLD, &sq), MPI_SUCCESS);
    MPI_Status st;
    ck_assert_int_eq(tf_mpi_wait_idle(&rq, &st), MPI_SUCCESS);
    ck_assert_int_eq(got, 1000 + from);
    ck_assert_int_eq(st.MPI_SOURCE, from);
    ck_assert(rq == MPI_REQUEST_NULL);
    ck_assert_int_eq(tf_mpi_wait_idle(&sq, MPI_STATUS_IGNORE), MPI_SUCCESS);
}

/* Rank 0 tells rank 1 that it is about to wait, and rank 1 sends 20 ms
 * after hearing it: the message cannot be there before the wait has
 * passed its spinning millisecond, however the ranks are scheduled. One
 * rank sends to itself, so there it is the ring with a delay before the
 * send. */
START_TEST(late_message)
{
    if (g_size == 1) {
        ring(20);
        return;
    }
    if (g_rank == 0) {
        int got = -1, go = 1;
        MPI_Request rq;
        ck_assert_int_eq(MPI_Irecv(&got, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &rq), MPI_SUCCESS);
        ck_assert_int_eq(MPI_Send(&go, 1, MPI_INT, 1, 8, MPI_COMM_WORLD), MPI_SUCCESS);
        double t0 = MPI_Wtime();
        MPI_Status st;
        ck_assert_int_eq(tf_mpi_wait_idle(&rq, &st), MPI_SUCCESS);
        double dt = MPI_Wtime() - t0;
        ck_assert_int_eq(got, 1001);
        ck_assert_int_eq(st.MPI_SOURCE, 1);
        ck_assert(rq == MPI_REQUEST_NULL);
        ck_assert_msg(dt >= 0.010, "the wait returned after %.4f s: the message was not late", dt);
    } else if (g_rank == 1) {
        int go = 0, mine = 1001;
        ck_assert_int_eq(MPI_Recv(&go, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                         MPI_SUCCESS);
        struct timespec d = {0, 20L * 1000000L};
        nanosleep(&d, NULL);
        ck_assert_int_eq(MPI_Send(&mine, 1, MPI_INT, 0, 7, MPI_COMM_WORLD), MPI_SUCCESS);
    }
}
END_TEST

START_TEST(message_already_there) { ring(0); }
END_TEST

START_TEST(null_request)
{
    MPI_Request rq = MPI_REQUEST_NULL;
    ck_assert_int_eq(tf_mpi_wait_idle(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
}
END_TEST

/* Rank 0 arrives 20 ms late, so the others wait past the spinning phase. */
START_TEST(counts_with_a_late_rank)
{
    if (g_rank == 0) {
        struct timespec d = {0, 20L * 1000000L};
        nanosleep(&d, NULL);
    }
    int64_t send[4], recv[4];
    for (int q = 0; q < g_size; q++)
        send[q] = 100 * g_rank + q;
    ck_assert_int_eq(tf_mpi_alltoall_idle(send, 1, MPI_INT64_T, recv, 1, MPI_INT64_T,
                                          MPI_COMM_WORLD),
                     MPI_SUCCESS);
    for (int q = 0; q < g_size; q++)
        ck_assert_int_eq(recv[q], 100 * q + g_rank);
    int64_t v = g_rank + 1, sum = 0;
    ck_assert_int_eq(tf_mpi_allreduce_idle(&v, &sum, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD),
                     MPI_SUCCESS);
    ck_assert_int_eq(sum, (int64_t)g_size * (g_size + 1) / 2);
}
END_TEST

static Suite *make_suite(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    Suite *s = suite_create("mpi_idle");
    TCase *tc = tcase_create("idle");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, late_message);
    tcase_add_test(tc, message_already_there);
    tcase_add_test(tc, null_request);
    if (g_size <= 4) /* the test's arrays */
        tcase_add_test(tc, counts_with_a_late_rank);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv) { return tf_test_run_mpi(&argc, &argv, make_suite); }
