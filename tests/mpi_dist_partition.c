/* The distributed partition of --partition metis (tf_dist_partition.h) at
 * every rank count run_tests uses: renumbering from parts and from a given
 * permutation equals the serial renumbering (tf_perm_from_parts,
 * tf_csr_permute) entry for entry, with each rank's new rows where the
 * planner wants them; PT-Scotch's parts are in range, nonempty, balanced
 * and the same on a second run; the cases without a graph decide as serial
 * METIS does; unsupported options, a rectangular matrix and a given
 * non-permutation fail on every rank alike. */
#include "tf_test.h"
#include "tf_dist_partition.h"
#include "tf_dist_planner.h"
#include "tf_error.h"
#include "tf_partition_metis.h"
#include "tf_plan_perm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_size;

static int all_true(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

/* This rank's block of rows of a (which every rank holds whole). */
static void block_of(const tf_csr *a, tf_dcsr *d)
{
    memset(d, 0, sizeof *d);
    d->m = a->nrows;
    d->n = a->ncols;
    d->nnz_total = a->nnz;
    d->row0 = tf_dcsr_block(a->nrows, g_size, g_rank);
    d->nrows = tf_dcsr_block(a->nrows, g_size, g_rank + 1) - d->row0;
    int64_t b = a->rowptr[d->row0], z = a->rowptr[d->row0 + d->nrows] - b;
    ck_assert_int_eq(tf_csr_alloc(&d->loc, d->nrows, a->ncols, z), TF_OK);
    for (int64_t i = 0; i <= d->nrows; i++)
        d->loc.rowptr[i] = a->rowptr[d->row0 + i] - b;
    memcpy(d->loc.col, a->col + b, (size_t)z * sizeof *d->loc.col);
    memcpy(d->loc.val, a->val + b, (size_t)z * sizeof *d->loc.val);
}

/* A symmetric pattern with rows [n - isolated, n) empty both ways. */
static void graph_with_isolated(tf_csr *a, int64_t n, int64_t isolated, uint64_t seed)
{
    tf_csr r;
    tf_test_random_csr(&r, n - isolated, n - isolated, 6 * (n - isolated), seed);
    tf_coo coo;
    ck_assert_int_eq(tf_coo_init(&coo, n, n, 2 * r.nnz), TF_OK);
    for (int64_t i = 0; i < r.nrows; i++)
        for (int64_t e = r.rowptr[i]; e < r.rowptr[i + 1]; e++) {
            ck_assert_int_eq(tf_coo_push(&coo, (int32_t)i, r.col[e], 1.0), TF_OK);
            if (r.col[e] != i)
                ck_assert_int_eq(tf_coo_push(&coo, r.col[e], (int32_t)i, 1.0), TF_OK);
        }
    ck_assert_int_eq(tf_csr_from_coo(a, &coo), TF_OK);
    tf_coo_free(&coo);
    tf_csr_free(&r);
}

/* Gathers every rank's part[] of its block into all[] (n). */
static void gather_parts(const tf_dcsr *d, const int32_t *part, int32_t *all)
{
    int *cnt = malloc((size_t)g_size * sizeof *cnt), *dsp = malloc((size_t)g_size * sizeof *dsp);
    for (int q = 0; q < g_size; q++) {
        dsp[q] = (int)tf_dcsr_block(d->m, g_size, q);
        cnt[q] = (int)tf_dcsr_block(d->m, g_size, q + 1) - dsp[q];
    }
    MPI_Allgatherv(part, (int)d->nrows, MPI_INT32_T, all, cnt, dsp, MPI_INT32_T,
                   MPI_COMM_WORLD);
    free(cnt);
    free(dsp);
}

/* tf_dist_perm_apply of the given parts (given = 0), or tf_dist_perm_given
 * of the permutation they make (given = 1), against the serial renumbering. */
static void check_apply_one(const tf_csr *a, int nparts, const int32_t *part_all, int given)
{
    tf_dcsr d, ap;
    block_of(a, &d);
    const int64_t n = a->nrows;
    int64_t *off = calloc((size_t)nparts + 1, sizeof *off);
    int64_t *soff = calloc((size_t)nparts + 1, sizeof *soff);
    int64_t *sperm = malloc((size_t)(n ? n : 1) * sizeof *sperm);
    int64_t *siperm = malloc((size_t)(n ? n : 1) * sizeof *siperm);
    int64_t *perm = NULL, *iperm = NULL;
    tf_csr sp;
    ck_assert_int_eq(tf_perm_from_parts(part_all, n, nparts, sperm, siperm, soff), TF_OK);
    ck_assert_int_eq(tf_csr_permute(a, sperm, siperm, &sp), TF_OK);
    int st = given ? tf_dist_perm_given(MPI_COMM_WORLD, &d, nparts, sperm, siperm, soff, off,
                                        &perm, &iperm, &ap)
                   : tf_dist_perm_apply(MPI_COMM_WORLD, &d, nparts,
                                        part_all + tf_dcsr_block(n, g_size, g_rank), off, &perm,
                                        &iperm, &ap);
    ck_assert_msg(all_true(st == TF_OK), "perm_apply: %s", tf_error_message());
    ck_assert_msg(all_true(memcmp(off, soff, ((size_t)nparts + 1) * sizeof *off) == 0),
                  "band offsets differ from tf_perm_from_parts");
    if (g_rank == 0) {
        ck_assert(memcmp(perm, sperm, (size_t)n * sizeof *perm) == 0);
        ck_assert(memcmp(iperm, siperm, (size_t)n * sizeof *iperm) == 0);
    } else {
        ck_assert(perm == NULL && iperm == NULL);
    }
    int64_t r0 = off[tf_dist_first_part(nparts, g_size, g_rank)];
    int64_t r1 = off[tf_dist_first_part(nparts, g_size, g_rank + 1)];
    int ok = ap.row0 == r0 && ap.nrows == r1 - r0 && ap.m == n && ap.n == n &&
             ap.nnz_total == a->nnz && ap.loc.nnz == sp.rowptr[r1] - sp.rowptr[r0];
    for (int64_t i = 0; ok && i < ap.nrows; i++) {
        int64_t len = ap.loc.rowptr[i + 1] - ap.loc.rowptr[i], b = sp.rowptr[r0 + i];
        ok = len == sp.rowptr[r0 + i + 1] - b &&
             memcmp(ap.loc.col + ap.loc.rowptr[i], sp.col + b, (size_t)len * sizeof(int32_t)) ==
                 0 &&
             memcmp(ap.loc.val + ap.loc.rowptr[i], sp.val + b, (size_t)len * sizeof(float)) == 0;
    }
    ck_assert_msg(all_true(ok), "rank %d: rows %lld-%lld differ from P A P^T", g_rank,
                  (long long)r0, (long long)r1);
    tf_dcsr_free(&ap);
    tf_csr_free(&sp);
    free(off);
    free(soff);
    free(sperm);
    free(siperm);
    free(perm);
    free(iperm);
}

static void check_apply(const tf_csr *a, int nparts, const int32_t *part_all)
{
    check_apply_one(a, nparts, part_all, 0);
    check_apply_one(a, nparts, part_all, 1);
}

START_TEST(renumbering_equals_the_serial_one)
{
    tf_csr a;
    tf_test_random_csr(&a, 97, 97, 600, 11);
    int32_t *part = malloc(97 * sizeof *part);
    const int nparts_list[] = {1, 3, 5, 8};
    for (size_t t = 0; t < sizeof nparts_list / sizeof *nparts_list; t++) {
        int np = nparts_list[t];
        /* Parts scattered over the rows, some empty when np = 8. */
        for (int64_t j = 0; j < 97; j++)
            part[j] = (int32_t)((j * 37 + j / 5) % (np > 4 ? np - 2 : np));
        check_apply(&a, np, part);
    }
    free(part);
    tf_csr_free(&a);
}
END_TEST

START_TEST(scotch_parts_valid_balanced_repeatable)
{
    tf_csr a;
    graph_with_isolated(&a, 300, 20, 5);
    const int np = 4;
    tf_dcsr d;
    block_of(&a, &d);
    int32_t *part = malloc((size_t)(d.nrows ? d.nrows : 1) * sizeof *part);
    int32_t *again = malloc((size_t)(d.nrows ? d.nrows : 1) * sizeof *again);
    int32_t *all = malloc(300 * sizeof *all);
    int st = tf_dist_partition_parts(MPI_COMM_WORLD, &d, np, NULL, part);
    ck_assert_msg(all_true(st == TF_OK), "partition: %s", tf_error_message());
    st = tf_dist_partition_parts(MPI_COMM_WORLD, &d, np, NULL, again);
    ck_assert(all_true(st == TF_OK));
    ck_assert_msg(all_true(memcmp(part, again, (size_t)d.nrows * sizeof *part) == 0),
                  "a second run gave other parts");
    gather_parts(&d, part, all);
    int64_t w[4] = {0, 0, 0, 0}, maxrow = 0;
    for (int64_t j = 0; j < 300; j++) {
        ck_assert(all[j] >= 0 && all[j] < np);
        int64_t len = a.rowptr[j + 1] - a.rowptr[j];
        w[all[j]] += len;
        if (len > maxrow)
            maxrow = len;
    }
    for (int p = 0; p < np; p++) {
        ck_assert_msg(w[p] > 0, "part %d is empty", p);
        /* 3 % over the mean, plus a vertex's weight of granularity. */
        ck_assert_msg(w[p] <= a.nnz * 103 / 100 / np + maxrow, "part %d: %lld of %lld nonzeros",
                      p, (long long)w[p], (long long)a.nnz);
    }
    check_apply(&a, np, all);
    tf_dcsr_free(&d);
    free(part);
    free(again);
    free(all);
    tf_csr_free(&a);
}
END_TEST

START_TEST(no_graph_decides_as_serial_metis)
{
    tf_csr a;
    const struct {
        int64_t n, nnz;
        int np;
    } cases[] = {{3, 4, 4}, {5, 10, 5}, {40, 0, 3}, {30, 90, 1}};
    for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
        tf_test_random_csr(&a, cases[t].n, cases[t].n, cases[t].nnz, 3 + t);
        tf_dcsr d;
        block_of(&a, &d);
        int32_t *part = malloc((size_t)(d.nrows ? d.nrows : 1) * sizeof *part);
        int32_t *ser = malloc((size_t)a.nrows * sizeof *ser);
        int32_t *all = malloc((size_t)a.nrows * sizeof *all);
        ck_assert_int_eq(tf_partition_metis(&a, cases[t].np, NULL, ser), TF_OK);
        int st = tf_dist_partition_parts(MPI_COMM_WORLD, &d, cases[t].np, NULL, part);
        ck_assert(all_true(st == TF_OK));
        gather_parts(&d, part, all);
        ck_assert_msg(memcmp(all, ser, (size_t)a.nrows * sizeof *all) == 0,
                      "case %zu: parts differ from tf_partition_metis", t);
        tf_dcsr_free(&d);
        free(part);
        free(ser);
        free(all);
        tf_csr_free(&a);
    }
}
END_TEST

