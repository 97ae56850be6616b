/* Normalised and transposed plans through the executor, at any number of
 * ranks (run by tests/run_tests.sh at 1-4), with a rank that owns no rows
 * from 2 ranks on: the SpMM must equal an independent dense serial
 * reference of D_out^-1/2 (A + I) D_in^-1/2 (and of its transpose, and of
 * D_out^-1 A) computed here from the raw matrix; tf_check_backward must
 * accept the forward/backward pair and refuse every wrong one.
 *
 * Every rank builds the same plans in memory (or rank 0 writes one and all
 * read it) and opens them with the library; checks that could differ
 * between ranks are reduced first (all_true), so that all ranks fail an
 * assertion together and none hangs in a collective. */
#include "tf_test.h"

#include "tf_bands_from.h"
#include "tf_dense.h"
#include "tf_error.h"
#include "tf_exec.h"
#include "tf_partition.h"
#include "tf_plan_io.h"
#include "tf_planner.h"
#include "tf_prepare.h"
#include "twoface.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 97
#define K 5
#define SEED 11

static int g_rank, g_size;

static int all_true(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* The raw graph: a non-symmetric N x N matrix with positive weights, some
 * self loops already present (value 3), some rows and columns empty. With
 * symmetric = 1, A + A^T of the same. */
static void raw_matrix(tf_csr *a, int symmetric, uint64_t seed)
{
    tf_coo coo;
    if (tf_coo_init(&coo, N, N, 1024) != TF_OK)
        abort();
    uint64_t h = seed;
    for (int e = 0; e < 400; e++) {
        h = tf_mix64(h + 0x9E3779B97F4A7C15ULL);
        int32_t i = (int32_t)(h % N), j = (int32_t)((h >> 20) % N);
        if (i % 13 == 5 || j % 17 == 3) /* empty rows and columns */
            continue;
        double v = 0.25 + (double)((h >> 40) % 8);
        if (tf_coo_push(&coo, i, j, v) != TF_OK ||
            (symmetric && tf_coo_push(&coo, j, i, v) != TF_OK))
            abort();
    }
    for (int32_t i = 0; i < N; i += 9)
        if (i % 13 != 5 && tf_coo_push(&coo, i, i, 3.0) != TF_OK)
            abort();
    if (tf_csr_from_coo(a, &coo) != TF_OK)
        abort();
    tf_coo_free(&coo);
}

/* The reference, densely and in double: Â (or Â^T) from the raw matrix. */
static double *reference_matrix(const tf_csr *raw, int norm, int transpose)
{
    double *d = calloc((size_t)N * N, sizeof *d);
    for (int64_t i = 0; i < N; i++)
        for (int64_t e = raw->rowptr[i]; e < raw->rowptr[i + 1]; e++)
            d[i * N + raw->col[e]] = raw->val[e];
    if (norm == TF_NORM_GCN) {
        int has_loop[N] = {0};
        for (int64_t i = 0; i < N; i++)
            for (int64_t e = raw->rowptr[i]; e < raw->rowptr[i + 1]; e++)
                if (raw->col[e] == i)
                    has_loop[i] = 1;
        for (int i = 0; i < N; i++)
            if (!has_loop[i])
                d[i * N + i] = 1.0;
    }
    if (norm != TF_NORM_NONE) {
        double rs[N] = {0}, cs[N] = {0};
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) {
                rs[i] += d[i * N + j];
                cs[j] += d[i * N + j];
            }
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) {
                double s = norm == TF_NORM_MEAN ? (rs[i] > 0 ? 1.0 / rs[i] : 0.0)
                                                : (rs[i] > 0 ? 1.0 / sqrt(rs[i]) : 0.0) *
                                                      (cs[j] > 0 ? 1.0 / sqrt(cs[j]) : 0.0);
                d[i * N + j] *= s;
            }
    }
    if (transpose)
        for (int i = 0; i < N; i++)
            for (int j = i + 1; j < N; j++) {
                double t = d[i * N + j];
                d[i * N + j] = d[j * N + i];
                d[j * N + i] = t;
            }
    return d;
}

