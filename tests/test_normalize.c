/* Normalised adjacency (planner/tf_normalize), transpose and symmetry
 * (planner/tf_transpose), the preparation of the stored matrix and its
 * fingerprint (planner/tf_prepare), fixed bands in the planner and
 * --bands-from (planner/tf_bands_from). Expected values are worked out by
 * hand in the comments. */
#include "tf_test.h"
#include "tf_bands_from.h"
#include "tf_error.h"
#include "tf_fingerprint.h"
#include "tf_mm_read.h"
#include "tf_normalize.h"
#include "tf_partition.h"
#include "tf_planner.h"
#include "tf_prepare.h"
#include "tf_transpose.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t i, j;
    double v;
} entry;

static void make(tf_csr *a, int64_t m, int64_t n, const entry *e, int ne)
{
    tf_coo coo;
    ck_assert_int_eq(tf_coo_init(&coo, m, n, ne > 0 ? ne : 1), TF_OK);
    for (int k = 0; k < ne; k++)
        ck_assert_int_eq(tf_coo_push(&coo, e[k].i, e[k].j, e[k].v), TF_OK);
    ck_assert_int_eq(tf_csr_from_coo(a, &coo), TF_OK);
    tf_coo_free(&coo);
}

/* Value stored at (i, j), or NAN when there is no entry. */
static double at(const tf_csr *a, int64_t i, int32_t j)
{
    for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++)
        if (a->col[e] == j)
            return a->val[e];
    return NAN;
}

/* Every entry of a equals the expected list (same count, values to float
 * rounding). */
static void expect(const tf_csr *a, const entry *e, int ne)
{
    ck_assert_int_eq(a->nnz, ne);
    ck_assert_int_eq(tf_csr_validate(a), TF_OK);
    for (int k = 0; k < ne; k++) {
        double got = at(a, e[k].i, e[k].j);
        ck_assert_msg(fabs(got - e[k].v) <= 1e-7 * fabs(e[k].v) + 1e-30,
                      "(%d, %d): got %.9g, expected %.9g", e[k].i, e[k].j, got, e[k].v);
    }
}

static void msg_has(const char *needle)
{
    ck_assert_msg(strstr(tf_error_message(), needle) != NULL, "expected '%s' in: %s", needle,
                  tf_error_message());
    ck_assert_ptr_null(strchr(tf_error_message(), '\n'));
}

/* A (3 x 3, values 1, not symmetric): 0->1, 1->2, 2->0, 0->2, no loops.
 * A + I: row 0 {0, 1, 2}, row 1 {1, 2}, row 2 {0, 2}.
 * D_out = row sums = (3, 2, 2); D_in = column sums = (2, 2, 3).
 * gcn(i, j) = 1 / sqrt(D_out[i] D_in[j]). */
static const entry CYCLE[] = {{0, 1, 1}, {1, 2, 1}, {2, 0, 1}, {0, 2, 1}};
static void cycle_gcn_expected(entry out[7])
{
    const entry e[7] = {
        {0, 0, 1 / sqrt(6.0)}, {0, 1, 1 / sqrt(6.0)}, {0, 2, 1 / 3.0}, {1, 1, 0.5},
        {1, 2, 1 / sqrt(6.0)}, {2, 0, 0.5},           {2, 2, 1 / sqrt(6.0)},
    };
    memcpy(out, e, sizeof e);
}

START_TEST(gcn_adds_loops_and_uses_out_and_in_degrees)
{
    tf_csr a;
    make(&a, 3, 3, CYCLE, 4);
    ck_assert_int_eq(tf_normalize(&a, TF_NORM_GCN), TF_OK);
    entry e[7];
    cycle_gcn_expected(e);
    expect(&a, e, 7);
    tf_csr_free(&a);
}
END_TEST

START_TEST(gcn_of_pattern_input_counts_entries_as_one)
{
    const char text[] = "%%MatrixMarket matrix coordinate pattern general\n"
                        "3 3 4\n1 2\n2 3\n3 1\n1 3\n";
    const char *path = tf_test_tmpfile(0, ".mtx", text, sizeof text - 1);
    tf_csr a;
    tf_mm_read_options ro = TF_MM_READ_OPTIONS_INIT;
    ck_assert_msg(tf_mm_read(path, &a, &ro) == TF_OK, "%s", tf_error_message());
    ck_assert_int_eq(tf_normalize(&a, TF_NORM_GCN), TF_OK);
    entry e[7];
    cycle_gcn_expected(e);
    expect(&a, e, 7);
    tf_csr_free(&a);
    remove(path);
}
END_TEST