START_TEST(unsupported_options_fail_everywhere)
{
    tf_csr a;
    tf_test_random_csr(&a, 60, 60, 300, 9);
    tf_dcsr d;
    block_of(&a, &d);
    int32_t *part = malloc((size_t)(d.nrows ? d.nrows : 1) * sizeof *part);
    tf_metis_options mo;
    tf_metis_options_default(&mo);
    mo.objective = TF_METIS_OBJ_VOL;
    int st = tf_dist_partition_parts(MPI_COMM_WORLD, &d, 3, &mo, part);
    ck_assert(all_true(st == TF_ERR_ARG && strstr(tf_error_message(), "vol")));
    tf_metis_options_default(&mo);
    mo.balance = TF_METIS_BALANCE_NNZ_ROWS;
    st = tf_dist_partition_parts(MPI_COMM_WORLD, &d, 3, &mo, part);
    ck_assert(all_true(st == TF_ERR_ARG && strstr(tf_error_message(), "nnz+rows")));
    tf_dcsr_free(&d);
    tf_csr_free(&a);
    tf_test_random_csr(&a, 30, 20, 100, 9);
    block_of(&a, &d);
    st = tf_dist_partition_parts(MPI_COMM_WORLD, &d, 3, NULL, part);
    ck_assert(all_true(st == TF_ERR_ARG && strstr(tf_error_message(), "square")));
    tf_dcsr_free(&d);
    tf_csr_free(&a);
    /* A given permutation that is not one fails everywhere, naming it. */
    tf_test_random_csr(&a, 20, 20, 60, 4);
    int64_t perm[20], iperm[20], off[3] = {0, 10, 20}, got_off[3], *pp = NULL, *ip = NULL;
    for (int j = 0; j < 20; j++)
        perm[j] = iperm[j] = j;
    perm[3] = 5;
    tf_dcsr ap;
    block_of(&a, &d);
    st = tf_dist_perm_given(MPI_COMM_WORLD, &d, 2, perm, iperm, off, got_off, &pp, &ip, &ap);
    ck_assert(all_true(st == TF_ERR_FORMAT && strstr(tf_error_message(), "appears twice")));
    ck_assert(pp == NULL && ip == NULL && ap.loc.rowptr == NULL);
    free(part);
    tf_csr_free(&a);
}
END_TEST

static Suite *make_suite(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    Suite *s = suite_create("mpi_dist_partition");
    TCase *tc = tcase_create("dist_partition");
    tcase_add_test(tc, renumbering_equals_the_serial_one);
    tcase_add_test(tc, scotch_parts_valid_balanced_repeatable);
    tcase_add_test(tc, no_graph_decides_as_serial_metis);
    tcase_add_test(tc, unsupported_options_fail_everywhere);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv) { return tf_test_run_mpi(&argc, &argv, make_suite); }