/* Bands with rank 1 empty (from 2 ranks on), the rest split evenly. */
static void bands(int64_t *off)
{
    int P = g_size;
    off[0] = 0;
    int live = P >= 2 ? P - 1 : 1, k = 0;
    for (int p = 0; p < P; p++) {
        int64_t len = (p == 1 && P >= 2) ? 0 : (N / live + (k < N % live ? 1 : 0));
        if (!(p == 1 && P >= 2))
            k++;
        off[p + 1] = off[p] + len;
    }
}

/* A plan for this communicator of the raw matrix, normalised and maybe
 * transposed: with the given bands (row_off for A's rows, brow_off for B's),
 * or with those of the forward plan fwd (tf_bands_from), else partitioned
 * by nonzeros. */
static int make_plan(int symmetric, uint64_t seed, int norm, int transpose,
                     const int64_t *row_off, const int64_t *brow_off, const tf_plan *fwd,
                     tf_plan *out)
{
    tf_csr a;
    raw_matrix(&a, symmetric, seed);
    tf_plan_options o;
    tf_plan_options_default(&o);
    o.nranks = g_size;
    o.partition = TF_PART_NNZ;
    o.row_off = row_off;
    o.brow_off = brow_off;
    int st = tf_matrix_prepare(&a, norm, transpose, &o);
    if (st == TF_OK && fwd)
        st = tf_bands_from(fwd, "f.h5", "a.mtx", &a, &o);
    if (st == TF_OK)
        st = tf_plan_build(&a, &o, out);
    tf_csr_free(&a);
    return st;
}

/* make_plan with fixed bands, opened on every rank. */
static tf_handle *open_plan(int symmetric, uint64_t seed, int norm, int transpose,
                            const int64_t *row_off, const int64_t *brow_off)
{
    tf_plan plan;
    int st = make_plan(symmetric, seed, norm, transpose, row_off, brow_off, NULL, &plan);
    ck_assert_msg(all_true(st == TF_OK), "planning: %s", tf_error_message());
    tf_handle *h = NULL;
    st = tf_open_plan(&plan, MPI_COMM_WORLD, &h);
    ck_assert_msg(st == TF_OK, "open: %s", tf_error_message());
    return h;
}

/* One SpMM against the dense reference: max error over all ranks. */
static double spmm_error(tf_handle *h, const double *ref)
{
    tf_ctx *ctx = NULL;
    ck_assert_int_eq(tf_context_create(h, K, NULL, &ctx), TF_OK);
    int64_t b0, nb, r0, nr;
    float *b = tf_b_rows(ctx, &b0, &nb);
    if (nb > 0)
        tf_dense_fill(b, SEED, b0, nb, K);
    tf_get_rows(h, &r0, &nr);
    float *c = malloc((size_t)(nr > 0 ? nr : 1) * K * sizeof *c);
    ck_assert_int_eq(tf_spmm(ctx, c), TF_OK);
    double err = 0;
    for (int64_t i = 0; i < nr; i++)
        for (int k = 0; k < K; k++) {
            double want = 0;
            for (int j = 0; j < N; j++)
                want += ref[(r0 + i) * N + j] * (double)tf_dense_value(SEED, j, k);
            double e = fabs((double)c[i * K + k] - want);
            if (e > err)
                err = e;
        }
    free(c);
    tf_context_free(ctx);
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return err;
}

/* The forward plan's bands: rows with rank 1 empty, B rows split evenly,
 * so that from 2 ranks on the two differ and a backward plan must swap them. */
static void forward_bands(int64_t *ro, int64_t *bo)
{
    bands(ro);
    ck_assert_int_eq(tf_partition_rows(N, g_size, bo), TF_OK);
}