/* An existing loop keeps its value (2), no second loop is added:
 * A = [[2, 1], [1, 0]] with (1, 1) absent; A + I = [[2, 1], [1, 1]];
 * D = (3, 2) both ways; gcn = [[2/3, 1/sqrt6], [1/sqrt6, 1/2]]. */
START_TEST(gcn_keeps_existing_loops)
{
    const entry in[] = {{0, 0, 2}, {0, 1, 1}, {1, 0, 1}};
    tf_csr a;
    make(&a, 2, 2, in, 3);
    ck_assert_int_eq(tf_normalize(&a, TF_NORM_GCN), TF_OK);
    const entry e[] = {{0, 0, 2 / 3.0}, {0, 1, 1 / sqrt(6.0)}, {1, 0, 1 / sqrt(6.0)}, {1, 1, 0.5}};
    expect(&a, e, 4);
    int sym = -1;
    ck_assert_int_eq(tf_csr_is_symmetric(&a, &sym), TF_OK);
    ck_assert_int_eq(sym, 1);
    tf_csr_free(&a);
}
END_TEST

/* A zero degree leaves its row zero (entries kept, value 0):
 * A = {(0,0) -1, (0,1) 1, (1,0) 2}; A + I adds (1,1) and (2,2).
 * Row sums (0, 3, 1), column sums (1, 2, 1):
 * (1,0) = 2 / sqrt(3 * 1), (1,1) = 1 / sqrt(3 * 2), (2,2) = 1. */
START_TEST(gcn_zero_degree_row_stays_zero)
{
    const entry in[] = {{0, 0, -1}, {0, 1, 1}, {1, 0, 2}};
    tf_csr a;
    make(&a, 3, 3, in, 3);
    ck_assert_int_eq(tf_normalize(&a, TF_NORM_GCN), TF_OK);
    const entry e[] = {{0, 0, 0}, {0, 1, 0}, {1, 0, 2 / sqrt(3.0)}, {1, 1, 1 / sqrt(6.0)},
                       {2, 2, 1}};
    expect(&a, e, 5);
    tf_csr_free(&a);
}
END_TEST

START_TEST(gcn_refuses_negative_degrees_and_rectangles)
{
    /* Row 0 of A + I sums to -2 + 1 = -1. */
    const entry in[] = {{0, 0, -3}, {0, 1, 1}, {1, 0, 1}};
    tf_csr a;
    make(&a, 2, 2, in, 3);
    ck_assert_int_eq(tf_normalize(&a, TF_NORM_GCN), TF_ERR_ARG);
    msg_has("row 1 of A + I sums to -2");
    ck_assert_int_eq(a.nnz, 3); /* unchanged */
    ck_assert(a.val[0] == -3.0f);
    tf_csr_free(&a);
    /* A + I = [[9, -5], [6, 1]]: rows sum to (4, 7), columns to (15, -4). */
    const entry in2[] = {{0, 1, -5}, {1, 0, 6}, {0, 0, 9}};
    make(&a, 2, 2, in2, 3);
    ck_assert_int_eq(tf_normalize(&a, TF_NORM_GCN), TF_ERR_ARG);
    msg_has("column 2 of A + I sums to -4");
    tf_csr_free(&a);
    make(&a, 2, 3, CYCLE, 1);
    ck_assert_int_eq(tf_normalize(&a, TF_NORM_GCN), TF_ERR_ARG);
    msg_has("square");
    tf_csr_free(&a);
}
END_TEST

/* mean: each row divided by its sum; no loops; a zero-sum row stays zero;
 * rectangular is fine.
 * Row 0 {(0,0) 1, (0,2) 3} / 4; row 1 {(1,1) 2} / 2; row 2 {1, -1} sums to 0. */
