/* The three baselines (allgather, 1.5D shift, sparsity-aware p2p) against the
 * serial reference, at whatever rank count the suite runs with: every rank
 * builds the same matrix, takes its rows, fills its B band with the
 * generator, runs the baseline and checks its C rows; the volume counters
 * are checked against formulas computed here independently. */
#include "tf_baseline.h"
#include "tf_csr.h"
#include "tf_dense.h"
#include "tf_error.h"
#include "tf_partition.h"
#include "tf_reference.h"
#include "tf_test.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-5

static int nranks(void)
{
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    return p;
}

static int myrank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

/* A check every rank makes at the same point: passes only if it holds on
 * every rank, so that a failure on one rank fails the test on all of them
 * instead of leaving the others waiting in the next collective. */
#define CHECK_ALL(cond, ...)                                                                  \
    do {                                                                                       \
        int ok_ = (cond) ? 1 : 0, all_ = 0;                                                    \
        char why_[512] = "failed on another rank";                                            \
        if (!ok_)                                                                              \
            snprintf(why_, sizeof why_, __VA_ARGS__);                                          \
        MPI_Allreduce(&ok_, &all_, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);                       \
        ck_assert_msg(all_, "%s", why_);                                                       \
    } while (0)

/* Input for this rank from the whole matrix and the two partitions. The
 * rowptr is rebased into *lrowptr (caller frees); col/val point into a. */
static void make_input(const tf_csr *a, const int64_t *row_off, const int64_t *brow_off, int k,
                       int c, tf_baseline_input *in, int64_t **lrowptr)
{
    int P = nranks(), r = myrank();
    int64_t r0 = row_off[r], nr = row_off[r + 1] - row_off[r];
    int64_t *rp = malloc((size_t)(nr + 1) * sizeof *rp);
    ck_assert_ptr_nonnull(rp);
    for (int64_t i = 0; i <= nr; i++)
        rp[i] = a->rowptr[r0 + i] - a->rowptr[r0];
    memset(in, 0, sizeof *in);
    in->comm = MPI_COMM_WORLD;
    in->nranks = P;
    in->rank = r;
    in->m = a->nrows;
    in->n = a->ncols;
    in->row_off = row_off;
    in->brow_off = brow_off;
    in->nrows = nr;
    in->rowptr = rp;
    in->col = a->col + a->rowptr[r0];
    in->val = a->val + a->rowptr[r0];
    in->k = k;
    in->replication = c;
    *lrowptr = rp;
}

/* Volume this rank should see per SpMM, computed from the definitions. */
static void expected_volume(const tf_csr *a, const int64_t *row_off, const int64_t *brow_off,
                            int k, int algo, int c, int64_t *bytes, int64_t *msgs)
{
    int P = nranks(), r = myrank();
    int64_t nb = brow_off[r + 1] - brow_off[r];
    if (algo == TF_BASE_ALLGATHER) {
        *bytes = (a->ncols - nb) * k * 4;
        *msgs = P - 1;
    } else if (algo == TF_BASE_SHIFT) {
        int cc = c ? c : 1, q = P / cc;
        int64_t rows = 0;
        /* Sub-blocks of the other ranks of my layer, plus my rows from the
         * other layers' partials. */
        for (int p = 0; p < P; p++)
            if (p % cc == r % cc && p != r)
                rows += brow_off[p + 1] - brow_off[p];
        rows += (int64_t)(cc - 1) * (row_off[r + 1] - row_off[r]);
        *bytes = rows * k * 4;
        *msgs = (q - 1) + (cc - 1);
    } else {
        char *needed = calloc((size_t)a->ncols + 1, 1);
        int *from = calloc((size_t)P, sizeof *from);
        ck_assert(needed && from);
        for (int64_t e = a->rowptr[row_off[r]]; e < a->rowptr[row_off[r + 1]]; e++)
            needed[a->col[e]] = 1;
        int64_t rows = 0;
        for (int64_t j = 0; j < a->ncols; j++)
            if (needed[j] && (j < brow_off[r] || j >= brow_off[r + 1])) {
                rows++;
                from[tf_partition_owner(brow_off, P, j)] = 1;
            }
        *msgs = 0;
        for (int p = 0; p < P; p++)
            *msgs += from[p];
        *bytes = rows * k * 4;
        free(needed);
        free(from);
    }
}