START_TEST(gcn_forward_and_transposed_products_match_the_reference)
{
    int64_t ro[65], bo[65];
    forward_bands(ro, bo);
    tf_csr raw;
    raw_matrix(&raw, 0, 1);
    for (int norm = TF_NORM_NONE; norm <= TF_NORM_MEAN; norm++) {
        for (int tr = 0; tr < 2; tr++) {
            tf_handle *h = open_plan(0, 1, norm, tr, tr ? bo : ro, tr ? ro : bo);
            ck_assert_str_eq(tf_get_normalization(h), tf_norm_name(norm));
            ck_assert_int_eq(tf_get_transposed(h), tr);
            ck_assert_int_eq(tf_get_symmetric(h), 0);
            int64_t r0, nr, b0, nb;
            tf_get_rows(h, &r0, &nr);
            tf_get_brows(h, &b0, &nb);
            ck_assert(all_true(g_size < 2 || g_rank != 1 || (tr ? nb : nr) == 0));
            double *ref = reference_matrix(&raw, norm, tr);
            double err = spmm_error(h, ref);
            ck_assert_msg(err < 1e-5, "norm %s, transposed %d: max error %g",
                          tf_norm_name(norm), tr, err);
            free(ref);
            tf_close(h);
        }
    }
    tf_csr_free(&raw);
}
END_TEST

/* The same through a file: rank 0 writes, every rank reads its part and
 * tf_open recomputes the (salted) fingerprint. */