START_TEST(mean_divides_rows_by_their_sums)
{
    const entry in[] = {{0, 0, 1}, {0, 2, 3}, {1, 1, 2}, {2, 0, 1}, {2, 1, -1}};
    tf_csr a;
    make(&a, 3, 3, in, 5);
    ck_assert_int_eq(tf_normalize(&a, TF_NORM_MEAN), TF_OK);
    const entry e[] = {{0, 0, 0.25}, {0, 2, 0.75}, {1, 1, 1}, {2, 0, 0}, {2, 1, 0}};
    expect(&a, e, 5);
    tf_csr_free(&a);
    make(&a, 2, 3, in, 3);
    ck_assert_int_eq(tf_normalize(&a, TF_NORM_MEAN), TF_OK);
    expect(&a, e, 3);
    tf_csr_free(&a);
}
END_TEST

START_TEST(none_changes_nothing_and_unknown_is_refused)
{
    tf_csr a;
    make(&a, 3, 3, CYCLE, 4);
    ck_assert_int_eq(tf_normalize(&a, TF_NORM_NONE), TF_OK);
    expect(&a, CYCLE, 4);
    ck_assert_int_eq(tf_normalize(&a, 7), TF_ERR_ARG);
    tf_csr_free(&a);
    int k = -1;
    ck_assert_int_eq(tf_norm_parse("gcn", &k), TF_OK);
    ck_assert_int_eq(k, TF_NORM_GCN);
    ck_assert_int_eq(tf_norm_parse("mean", &k), TF_OK);
    ck_assert_int_eq(k, TF_NORM_MEAN);
    ck_assert_int_eq(tf_norm_parse("none", &k), TF_OK);
    ck_assert_int_eq(k, TF_NORM_NONE);
    ck_assert_int_eq(tf_norm_parse("GCN", &k), TF_ERR_ARG);
    msg_has("expected gcn, mean or none");
    ck_assert_str_eq(tf_norm_name(TF_NORM_MEAN), "mean");
}
END_TEST

START_TEST(transpose_and_symmetry)
{
    tf_csr a, t, tt;
    make(&a, 3, 3, CYCLE, 4);
    ck_assert_int_eq(tf_csr_transpose(&a, &t), TF_OK);
    ck_assert_int_eq(tf_csr_validate(&t), TF_OK);
    const entry te[] = {{1, 0, 1}, {2, 1, 1}, {0, 2, 1}, {2, 0, 1}};
    expect(&t, te, 4);
    ck_assert_int_eq(tf_csr_transpose(&t, &tt), TF_OK);
    ck_assert(memcmp(tt.rowptr, a.rowptr, 4 * sizeof *a.rowptr) == 0);
    ck_assert(memcmp(tt.col, a.col, 4 * sizeof *a.col) == 0);
    int sym = -1;
    /* Not symmetric pattern. */
    ck_assert_int_eq(tf_csr_is_symmetric(&a, &sym), TF_OK);
    ck_assert_int_eq(sym, 0);
    tf_csr_free(&a);
    tf_csr_free(&t);
    tf_csr_free(&tt);
    /* Symmetric pattern, asymmetric values. */
    const entry pv[] = {{0, 1, 1}, {1, 0, 2}, {1, 1, 5}};
    make(&a, 2, 2, pv, 3);
    ck_assert_int_eq(tf_csr_is_symmetric(&a, &sym), TF_OK);
    ck_assert_int_eq(sym, 0);
    tf_csr_free(&a);
    /* Symmetric. */
    const entry sv[] = {{0, 1, 1.5}, {1, 0, 1.5}, {1, 1, 5}, {2, 0, -1}, {0, 2, -1}};
    make(&a, 3, 3, sv, 5);
    ck_assert_int_eq(tf_csr_is_symmetric(&a, &sym), TF_OK);
    ck_assert_int_eq(sym, 1);
    /* The transpose-free residue: zero for a symmetric matrix, also summed
     * over row blocks as the distributed planner sums it. */
    ck_assert(tf_csr_symmetry_residue(&a, 0) == 0);
    tf_csr top = a, bot = a;
    top.nrows = 1;
    bot.nrows = 2;
    bot.rowptr = a.rowptr + 1;
    uint64_t r_top = tf_csr_symmetry_residue(&top, 0), r_bot = tf_csr_symmetry_residue(&bot, 1);
    ck_assert(r_top != 0 && r_top + r_bot == 0);
    tf_csr_free(&a);
    /* Asymmetric values only: the residue tells them apart. */
    make(&a, 2, 2, pv, 3);
    ck_assert(tf_csr_symmetry_residue(&a, 0) != 0);
    tf_csr_free(&a);
    /* Rectangular: never symmetric; its transpose has the other shape. */
    make(&a, 2, 3, CYCLE, 1);
    ck_assert_int_eq(tf_csr_is_symmetric(&a, &sym), TF_OK);
    ck_assert_int_eq(sym, 0);
    ck_assert_int_eq(tf_csr_transpose(&a, &t), TF_OK);
    ck_assert_int_eq(t.nrows, 3);
    ck_assert_int_eq(t.ncols, 2);
    tf_csr_free(&a);
    tf_csr_free(&t);
}
END_TEST