/* Creates the baseline, runs it reps times with a different B each time,
 * checks C and the counters, frees it. Returns the worst scaled error. */
static double run_case(const tf_csr *a, const int64_t *row_off, const int64_t *brow_off, int k,
                       int algo, int c, int reps, uint64_t seed)
{
    int r = myrank();
    tf_baseline_input in;
    int64_t *lrp;
    make_input(a, row_off, brow_off, k, c, &in, &lrp);
    tf_baseline *bl = NULL;
    int st = tf_baseline_create(algo, &in, &bl);
    ck_assert_msg(st == TF_OK, "create %s c=%d k=%d: %s", tf_baseline_name(algo), c, k,
                  tf_error_message());
    ck_assert_ptr_nonnull(bl);
    int64_t nr = in.nrows, nb = brow_off[r + 1] - brow_off[r];
    float *bb = malloc((size_t)(nb * k + 1) * sizeof *bb);
    float *cc = malloc((size_t)(nr * k + 1) * sizeof *cc);
    double *cref = malloc((size_t)(nr * k + 1) * sizeof *cref);
    double *absrow = calloc((size_t)nr + 1, sizeof *absrow);
    ck_assert(bb && cc && cref && absrow);
    for (int64_t i = 0; i < nr; i++)
        for (int64_t e = a->rowptr[row_off[r] + i]; e < a->rowptr[row_off[r] + i + 1]; e++)
            absrow[i] += fabs((double)a->val[e]);
    double worst = 0.0;
    for (int rep = 0; rep < reps; rep++) {
        uint64_t s = seed + 7919u * (uint64_t)rep;
        tf_dense_fill(bb, s, brow_off[r], nb, k);
        for (int64_t x = 0; x < nr * k; x++)
            cc[x] = NAN; /* every entry must be written */
        st = tf_baseline_run(bl, nb ? bb : NULL, nr ? cc : NULL);
        CHECK_ALL(st == TF_OK, "run: %s", tf_error_message());
        tf_reference_spmm_gen(a, row_off[r], row_off[r + 1], s, k, cref);
        double err = tf_reference_scaled_error(cc, cref, absrow, nr, k, 1.0);
        if (err > worst)
            worst = err;
    }
    CHECK_ALL(worst < TOL, "%s c=%d k=%d rank %d: scaled error %g", tf_baseline_name(algo), c,
              k, r, worst);

    int64_t eb, em;
    expected_volume(a, row_off, brow_off, k, algo, c, &eb, &em);
    const tf_baseline_counters *ct = tf_baseline_counters_get(bl);
    CHECK_ALL(ct->bytes_received == eb * reps && ct->messages == em * reps,
              "%s c=%d k=%d rank %d: counters %lld bytes %lld msgs, expected %lld %lld",
              tf_baseline_name(algo), c, k, r, (long long)ct->bytes_received,
              (long long)ct->messages, (long long)(eb * reps), (long long)(em * reps));
    ck_assert(ct->comm_wait >= 0.0 && ct->compute >= 0.0);
    if (algo != TF_BASE_P2P) {
        int64_t pb, pm;
        ck_assert_int_eq(tf_baseline_predict(algo, nranks(), r, row_off, brow_off, c, k, &pb, &pm),
                         TF_OK);
        ck_assert_int_eq(pb, eb);
        ck_assert_int_eq(pm, em);
    }
    tf_baseline_counters_reset(bl);
    ck_assert_int_eq(tf_baseline_counters_get(bl)->messages, 0);
    ck_assert_int_eq(tf_baseline_counters_get(bl)->bytes_received, 0);
    ck_assert_int_eq(tf_baseline_algo_of(bl), algo);
    ck_assert_int_eq(tf_baseline_replication(bl), algo == TF_BASE_SHIFT ? (c ? c : 1) : 1);
    ck_assert(tf_baseline_memory(bl) > 0);
    ck_assert_int_eq(tf_baseline_free(bl), TF_OK);
    free(bb);
    free(cc);
    free(cref);
    free(absrow);
    free(lrp);
    return worst;
}

