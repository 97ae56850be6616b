/* Plans in original ids (METIS partitioning), at every rank count run_tests uses:
 * for every partition kind (rows, nnz, metis), B made in original order,
 * C brought back to original order with tf_gather_rows, compared with the
 * serial reference SpMM of the matrix as read; the row-id getters; the
 * scatter and gather helpers with uneven ranges and other row types; bad
 * ranges fail on every rank alike. */
#include "tf_test.h"
#include "tf_bands_from.h"
#include "tf_dense.h"
#include "tf_error.h"
#include "tf_exec.h"
#include "tf_mm_read.h"
#include "tf_partition.h"
#include "tf_plan_io.h"
#include "tf_planner.h"
#include "tf_prepare.h"
#include "tf_reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_rank, g_size;

static int all_true(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

static int same_message_everywhere(const char *msg)
{
    char mine[256], first[256];
    snprintf(mine, sizeof mine, "%s", msg);
    memcpy(first, mine, sizeof first);
    MPI_Bcast(first, sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    return all_true(strcmp(first, mine) == 0);
}

enum { G_CORA, G_RANDOM, G_TINY, G_COUNT };

/* Cora (shipped), a random square matrix with empty rows and columns, and
 * 3 x 3 (at 4 ranks some rank owns no rows under every partition). */
static void graph(int which, tf_csr *a)
{
    if (which == G_CORA) {
        char path[4096];
        snprintf(path, sizeof path, "%s/examples/data/cora.mtx.zst", tf_test_srcdir());
        ck_assert_msg(tf_mm_read(path, a, NULL) == TF_OK, "%s", tf_error_message());
    } else if (which == G_RANDOM) {
        tf_test_random_csr(a, 300, 300, 1500, 11);
    } else {
        tf_test_random_csr(a, 3, 3, 5, 2);
    }
}

static void open_kind(const tf_csr *a, int kind, int from_file, tf_handle **h)
{
    tf_plan_options o;
    tf_plan_options_default(&o);
    o.nranks = g_size;
    o.k = 8;
    o.partition = kind;
    int st;
    if (from_file) {
        char path[512];
        snprintf(path, sizeof path, "%s/tf_mpi_perm_%d.h5",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
        MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
        st = TF_OK;
        if (g_rank == 0) {
            tf_plan plan;
            st = tf_plan_build(a, &o, &plan);
            if (st == TF_OK) {
                st = tf_plan_write(path, &plan, 3);
                tf_plan_free(&plan);
            }
        }
        st = tf_agree(MPI_COMM_WORLD, st);
        ck_assert_msg(st == TF_OK, "%s", tf_last_error());
        st = tf_open(path, MPI_COMM_WORLD, h);
        MPI_Barrier(MPI_COMM_WORLD);
        if (g_rank == 0)
            unlink(path);
    } else {
        tf_plan plan;
        st = tf_agree(MPI_COMM_WORLD, tf_plan_build(a, &o, &plan));
        ck_assert_msg(st == TF_OK, "%s", tf_last_error());
        st = tf_open_plan(&plan, MPI_COMM_WORLD, h);
        tf_plan_free(&plan);
    }
    ck_assert_msg(st == TF_OK, "%s", tf_last_error());
}

static double max_abs_row(const tf_csr *a, int64_t i)
{
    double s = 0;
    for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++)
        s += fabs((double)a->val[e]);
    return s;
}

/* One SpMM with B in original order; C gathered into even original shares
 * and compared with the reference of the original matrix. */
static void check_original_order(const tf_csr *a, int kind, int from_file)
{
    const int k = 8;
    const uint64_t seed = 42;
    tf_handle *h;
    open_kind(a, kind, from_file, &h);
    ck_assert_int_eq(tf_get_permuted(h), kind == TF_PART_METIS && a->nrows > 0);
    tf_ctx *ctx;
    ck_assert_msg(tf_context_create(h, k, NULL, &ctx) == TF_OK, "%s", tf_last_error());
    int64_t b0, nb, r0, nr;
    float *b = tf_b_rows(ctx, &b0, &nb);
    tf_get_rows(h, &r0, &nr);

    /* B two ways: picked by id from the generator, and scattered from even
     * original shares: the same bits. */
    const int64_t *bids = tf_get_brow_ids(h);
    ck_assert(nb == 0 || bids != NULL);
    for (int64_t i = 0; i < nb; i++)
        tf_dense_fill(b + i * k, seed, bids[i], 1, k);
    int64_t o0, on;
    tf_even_rows(h, TF_BROWS, &o0, &on);
    float *share = malloc((size_t)(on > 0 ? on : 1) * k * sizeof *share);
    float *b2 = malloc((size_t)(nb > 0 ? nb : 1) * k * sizeof *b2);
    tf_dense_fill(share, seed, o0, on, k);
    ck_assert_int_eq(tf_scatter_rows(h, TF_BROWS, k * sizeof(float), o0, on, share, b2), TF_OK);
    ck_assert(all_true(nb == 0 || memcmp(b, b2, (size_t)nb * k * sizeof *b) == 0));

    float *c = malloc((size_t)(nr > 0 ? nr : 1) * k * sizeof *c);
    ck_assert_int_eq(tf_spmm(ctx, c), TF_OK);
    int64_t c0, cn;
    tf_even_rows(h, TF_ROWS, &c0, &cn);
    float *corig = malloc((size_t)(cn > 0 ? cn : 1) * k * sizeof *corig);
    ck_assert_int_eq(tf_gather_rows(h, TF_ROWS, k * sizeof(float), c, c0, cn, corig), TF_OK);
    double *cref = malloc((size_t)(cn > 0 ? cn : 1) * k * sizeof *cref);
    tf_reference_spmm_gen(a, c0, c0 + cn, seed, k, cref);
    double err = 0;
    for (int64_t i = 0; i < cn; i++) {
        double scale = max_abs_row(a, c0 + i) + 1e-30;
        for (int x = 0; x < k; x++) {
            double e = fabs((double)corig[i * k + x] - cref[i * k + x]) / scale;
            if (!(e <= err))
                err = e;
        }
    }
    ck_assert_msg(all_true(err <= 1e-5), "rank %d: %s partition, %d ranks: error %g", g_rank,
                  tf_partition_name(kind), g_size, err);

    /* And row by row in place: C row r is original row row_ids[r]. */
    const int64_t *rids = tf_get_row_ids(h);
    ck_assert(nr == 0 || rids != NULL);
    int ok = 1;
    double one[8];
    for (int64_t r = 0; r < nr; r++) {
        tf_reference_spmm_gen(a, rids[r], rids[r] + 1, seed, k, one);
        for (int x = 0; x < k; x++)
            ok &= fabs(c[r * k + x] - one[x]) <= 1e-5 * (max_abs_row(a, rids[r]) + 1e-30);
    }
    ck_assert(all_true(ok));
    free(share);
    free(b2);
    free(c);
    free(corig);
    free(cref);
    tf_context_free(ctx);
    tf_close(h);
}

START_TEST(c_in_original_order_every_partition)
{
    const int kinds[3] = {TF_PART_ROWS, TF_PART_NNZ, TF_PART_METIS};
    for (int g = 0; g < G_COUNT; g++) {
        tf_csr a;
        graph(g, &a);
        for (int x = 0; x < 3; x++)
            check_original_order(&a, kinds[x], 0);
        tf_csr_free(&a);
    }
}
END_TEST

START_TEST(metis_plan_from_a_file)
{
    tf_csr a;
    graph(G_CORA, &a);
    check_original_order(&a, TF_PART_METIS, 1);
    tf_csr_free(&a);
}
END_TEST

START_TEST(row_ids_follow_the_plan)
{
    tf_csr a;
    graph(G_CORA, &a);
    for (int metis = 0; metis < 2; metis++) {
        tf_handle *h;
        open_kind(&a, metis ? TF_PART_METIS : TF_PART_ROWS, 0, &h);
        int64_t r0, nr, b0, nb;
        tf_get_rows(h, &r0, &nr);
        tf_get_brows(h, &b0, &nb);
        const int64_t *ids = tf_get_row_ids(h), *bids = tf_get_brow_ids(h);
        int ok = nr == 0 ? ids == NULL : ids != NULL;
        for (int64_t i = 0; ok && i < nr; i++)
            ok = metis ? ids[i] == h->plan.perm[r0 + i] : ids[i] == r0 + i;
        for (int64_t i = 0; ok && i < nb; i++)
            ok = metis ? bids[i] == h->plan.perm[b0 + i] : bids[i] == b0 + i;
        ck_assert(all_true(ok));
        /* Over all ranks the ids are each original row once. */
        int64_t n = a.nrows, *cnt = calloc((size_t)n, sizeof *cnt);
        for (int64_t i = 0; i < nr; i++)
            cnt[ids[i]]++;
        MPI_Allreduce(MPI_IN_PLACE, cnt, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        for (int64_t j = 0; j < n; j++)
            ck_assert_int_eq(cnt[j], 1);
        free(cnt);
        tf_close(h);
    }
    tf_csr_free(&a);
}
END_TEST

START_TEST(scatter_gather_any_ranges_and_row_types)
{
    tf_csr a;
    graph(G_RANDOM, &a);
    tf_handle *h;
    open_kind(&a, TF_PART_METIS, 0, &h);
    int64_t n = a.nrows, r0, nr;
    tf_get_rows(h, &r0, &nr);
    const int64_t *ids = tf_get_row_ids(h);
    /* Labels (int64), all held by rank 0 in original order. */
    int64_t on = g_rank == 0 ? n : 0;
    int64_t *lab = malloc((size_t)(n > 0 ? n : 1) * sizeof *lab);
    for (int64_t j = 0; j < on; j++)
        lab[j] = 3 * j + 1;
    int64_t *mine = malloc((size_t)(nr > 0 ? nr : 1) * sizeof *mine);
    ck_assert_int_eq(tf_scatter_rows(h, TF_ROWS, sizeof *lab, 0, on, lab, mine), TF_OK);
    int ok = 1;
    for (int64_t i = 0; i < nr; i++)
        ok &= mine[i] == 3 * ids[i] + 1;
    ck_assert(all_true(ok));
    /* Back, all to the last rank. */
    int64_t gn = g_rank == g_size - 1 ? n : 0, gb = 0;
    memset(lab, 0, (size_t)(n > 0 ? n : 1) * sizeof *lab);
    ck_assert_int_eq(tf_gather_rows(h, TF_ROWS, sizeof *lab, mine, gb, gn, lab), TF_OK);
    for (int64_t j = 0; j < gn; j++)
        ok &= lab[j] == 3 * j + 1;
    ck_assert(all_true(ok));
    /* Odd-sized rows (3 bytes), even shares. */
    int64_t e0, en;
    tf_even_rows(h, TF_ROWS, &e0, &en);
    unsigned char *src = malloc((size_t)(en > 0 ? en : 1) * 3), *dst = malloc((size_t)(nr > 0 ? nr : 1) * 3);
    for (int64_t j = 0; j < en; j++)
        for (int x = 0; x < 3; x++)
            src[j * 3 + x] = (unsigned char)((e0 + j) * 7 + x);
    ck_assert_int_eq(tf_scatter_rows(h, TF_ROWS, 3, e0, en, src, dst), TF_OK);
    for (int64_t i = 0; i < nr; i++)
        for (int x = 0; x < 3; x++)
            ok &= dst[i * 3 + x] == (unsigned char)(ids[i] * 7 + x);
    ck_assert(all_true(ok));
    free(src);
    free(dst);
    free(lab);
    free(mine);
    tf_close(h);
    tf_csr_free(&a);
}
END_TEST

START_TEST(bad_ranges_fail_everywhere)
{
    tf_csr a;
    graph(G_RANDOM, &a);
    tf_handle *h;
    open_kind(&a, TF_PART_METIS, 0, &h);
    int64_t e0, en, nr;
    tf_even_rows(h, TF_ROWS, &e0, &en);
    tf_get_rows(h, NULL, &nr);
    float *src = calloc((size_t)a.nrows + 1, sizeof *src), *dst = calloc((size_t)nr + 1, sizeof *dst);
    /* Every rank claims one row too many: not a tiling of [0, m). */
    int st = tf_scatter_rows(h, TF_ROWS, sizeof *src, e0, en + 1, src, dst);
    ck_assert(all_true(st == TF_ERR_ARG));
    ck_assert(same_message_everywhere(tf_last_error()));
    ck_assert(strchr(tf_last_error(), '\n') == NULL);
    /* Rank 0 starts at row 1. */
    st = tf_gather_rows(h, TF_ROWS, sizeof *src, dst, g_rank == 0 ? 1 : e0, en, src);
    ck_assert(all_true(st == TF_ERR_ARG));
    ck_assert(same_message_everywhere(tf_last_error()));
    st = tf_scatter_rows(h, TF_ROWS, 0, e0, en, src, dst);
    ck_assert(all_true(st == TF_ERR_ARG));
    st = tf_scatter_rows(h, 7, sizeof *src, e0, en, src, dst);
    ck_assert(all_true(st == TF_ERR_ARG));
    /* The last rank alone: rows of another size (the exchange would fail
     * inside MPI), NULL for rows it has to read or write (a crash). */
    int last = g_rank == g_size - 1;
    if (g_size > 1) {
        st = tf_scatter_rows(h, TF_ROWS, last ? 2 * sizeof *src : sizeof *src, e0, en, src, dst);
        ck_assert(all_true(st == TF_ERR_ARG));
        ck_assert(same_message_everywhere(tf_last_error()));
        ck_assert_ptr_nonnull(strstr(tf_last_error(), "row size must be the same"));
    }
    ck_assert_int_gt(en, 0);
    st = tf_scatter_rows(h, TF_ROWS, sizeof *src, e0, en, last ? NULL : src, dst);
    ck_assert(all_true(st == TF_ERR_ARG));
    ck_assert(same_message_everywhere(tf_last_error()));
    ck_assert_ptr_nonnull(strstr(tf_last_error(), "NULL as src"));
    st = tf_gather_rows(h, TF_ROWS, sizeof *src, dst, e0, en, last ? NULL : src);
    ck_assert(all_true(st == TF_ERR_ARG));
    ck_assert_ptr_nonnull(strstr(tf_last_error(), "NULL as dst"));
    free(src);
    free(dst);
    tf_close(h);
    tf_csr_free(&a);
}
END_TEST

/* --bands-from a METIS forward plan: the transposed plan renumbers with the
 * forward plan's permutation, tf_check_backward accepts the pair, and its C
 * in original ids is A^T B; a backward plan on the same bands without the
 * permutation is refused. */
START_TEST(backward_plan_reuses_the_permutation)
{
    tf_csr a, at, at2;
    graph(G_RANDOM, &a);
    graph(G_RANDOM, &at);
    graph(G_RANDOM, &at2);
    tf_plan_options of, ob, ob2;
    tf_plan_options_default(&of);
    of.nranks = g_size;
    of.k = 8;
    of.partition = TF_PART_METIS;
    tf_plan fwd, bwd, bad;
    ck_assert_int_eq(tf_matrix_prepare(&a, TF_NORM_NONE, 0, &of), TF_OK);
    ck_assert_msg(tf_plan_build(&a, &of, &fwd) == TF_OK, "%s", tf_error_message());
    tf_plan_options_default(&ob);
    ob.nranks = g_size;
    ob.k = 8;
    ck_assert_int_eq(tf_matrix_prepare(&at, TF_NORM_NONE, 1, &ob), TF_OK);
    ck_assert_msg(tf_bands_from(&fwd, "f.h5", "a.mtx", &at, &ob) == TF_OK, "%s",
                  tf_error_message());
    ck_assert_msg(tf_plan_build(&at, &ob, &bwd) == TF_OK, "%s", tf_error_message());
    ck_assert_int_eq(bwd.partition, TF_PART_METIS);
    ck_assert(memcmp(bwd.perm, fwd.perm, (size_t)a.nrows * sizeof *fwd.perm) == 0);
    /* The same bands, numbered as the file is. */
    tf_plan_options_default(&ob2);
    ob2.nranks = g_size;
    ob2.k = 8;
    ck_assert_int_eq(tf_matrix_prepare(&at2, TF_NORM_NONE, 1, &ob2), TF_OK);
    ob2.partition = TF_PART_ROWS;
    ob2.row_off = fwd.brow_off;
    ob2.brow_off = fwd.row_off;
    ck_assert_int_eq(tf_plan_build(&at2, &ob2, &bad), TF_OK);
    tf_handle *hf, *hb, *hx;
    ck_assert_int_eq(tf_open_plan(&fwd, MPI_COMM_WORLD, &hf), TF_OK);
    ck_assert_int_eq(tf_open_plan(&bwd, MPI_COMM_WORLD, &hb), TF_OK);
    ck_assert_int_eq(tf_open_plan(&bad, MPI_COMM_WORLD, &hx), TF_OK);
    ck_assert_msg(tf_check_backward(hf, hb) == TF_OK, "%s", tf_last_error());
    ck_assert_int_eq(tf_check_backward(hf, hx), TF_ERR_ARG);
    ck_assert(strstr(tf_last_error(), "numbers the rows differently") != NULL);
    /* C of the backward plan, row by row in original ids, against A^T B. */
    const int k = 8;
    tf_ctx *ctx;
    ck_assert_int_eq(tf_context_create(hb, k, NULL, &ctx), TF_OK);
    int64_t b0, nb, nr;
    float *b = tf_b_rows(ctx, &b0, &nb);
    tf_get_rows(hb, NULL, &nr);
    const int64_t *bids = tf_get_brow_ids(hb), *rids = tf_get_row_ids(hb);
    for (int64_t i = 0; i < nb; i++)
        tf_dense_fill(b + i * k, 5, bids[i], 1, k);
    float *c = malloc((size_t)(nr > 0 ? nr : 1) * k * sizeof *c);
    ck_assert_int_eq(tf_spmm(ctx, c), TF_OK);
    int ok = 1;
    double one[8];
    for (int64_t r = 0; r < nr; r++) {
        tf_reference_spmm_gen(&at, rids[r], rids[r] + 1, 5, k, one);
        for (int x = 0; x < k; x++)
            ok &= fabs(c[r * k + x] - one[x]) <= 1e-5 * (max_abs_row(&at, rids[r]) + 1e-30);
    }
    ck_assert(all_true(ok));
    free(c);
    tf_context_free(ctx);
    tf_close(hx);
    tf_close(hb);
    tf_close(hf);
    tf_plan_free(&fwd);
    tf_plan_free(&bwd);
    tf_plan_free(&bad);
    tf_csr_free(&a);
    tf_csr_free(&at);
    tf_csr_free(&at2);
}
END_TEST

static Suite *make_suite(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    Suite *s = suite_create("mpi_perm");
    TCase *tc = tcase_create("perm");
    tcase_add_test(tc, c_in_original_order_every_partition);
    tcase_add_test(tc, metis_plan_from_a_file);
    tcase_add_test(tc, row_ids_follow_the_plan);
    tcase_add_test(tc, scatter_gather_any_ranges_and_row_types);
    tcase_add_test(tc, bad_ranges_fail_everywhere);
    tcase_add_test(tc, backward_plan_reuses_the_permutation);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv) { return tf_test_run_mpi(&argc, &argv, make_suite); }