START_TEST(normalised_plan_from_a_file)
{
    char path[256] = "";
    int st = TF_OK;
    uint64_t want = 0;
    if (g_rank == 0) {
        snprintf(path, sizeof path, "%s/tf_mpi_normalize_%d.h5",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
        tf_plan plan;
        if ((st = make_plan(0, 1, TF_NORM_GCN, 1, NULL, NULL, NULL, &plan)) == TF_OK) {
            want = plan.checksum;
            st = tf_plan_write(path, &plan, 3);
            tf_plan_free(&plan);
        }
    }
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Bcast(&want, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    ck_assert_msg(all_true(st == TF_OK), "%s", tf_error_message());
    tf_handle *h = NULL;
    st = tf_open(path, MPI_COMM_WORLD, &h);
    ck_assert_msg(st == TF_OK, "%s", tf_error_message());
    ck_assert_str_eq(tf_get_normalization(h), "gcn");
    ck_assert_int_eq(tf_get_transposed(h), 1);
    ck_assert_uint_eq(tf_get_fingerprint(h), want);
    tf_csr raw;
    raw_matrix(&raw, 0, 1);
    double *ref = reference_matrix(&raw, TF_NORM_GCN, 1);
    double err = spmm_error(h, ref);
    ck_assert_msg(err < 1e-5, "max error %g", err);
    free(ref);
    tf_csr_free(&raw);
    tf_close(h);
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0)
        unlink(path);
}
END_TEST

START_TEST(check_backward_accepts_the_pair_and_refuses_the_rest)
{
    int64_t ro[65], bo[65];
    forward_bands(ro, bo);
    tf_handle *fwd = open_plan(0, 1, TF_NORM_GCN, 0, ro, bo);
    tf_handle *bwd = open_plan(0, 1, TF_NORM_GCN, 1, bo, ro);
    ck_assert_msg(tf_check_backward(fwd, bwd) == TF_OK, "%s", tf_last_error());
    ck_assert_uint_eq(tf_get_fingerprint(bwd) != tf_get_fingerprint(fwd), 1);

    /* Not transposed, and the matrix is not symmetric. */
    ck_assert_int_eq(tf_check_backward(fwd, fwd), TF_ERR_ARG);
    ck_assert(strstr(tf_last_error(), "not made by twoface-plan --transpose") != NULL);
    /* The wrong way round: bwd's transpose is fwd's matrix, but bwd is not
     * fwd's backward plan. */
    ck_assert_int_eq(tf_check_backward(bwd, fwd), TF_ERR_ARG);

    tf_handle *other = open_plan(0, 2, TF_NORM_GCN, 1, bo, ro);
    ck_assert_int_eq(tf_check_backward(fwd, other), TF_ERR_ARG);
    ck_assert(strstr(tf_last_error(), "the transpose of another matrix") != NULL);
    tf_close(other);

    tf_handle *mean = open_plan(0, 1, TF_NORM_MEAN, 1, bo, ro);
    ck_assert_int_eq(tf_check_backward(fwd, mean), TF_ERR_ARG);
    ck_assert(strstr(tf_last_error(), "normalised 'mean', the forward plan 'gcn'") != NULL);
    tf_close(mean);

    /* Other bands: the forward plan's own, unswapped (differ from 2 ranks on). */
    if (g_size >= 2) {
        tf_handle *moved = open_plan(0, 1, TF_NORM_GCN, 1, ro, bo);
        ck_assert_int_eq(tf_check_backward(fwd, moved), TF_ERR_ARG);
        ck_assert(strstr(tf_last_error(), "plan it with --bands-from") != NULL);
        tf_close(moved);
    }

    /* A symmetric matrix: its own plan serves the transpose when its row and
     * B-row bands agree (as twoface-plan makes them for a square matrix),
     * and so does a transposed plan of it. */
    if (g_size >= 2) {
        tf_handle *uneven = open_plan(1, 3, TF_NORM_GCN, 0, ro, bo);
        ck_assert_int_eq(tf_get_symmetric(uneven), 1);
        ck_assert_int_eq(tf_check_backward(uneven, uneven), TF_ERR_ARG);
        tf_close(uneven);
    }
    tf_handle *sym = open_plan(1, 3, TF_NORM_GCN, 0, ro, ro);
    ck_assert_int_eq(tf_get_symmetric(sym), 1);
    ck_assert_msg(tf_check_backward(sym, sym) == TF_OK, "%s", tf_last_error());
    tf_handle *symt = open_plan(1, 3, TF_NORM_GCN, 1, ro, ro);
    ck_assert_int_eq(tf_get_symmetric(symt), 1);
    ck_assert_uint_eq(tf_get_fingerprint(symt), tf_get_fingerprint(sym));
    ck_assert_msg(tf_check_backward(sym, symt) == TF_OK, "%s", tf_last_error());
    /* ... but not a plan of another symmetric matrix. */
    tf_handle *sym2 = open_plan(1, 4, TF_NORM_GCN, 0, ro, ro);
    ck_assert_int_eq(tf_check_backward(sym, sym2), TF_ERR_ARG);
    ck_assert(strstr(tf_last_error(), "not of the forward plan's (symmetric) matrix") != NULL);
    tf_close(sym2);
    tf_close(symt);
    tf_close(sym);
    ck_assert_int_eq(tf_check_backward(NULL, bwd), TF_ERR_ARG);
    tf_close(bwd);
    tf_close(fwd);
}
END_TEST

/* --bands-from's checks on a real forward plan: a transposed plan takes
 * the forward plan's B-row bands as its row bands. */
START_TEST(bands_from_lines_up_the_backward_plan)
{
    tf_plan fplan, bplan;
    ck_assert_int_eq(make_plan(0, 1, TF_NORM_GCN, 0, NULL, NULL, NULL, &fplan), TF_OK);
    ck_assert_int_eq(make_plan(0, 1, TF_NORM_GCN, 1, NULL, NULL, &fplan, &bplan), TF_OK);
    ck_assert(memcmp(bplan.row_off, fplan.brow_off, ((size_t)g_size + 1) * 8) == 0);
    ck_assert(memcmp(bplan.brow_off, fplan.row_off, ((size_t)g_size + 1) * 8) == 0);
    ck_assert_int_eq(bplan.partition, TF_PART_NNZ);
    tf_handle *fwd = NULL, *bwd = NULL;
    ck_assert_int_eq(tf_open_plan(&fplan, MPI_COMM_WORLD, &fwd), TF_OK);
    ck_assert_int_eq(tf_open_plan(&bplan, MPI_COMM_WORLD, &bwd), TF_OK);
    ck_assert_msg(tf_check_backward(fwd, bwd) == TF_OK, "%s", tf_last_error());
    tf_close(bwd);
    tf_close(fwd);
}
END_TEST

static Suite *make_suite(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    Suite *s = suite_create("mpi_normalize");
    TCase *tc = tcase_create("mpi_normalize");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, gcn_forward_and_transposed_products_match_the_reference);
    tcase_add_test(tc, normalised_plan_from_a_file);
    tcase_add_test(tc, check_backward_accepts_the_pair_and_refuses_the_rest);
    tcase_add_test(tc, bands_from_lines_up_the_backward_plan);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv) { return tf_test_run_mpi(&argc, &argv, make_suite); }