/* Every algorithm, shift with every replication dividing P. */
static void run_all(const tf_csr *a, const int64_t *row_off, const int64_t *brow_off, int k,
                    int reps, uint64_t seed)
{
    int P = nranks();
    run_case(a, row_off, brow_off, k, TF_BASE_ALLGATHER, 0, reps, seed);
    run_case(a, row_off, brow_off, k, TF_BASE_P2P, 0, reps, seed + 1);
    for (int c = 1; c <= P; c++)
        if (P % c == 0)
            run_case(a, row_off, brow_off, k, TF_BASE_SHIFT, c, reps, seed + 2 + (uint64_t)c);
    /* replication 0 means 1 */
    run_case(a, row_off, brow_off, k, TF_BASE_SHIFT, 0, reps, seed + 100);
}

/* Partitions: A/C rows by kind, B rows equal (or the same offsets as A when
 * same_b and the matrix is square). */
static void partitions(const tf_csr *a, int kind, int same_b, int64_t *row_off,
                       int64_t *brow_off)
{
    int P = nranks();
    if (kind == TF_PART_NNZ)
        ck_assert_int_eq(tf_partition_nnz(a, P, row_off), TF_OK);
    else
        ck_assert_int_eq(tf_partition_rows(a->nrows, P, row_off), TF_OK);
    if (same_b && a->nrows == a->ncols)
        memcpy(brow_off, row_off, (size_t)(P + 1) * sizeof *row_off);
    else
        ck_assert_int_eq(tf_partition_rows(a->ncols, P, brow_off), TF_OK);
}

static void whole_matrix(const tf_csr *a, int kind, int same_b, const int *ks, int nk, int reps,
                         uint64_t seed)
{
    int P = nranks();
    int64_t *ro = malloc((size_t)(P + 1) * sizeof *ro), *bo = malloc((size_t)(P + 1) * sizeof *bo);
    ck_assert(ro && bo);
    partitions(a, kind, same_b, ro, bo);
    for (int x = 0; x < nk; x++)
        run_all(a, ro, bo, ks[x], reps, seed + 1000u * (uint64_t)x);
    free(ro);
    free(bo);
}

static void from_triplets(tf_csr *a, int64_t m, int64_t n, int64_t cnt, const int32_t *ri,
                          const int32_t *ci, const double *v)
{
    tf_coo coo;
    ck_assert_int_eq(tf_coo_init(&coo, m, n, cnt), TF_OK);
    for (int64_t e = 0; e < cnt; e++)
        ck_assert_int_eq(tf_coo_push(&coo, ri[e], ci[e], v[e]), TF_OK);
    ck_assert_int_eq(tf_csr_from_coo(a, &coo), TF_OK);
    tf_coo_free(&coo);
}

static const int KS[] = {1, 7, 64};

/* ---- Tests -------------------------------------------------------------- */

START_TEST(names_roundtrip)
{
    int algo = 0;
    for (int a = TF_BASE_ALLGATHER; a <= TF_BASE_P2P; a++) {
        ck_assert_int_eq(tf_baseline_parse(tf_baseline_name(a), &algo), TF_OK);
        ck_assert_int_eq(algo, a);
    }
    ck_assert_str_eq(tf_baseline_name(TF_BASE_SHIFT), "shift");
    ck_assert_str_eq(tf_baseline_name(42), "?");
    ck_assert_int_eq(tf_baseline_parse("ring", &algo), TF_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "'ring'"));
}
END_TEST

START_TEST(square_rows_partition)
{
    tf_csr a;
    tf_test_random_csr(&a, 200, 200, 1600, 11);
    whole_matrix(&a, TF_PART_ROWS, 0, KS, 3, 2, 101);
    tf_csr_free(&a);
}
END_TEST

START_TEST(square_nnz_partition_same_b)
{
    tf_csr a;
    tf_test_random_csr(&a, 157, 157, 1200, 12);
    whole_matrix(&a, TF_PART_NNZ, 1, KS, 3, 1, 202);
    tf_csr_free(&a);
}
END_TEST

START_TEST(rectangular_tall)
{
    tf_csr a;
    tf_test_random_csr(&a, 181, 67, 900, 13);
    whole_matrix(&a, TF_PART_NNZ, 0, KS, 3, 1, 303);
    tf_csr_free(&a);
}
END_TEST