/* A random symmetric matrix with positive values: the gcn values of (i, j)
 * and (j, i) must be bit-identical (degrees summed in the same order). */
START_TEST(gcn_of_symmetric_matrix_is_exactly_symmetric)
{
    tf_csr r;
    tf_test_random_csr(&r, 500, 500, 4000, 77);
    tf_coo coo;
    ck_assert_int_eq(tf_coo_init(&coo, 500, 500, 2 * r.nnz), TF_OK);
    for (int64_t i = 0; i < r.nrows; i++)
        for (int64_t e = r.rowptr[i]; e < r.rowptr[i + 1]; e++) {
            double v = fabs((double)r.val[e]) + 0.1 * (double)(i % 7);
            ck_assert_int_eq(tf_coo_push(&coo, (int32_t)i, r.col[e], v), TF_OK);
            ck_assert_int_eq(tf_coo_push(&coo, r.col[e], (int32_t)i, v), TF_OK);
        }
    tf_csr a;
    ck_assert_int_eq(tf_csr_from_coo(&a, &coo), TF_OK);
    tf_coo_free(&coo);
    tf_csr_free(&r);
    int sym = -1;
    ck_assert_int_eq(tf_csr_is_symmetric(&a, &sym), TF_OK);
    ck_assert_int_eq(sym, 1);
    ck_assert_int_eq(tf_normalize(&a, TF_NORM_GCN), TF_OK);
    ck_assert_int_eq(tf_csr_is_symmetric(&a, &sym), TF_OK);
    ck_assert_int_eq(sym, 1);
    /* mean is not symmetric on it (rows have different sums). */
    tf_csr_free(&a);
}
END_TEST

START_TEST(prepare_records_normalisation_transpose_and_symmetry)
{
    tf_csr a, ref;
    make(&a, 3, 3, CYCLE, 4);
    make(&ref, 3, 3, CYCLE, 4);
    ck_assert_int_eq(tf_normalize(&ref, TF_NORM_GCN), TF_OK);
    tf_plan_options o;
    tf_plan_options_default(&o);
    ck_assert_int_eq(o.normalization, TF_NORM_NONE);
    ck_assert_int_eq(tf_matrix_prepare(&a, TF_NORM_GCN, 1, &o), TF_OK);
    ck_assert_int_eq(o.normalization, TF_NORM_GCN);
    ck_assert_int_eq(o.transposed, 1);
    ck_assert_int_eq(o.symmetric, 0);
    ck_assert_uint_eq(o.transpose_of, tf_plan_fingerprint(&ref, TF_NORM_GCN));
    /* a is now (gcn A)^T: (2, 0) of the normalised A is (0, 2) here. */
    ck_assert(at(&a, 0, 2) == at(&ref, 2, 0));
    ck_assert(at(&a, 2, 0) == at(&ref, 0, 2));
    ck_assert_int_eq(a.nnz, ref.nnz);
    tf_csr_free(&a);
    /* Without transpose, symmetric input stays symmetric. */
    const entry sv[] = {{0, 1, 1}, {1, 0, 1}, {1, 2, 1}, {2, 1, 1}};
    make(&a, 3, 3, sv, 4);
    ck_assert_int_eq(tf_matrix_prepare(&a, TF_NORM_GCN, 0, &o), TF_OK);
    ck_assert_int_eq(o.transposed, 0);
    ck_assert_uint_eq(o.transpose_of, 0);
    ck_assert_int_eq(o.symmetric, 1);
    ck_assert_int_eq(a.nnz, 7);
    tf_csr_free(&a);
    /* A failure leaves o alone. */
    make(&a, 2, 3, CYCLE, 1);
    o.normalization = TF_NORM_MEAN;
    ck_assert_int_eq(tf_matrix_prepare(&a, TF_NORM_GCN, 0, &o), TF_ERR_ARG);
    ck_assert_int_eq(o.normalization, TF_NORM_MEAN);
    tf_csr_free(&a);
    tf_csr_free(&ref);
}
END_TEST

