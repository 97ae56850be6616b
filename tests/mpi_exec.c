/* The executor at any number of ranks (run by tests/run_tests.sh at 1-4):
 * plans built here for the communicator's size in every mode, opened from a
 * file (written by rank 0) or from memory, multiplied at several K and
 * thread set-ups, and compared with the serial reference over the whole
 * matrix.
 *
 * Every check that could differ between ranks is first reduced over the
 * ranks (all_true), so all ranks fail an assertion together: a rank leaving
 * a test early while the others enter a collective would hang. */
#include "tf_test.h"

#include "tf_cost_model.h"
#include "tf_dense.h"
#include "tf_dense_h5.h"
#include "tf_error.h"
#include "tf_exec.h"
#include "tf_plan_io.h"
#include "tf_planner.h"
#include "tf_reference.h"
#include "tf_select.h"
#include "tf_shift.h"
#include "twoface.h"

#include <hdf5.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOL 1e-5

static int g_rank, g_size;

static void comm_info(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
}

static int all_true(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* ---- Matrices ------------------------------------------------------------ */

typedef struct {
    int64_t m, n;
    tf_coo coo;
} builder;

static void b_init(builder *b, int64_t m, int64_t n)
{
    b->m = m;
    b->n = n;
    if (tf_coo_init(&b->coo, m, n, 16) != TF_OK)
        abort();
}
static void b_add(builder *b, int64_t i, int64_t j, double v)
{
    if (tf_coo_push(&b->coo, (int32_t)i, (int32_t)j, v) != TF_OK)
        abort();
}
static void b_done(builder *b, tf_csr *a)
{
    if (tf_csr_from_coo(a, &b->coo) != TF_OK)
        abort();
    tf_coo_free(&b->coo);
}

static double val_of(uint64_t h) { return (double)(h >> 40) / (double)(1 << 24) * 4.0 - 2.0; }

enum {
    M_RANDOM,
    M_EMPTY_ROWS_COLS,
    M_DENSE_COLUMN,
    M_WIDE,
    M_TALL,
    M_SYMMETRIC,
    M_DIRECTED,
    M_TINY,
    M_NO_NONZEROS,
    M_ONE,
    M_BANDED,
    M_COUNT
};
static const char *const matrix_names[M_COUNT] = {
    "random 400x400 + hub", "empty rows and columns", "dense column", "wide 90x260", "tall 260x90",
    "symmetric", "directed",               "3x3 dense",    "no nonzeros", "1x1",
    "banded 320x320"};

static void make_matrix(int which, tf_csr *a)
{
    builder b;
    switch (which) {
    case M_RANDOM: {
        /* Two faces: sparse random entries (remote stripes needing a row or
         * two: cheap as fetches) and a hub, B rows 0..47 wanted by every
         * rank (whole stripes: cheap as a collective under plan_options'
         * coefficients). The twoface plan must mix both on a rank. */
        tf_csr r;
        tf_test_random_csr(&r, 400, 400, 500, 11);
        b_init(&b, 400, 400);
        for (int64_t i = 0; i < r.nrows; i++) {
            for (int64_t e = r.rowptr[i]; e < r.rowptr[i + 1]; e++)
                if (r.col[e] > 48)
                    b_add(&b, i, r.col[e], r.val[e]);
            b_add(&b, i, i % 48, 0.25 + (double)(i % 5));
        }
        tf_csr_free(&r);
        break;
    }
    case M_EMPTY_ROWS_COLS: {
        tf_csr r;
        tf_test_random_csr(&r, 150, 150, 1400, 12);
        b_init(&b, 150, 150);
        for (int64_t i = 0; i < r.nrows; i++)
            for (int64_t e = r.rowptr[i]; e < r.rowptr[i + 1]; e++)
                if (i % 7 != 0 && r.col[e] % 5 != 0 && !(i >= 60 && i < 90) &&
                    !(r.col[e] >= 100 && r.col[e] < 140))
                    b_add(&b, i, r.col[e], r.val[e]);
        tf_csr_free(&r);
        break;
    }
    case M_DENSE_COLUMN: {
        tf_csr r;
        tf_test_random_csr(&r, 180, 180, 500, 13);
        b_init(&b, 180, 180);
        for (int64_t i = 0; i < r.nrows; i++)
            for (int64_t e = r.rowptr[i]; e < r.rowptr[i + 1]; e++)
                if (r.col[e] != 97)
                    b_add(&b, i, r.col[e], r.val[e]);
        for (int64_t i = 0; i < 180; i++)
            b_add(&b, i, 97, 0.5 + (double)(i % 3));
        for (int64_t j = 0; j < 180; j++) /* and a dense row */
            b_add(&b, 42, j, j == 97 ? 0.0 : 1.0 - (double)(j % 5) * 0.25);
        tf_csr_free(&r);
        break;
    }
    case M_WIDE:
        tf_test_random_csr(a, 90, 260, 900, 14);
        return;
    case M_TALL:
        tf_test_random_csr(a, 260, 90, 900, 15);
        return;
    case M_SYMMETRIC: {
        tf_csr r;
        tf_test_random_csr(&r, 160, 160, 700, 16);
        b_init(&b, 160, 160);
        for (int64_t i = 0; i < r.nrows; i++)
            for (int64_t e = r.rowptr[i]; e < r.rowptr[i + 1]; e++) {
                int64_t j = r.col[e];
                if (j < i) {
                    b_add(&b, i, j, r.val[e]);
                    b_add(&b, j, i, r.val[e]);
                } else if (j == i) {
                    b_add(&b, i, i, r.val[e]);
                }
            }
        tf_csr_free(&r);
        break;
    }
    case M_DIRECTED: {
        /* Each vertex points at a few far-away ones, hubs attract many. */
        int64_t n = 240;
        b_init(&b, n, n);
        uint64_t h = 17;
        for (int64_t i = 0; i < n; i++) {
            for (int t = 0; t < 6; t++)
                b_add(&b, i, (i + ((int64_t)1 << t) * 3) % n, val_of(h = tf_mix64(h + 1)));
            if (i % 3 == 0) {
                int64_t hub = (int64_t)(tf_mix64(h + 7) % 8) * 29;
                h = tf_mix64(h + 2);
                b_add(&b, i, hub, val_of(h));
            }
        }
        break;
    }
    case M_TINY:
        b_init(&b, 3, 3);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                b_add(&b, i, j, 1.0 + i - 0.5 * j);
        break;
    case M_NO_NONZEROS:
        b_init(&b, 5, 4);
        break;
    case M_ONE:
        b_init(&b, 1, 1);
        b_add(&b, 0, 0, -1.5);
        break;
    case M_BANDED: {
        /* Few remote nonzeros at any rank count up to 4: a band of width 5
         * and one far entry every 40 rows (a road network's shape). */
        int64_t n = 320;
        b_init(&b, n, n);
        for (int64_t i = 0; i < n; i++) {
            for (int64_t j = i - 2; j <= i + 2; j++)
                if (j >= 0 && j < n)
                    b_add(&b, i, j, val_of(tf_mix64((uint64_t)(i * n + j))));
            if (i % 40 == 7)
                b_add(&b, i, (i + 161) % n, 0.75);
        }
        break;
    }
    default:
        abort();
    }
    b_done(&b, a);
}

/* ---- Plans --------------------------------------------------------------- */

/* Narrow stripes get short fetch runs (gap 2) so that many requests are in
 * flight; wide ones the model's gap. With the default coefficients these
 * small matrices plan all-collective in twoface mode, so fetching is made
 * 10x cheaper there to get plans that mix both halves on one rank. */
static void plan_options(tf_plan_options *o, int nranks, int mode, int width)
{
    tf_plan_options_default(o);
    o->nranks = nranks;
    o->mode = mode;
    o->k = 32;
    o->stripe_width = width;
    o->gap = width <= 8 ? 2 : -1;
    /* Both kinds of collective receive schedule: whole stripes at W = 8
     * (where the coefficients below make M_RANDOM's plan mix both halves at
     * every P: with needed rows, two ranks move the lone rows collectively
     * too), needed-row runs (the default) at every other W. */
    o->coll_rows = width == 8 ? TF_COLL_STRIPE : TF_COLL_NEEDED;
    /* Coefficients under which M_RANDOM's twoface plan mixes both halves on
     * every rank (coverage of the executor's mixed path): a fetched row
     * costs 4x a multicast one, requests and messages are cheap, handshakes
     * free. Whole stripes then travel best collectively, lone rows by fetch. */
    o->coeffs.alpha_coll = 1e-6;
    o->coeffs.beta_coll = 0.4e-9;
    o->coeffs.alpha_fetch = 0.1e-6;
    o->coeffs.beta_fetch = 1.6e-9;
    o->coeffs.alpha_sync = 0;
    o->no_pure_check = 1; /* the mixed plan even if a pure one is predicted close */
}

static int any_rank(int yes)
{
    int any = 0;
    MPI_Allreduce(&yes, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any;
}

/* Rank 0 builds and writes a plan; every rank gets the path. Returns the
 * status agreed over the ranks. */
static int plan_to_file(const tf_csr *a, const tf_plan_options *o, char *path, size_t len)
{
    int st = TF_OK;
    static int serial = 0;
    if (g_rank == 0) {
        const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        snprintf(path, len, "%s/tf_mpi_exec_%d_%d.h5", dir, (int)getpid(), serial);
        tf_plan plan;
        st = tf_plan_build(a, o, &plan);
        if (st == TF_OK) {
            st = tf_plan_write(path, &plan, 0);
            tf_plan_free(&plan);
        }
    }
    serial++;
    MPI_Bcast(path, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
    return tf_agree(MPI_COMM_WORLD, st);
}

static void remove_file(const char *path)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0)
        unlink(path);
}

/* Opens a plan for `a` from a file or from memory. */
static int open_plan(const tf_csr *a, int mode, int width, int from_file, tf_handle **h)
{
    tf_plan_options o;
    plan_options(&o, g_size, mode, width);
    if (from_file) {
        char path[512];
        int st = plan_to_file(a, &o, path, sizeof path);
        if (st)
            return st;
        st = tf_open(path, MPI_COMM_WORLD, h);
        remove_file(path);
        return st;
    }
    tf_plan plan;
    int st = tf_plan_build(a, &o, &plan);
    st = tf_agree(MPI_COMM_WORLD, st);
    if (st)
        return st;
    st = tf_open_plan(&plan, MPI_COMM_WORLD, h);
    tf_plan_free(&plan);
    return st;
}

/* The random test matrix, planned in `mode` at stripe width `width` and
 * opened on every rank (the test fails where it cannot be). */
static tf_handle *open_random(int mode, int width, tf_csr *a)
{
    make_matrix(M_RANDOM, a);
    tf_handle *h = NULL;
    int st = open_plan(a, mode, width, 0, &h);
    ck_assert_msg(st == TF_OK, "open: %s", tf_error_message());
    return h;
}

/* ---- Checking ------------------------------------------------------------ */

/* Max scaled error of c (this rank's rows) against the reference over the
 * global matrix a with the generator's B (seed). */
static double rank_error(const tf_handle *h, const tf_csr *a, int k, uint64_t seed,
                         const float *c)
{
    int64_t r0, nr;
    tf_get_rows(h, &r0, &nr);
    double *cref = malloc((size_t)(nr > 0 ? nr : 1) * (size_t)k * sizeof *cref);
    double *absrow = malloc((size_t)(nr > 0 ? nr : 1) * sizeof *absrow);
    tf_reference_spmm_gen(a, r0, r0 + nr, seed, k, cref);
    for (int64_t i = 0; i < nr; i++) {
        absrow[i] = 0.0;
        for (int64_t e = a->rowptr[r0 + i]; e < a->rowptr[r0 + i + 1]; e++)
            absrow[i] += fabs((double)a->val[e]);
    }
    double err = tf_reference_scaled_error(c, cref, absrow, nr, k, 1.0);
    free(cref);
    free(absrow);
    return err;
}

/* The reconstructed rows equal the rows of a. */
static int rows_match(const tf_handle *h, const tf_csr *a)
{
    const tf_csr *r = tf_handle_rows(h);
    int64_t r0, nr;
    tf_get_rows(h, &r0, &nr);
    if (r->nrows != nr || r->ncols != a->ncols)
        return 0;
    for (int64_t i = 0; i < nr; i++) {
        int64_t len = a->rowptr[r0 + i + 1] - a->rowptr[r0 + i];
        if (r->rowptr[i + 1] - r->rowptr[i] != len)
            return 0;
        for (int64_t x = 0; x < len; x++)
            if (r->col[r->rowptr[i] + x] != a->col[a->rowptr[r0 + i] + x] ||
                r->val[r->rowptr[i] + x] != a->val[a->rowptr[r0 + i] + x])
                return 0;
    }
    return 1;
}

/* `reps` SpMMs of ctx, B from seed0 + rep, C filled with NaN before each
 * (every entry must be written): the largest scaled error on this rank,
 * INFINITY with *st set when an SpMM (or the buffer) fails. */
static double run_calls(tf_ctx *ctx, tf_handle *h, const tf_csr *a, int k, uint64_t seed0,
                        int reps, int *st)
{
    int64_t b0, nb, r0, nr;
    float *b = tf_b_rows(ctx, &b0, &nb);
    tf_get_rows(h, &r0, &nr);
    float *c = malloc((size_t)(nr > 0 ? nr : 1) * (size_t)k * sizeof *c);
    *st = c ? TF_OK : TF_ERR_NOMEM;
    double worst = c ? 0.0 : INFINITY;
    for (int rep = 0; c && rep < reps; rep++) {
        uint64_t seed = seed0 + (uint64_t)rep;
        if (nb > 0)
            tf_dense_fill(b, seed, b0, nb, k);
        for (int64_t x = 0; x < nr * k; x++)
            c[x] = NAN;
        *st = tf_spmm(ctx, c);
        if (*st) {
            worst = INFINITY;
            break;
        }
        double e = rank_error(h, a, k, seed, c);
        if (!(e <= worst))
            worst = e;
    }
    free(c);
    return worst;
}

/* Creates a context, runs `reps` SpMMs with B from seed, returns the max
 * scaled error over ranks (INFINITY on failure, with *st set). */
static double run_and_check(tf_handle *h, const tf_csr *a, int k, int threads, int tfetch,
                            int reps, int *st_out)
{
    tf_exec_options opt;
    tf_exec_options_default(&opt);
    opt.threads = threads;
    opt.threads_fetch = tfetch;
    tf_ctx *ctx = NULL;
    int st = tf_context_create(h, k, &opt, &ctx);
    *st_out = st;
    if (st)
        return INFINITY;
    double worst = run_calls(ctx, h, a, k, 1000, reps, st_out);
    tf_context_free(ctx);
    MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int any_bad = *st_out != TF_OK;
    MPI_Allreduce(MPI_IN_PLACE, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_bad && *st_out == TF_OK)
        *st_out = TF_ERR_MPI;
    return worst;
}

/* Every mode, K in {1, 7, 64}, thread set-ups (1 thread), (2 threads, one
 * overlapping thread), (2 threads, fetch group of 1), two SpMMs each. */
static void check_matrix(int which, int width)
{
    double t_start = MPI_Wtime();
    tf_csr a;
    make_matrix(which, &a);
    static const int ks[3] = {1, 7, 64};
    static const int setups[3][2] = {{1, 0}, {2, 0}, {2, 1}};
    for (int mode = 0; mode < 3; mode++) {
        tf_handle *h = NULL;
        /* Twoface plans through a file, the others from memory. */
        int from_file = mode == TF_MODE_TWOFACE;
        int st = open_plan(&a, mode, width, from_file, &h);
        ck_assert_msg(st == TF_OK, "%s, %s: open: %s", matrix_names[which], tf_mode_name(mode),
                      tf_error_message());
        ck_assert_msg(all_true(rows_match(h, &a)), "%s, %s: reconstructed rows differ",
                      matrix_names[which], tf_mode_name(mode));
        ck_assert_int_eq(tf_get_mode(h), mode);
        ck_assert_int_eq(tf_get_nranks(h), g_size);
        ck_assert_int_eq(tf_get_m(h), a.nrows);
        ck_assert_int_eq(tf_get_n(h), a.ncols);
        if (which == M_RANDOM && width == 8 && g_size > 1) {
            /* Coverage: the plans really use what the mode says. */
            const tf_rank_plan *rp = h->rp;
            int coll = any_rank(rp->n_recv > 0), fetch = any_rank(rp->n_runs > 0);
            int both = any_rank(rp->n_recv > 0 && rp->n_runs > 0);
            int64_t runs = rp->n_runs;
            MPI_Allreduce(MPI_IN_PLACE, &runs, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
            int many = runs >= 3;
            if (mode == TF_MODE_TWOFACE)
                ck_assert_msg(both && many, "twoface plan does not mix both halves on a rank");
            else if (mode == TF_MODE_FETCH)
                ck_assert(fetch && !coll && many);
            else
                ck_assert(coll && !fetch);
        }
        for (int ki = 0; ki < 3; ki++)
            for (int s = 0; s < 3; s++) {
                double err = run_and_check(h, &a, ks[ki], setups[s][0], setups[s][1], 2, &st);
                ck_assert_msg(st == TF_OK, "%s, %s, K=%d: %s", matrix_names[which],
                              tf_mode_name(mode), ks[ki], tf_error_message());
                ck_assert_msg(err < TOL, "%s, %s, K=%d, threads %d/%d: error %g",
                              matrix_names[which], tf_mode_name(mode), ks[ki], setups[s][0],
                              setups[s][1], err);
            }
        tf_close(h);
    }
    tf_csr_free(&a);
    if (getenv("TF_TEST_TIMING") && g_rank == 0)
        fprintf(stderr, "%s: %.2f s\n", matrix_names[which], MPI_Wtime() - t_start);
}

START_TEST(random_matrix) { check_matrix(M_RANDOM, 8); }
END_TEST
START_TEST(random_matrix_wide_stripes) { check_matrix(M_RANDOM, 32); }
END_TEST
START_TEST(empty_rows_and_columns) { check_matrix(M_EMPTY_ROWS_COLS, 4); }
END_TEST
START_TEST(dense_column) { check_matrix(M_DENSE_COLUMN, 4); }
END_TEST
START_TEST(wide) { check_matrix(M_WIDE, 8); }
END_TEST
START_TEST(tall) { check_matrix(M_TALL, 8); }
END_TEST
START_TEST(symmetric) { check_matrix(M_SYMMETRIC, 4); }
END_TEST
START_TEST(directed) { check_matrix(M_DIRECTED, 2); }
END_TEST
START_TEST(more_ranks_than_rows) { check_matrix(M_TINY, 1); }
END_TEST
START_TEST(no_nonzeros) { check_matrix(M_NO_NONZEROS, 2); }
END_TEST
START_TEST(one_by_one) { check_matrix(M_ONE, 1); }
END_TEST

/* 200 SpMMs in a row, B refilled every time (seed = iteration), with rank 0
 * slow to refill: a rank reading B before its owner refilled it, or after
 * the owner returned, would see the wrong iteration. Every result checked,
 * with the collective's rows copied and with every remote row read in
 * place (no fetch group then). */
START_TEST(repeated_with_changing_b)
{
    tf_csr a;
    tf_test_random_csr(&a, 120, 120, 900, 21);
    for (int mode = 0; mode < 2; mode++) { /* twoface, fetch */
        /* 1 thread; 2 threads, fetch group 1; 3 threads, fetch group 2
         * (runs of one owner split between fetch threads). */
        for (int s = 0; s < 6; s++) {
            const int direct = s >= 3;
            tf_handle *h = NULL;
            int st = open_plan(&a, mode, 4, 0, &h);
            ck_assert_msg(st == TF_OK, "open: %s", tf_error_message());
            tf_exec_options opt;
            tf_exec_options_default(&opt);
            opt.threads = s % 3 + 1;
            opt.threads_fetch = s % 3;
            opt.max_requests = 3; /* exercise slot reuse */
            tf_ctx *ctx;
            setenv("TWOFACE_COLL_SHM", direct ? "direct" : "copy", 1);
            st = tf_context_create(h, 5, &opt, &ctx);
            unsetenv("TWOFACE_COLL_SHM");
            ck_assert_msg(st == TF_OK, "context: %s", tf_error_message());
            int fetch_group = tf_ctx_threads_fetch(ctx);
            const int in_place = strcmp(tf_ctx_coll_transport(ctx), "direct") == 0;
            int64_t b0, nb, r0, nr;
            float *b = tf_b_rows(ctx, &b0, &nb);
            tf_get_rows(h, &r0, &nr);
            float *c = malloc((size_t)(nr > 0 ? nr : 1) * 5 * sizeof *c);
            double worst = 0.0;
            int ok = 1;
            for (int it = 0; it < 200 && ok; it++) {
                if (g_rank == 0 && it % 2)
                    usleep(200);
                if (nb > 0)
                    tf_dense_fill(b, (uint64_t)it, b0, nb, 5);
                ok = tf_spmm(ctx, c) == TF_OK;
                double e = rank_error(h, &a, 5, (uint64_t)it, c);
                if (!(e <= worst))
                    worst = e;
            }
            tf_timing t;
            tf_timing_get(ctx, &t);
            free(c);
            tf_context_free(ctx);
            tf_close(h);
            ck_assert_msg(all_true(ok), "SpMM failed: %s", tf_error_message());
            ck_assert_msg(all_true(worst < TOL), "%s, setup %d: error %g", tf_mode_name(mode), s,
                          worst);
            ck_assert_int_eq(t.calls, 200);
            ck_assert_int_eq(in_place, direct && g_size > 1);
            ck_assert_int_eq(fetch_group, in_place ? 0 : s % 3);
        }
    }
    tf_csr_free(&a);
}
END_TEST

static int same_message_everywhere(const char *msg);

/* The collective's send forms (TWOFACE_COLL_PACK, read at context creation):
 * zero-copy datatypes, every destination packed (plain counts), packed per
 * destination, and ranks choosing differently: the same rows land in the
 * same places, so C is bitwise the same, and it matches the reference.
 * They are forms of the MPI exchange: the shared-memory transport is off. */
START_TEST(collective_send_forms)
{
    static const char *const forms[] = {"never", "always", "auto", "mixed"};
    setenv("TWOFACE_COLL_SHM", "off", 1);
    tf_csr a;
    tf_handle *h = open_random(TF_MODE_COLLECTIVE, 4, &a);
    int st = TF_OK;
    int64_t r0, nr;
    tf_get_rows(h, &r0, &nr);
    for (int k = 7; k <= 64; k += 57) {
        for (int s = 0; s < 2; s++) { /* 1 thread; 2 threads, fetch group 1 */
            size_t bytes = (size_t)(nr > 0 ? nr : 1) * (size_t)k * sizeof(float);
            float *first = malloc(bytes), *c = malloc(bytes);
            for (int f = 0; f < 4; f++) {
                const char *v = forms[f];
                if (f == 3)
                    v = g_rank % 2 ? "never" : "always";
                setenv("TWOFACE_COLL_PACK", v, 1);
                tf_exec_options opt;
                tf_exec_options_default(&opt);
                opt.threads = s + 1;
                opt.threads_fetch = s;
                tf_ctx *ctx = NULL;
                st = tf_context_create(h, k, &opt, &ctx);
                unsetenv("TWOFACE_COLL_PACK");
                ck_assert_msg(st == TF_OK, "%s: context: %s", forms[f], tf_error_message());
                int64_t b0, nb;
                float *b = tf_b_rows(ctx, &b0, &nb);
                if (nb > 0)
                    tf_dense_fill(b, 77, b0, nb, k);
                st = tf_spmm(ctx, f == 0 ? first : c);
                tf_context_free(ctx);
                ck_assert_msg(all_true(st == TF_OK), "%s: SpMM: %s", forms[f], tf_error_message());
                double e = rank_error(h, &a, k, 77, f == 0 ? first : c);
                ck_assert_msg(all_true(e < TOL), "%s, K=%d, setup %d: error %g", forms[f], k, s,
                              e);
                if (f > 0)
                    ck_assert_msg(all_true(memcmp(first, c, (size_t)nr * (size_t)k *
                                                                sizeof(float)) == 0),
                                  "%s, K=%d, setup %d: C differs from the zero-copy form",
                                  forms[f], k, s);
            }
            free(first);
            free(c);
        }
    }
    /* An unknown value: the same one-line error on every rank, also where
     * no exchange exists (one rank has none). */
    setenv("TWOFACE_COLL_PACK", "sometimes", 1);
    tf_ctx *ctx = NULL;
    st = tf_context_create(h, 4, NULL, &ctx);
    unsetenv("TWOFACE_COLL_PACK");
    ck_assert(all_true(st == TF_ERR_ARG && ctx == NULL));
    ck_assert(strstr(tf_last_error(), "TWOFACE_COLL_PACK=sometimes") != NULL);
    ck_assert(same_message_everywhere(tf_last_error()));
    tf_close(h);
    tf_csr_free(&a);
    unsetenv("TWOFACE_COLL_SHM");
}
END_TEST

/* Runs `reps` SpMMs on a fresh context, B refilled from seed 500 + it
 * before each (rank 0 slow to refill every other time: a reader copying
 * before its owner refilled, or an owner refilling while a reader copies,
 * would see the wrong iteration), C of every iteration into c (reps x nr x
 * k). Returns the agreed status; *transport = tf_ctx_coll_transport. */
static int shm_run(tf_handle *h, int k, int comm, int threads, int tfetch, const char *env,
                   int reps, float *c, const char **transport)
{
    setenv("TWOFACE_COLL_SHM", env, 1);
    tf_exec_options opt;
    tf_exec_options_default(&opt);
    opt.comm = comm;
    opt.threads = threads;
    opt.threads_fetch = tfetch;
    opt.max_requests = 3;
    tf_ctx *ctx = NULL;
    int st = tf_context_create(h, k, &opt, &ctx);
    unsetenv("TWOFACE_COLL_SHM");
    if (st)
        return st;
    *transport = tf_ctx_coll_transport(ctx);
    int64_t b0, nb, r0, nr;
    float *b = tf_b_rows(ctx, &b0, &nb);
    tf_get_rows(h, &r0, &nr);
    /* Rows of whole cache lines begin on one, in every window form
     * (docs/executor.md, "Rows on cache lines"). */
    if (nb > 0 && k % 16 == 0)
        ck_assert_msg((uintptr_t)b % 64 == 0, "%s, K=%d: B at %p is not on a cache line", env, k,
                      (void *)b);
    for (int it = 0; it < reps && st == TF_OK; it++) {
        if (g_rank == 0 && it % 2)
            usleep(300);
        if (nb > 0)
            tf_dense_fill(b, 500 + (uint64_t)it, b0, nb, k);
        st = tf_spmm(ctx, c + (size_t)it * (size_t)nr * (size_t)k);
    }
    tf_context_free(ctx);
    return tf_agree(MPI_COMM_WORLD, st);
}

/* The collective through shared memory (every rank of the test is on one
 * node), copied by the receivers (TWOFACE_COLL_SHM=copy) and read in place
 * (direct; float32 whatever the precision asked, since nothing travels):
 * for hybrid, fetch and
 * collective plans, both receive schedules
 * (whole stripes at W = 8, needed rows at W = 4), a matrix with rank(s)
 * owning no rows, odd and even K and every thread set-up (single-thread
 * path with 1 and 2 threads; fetch groups of 1 and 2 beside a collective
 * group of 2 and 1), B rows travelling as float32 and as bf16 (rounded by
 * the reader as it copies), C of every SpMM in a row is within the
 * reference's tolerance for its own B (bf16's bound added where rows
 * travel as bf16), and for collective plans bitwise C of the MPI exchange
 * in the same precision (read in place, float32's). Plans that fetch add
 * their runs into C (or the accumulators) in the order the gets land, so
 * their last bits differ from run to run whatever the collective's
 * transport. */
START_TEST(shm_transport)
{
    static const int comms[2] = {TF_COMM_F32, TF_COMM_BF16};
    static const int ks[3] = {1, 7, 32};
    static const int setups[4][2] = {{1, 0}, {2, 0}, {3, 1}, {3, 2}};
    static const struct {
        int matrix, width;
    } cases[3] = {{M_RANDOM, 8}, {M_RANDOM, 4}, {M_TINY, 1}};
    const int reps = 6;
    for (int ci = 0; ci < 3; ci++) {
        tf_csr a;
        make_matrix(cases[ci].matrix, &a);
        for (int mode = 0; mode < 3; mode++) {
            tf_handle *h = NULL;
            int st = open_plan(&a, mode, cases[ci].width, 0, &h);
            ck_assert_msg(st == TF_OK, "open: %s", tf_error_message());
            int64_t r0, nr;
            tf_get_rows(h, &r0, &nr);
            int coll = any_rank(h->rp->n_recv > 0);
            int remote = any_rank(h->rp->n_recv > 0 || h->rp->n_runs > 0);
            for (int ki = 0; ki < 3; ki++) {
                int k = ks[ki];
                size_t n = (size_t)reps * (size_t)(nr > 0 ? nr : 1) * (size_t)k;
                float *c_mpi = malloc(n * sizeof(float)), *c_shm = malloc(n * sizeof(float));
                for (int s = 0; s < 16; s++) {
                    const int comm = comms[s / 8 % 2], th = setups[s % 4][0],
                              tfe = setups[s % 4][1];
                    /* copy: the receivers copy (bf16 rounding as they
                     * go); direct: read in place, float32. */
                    const int direct = s / 4 % 2;
                    const int rounded = comm == TF_COMM_BF16 && !direct;
                    const double tol = rounded ? TOL + 1.0 / 256 : TOL;
                    const char *t_mpi = NULL, *t_shm = NULL;
                    for (size_t x = 0; x < n; x++)
                        c_mpi[x] = c_shm[x] = NAN;
                    st = shm_run(h, k, direct ? TF_COMM_F32 : comm, th, tfe, "off", reps, c_mpi,
                                 &t_mpi);
                    ck_assert_msg(st == TF_OK, "off: %s", tf_error_message());
                    st = shm_run(h, k, comm, th, tfe, direct ? "direct" : "copy", reps, c_shm,
                                 &t_shm);
                    ck_assert_msg(st == TF_OK, "%s: %s", direct ? "direct" : "copy",
                                  tf_error_message());
                    ck_assert_str_eq(t_mpi, coll ? "mpi" : "none");
                    if (direct)
                        ck_assert_str_eq(t_shm, remote ? "direct" : "none");
                    else
                        ck_assert_str_eq(t_shm, coll ? "shm" : "none");
                    /* Read in place, C is the copying path's, term for
                     * term: bitwise the exchange's for collective plans. */
                    int same = mode != TF_MODE_COLLECTIVE ||
                               memcmp(c_mpi, c_shm, (size_t)reps * (size_t)nr * (size_t)k *
                                                        sizeof(float)) == 0;
                    double worst = 0.0;
                    for (int it = 0; it < reps; it++) {
                        double e = rank_error(h, &a, k, 500 + (uint64_t)it,
                                              c_shm + (size_t)it * (size_t)nr * (size_t)k);
                        if (!(e <= worst))
                            worst = e;
                    }
                    ck_assert_msg(all_true(same),
                                  "%s W=%d, %s, %s, %s, K=%d, threads %d/%d: C differs",
                                  matrix_names[cases[ci].matrix], cases[ci].width,
                                  tf_mode_name(mode), tf_comm_precision_name(comm), t_shm, k, th,
                                  tfe);
                    ck_assert_msg(all_true(worst < tol),
                                  "%s W=%d, %s, %s, %s, K=%d, threads %d/%d: error %g",
                                  matrix_names[cases[ci].matrix], cases[ci].width,
                                  tf_mode_name(mode), tf_comm_precision_name(comm), t_shm, k, th,
                                  tfe, worst);
                }
                free(c_mpi);
                free(c_shm);
            }
            tf_close(h);
        }
        tf_csr_free(&a);
    }
}
END_TEST

/* The side the crowded start-up trial sets against in place: the MPI
 * exchange where at most 10 % of the nonzeros are remote, else the
 * collective's copies (context/tf_select.c); computed here from the
 * plan's counts over every rank. */
static const char *crowded_side(const tf_handle *h)
{
    int64_t n[2] = {h->rp->loc_nnz + h->rp->coll_nnz + h->rp->fet_nnz,
                    h->rp->coll_nnz + h->rp->fet_nnz};
    MPI_Allreduce(MPI_IN_PLACE, n, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    return n[1] <= 0.10 * (double)n[0] ? "mpi" : "shm";
}

/* TWOFACE_COLL_SHM: an unknown value, or ranks asking differently, is the
 * same one-line error on every rank and no context. */
START_TEST(shm_transport_setting)
{
    tf_csr a;
    tf_handle *h = open_random(TF_MODE_COLLECTIVE, 4, &a);
    int st = TF_OK;
    for (int v = 0; v < 2; v++) {
        if (v == 1 && g_size < 2)
            break;
        setenv("TWOFACE_COLL_SHM", v == 0 ? "sometimes" : g_rank % 2 ? "off" : "auto", 1);
        tf_ctx *ctx = NULL;
        st = tf_context_create(h, 4, NULL, &ctx);
        unsetenv("TWOFACE_COLL_SHM");
        ck_assert(all_true(st == TF_ERR_ARG && ctx == NULL));
        ck_assert_msg(strstr(tf_last_error(), v == 0 ? "TWOFACE_COLL_SHM=sometimes: expected auto, direct, trial, copy or off"
                                                      : "TWOFACE_COLL_SHM differs between ranks") != NULL,
                      "%s", tf_last_error());
        ck_assert(same_message_everywhere(tf_last_error()));
    }
    /* The exchange's variables are checked where the shared-memory
     * collective makes them irrelevant too (every rank here is on one node;
     * they were ignored there). */
    const char *vars[2][3] = {
        {"TWOFACE_EXCHANGE", "bogus", "TWOFACE_EXCHANGE=bogus: expected neighbor or alltoall"},
        {"TWOFACE_COLL_PACK", "sometimes",
         "TWOFACE_COLL_PACK=sometimes: expected auto, always or never"}};
    for (int v = 0; v < 2; v++) {
        setenv(vars[v][0], vars[v][1], 1);
        tf_ctx *ctx = NULL;
        st = tf_context_create(h, 4, NULL, &ctx);
        unsetenv(vars[v][0]);
        ck_assert(all_true(st == TF_ERR_ARG && ctx == NULL));
        ck_assert_msg(strstr(tf_last_error(), vars[v][2]) != NULL, "%s", tf_last_error());
        ck_assert(same_message_everywhere(tf_last_error()));
    }
    /* auto reads in place unless the node's ranks x threads exceed its
     * processors (every rank of the test is on this node). */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    for (int th = 1; th <= 3; th++) {
        tf_exec_options opt;
        tf_exec_options_default(&opt);
        opt.threads = th;
        opt.threads_fetch = 0;
        tf_ctx *ctx = NULL;
        st = tf_context_create(h, 4, &opt, &ctx);
        ck_assert_msg(all_true(st == TF_OK), "%s", tf_error_message());
        /* Crowded: the start-up trial between the MPI exchange (few
         * remote nonzeros) or the copies (first) and in place. */
        const int crowded = g_size > 1 && (long)g_size * th > cpus;
        const char *want = g_size == 1 ? "none" : crowded ? crowded_side(h) : "direct";
        ck_assert_msg(strcmp(tf_ctx_coll_transport(ctx), want) == 0,
                      "%d ranks x %d threads on %ld processors: transport %s, expected %s",
                      g_size, th, cpus, tf_ctx_coll_transport(ctx), want);
        tf_selection sel;
        tf_selection_get(ctx, &sel);
        ck_assert_int_eq(sel.trial, crowded);
        if (crowded) {
            ck_assert_str_eq(sel.transport[1], "direct");
            /* A matrix this small gets the most timed calls by default. */
            ck_assert_int_eq(sel.calls, 32);
            ck_assert_int_eq(sel.calls_total, 2 + 2 * 32);
        }
        tf_context_free(ctx);
    }
    tf_close(h);
    tf_csr_free(&a);

    /* Few remote nonzeros: where ranks share processors the trial's other
     * side is the MPI exchange, on B's window laid out for in place; every
     * call's C is exact, during the trial and after it. */
    make_matrix(M_BANDED, &a);
    st = open_plan(&a, TF_MODE_COLLECTIVE, 4, 0, &h);
    ck_assert_msg(st == TF_OK, "open: %s", tf_error_message());
    if (g_size > 1)
        ck_assert_str_eq(crowded_side(h), "mpi");
    const int crowded = g_size > 1 && (long)g_size > cpus;
    const int k = 6;
    tf_ctx *ctx = NULL;
    st = tf_context_create(h, k, NULL, &ctx);
    ck_assert_msg(all_true(st == TF_OK), "%s", tf_error_message());
    tf_selection sel;
    tf_selection_get(ctx, &sel);
    ck_assert_int_eq(sel.trial, crowded);
    if (crowded) {
        ck_assert_str_eq(sel.transport[0], "mpi");
        ck_assert_str_eq(sel.transport[1], "direct");
    }
    int run_st = TF_OK;
    double worst = run_calls(ctx, h, &a, k, 90, sel.calls_total + 4, &run_st);
    const int ok = run_st == TF_OK;
    tf_selection_get(ctx, &sel);
    char used[16];
    snprintf(used, sizeof used, "%s", tf_ctx_coll_transport(ctx));
    tf_context_free(ctx);
    tf_close(h);
    tf_csr_free(&a);
    ck_assert_msg(all_true(ok), "banded: %s", tf_error_message());
    ck_assert_msg(all_true(worst < TOL), "banded: error %g", worst);
    if (crowded) {
        ck_assert_int_eq(sel.decided, 1);
        ck_assert_str_eq(used, sel.chose_alternative ? "direct" : "mpi");
    }
}
END_TEST

/* A plan carrying a runner-up: M_RANDOM's hybrid (W = 8) with the pure
 * fetch plan attached by hand, so that every rank count has one (at P = 1
 * both are local). Through a file or from memory. */
static int open_with_runner_up(const tf_csr *a, int from_file, tf_handle **h)
{
    tf_plan_options o;
    plan_options(&o, g_size, TF_MODE_TWOFACE, 8);
    tf_plan plan, *alt = malloc(sizeof *alt);
    int st = alt ? tf_plan_build(a, &o, &plan) : TF_ERR_NOMEM;
    if (st == TF_OK) {
        o.mode = TF_MODE_FETCH;
        st = tf_plan_build(a, &o, alt);
        if (st == TF_OK)
            plan.alt = alt;
        else
            tf_plan_free(&plan);
    }
    if (st != TF_OK)
        free(alt);
    st = tf_agree(MPI_COMM_WORLD, st);
    if (st)
        return st;
    if (!from_file) {
        st = tf_open_plan(&plan, MPI_COMM_WORLD, h);
        tf_plan_free(&plan);
        return st;
    }
    char path[512];
    if (g_rank == 0) {
        const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        snprintf(path, sizeof path, "%s/tf_mpi_exec_alt_%d.h5", dir, (int)getpid());
        st = tf_plan_write(path, &plan, 0);
    }
    tf_plan_free(&plan);
    MPI_Bcast(path, (int)sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    st = tf_agree(MPI_COMM_WORLD, st);
    if (st == TF_OK)
        st = tf_open(path, MPI_COMM_WORLD, h);
    remove_file(path);
    return st;
}

/* The start-up trial: one untimed call of each plan, then 2 x 2 timed
 * calls alternate between the plan and its runner-up, then one is kept - decided by the times, or forced either way
 * in the middle of the trial. Every call's C is exact, B stays where the
 * caller writes it, the decision is the same on every rank, and the plan
 * kept keeps running (10 more calls); with select_calls = -1 there is no
 * trial, nor where the SpMM reads peers' rows in place (both plans read
 * the same rows). Both thread set-ups; the collective copies its rows. */
/* `calls` SpMMs of ctx with B from seed0 + call and C filled with NaN before
 * each; before the second call the start-up trial is ended keeping side
 * `finish` (0 or 1; -1: the trial runs its course). 1 when every call
 * succeeded and B stayed where tf_b_rows put it; *worst gets the largest
 * scaled error on this rank, *decided_at the first call after which the
 * trial was over (left as given when it never was). */
static int trial_calls(tf_ctx *ctx, tf_handle *h, const tf_csr *a, int k, uint64_t seed0,
                       int calls, int finish, double *worst, int *decided_at)
{
    int64_t b0, nb, r0, nr;
    float *b = tf_b_rows(ctx, &b0, &nb);
    tf_get_rows(h, &r0, &nr);
    float *c = malloc((size_t)(nr > 0 ? nr : 1) * (size_t)k * sizeof *c);
    int ok = c != NULL;
    for (int it = 0; it < calls && ok; it++) {
        if (it == 1 && finish >= 0)
            ok = tf_select_finish(ctx, finish) == TF_OK;
        ok = ok && tf_b_rows(ctx, NULL, NULL) == b;
        if (ok && nb > 0)
            tf_dense_fill(b, seed0 + (uint64_t)it, b0, nb, k);
        for (int64_t x = 0; ok && x < nr * k; x++)
            c[x] = NAN;
        ok = ok && tf_spmm(ctx, c) == TF_OK;
        double e = ok ? rank_error(h, a, k, seed0 + (uint64_t)it, c) : INFINITY;
        if (!(e <= *worst))
            *worst = e;
        tf_selection sel;
        tf_selection_get(ctx, &sel);
        if (sel.decided && *decided_at < 0)
            *decided_at = it;
    }
    free(c);
    return ok;
}

START_TEST(start_up_trial)
{
    tf_csr a;
    make_matrix(M_RANDOM, &a);
    const int k = 7;
    /* force: -1 the times decide; 0 / 1 keep the plan / the runner-up
     * after the first call; 2: no trial (select_calls = -1); 3: read in
     * place (TWOFACE_COLL_SHM=direct), no trial where any row is remote;
     * 4: TWOFACE_COLL_SHM=trial, the trial is between the plan through the
     * MPI exchange or the copies (crowded_side) and the plan read in place
     * (the runner-up's where nothing is remote). */
    for (int force = -1; force <= 4; force++)
        for (int s = 0; s < 2; s++) {
            tf_handle *h = NULL;
            int st = open_with_runner_up(&a, force == -1, &h);
            ck_assert_msg(st == TF_OK, "open: %s", tf_error_message());
            ck_assert(all_true(h->alt != NULL && rows_match(h->alt, &a)));
            tf_exec_options opt;
            tf_exec_options_default(&opt);
            opt.threads = s + 1;
            opt.threads_fetch = s;
            opt.select_calls = force == 2 ? -1 : 2;
            tf_ctx *ctx;
            setenv("TWOFACE_COLL_SHM", force == 3 ? "direct" : force == 4 ? "trial" : "copy", 1);
            st = tf_context_create(h, k, &opt, &ctx);
            unsetenv("TWOFACE_COLL_SHM");
            ck_assert_msg(st == TF_OK, "context: %s", tf_error_message());
            tf_selection sel;
            tf_selection_get(ctx, &sel);
            ck_assert_int_eq(sel.trial, force == 3 ? g_size == 1 : force != 2);
            if (force == 3)
                ck_assert_str_eq(tf_ctx_coll_transport(ctx), g_size > 1 ? "direct" : "none");
            const int ttrial = force == 4 && g_size > 1;
            if (ttrial) {
                ck_assert_str_eq(sel.classes[1], sel.classes[0]);
                ck_assert_str_eq(sel.transport[1], "direct");
                ck_assert_str_eq(sel.transport[0], crowded_side(h));
            }
            ck_assert_int_eq(sel.decided, 0);
            double worst = 0.0;
            int decided_at = -1;
            int ok = trial_calls(ctx, h, &a, k, 50, 14, force == 0 || force == 1 ? force : -1,
                                 &worst, &decided_at);
            tf_selection_get(ctx, &sel);
            int chose[2] = {sel.chose_alternative, -sel.chose_alternative};
            double med[2] = {sel.median[0], -sel.median[0]};
            MPI_Allreduce(MPI_IN_PLACE, chose, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            MPI_Allreduce(MPI_IN_PLACE, med, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            char used[16];
            snprintf(used, sizeof used, "%s", tf_ctx_coll_transport(ctx));
            tf_context_free(ctx);
            tf_close(h);
            ck_assert_msg(all_true(ok), "force %d setup %d: %s", force, s, tf_error_message());
            ck_assert_msg(all_true(worst < TOL), "force %d setup %d: error %g", force, s, worst);
            ck_assert_msg(chose[0] == -chose[1] && med[0] == -med[1],
                          "ranks decided differently");
            if (force == 2 || (force == 3 && g_size > 1)) {
                ck_assert_int_eq(sel.trial, 0);
                ck_assert_int_eq(decided_at, -1);
            } else if (force == 3) {
                ck_assert_int_eq(sel.decided, 1); /* one rank: both plans local */
            } else {
                ck_assert_int_eq(sel.decided, 1);
                if (!ttrial)
                    ck_assert_str_eq(sel.classes[1], g_size > 1 ? "fetch" : "local");
                if (force == -1 || force == 4) {
                    ck_assert_int_eq(decided_at, 5); /* 2 cold + 2 x 2 timed calls */
                    ck_assert_int_eq(sel.calls_made, 6);
                    ck_assert_int_eq(sel.calls_total, 6);
                    ck_assert(sel.median[0] > 0 && sel.median[1] > 0);
                    /* In place must beat the exchange by 10 %; the copies
                     * must beat in place by 10 %. */
                    double keep = !ttrial ? 1.0 : strcmp(sel.transport[0], "mpi") == 0 ? 0.9 : 1.1;
                    ck_assert_int_eq(sel.chose_alternative, sel.median[1] < keep * sel.median[0]);
                    if (ttrial)
                        ck_assert_str_eq(used, sel.chose_alternative ? "direct" : sel.transport[0]);
                } else {
                    ck_assert_int_eq(decided_at, 1);
                    ck_assert_int_eq(sel.chose_alternative, force);
                }
            }
        }
    tf_csr_free(&a);
}
END_TEST

/* Dense shifting as the trial's other side (TWOFACE_SHIFT=c, forced: on
 * one node the model never proposes it): every call's C, from the plan or
 * from shift(c), matches the reference; force -1 lets the times decide,
 * 0 / 1 keep the plan / shifting after the first call, and a context that
 * kept shifting runs it ("ring") from the same B. */
START_TEST(dense_shift_face)
{
    tf_csr a;
    make_matrix(M_RANDOM, &a);
    const int k = 9;
    int cs[3] = {1, g_size, g_size % 2 == 0 ? 2 : 1}, ncs = g_size % 2 == 0 && g_size > 2 ? 3 : 2;
    for (int ci = 0; ci < ncs; ci++)
        for (int force = -1; force <= 1; force++)
            for (int bf16 = 0; bf16 < 2; bf16++) {
                const int c_rep = cs[ci];
                tf_handle *h = NULL;
                int st = open_plan(&a, TF_MODE_TWOFACE, 8, 0, &h);
                ck_assert_msg(st == TF_OK, "open: %s", tf_error_message());
                tf_exec_options opt;
                tf_exec_options_default(&opt);
                opt.threads = 1;
                opt.select_calls = 2;
                opt.comm = bf16 ? TF_COMM_BF16 : TF_COMM_F32;
                char cstr[16];
                snprintf(cstr, sizeof cstr, "%d", c_rep);
                setenv("TWOFACE_SHIFT", cstr, 1);
                setenv("TWOFACE_COLL_SHM", "copy", 1);
                tf_ctx *ctx = NULL;
                st = tf_context_create(h, k, &opt, &ctx);
                unsetenv("TWOFACE_SHIFT");
                unsetenv("TWOFACE_COLL_SHM");
                ck_assert_msg(st == TF_OK, "context: %s", tf_error_message());
                tf_selection sel;
                tf_selection_get(ctx, &sel);
                /* One rank has nothing to move: no trial. */
                ck_assert_int_eq(sel.trial, g_size > 1);
                if (g_size > 1) {
                    char want[16];
                    snprintf(want, sizeof want, "shift(c=%d)", c_rep);
                    ck_assert_str_eq(sel.classes[1], want);
                    ck_assert_str_eq(sel.transport[1], "ring");
                }
                double worst = 0.0;
                int decided_at = -1;
                int ok = trial_calls(ctx, h, &a, k, 70, 10, g_size > 1 ? force : -1, &worst,
                                     &decided_at);
                tf_selection_get(ctx, &sel);
                tf_timing t;
                tf_timing_get(ctx, &t);
                char side0[8];
                snprintf(side0, sizeof side0, "%s", sel.transport[0]);
                char used[16];
                snprintf(used, sizeof used, "%s", tf_ctx_coll_transport(ctx));
                int chose[2] = {sel.chose_alternative, -sel.chose_alternative};
                MPI_Allreduce(MPI_IN_PLACE, chose, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
                tf_context_free(ctx);
                tf_close(h);
                ck_assert_msg(all_true(ok), "c %d force %d: %s", c_rep, force, tf_error_message());
                /* bf16: each remote product within 2^-8 of its float32 value. */
                const double tol = bf16 ? 1.0 / 256 + TOL : TOL;
                ck_assert_msg(all_true(worst < tol), "c %d force %d bf16 %d: error %g", c_rep,
                              force, bf16, worst);
                ck_assert_msg(chose[0] == -chose[1], "ranks decided differently");
                if (g_size == 1)
                    continue;
                ck_assert_int_eq(sel.decided, 1);
                ck_assert_int_eq(decided_at, force >= 0 ? 1 : 5);
                if (force >= 0)
                    ck_assert_int_eq(sel.chose_alternative, force);
                ck_assert_str_eq(used, sel.chose_alternative ? "ring" : side0);
                /* The timing covers the side in use, its trial calls
                 * included: 10 calls, of which the loser ran 1 or 3. */
                ck_assert(t.calls >= 7 && t.total > 0);
            }
    tf_csr_free(&a);
}
END_TEST

/* The model's pick of dense shifting: the replication (a divisor of P up to
 * 4, as `--algo shift` tries) whose slowest rank tf_cost_shift prices
 * lowest, with the volumes of tf_baseline_predict; the same on every rank;
 * one rank moves nothing. */
START_TEST(dense_shift_prediction)
{
    tf_csr a;
    tf_handle *h = open_random(TF_MODE_TWOFACE, 8, &a);
    const tf_plan *pl = &h->plan;
    int c = 0;
    double t = 0.0;
    tf_shift_predict(h, &c, &t);
    ck_assert(c >= 1 && c <= 4);
    ck_assert_int_eq(g_size % c, 0);
    double best = INFINITY;
    int best_c = 0;
    for (int r = 1; r <= 4 && r <= g_size; r++) {
        if (g_size % r != 0)
            continue;
        double worst = 0.0;
        for (int p = 0; p < g_size; p++) {
            int64_t bytes = -1, msgs = -1;
            ck_assert_int_eq(tf_baseline_predict(TF_BASE_SHIFT, g_size, p, pl->row_off,
                                                 pl->brow_off, r, pl->k_planned, &bytes, &msgs),
                             TF_OK);
            if (g_size == 1)
                ck_assert(bytes == 0 && msgs == 0);
            double tp = tf_cost_shift(&pl->coeffs, &pl->all_stats[p], bytes, msgs);
            worst = tp > worst ? tp : worst;
        }
        if (worst < best) {
            best = worst;
            best_c = r;
        }
    }
    ck_assert_int_eq(c, best_c);
    ck_assert_double_eq_tol(t, best, 1e-15);
    double tt[2] = {t, -t};
    MPI_Allreduce(MPI_IN_PLACE, tt, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    ck_assert_msg(tt[0] == -tt[1], "ranks priced shifting differently");
    tf_close(h);
    tf_csr_free(&a);
}
END_TEST

/* Where shifting won, the plan's context keeps B (shifting reads it there)
 * and releases the buffers its own SpMM moves rows through; an SpMM on it
 * afterwards fails instead of reading freed memory. Both precisions, with
 * fetch threads (their accumulators go too), and a context destroyed after
 * its release. */
START_TEST(plan_context_released)
{
    tf_csr a;
    tf_handle *h = open_random(TF_MODE_TWOFACE, 8, &a);
    int st = TF_OK;
    const tf_rank_plan *rp = h->rp;
    const int k = 7;
    float *c = malloc((size_t)(rp->nrows > 0 ? rp->nrows : 1) * k * sizeof(float));
    ck_assert_ptr_nonnull(c);
    for (int bf16 = 0; bf16 < 2; bf16++) {
        tf_exec_options opt;
        tf_exec_options_default(&opt);
        opt.comm = bf16 ? TF_COMM_BF16 : TF_COMM_F32;
        opt.threads = 2;
        opt.threads_fetch = 1;
        tf_spmm_ctx *ctx = NULL;
        setenv("TWOFACE_COLL_SHM", "off", 1); /* the buffers exist */
        st = tf_spmm_ctx_create(h, k, &opt, NULL, TF_PLACE_NEVER, &ctx);
        unsetenv("TWOFACE_COLL_SHM");
        ck_assert_msg(all_true(st == TF_OK), "create: %s", tf_error_message());
        if (rp->nbrows > 0)
            tf_dense_fill(ctx->b, 31, rp->brow_begin, rp->nbrows, k);
        ck_assert(all_true(tf_spmm_run(ctx, c) == TF_OK));
        ck_assert(rank_error(h, &a, k, 31, c) < (bf16 ? 1.0 / 256 + TOL : TOL));
        float *b = ctx->b;
        tf_spmm_ctx_release(ctx);
        ck_assert(ctx->coll_buf == NULL && ctx->fetch_buf == NULL && ctx->pack_buf == NULL);
        for (int f = 0; ctx->ft && f < ctx->n_fetch_threads; f++)
            ck_assert_ptr_null(ctx->ft[f].acc);
        ck_assert(ctx->b == b); /* B stays where the caller fills it */
        if (rp->nbrows > 0) /* and is still writable memory */
            tf_dense_fill(ctx->b, 32, rp->brow_begin, rp->nbrows, k);
        st = tf_spmm_run(ctx, c);
        ck_assert_int_eq(st, TF_ERR_INTERNAL);
        ck_assert(strstr(tf_error_message(), "released") != NULL);
        tf_spmm_ctx_destroy(ctx); /* collective, no double free */
    }
    free(c);
    tf_close(h);
    tf_csr_free(&a);
}
END_TEST

/* A bad TWOFACE_SHIFT fails every rank's context in one agreed message. */
START_TEST(dense_shift_setting)
{
    tf_csr a;
    tf_handle *h = open_random(TF_MODE_TWOFACE, 8, &a);
    int st = TF_OK;
    /* 0, a word, more than the ranks, one that does not divide them (3 of
     * 4 ranks; 2 of 1 or 3), and a setting that differs between ranks. */
    const char *bad[5] = {"0", "sideways", "9", g_size == 4 ? "3" : "2", NULL};
    for (int i = 0; i < 5; i++) {
        if (i == 4 && g_size == 1)
            continue;
        const char *v = i < 4 ? bad[i] : g_rank == 0 ? "1" : "never";
        if (i == 3 && g_size == 2)
            continue; /* 2 divides 2 */
        setenv("TWOFACE_SHIFT", v, 1);
        tf_ctx *ctx = NULL;
        st = tf_context_create(h, 4, NULL, &ctx);
        unsetenv("TWOFACE_SHIFT");
        ck_assert_msg(all_true(st == TF_ERR_ARG && ctx == NULL), "TWOFACE_SHIFT=%s: status %d", v,
                      st);
        ck_assert(strstr(tf_error_message(), "TWOFACE_SHIFT") != NULL);
        ck_assert(same_message_everywhere(tf_error_message()));
    }
    /* never: no shift, whatever the model says. */
    setenv("TWOFACE_SHIFT", "never", 1);
    tf_ctx *ctx = NULL;
    st = tf_context_create(h, 4, NULL, &ctx);
    unsetenv("TWOFACE_SHIFT");
    ck_assert_msg(all_true(st == TF_OK), "never: %s", tf_error_message());
    tf_selection sel;
    tf_selection_get(ctx, &sel);
    ck_assert(strncmp(sel.classes[1], "shift", 5) != 0);
    tf_context_free(ctx);
    tf_close(h);
    tf_csr_free(&a);
}
END_TEST

/* Collects rank 0's message and checks every rank has the same. */
static int same_message_everywhere(const char *msg)
{
    char m0[1024];
    memset(m0, 0, sizeof m0);
    snprintf(m0, sizeof m0, "%s", msg);
    MPI_Bcast(m0, (int)sizeof m0, MPI_CHAR, 0, MPI_COMM_WORLD);
    return all_true(strcmp(m0, msg) == 0 && msg[0] != '\0');
}

START_TEST(plan_for_other_rank_count)
{
    tf_csr a;
    tf_test_random_csr(&a, 50, 50, 200, 31);
    tf_plan_options o;
    plan_options(&o, g_size + 1, TF_MODE_TWOFACE, 4);
    char path[512];
    ck_assert(plan_to_file(&a, &o, path, sizeof path) == TF_OK);
    tf_handle *h = (tf_handle *)&o; /* must be reset to NULL */
    int st = tf_open(path, MPI_COMM_WORLD, &h);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tf_last_error());
    remove_file(path);
    ck_assert_msg(all_true(st == TF_ERR_FORMAT && h == NULL), "status %d", st);
    ck_assert_msg(same_message_everywhere(msg), "messages differ: %s", msg);
    ck_assert_msg(strstr(msg, "ranks") != NULL, "%s", msg);

    /* The same from memory, and a plan with fewer ranks when possible. */
    tf_plan plan;
    plan_options(&o, g_size > 1 ? g_size - 1 : g_size + 2, TF_MODE_FETCH, 4);
    ck_assert(tf_plan_build(&a, &o, &plan) == TF_OK);
    st = tf_open_plan(&plan, MPI_COMM_WORLD, &h);
    tf_plan_free(&plan);
    snprintf(msg, sizeof msg, "%s", tf_last_error());
    ck_assert_msg(all_true(st == TF_ERR_FORMAT && h == NULL), "status %d", st);
    ck_assert_msg(same_message_everywhere(msg), "messages differ: %s", msg);
    tf_csr_free(&a);
}
END_TEST

START_TEST(missing_plan_file)
{
    tf_handle *h = NULL;
    int st = tf_open("/nonexistent/dir/plan.h5", MPI_COMM_WORLD, &h);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tf_last_error());
    ck_assert_msg(all_true(st != TF_OK && h == NULL), "status %d", st);
    ck_assert_msg(same_message_everywhere(msg), "messages differ: %s", msg);
}
END_TEST

/* A plan whose values on one rank were changed: the fingerprint catches it
 * and every rank reports the same. */
START_TEST(fingerprint_mismatch)
{
    tf_csr a;
    tf_test_random_csr(&a, 60, 60, 400, 41);
    tf_plan_options o;
    plan_options(&o, g_size, TF_MODE_TWOFACE, 4);
    tf_plan plan;
    ck_assert(tf_plan_build(&a, &o, &plan) == TF_OK);
    int r = g_size - 1; /* the last rank damages its part */
    tf_rank_plan *rp = &plan.parts[r];
    if (g_rank == r) {
        if (rp->loc_nnz > 0)
            rp->loc_val[0] += 1.0f;
        else if (rp->coll_nnz > 0)
            rp->coll_val[0] += 1.0f;
        else if (rp->fet_nnz > 0)
            rp->fet_val[0] += 1.0f;
    }
    tf_handle *h = NULL;
    int st = tf_open_plan(&plan, MPI_COMM_WORLD, &h);
    tf_plan_free(&plan);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tf_last_error());
    ck_assert_msg(all_true(st == TF_ERR_FORMAT && h == NULL), "status %d: %s", st, msg);
    ck_assert_msg(same_message_everywhere(msg), "messages differ: %s", msg);
    ck_assert_msg(strstr(msg, "fingerprint") != NULL, "%s", msg);
    tf_csr_free(&a);
}
END_TEST

/* Bad arguments to tf_context_create fail on every rank alike; K other than
 * the planned one works; tf_close/tf_context_free accept NULL. */
START_TEST(context_arguments)
{
    tf_csr a;
    tf_test_random_csr(&a, 64, 64, 300, 51);
    tf_handle *h = NULL;
    ck_assert(all_true(open_plan(&a, TF_MODE_TWOFACE, 4, 0, &h) == TF_OK));
    tf_ctx *ctx = NULL;
    int st = tf_context_create(h, 0, NULL, &ctx);
    ck_assert(all_true(st == TF_ERR_ARG && ctx == NULL));
    ck_assert(same_message_everywhere(tf_last_error()));
    /* One rank asks for something wrong: all fail with its message. */
    tf_exec_options opt;
    tf_exec_options_default(&opt);
    if (g_rank == g_size - 1)
        opt.threads = -3;
    st = tf_context_create(h, 3, &opt, &ctx);
    ck_assert(all_true(st == TF_ERR_ARG && ctx == NULL));
    ck_assert(same_message_everywhere(tf_last_error()));
    ck_assert(strstr(tf_last_error(), "threads") != NULL);
    /* Past the programs' --threads limit, and a fetch group below -1. */
    tf_exec_options_default(&opt);
    opt.threads = 100000;
    st = tf_context_create(h, 3, &opt, &ctx);
    ck_assert(all_true(st == TF_ERR_ARG && ctx == NULL));
    ck_assert(strstr(tf_last_error(), "0..4096") != NULL);
    tf_exec_options_default(&opt);
    opt.threads_fetch = -7;
    st = tf_context_create(h, 3, &opt, &ctx);
    ck_assert(all_true(st == TF_ERR_ARG && ctx == NULL));
    ck_assert(strstr(tf_last_error(), "threads_fetch = -7") != NULL);
    /* Defaults (NULL options) and a K far from the planned one. */
    ck_assert(all_true(tf_context_create(h, 130, NULL, &ctx) == TF_OK));
    ck_assert_int_eq(tf_ctx_k(ctx), 130);
    int64_t r0, nr, b0, nb;
    tf_get_rows(h, &r0, &nr);
    float *b = tf_b_rows(ctx, &b0, &nb);
    if (nb)
        tf_dense_fill(b, 7, b0, nb, 130);
    float *c = malloc((size_t)(nr ? nr : 1) * 130 * sizeof *c);
    ck_assert(all_true(tf_spmm(ctx, c) == TF_OK));
    ck_assert(all_true(rank_error(h, &a, 130, 7, c) < TOL));
    tf_timing t;
    tf_timing_get(ctx, &t);
    ck_assert_int_eq(t.calls, 1);
    tf_timing_reset(ctx);
    tf_timing_get(ctx, &t);
    ck_assert_int_eq(t.calls, 0);
    free(c);
    tf_context_free(ctx);
    tf_context_free(NULL);
    tf_close(h);
    tf_close(NULL);
    ck_assert_str_eq(tf_status_string(TF_OK), "success");
    tf_csr_free(&a);
}
END_TEST

/* The dense HDF5 helpers: a B file read by row ranges and row sets, a C file
 * written by all ranks in turn. */
START_TEST(dense_files)
{
    const int64_t n = 37, k = 3;
    float *all = malloc((size_t)(n * k) * sizeof *all);
    tf_dense_fill(all, 5, 0, n, k);
    char path[512];
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    if (g_rank == 0) {
        snprintf(path, sizeof path, "%s/tf_mpi_exec_dense_%d.h5", dir, (int)getpid());
        ck_assert(tf_dense_h5_write(path, "/B", n, k, all) == TF_OK);
    }
    MPI_Bcast(path, (int)sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    int64_t rows = 0, cols = 0;
    int ok = tf_dense_h5_shape(path, "/B", &rows, &cols) == TF_OK && rows == n && cols == k;
    float part[10 * 3];
    ok = ok && tf_dense_h5_read_rows(path, "/B", 20, 10, k, part) == TF_OK &&
         memcmp(part, all + 20 * k, sizeof part) == 0;
    const int32_t set[5] = {0, 1, 19, 30, 36};
    float got[5 * 3];
    ok = ok && tf_dense_h5_read_row_set(path, "/B", set, 5, k, got) == TF_OK;
    for (int x = 0; x < 5 && ok; x++)
        ok = memcmp(got + x * k, all + set[x] * k, (size_t)k * sizeof(float)) == 0;
    ok = ok && tf_dense_h5_read_rows(path, "/B", 30, 10, k, part) == TF_ERR_FORMAT;
    ok = ok && tf_dense_h5_shape(path, "/C", &rows, &cols) == TF_ERR_FORMAT;
    ck_assert_msg(all_true(ok), "reading %s: %s", path, tf_error_message());

    /* Wrong type and wrong rank of dataset: clear errors. */
    char bad[600];
    snprintf(bad, sizeof bad, "%s.bad.h5", path);
    if (g_rank == 0) {
        hid_t f = H5Fcreate(bad, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        hsize_t d2[2] = {4, 2}, d1[1] = {8};
        hid_t s2 = H5Screate_simple(2, d2, NULL), s1 = H5Screate_simple(1, d1, NULL);
        H5Dclose(H5Dcreate2(f, "/B", H5T_IEEE_F64LE, s2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        H5Dclose(H5Dcreate2(f, "/V", H5T_IEEE_F32LE, s1, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        H5Sclose(s1);
        H5Sclose(s2);
        H5Fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    ok = tf_dense_h5_shape(bad, "/B", &rows, &cols) == TF_ERR_FORMAT &&
         strstr(tf_last_error(), "float32") != NULL;
    ok = ok && tf_dense_h5_shape(bad, "/V", &rows, &cols) == TF_ERR_FORMAT &&
         strstr(tf_last_error(), "2-D") != NULL;
    ok = ok && tf_dense_h5_shape("/nonexistent/b.h5", "/B", &rows, &cols) == TF_ERR_IO;
    ck_assert_msg(all_true(ok), "%s", tf_last_error());

    /* Distributed write of C: rank r holds rows of an uneven split. */
    char cpath[600];
    snprintf(cpath, sizeof cpath, "%s.C.h5", path);
    int64_t r0 = n * g_rank / g_size, r1 = n * (g_rank + 1) / g_size;
    int st = tf_dense_h5_write_dist(MPI_COMM_WORLD, cpath, "/C", n, k, r0, r1 - r0, all + r0 * k);
    ck_assert_msg(st == TF_OK, "%s", tf_error_message());
    float *back = malloc((size_t)(n * k) * sizeof *back);
    ok = tf_dense_h5_read_rows(cpath, "/C", 0, n, k, back) == TF_OK &&
         memcmp(back, all, (size_t)(n * k) * sizeof *back) == 0;
    ck_assert(all_true(ok));
    st = tf_dense_h5_write_dist(MPI_COMM_WORLD, "/nonexistent/dir/c.h5", "/C", n, k, r0, r1 - r0,
                                all + r0 * k);
    ck_assert(all_true(st == TF_ERR_IO));
    ck_assert(same_message_everywhere(tf_last_error()));
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0) {
        unlink(path);
        unlink(cpath);
        unlink(bad);
    }
    free(back);
    free(all);
}
END_TEST

static Suite *make_suite(void)
{
    comm_info();
    Suite *s = suite_create("mpi_exec");
    TCase *tc = tcase_create("exec");
    tcase_add_test(tc, random_matrix);
    tcase_add_test(tc, random_matrix_wide_stripes);
    tcase_add_test(tc, empty_rows_and_columns);
    tcase_add_test(tc, dense_column);
    tcase_add_test(tc, wide);
    tcase_add_test(tc, tall);
    tcase_add_test(tc, symmetric);
    tcase_add_test(tc, directed);
    tcase_add_test(tc, more_ranks_than_rows);
    tcase_add_test(tc, no_nonzeros);
    tcase_add_test(tc, one_by_one);
    tcase_add_test(tc, repeated_with_changing_b);
    tcase_add_test(tc, start_up_trial);
    tcase_add_test(tc, dense_shift_face);
    tcase_add_test(tc, dense_shift_setting);
    tcase_add_test(tc, dense_shift_prediction);
    tcase_add_test(tc, plan_context_released);
    tcase_add_test(tc, collective_send_forms);
    tcase_add_test(tc, shm_transport);
    tcase_add_test(tc, shm_transport_setting);
    tcase_add_test(tc, plan_for_other_rank_count);
    tcase_add_test(tc, missing_plan_file);
    tcase_add_test(tc, fingerprint_mismatch);
    tcase_add_test(tc, context_arguments);
    tcase_add_test(tc, dense_files);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    tf_test_reexec(argv);
    return tf_test_run_mpi(&argc, &argv, make_suite);
}