START_TEST(rectangular_wide)
{
    tf_csr a;
    tf_test_random_csr(&a, 53, 233, 700, 14);
    whole_matrix(&a, TF_PART_ROWS, 0, KS, 3, 1, 404);
    tf_csr_free(&a);
}
END_TEST

/* Nonzeros only in rows < 30 with i % 3 == 0 and in columns j % 4 == 1: many
 * empty rows and columns, and (nnz partition) bands without nonzeros. */
START_TEST(empty_rows_and_columns)
{
    int32_t ri[400], ci[400];
    double v[400];
    int cnt = 0;
    uint64_t h = 5;
    for (int e = 0; e < 400; e++) {
        h = tf_mix64(h + 1);
        int i = (int)(h % 10) * 3;
        int j = (int)((h >> 20) % 25) * 4 + 1;
        ri[cnt] = i;
        ci[cnt] = j;
        v[cnt++] = (double)((h >> 40) % 1000) / 250.0 - 2.0;
    }
    tf_csr a;
    from_triplets(&a, 120, 100, cnt, ri, ci, v);
    int ks[] = {7};
    whole_matrix(&a, TF_PART_NNZ, 0, ks, 1, 1, 505);
    whole_matrix(&a, TF_PART_ROWS, 0, ks, 1, 1, 506);
    tf_csr_free(&a);
    /* No nonzeros at all. */
    tf_csr z;
    from_triplets(&z, 40, 30, 0, ri, ci, v);
    whole_matrix(&z, TF_PART_ROWS, 0, ks, 1, 1, 507);
    tf_csr_free(&z);
}
END_TEST

/* Column 3 full (every rank needs that one B row) plus random entries. */
START_TEST(one_dense_column)
{
    enum { M = 96, N = 80, R = 300 };
    int32_t ri[M + R], ci[M + R];
    double v[M + R];
    int cnt = 0;
    for (int i = 0; i < M; i++) {
        ri[cnt] = i;
        ci[cnt] = 3;
        v[cnt++] = 1.0 + (i % 5) * 0.25;
    }
    uint64_t h = 77;
    for (int e = 0; e < R; e++) {
        h = tf_mix64(h + 3);
        ri[cnt] = (int32_t)(h % M);
        ci[cnt] = (int32_t)((h >> 24) % N);
        v[cnt++] = (double)((h >> 44) % 512) / 128.0 - 2.0;
    }
    tf_csr a;
    from_triplets(&a, M, N, cnt, ri, ci, v);
    int ks[] = {1, 64};
    whole_matrix(&a, TF_PART_NNZ, 0, ks, 2, 1, 606);
    tf_csr_free(&a);
}
END_TEST

/* 3 x 3: at 4 ranks the last rank owns no rows of A, C or B. */
START_TEST(tiny_3x3)
{
    int32_t ri[] = {0, 0, 1, 2, 2, 2};
    int32_t ci[] = {0, 2, 1, 0, 1, 2};
    double v[] = {1.0, -2.0, 0.5, 3.0, 1.5, -1.0};
    tf_csr a;
    from_triplets(&a, 3, 3, 6, ri, ci, v);
    whole_matrix(&a, TF_PART_ROWS, 1, KS, 3, 2, 707);
    tf_csr_free(&a);
}
END_TEST

/* A 1 x n row and an m x 1 column: most ranks own nothing on one side. */
START_TEST(single_row_and_column)
{
    int32_t ri[5], ci[5];
    double v[5];
    for (int e = 0; e < 5; e++) {
        ri[e] = 0;
        ci[e] = e;
        v[e] = e + 1.0;
    }
    tf_csr a;
    from_triplets(&a, 1, 5, 5, ri, ci, v);
    int ks[] = {3};
    whole_matrix(&a, TF_PART_ROWS, 0, ks, 1, 1, 808);
    tf_csr_free(&a);
    for (int e = 0; e < 5; e++) {
        ri[e] = e;
        ci[e] = 0;
    }
    from_triplets(&a, 5, 1, 5, ri, ci, v);
    whole_matrix(&a, TF_PART_ROWS, 0, ks, 1, 1, 809);
    tf_csr_free(&a);
}
END_TEST

/* Big enough that the compute and pack loops go parallel (more than 2^16
 * multiply-adds per rank) when OMP_NUM_THREADS > 1. */