/* The normalisation is part of the fingerprint, even where the values are
 * the same: mean of a permutation matrix is the matrix itself. */
START_TEST(fingerprint_changes_with_normalisation)
{
    const entry perm[] = {{0, 2, 1}, {1, 0, 1}, {2, 1, 1}};
    tf_csr a;
    make(&a, 3, 3, perm, 3);
    uint64_t raw = tf_fingerprint_rows(a.rowptr, a.col, a.val, 0, a.nrows);
    ck_assert_uint_eq(tf_plan_fingerprint(&a, TF_NORM_NONE), raw);
    ck_assert_uint_eq(tf_fingerprint_salt("none"), 0);
    ck_assert_uint_eq(tf_fingerprint_salt(NULL), 0);
    ck_assert_uint_ne(tf_fingerprint_salt("gcn"), tf_fingerprint_salt("mean"));
    uint64_t none = tf_plan_fingerprint(&a, TF_NORM_NONE);
    ck_assert_int_eq(tf_normalize(&a, TF_NORM_MEAN), TF_OK);
    ck_assert_uint_eq(tf_fingerprint_rows(a.rowptr, a.col, a.val, 0, a.nrows), raw);
    uint64_t mean = tf_plan_fingerprint(&a, TF_NORM_MEAN);
    ck_assert_uint_ne(mean, none);
    ck_assert_uint_ne(tf_plan_fingerprint(&a, TF_NORM_GCN), mean);

    /* The planner stores the salted value. */
    tf_plan_options o;
    tf_plan_options_default(&o);
    o.nranks = 2;
    o.normalization = TF_NORM_MEAN;
    tf_plan p;
    ck_assert_msg(tf_plan_build(&a, &o, &p) == TF_OK, "%s", tf_error_message());
    ck_assert_uint_eq(p.checksum, mean);
    ck_assert_int_eq(p.normalization, TF_NORM_MEAN);
    ck_assert_int_eq(p.transposed, 0);
    if (p.alt)
        ck_assert_uint_eq(p.alt->checksum, mean);
    tf_plan_free(&p);
    tf_csr_free(&a);
}
END_TEST

/* Fixed bands (--bands-from) replace the partition, empty bands included,
 * and bands that do not cover the matrix are refused. */
START_TEST(planner_takes_fixed_bands)
{
    tf_csr a;
    tf_test_random_csr(&a, 60, 40, 400, 5);
    const int64_t ro[] = {0, 30, 30, 60}, bo[] = {0, 10, 25, 40};
    tf_plan_options o;
    tf_plan_options_default(&o);
    o.nranks = 3;
    o.row_off = ro;
    o.brow_off = bo;
    tf_plan p;
    ck_assert_msg(tf_plan_build(&a, &o, &p) == TF_OK, "%s", tf_error_message());
    ck_assert(memcmp(p.row_off, ro, sizeof ro) == 0);
    ck_assert(memcmp(p.brow_off, bo, sizeof bo) == 0);
    ck_assert_int_eq(p.parts[1].nrows, 0);
    tf_plan_free(&p);
    const int64_t short_ro[] = {0, 30, 30, 59}, back[] = {0, 30, 20, 60};
    o.row_off = short_ro;
    ck_assert_int_eq(tf_plan_build(&a, &o, &p), TF_ERR_ARG);
    msg_has("the matrix has 60");
    o.row_off = back;
    ck_assert_int_eq(tf_plan_build(&a, &o, &p), TF_ERR_ARG);
    msg_has("band 1 ends");
    o.row_off = NULL;
    ck_assert_int_eq(tf_plan_build(&a, &o, &p), TF_ERR_ARG);
    tf_csr_free(&a);
}
END_TEST