START_TEST(large_enough_for_threads)
{
    int P = nranks();
    tf_csr a;
    tf_test_random_csr(&a, 2000, 1800, 24000, 61);
    int64_t *ro = malloc((size_t)(P + 1) * sizeof *ro), *bo = malloc((size_t)(P + 1) * sizeof *bo);
    partitions(&a, TF_PART_NNZ, 0, ro, bo);
    run_case(&a, ro, bo, 64, TF_BASE_ALLGATHER, 0, 1, 950);
    run_case(&a, ro, bo, 64, TF_BASE_P2P, 0, 1, 951);
    run_case(&a, ro, bo, 64, TF_BASE_SHIFT, 1, 1, 952);
    if (P > 1)
        run_case(&a, ro, bo, 64, TF_BASE_SHIFT, P, 1, 953);
    free(ro);
    free(bo);
    tf_csr_free(&a);
}
END_TEST

/* 50 SpMMs on one handle, B changing every time. */
START_TEST(repeated_runs_changing_b)
{
    int P = nranks();
    tf_csr a;
    tf_test_random_csr(&a, 120, 120, 900, 21);
    int64_t *ro = malloc((size_t)(P + 1) * sizeof *ro), *bo = malloc((size_t)(P + 1) * sizeof *bo);
    partitions(&a, TF_PART_NNZ, 0, ro, bo);
    run_case(&a, ro, bo, 16, TF_BASE_ALLGATHER, 0, 50, 900);
    run_case(&a, ro, bo, 16, TF_BASE_P2P, 0, 50, 901);
    run_case(&a, ro, bo, 16, TF_BASE_SHIFT, 1, 50, 902);
    run_case(&a, ro, bo, 16, TF_BASE_SHIFT, P, 50, 903);
    if (P % 2 == 0 && P > 2)
        run_case(&a, ro, bo, 16, TF_BASE_SHIFT, 2, 50, 904);
    free(ro);
    free(bo);
    tf_csr_free(&a);
}
END_TEST

/* Same message on every rank: hash it and compare the extremes. */
static void assert_same_message_everywhere(void)
{
    const char *msg = tf_error_message();
    uint64_t h = 0;
    for (const char *p = msg; *p; p++)
        h = tf_mix64(h ^ (unsigned char)*p);
    uint64_t lo, hi;
    MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    ck_assert_msg(lo == hi, "ranks got different messages; this one: %s", msg);
}

START_TEST(bad_replication_fails_everywhere)
{
    int P = nranks();
    tf_csr a;
    tf_test_random_csr(&a, 40, 40, 200, 31);
    int64_t *ro = malloc((size_t)(P + 1) * sizeof *ro), *bo = malloc((size_t)(P + 1) * sizeof *bo);
    partitions(&a, TF_PART_ROWS, 1, ro, bo);
    int bad[] = {P + 1, P == 4 ? 3 : 2 * P, -1};
    for (int x = 0; x < 3; x++) {
        if (bad[x] > 0 && P % bad[x] == 0)
            continue;
        tf_baseline_input in;
        int64_t *lrp;
        make_input(&a, ro, bo, 8, bad[x], &in, &lrp);
        tf_baseline *bl = (tf_baseline *)&in; /* must be reset to NULL */
        int st = tf_baseline_create(TF_BASE_SHIFT, &in, &bl);
        ck_assert_int_eq(st, TF_ERR_ARG);
        ck_assert_ptr_null(bl);
        char want[128];
        snprintf(want, sizeof want, "--replication %d does not divide %d ranks", bad[x], P);
        ck_assert_str_eq(tf_error_message(), want);
        assert_same_message_everywhere();
        free(lrp);
    }
    /* The predictor says the same. */
    int64_t pb, pm;
    ck_assert_int_eq(tf_baseline_predict(TF_BASE_SHIFT, P, myrank(), ro, bo, P + 1, 8, &pb, &pm),
                     TF_ERR_ARG);
    /* Replication is ignored by the other algorithms, and the communicator
     * is still usable after the failures. */
    run_case(&a, ro, bo, 8, TF_BASE_P2P, P + 1, 1, 3100);
    free(ro);
    free(bo);
    tf_csr_free(&a);
}
END_TEST