/* tf_bands_from against a forward plan built here. */
START_TEST(bands_from_checks_matrix_normalisation_and_ranks)
{
    tf_csr a;
    tf_test_random_csr(&a, 50, 30, 300, 9);
    tf_plan_options o;
    tf_plan_options_default(&o);
    o.nranks = 3;
    o.partition = TF_PART_NNZ;
    ck_assert_int_eq(tf_matrix_prepare(&a, TF_NORM_MEAN, 0, &o), TF_OK);
    tf_plan fwd;
    ck_assert_msg(tf_plan_build(&a, &o, &fwd) == TF_OK, "%s", tf_error_message());
    tf_csr_free(&a);

    /* The transpose of the same matrix: bands swapped. */
    tf_plan_options t;
    tf_plan_options_default(&t);
    t.nranks = 3;
    tf_test_random_csr(&a, 50, 30, 300, 9);
    ck_assert_int_eq(tf_matrix_prepare(&a, TF_NORM_MEAN, 1, &t), TF_OK);
    ck_assert_int_eq(tf_bands_from(&fwd, "fwd.h5", "a.mtx", &a, &t), TF_OK);
    ck_assert_ptr_eq(t.row_off, fwd.brow_off);
    ck_assert_ptr_eq(t.brow_off, fwd.row_off);
    ck_assert_int_eq(t.partition, TF_PART_NNZ);
    tf_plan bwd;
    ck_assert_msg(tf_plan_build(&a, &t, &bwd) == TF_OK, "%s", tf_error_message());
    ck_assert_int_eq(bwd.m, 30);
    ck_assert_int_eq(bwd.n, 50);
    ck_assert_int_eq(bwd.transposed, 1);
    ck_assert_uint_eq(bwd.transpose_of, fwd.checksum);
    tf_plan_free(&bwd);
    tf_csr_free(&a);

    /* Not transposed: the same bands. */
    tf_test_random_csr(&a, 50, 30, 300, 9);
    tf_plan_options_default(&t);
    t.nranks = 3;
    ck_assert_int_eq(tf_matrix_prepare(&a, TF_NORM_MEAN, 0, &t), TF_OK);
    ck_assert_int_eq(tf_bands_from(&fwd, "fwd.h5", "a.mtx", &a, &t), TF_OK);
    ck_assert_ptr_eq(t.row_off, fwd.row_off);
    /* Another normalisation. */
    t.normalization = TF_NORM_NONE;
    ck_assert_int_eq(tf_bands_from(&fwd, "fwd.h5", "a.mtx", &a, &t), TF_ERR_ARG);
    msg_has("fwd.h5: a plan normalised 'mean', but a.mtx is planned with --normalize none");
    t.normalization = TF_NORM_MEAN;
    /* Another number of ranks. */
    t.nranks = 2;
    ck_assert_int_eq(tf_bands_from(&fwd, "fwd.h5", "a.mtx", &a, &t), TF_ERR_ARG);
    msg_has("a plan for 3 ranks, not 2");
    t.nranks = 3;
    tf_csr_free(&a);
    /* Another matrix of the same shape. */
    tf_test_random_csr(&a, 50, 30, 300, 10);
    ck_assert_int_eq(tf_matrix_prepare(&a, TF_NORM_MEAN, 1, &t), TF_OK);
    ck_assert_int_eq(tf_bands_from(&fwd, "fwd.h5", "a.mtx", &a, &t), TF_ERR_ARG);
    msg_has("--bands-from fwd.h5: a plan of another matrix than a.mtx");
    tf_csr_free(&a);
    tf_plan_free(&fwd);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("normalize");
    TCase *tc = tcase_create("normalize");
    tcase_add_test(tc, gcn_adds_loops_and_uses_out_and_in_degrees);
    tcase_add_test(tc, gcn_of_pattern_input_counts_entries_as_one);
    tcase_add_test(tc, gcn_keeps_existing_loops);
    tcase_add_test(tc, gcn_zero_degree_row_stays_zero);
    tcase_add_test(tc, gcn_refuses_negative_degrees_and_rectangles);
    tcase_add_test(tc, mean_divides_rows_by_their_sums);
    tcase_add_test(tc, none_changes_nothing_and_unknown_is_refused);
    tcase_add_test(tc, transpose_and_symmetry);
    tcase_add_test(tc, gcn_of_symmetric_matrix_is_exactly_symmetric);
    tcase_add_test(tc, prepare_records_normalisation_transpose_and_symmetry);
    tcase_add_test(tc, fingerprint_changes_with_normalisation);
    tcase_add_test(tc, planner_takes_fixed_bands);
    tcase_add_test(tc, bands_from_checks_matrix_normalisation_and_ranks);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tf_test_run_serial(suite()); }