/* One rank passes a bad column index: every rank fails with its message. */
START_TEST(local_error_agreed)
{
    int P = nranks(), r = myrank();
    tf_csr a;
    tf_test_random_csr(&a, 60, 60, 400, 41);
    int64_t *ro = malloc((size_t)(P + 1) * sizeof *ro), *bo = malloc((size_t)(P + 1) * sizeof *bo);
    partitions(&a, TF_PART_ROWS, 1, ro, bo);
    for (int algo = TF_BASE_ALLGATHER; algo <= TF_BASE_P2P; algo++) {
        tf_baseline_input in;
        int64_t *lrp;
        make_input(&a, ro, bo, 4, 1, &in, &lrp);
        int32_t *col = NULL;
        int64_t nnz = in.rowptr[in.nrows];
        if (r == P - 1 && nnz > 0) {
            col = malloc((size_t)nnz * sizeof *col);
            memcpy(col, in.col, (size_t)nnz * sizeof *col);
            col[nnz - 1] = (int32_t)a.ncols; /* out of range */
            in.col = col;
        }
        tf_baseline *bl = NULL;
        int st = tf_baseline_create(algo, &in, &bl);
        ck_assert_int_eq(st, TF_ERR_ARG);
        ck_assert_ptr_null(bl);
        char want[32];
        snprintf(want, sizeof want, "rank %d:", P - 1);
        ck_assert_msg(strstr(tf_error_message(), want) && strstr(tf_error_message(), "column"),
                      "message: %s", tf_error_message());
        assert_same_message_everywhere();
        free(col);
        free(lrp);
    }
    free(ro);
    free(bo);
    tf_csr_free(&a);
}
END_TEST

/* allgather's whole copy of B past the node's available memory is refused
 * on every rank with one message, before Linux grants it (the library's own
 * check, beside twoface-exec's preflight); with room for it, it runs. */
START_TEST(copy_of_b_beyond_the_node_refused)
{
    int P = nranks();
    tf_csr a;
    /* 3000 columns x K = 6000 floats: a 68.7 MiB copy of B on every rank. */
    tf_test_random_csr(&a, 3000, 3000, 6000, 61);
    int64_t *ro = malloc((size_t)(P + 1) * sizeof *ro), *bo = malloc((size_t)(P + 1) * sizeof *bo);
    partitions(&a, TF_PART_ROWS, 1, ro, bo);
    tf_baseline_input in;
    int64_t *lrp;
    make_input(&a, ro, bo, 6000, 1, &in, &lrp);
    setenv("TWOFACE_MEM_AVAILABLE_MIB", "64", 1);
    tf_baseline *bl = (tf_baseline *)&in; /* must be reset to NULL */
    int st = tf_baseline_create(TF_BASE_ALLGATHER, &in, &bl);
    ck_assert_int_eq(st, TF_ERR_NOMEM);
    ck_assert_ptr_null(bl);
    ck_assert_msg(strstr(tf_error_message(), "full copy of B: 68 MiB") &&
                      strstr(tf_error_message(), "share of the memory its node had available"),
                  "message: %s", tf_error_message());
    assert_same_message_everywhere();
    setenv("TWOFACE_MEM_AVAILABLE_MIB", "1000000", 1);
    ck_assert_int_eq(tf_baseline_create(TF_BASE_ALLGATHER, &in, &bl), TF_OK);
    tf_baseline_free(bl);
    unsetenv("TWOFACE_MEM_AVAILABLE_MIB");
    free(lrp);
    free(ro);
    free(bo);
    tf_csr_free(&a);
}
END_TEST

/* Ranks passing different k would deadlock the collectives: refused. */
START_TEST(mismatched_inputs_refused)
{
    int P = nranks(), r = myrank();
    tf_csr a;
    tf_test_random_csr(&a, 30, 30, 100, 51);
    int64_t *ro = malloc((size_t)(P + 1) * sizeof *ro), *bo = malloc((size_t)(P + 1) * sizeof *bo);
    partitions(&a, TF_PART_ROWS, 1, ro, bo);
    tf_baseline_input in;
    int64_t *lrp;
    make_input(&a, ro, bo, r == 0 && P > 1 ? 5 : 4, 1, &in, &lrp);
    tf_baseline *bl = NULL;
    int st = tf_baseline_create(TF_BASE_ALLGATHER, &in, &bl);
    if (P > 1) {
        ck_assert_int_eq(st, TF_ERR_ARG);
        ck_assert_ptr_nonnull(strstr(tf_error_message(), "disagree"));
        assert_same_message_everywhere();
    } else {
        ck_assert_int_eq(st, TF_OK);
        tf_baseline_free(bl);
    }
    /* k < 1 and an unknown algorithm. */
    in.k = 0;
    ck_assert_int_eq(tf_baseline_create(TF_BASE_P2P, &in, &bl), TF_ERR_ARG);
    assert_same_message_everywhere();
    in.k = 4;
    ck_assert_int_eq(tf_baseline_create(9, &in, &bl), TF_ERR_ARG);
    ck_assert_ptr_null(bl);
    ck_assert_int_eq(tf_baseline_free(NULL), TF_OK);
    free(lrp);
    free(ro);
    free(bo);
    tf_csr_free(&a);
}
END_TEST

/* The volume model on a hand-made layout at 8 ranks (no communication). */
START_TEST(predict_formulas)
{
    int64_t ro[9] = {0, 10, 20, 30, 40, 50, 60, 70, 80};
    int64_t bo[9] = {0, 5, 15, 15, 30, 40, 41, 60, 80};
    int64_t b, m;
    ck_assert_int_eq(tf_baseline_predict(TF_BASE_ALLGATHER, 8, 1, ro, bo, 0, 2, &b, &m), TF_OK);
    ck_assert_int_eq(b, (80 - 10) * 2 * 4);
    ck_assert_int_eq(m, 7);
    /* c = 2: q = 4 teams; rank 3 = (t 1, l 1); layer 1 = ranks 1, 3, 5, 7
     * with B bands 10, 15, 1, 20 rows: receives 10 + 1 + 20 rows of B and
     * its 10 C rows from the other layer. */
    ck_assert_int_eq(tf_baseline_predict(TF_BASE_SHIFT, 8, 3, ro, bo, 2, 3, &b, &m), TF_OK);
    ck_assert_int_eq(b, (10 + 1 + 20 + 10) * 3 * 4);
    ck_assert_int_eq(m, 3 + 1);
    /* c = 8: no ring, reduce-scatter over everybody. */
    ck_assert_int_eq(tf_baseline_predict(TF_BASE_SHIFT, 8, 0, ro, bo, 8, 1, &b, &m), TF_OK);
    ck_assert_int_eq(b, 7 * 10 * 4);
    ck_assert_int_eq(m, 7);
    /* c = 1: a plain ring over the other 7 bands. */
    ck_assert_int_eq(tf_baseline_predict(TF_BASE_SHIFT, 8, 2, ro, bo, 0, 1, &b, &m), TF_OK);
    ck_assert_int_eq(b, (80 - 0) * 4);
    ck_assert_int_eq(m, 7);
    ck_assert_int_eq(tf_baseline_predict(TF_BASE_SHIFT, 8, 2, ro, bo, 3, 1, &b, &m), TF_ERR_ARG);
    ck_assert_str_eq(tf_error_message(), "--replication 3 does not divide 8 ranks");
    ck_assert_int_eq(tf_baseline_predict(TF_BASE_P2P, 8, 2, ro, bo, 0, 1, &b, &m), TF_ERR_ARG);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("baseline");
    TCase *tc = tcase_create("baseline");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, names_roundtrip);
    tcase_add_test(tc, predict_formulas);
    tcase_add_test(tc, square_rows_partition);
    tcase_add_test(tc, square_nnz_partition_same_b);
    tcase_add_test(tc, rectangular_tall);
    tcase_add_test(tc, rectangular_wide);
    tcase_add_test(tc, empty_rows_and_columns);
    tcase_add_test(tc, one_dense_column);
    tcase_add_test(tc, tiny_3x3);
    tcase_add_test(tc, single_row_and_column);
    tcase_add_test(tc, large_enough_for_threads);
    tcase_add_test(tc, repeated_runs_changing_b);
    tcase_add_test(tc, bad_replication_fails_everywhere);
    tcase_add_test(tc, local_error_agreed);
    tcase_add_test(tc, copy_of_b_beyond_the_node_refused);
    tcase_add_test(tc, mismatched_inputs_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv) { return tf_test_run_mpi(&argc, &argv, make_suite); }
