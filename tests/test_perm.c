/* The METIS partition and the permutation: renumbering into
 * bands, P A P^T, the fingerprint in original ids, METIS plans, and the
 * permutation's way through the plan file (round trip; a damaged or
 * inconsistent perm is refused by the reader in one line). */
#include "tf_test.h"
#include "tf_error.h"
#include "tf_fingerprint.h"
#include "tf_h5zstd.h"
#include "tf_mm_read.h"
#include "tf_partition.h"
#include "tf_partition_metis.h"
#include "tf_plan_perm.h"
#include "tf_plan_io.h"
#include "tf_plan_layout.h"
#include "tf_planner.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void read_cora(tf_csr *a)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/examples/data/cora.mtx.zst", tf_test_srcdir());
    ck_assert_msg(tf_mm_read(path, a, NULL) == TF_OK, "%s", tf_error_message());
}

static void one_line(void)
{
    const char *m = tf_error_message();
    ck_assert(m[0] != '\0');
    ck_assert_msg(strchr(m, '\n') == NULL, "message spans lines: %s", m);
}

static void assert_bijection(const int64_t *perm, const int64_t *iperm, int64_t n)
{
    char *seen = calloc((size_t)n + 1, 1);
    for (int64_t i = 0; i < n; i++) {
        ck_assert(perm[i] >= 0 && perm[i] < n);
        ck_assert(!seen[perm[i]]);
        seen[perm[i]] = 1;
        ck_assert_int_eq(iperm[perm[i]], i);
    }
    free(seen);
}

START_TEST(parts_become_contiguous_bands)
{
    const int32_t part[10] = {2, 0, 1, 2, 0, 0, 2, 1, 0, 2};
    int64_t perm[10], iperm[10], off[5];
    ck_assert_int_eq(tf_perm_from_parts(part, 10, 4, perm, iperm, off), TF_OK);
    assert_bijection(perm, iperm, 10);
    const int64_t want_off[5] = {0, 4, 6, 10, 10}; /* part 3 is empty */
    for (int p = 0; p < 5; p++)
        ck_assert_int_eq(off[p], want_off[p]);
    /* Each band holds exactly its part's rows, in their original order. */
    for (int p = 0; p < 4; p++)
        for (int64_t i = off[p]; i < off[p + 1]; i++) {
            ck_assert_int_eq(part[perm[i]], p);
            if (i > off[p])
                ck_assert(perm[i] > perm[i - 1]);
        }
    const int32_t bad[3] = {0, 4, 1};
    ck_assert_int_eq(tf_perm_from_parts(bad, 3, 4, perm, iperm, off), TF_ERR_INTERNAL);
}
END_TEST

START_TEST(perm_check_finds_non_permutations)
{
    int64_t perm[5] = {3, 0, 4, 1, 2}, iperm[5] = {1, 3, 4, 0, 2};
    ck_assert_int_eq(tf_perm_check(perm, iperm, 5), TF_OK);
    perm[2] = 3; /* 3 twice */
    ck_assert_int_eq(tf_perm_check(perm, iperm, 5), TF_ERR_FORMAT);
    ck_assert(strstr(tf_error_message(), "perm[2] = 3 appears twice") != NULL);
    one_line();
    perm[2] = 5;
    ck_assert_int_eq(tf_perm_check(perm, iperm, 5), TF_ERR_FORMAT);
    ck_assert(strstr(tf_error_message(), "outside [0, 5)") != NULL);
    perm[2] = 4;
    iperm[0] = 2; /* not the inverse */
    ck_assert_int_eq(tf_perm_check(perm, iperm, 5), TF_ERR_FORMAT);
    ck_assert(strstr(tf_error_message(), "inverse") != NULL);
    ck_assert_int_eq(tf_perm_check(NULL, NULL, 3), TF_ERR_FORMAT);
}
END_TEST

START_TEST(permute_is_p_a_pt)
{
    tf_csr a, ap;
    tf_test_random_csr(&a, 40, 40, 300, 7);
    int64_t perm[40], iperm[40];
    for (int i = 0; i < 40; i++)
        perm[i] = (i * 17 + 5) % 40;
    for (int i = 0; i < 40; i++)
        iperm[perm[i]] = i;
    ck_assert_int_eq(tf_csr_permute(&a, perm, iperm, &ap), TF_OK);
    ck_assert_int_eq(tf_csr_validate(&ap), TF_OK);
    ck_assert_int_eq(ap.nnz, a.nnz);
    float d[40][40], dp[40][40];
    memset(d, 0, sizeof d);
    memset(dp, 0, sizeof dp);
    for (int i = 0; i < 40; i++) {
        for (int64_t e = a.rowptr[i]; e < a.rowptr[i + 1]; e++)
            d[i][a.col[e]] = a.val[e];
        for (int64_t e = ap.rowptr[i]; e < ap.rowptr[i + 1]; e++)
            dp[i][ap.col[e]] = ap.val[e];
    }
    for (int i = 0; i < 40; i++)
        for (int j = 0; j < 40; j++)
            ck_assert(dp[i][j] == d[perm[i]][perm[j]]);
    /* The fingerprint of the permuted rows, taken in original ids, is A's. */
    uint64_t share = 0;
    ck_assert_int_eq(tf_perm_fingerprint_rows(&ap, 0, perm, &share), TF_OK);
    ck_assert(share == tf_fingerprint_rows(a.rowptr, a.col, a.val, 0, a.nrows));
    /* In two pieces, as two ranks would. */
    tf_csr lo = ap, hi = ap;
    lo.nrows = 25;
    hi.nrows = 15;
    hi.rowptr = ap.rowptr + 25;
    uint64_t s1 = 0, s2 = 0;
    int64_t base = ap.rowptr[25];
    /* hi's row pointers start at base, not 0: shift a copy. */
    int64_t hp[16];
    for (int i = 0; i <= 15; i++)
        hp[i] = ap.rowptr[25 + i] - base;
    hi.rowptr = hp;
    hi.col = ap.col + base;
    hi.val = ap.val + base;
    ck_assert_int_eq(tf_perm_fingerprint_rows(&lo, 0, perm, &s1), TF_OK);
    ck_assert_int_eq(tf_perm_fingerprint_rows(&hi, 25, perm, &s2), TF_OK);
    ck_assert(s1 + s2 == share);
    tf_csr_free(&ap);
    tf_csr rect;
    tf_test_random_csr(&rect, 30, 40, 100, 3);
    ck_assert_int_eq(tf_csr_permute(&rect, perm, iperm, &ap), TF_ERR_ARG);
    tf_csr_free(&rect);
    tf_csr_free(&a);
}
END_TEST

START_TEST(metis_parts_are_balanced_and_reproducible)
{
    tf_csr a;
    read_cora(&a);
    int32_t *p1 = malloc((size_t)a.nrows * sizeof *p1), *p2 = malloc((size_t)a.nrows * sizeof *p2);
    for (int v = 0; v < 4; v++) {
        tf_metis_options mo = {v & 1 ? TF_METIS_BALANCE_NNZ_ROWS : TF_METIS_BALANCE_NNZ,
                               v & 2 ? TF_METIS_OBJ_VOL : TF_METIS_OBJ_CUT};
        ck_assert_msg(tf_partition_metis(&a, 4, &mo, p1) == TF_OK, "%s", tf_error_message());
        ck_assert_int_eq(tf_partition_metis(&a, 4, &mo, p2), TF_OK);
        ck_assert(memcmp(p1, p2, (size_t)a.nrows * sizeof *p1) == 0);
        int64_t nnz[4] = {0, 0, 0, 0};
        for (int64_t j = 0; j < a.nrows; j++) {
            ck_assert(p1[j] >= 0 && p1[j] < 4);
            nnz[p1[j]] += a.rowptr[j + 1] - a.rowptr[j];
        }
        /* METIS's tolerance is 3%; 10% leaves room for its coarsening. */
        for (int p = 0; p < 4; p++)
            ck_assert_msg(nnz[p] <= 1.10 * a.nnz / 4, "part %d: %lld of %lld", p,
                          (long long)nnz[p], (long long)a.nnz);
    }
    /* Fewer rows than parts, and one part: no METIS, still a partition. */
    tf_csr t;
    tf_test_random_csr(&t, 3, 3, 5, 1);
    ck_assert_int_eq(tf_partition_metis(&t, 4, NULL, p1), TF_OK);
    ck_assert(p1[0] == 0 && p1[1] == 1 && p1[2] == 2);
    ck_assert_int_eq(tf_partition_metis(&a, 1, NULL, p1), TF_OK);
    for (int64_t j = 0; j < a.nrows; j++)
        ck_assert_int_eq(p1[j], 0);
    tf_csr_free(&t);
    tf_csr rect;
    tf_test_random_csr(&rect, 30, 40, 100, 3);
    ck_assert_int_eq(tf_partition_metis(&rect, 2, NULL, p1), TF_ERR_ARG);
    ck_assert(strstr(tf_error_message(), "square") != NULL);
    one_line();
    tf_csr_free(&rect);
    free(p1);
    free(p2);
    tf_csr_free(&a);
}
END_TEST

/* A metis plan: bands = the renumbered parts, the fingerprint of A, every
 * nonzero of P A P^T in some part. */
static void metis_plan(const tf_csr *a, int P, int mode, tf_plan *plan)
{
    tf_plan_options o;
    tf_plan_options_default(&o);
    o.nranks = P;
    o.k = 32;
    o.mode = mode;
    o.partition = TF_PART_METIS;
    ck_assert_msg(tf_plan_build(a, &o, plan) == TF_OK, "%s", tf_error_message());
}

START_TEST(metis_plan_carries_the_permutation)
{
    tf_csr a;
    read_cora(&a);
    tf_plan plan;
    metis_plan(&a, 3, TF_MODE_TWOFACE, &plan);
    ck_assert_int_eq(plan.partition, TF_PART_METIS);
    ck_assert_ptr_nonnull(plan.perm);
    assert_bijection(plan.perm, plan.iperm, a.nrows);
    ck_assert(plan.checksum == tf_fingerprint_rows(a.rowptr, a.col, a.val, 0, a.nrows));
    int64_t nnz = 0;
    for (int p = 0; p < 3; p++) {
        const tf_rank_stats *s = &plan.all_stats[p];
        nnz += s->nnz_local + s->nnz_coll + s->nnz_fetch;
        /* The band of rank p holds the rows METIS gave part p: their
         * nonzeros are what the statistics count. */
        int64_t band = 0;
        for (int64_t i = plan.row_off[p]; i < plan.row_off[p + 1]; i++)
            band += a.rowptr[plan.perm[i] + 1] - a.rowptr[plan.perm[i]];
        ck_assert_int_eq(band, s->nnz_local + s->nnz_coll + s->nnz_fetch);
    }
    ck_assert_int_eq(nnz, a.nnz);
    if (plan.alt) {
        ck_assert_ptr_null(plan.alt->perm);
        ck_assert(plan.alt->checksum == plan.checksum);
    }
    tf_plan_free(&plan);
    tf_csr rect;
    tf_test_random_csr(&rect, 30, 40, 100, 3);
    tf_plan_options o;
    tf_plan_options_default(&o);
    o.nranks = 2;
    o.partition = TF_PART_METIS;
    ck_assert_int_eq(tf_plan_build(&rect, &o, &plan), TF_ERR_ARG);
    ck_assert(strstr(tf_error_message(), "square") != NULL);
    tf_csr_free(&rect);
    tf_csr_free(&a);
}
END_TEST

static const char *tmp_plan(int slot)
{
    static char buf[4][256];
    snprintf(buf[slot], sizeof buf[slot], "%s/test_perm_%d_%d.h5",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid(), slot);
    return buf[slot];
}

START_TEST(permutation_round_trips_through_the_file)
{
    tf_csr a;
    read_cora(&a);
    tf_plan plan, back, one;
    metis_plan(&a, 4, TF_MODE_TWOFACE, &plan);
    const char *path = tmp_plan(0);
    ck_assert_msg(tf_plan_write(path, &plan, 3) == TF_OK, "%s", tf_error_message());
    ck_assert_msg(tf_plan_read(path, TF_PLAN_READ_ALL, &back) == TF_OK, "%s", tf_error_message());
    ck_assert_int_eq(back.partition, TF_PART_METIS);
    ck_assert(memcmp(back.perm, plan.perm, (size_t)a.nrows * sizeof *plan.perm) == 0);
    ck_assert(memcmp(back.iperm, plan.iperm, (size_t)a.nrows * sizeof *plan.iperm) == 0);
    ck_assert(back.checksum == plan.checksum);
    ck_assert((back.alt == NULL) == (plan.alt == NULL));
    if (back.alt)
        ck_assert_ptr_null(back.alt->perm);
    /* One rank's part: the permutation comes with the header. */
    ck_assert_int_eq(tf_plan_read(path, 2, &one), TF_OK);
    ck_assert(memcmp(one.perm, plan.perm, (size_t)a.nrows * sizeof *plan.perm) == 0);
    tf_plan_free(&one);
    tf_plan_free(&back);
    /* The writer refuses a permutation that is not one, and a metis plan
     * without it. */
    int64_t keep = plan.perm[1];
    plan.perm[1] = plan.perm[0];
    ck_assert_int_ne(tf_plan_write(tmp_plan(1), &plan, 3), TF_OK);
    ck_assert(strstr(tf_error_message(), "appears twice") != NULL);
    one_line();
    ck_assert_int_ne(access(tmp_plan(1), F_OK), 0);
    plan.perm[1] = keep;
    int64_t *pm = plan.perm, *ip = plan.iperm;
    plan.perm = plan.iperm = NULL;
    ck_assert_int_ne(tf_plan_write(tmp_plan(1), &plan, 3), TF_OK);
    ck_assert(strstr(tf_error_message(), "permutation") != NULL);
    plan.perm = pm;
    plan.iperm = ip;
    tf_plan_free(&plan);
    unlink(path);
    tf_csr_free(&a);
}
END_TEST

/* Overwrites dataset `name` of a plan file with data (same shape); with
 * fix_summary, also stores the summary checksum the plan `p` (holding the
 * same data) has, as a tool that did not check the permutation would. */
static void rewrite_perm(const char *path, const char *name, const int64_t *data,
                         const tf_plan *p, int fix_summary)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert(f >= 0);
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    ck_assert(d >= 0);
    ck_assert(H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
    H5Dclose(d);
    if (fix_summary) {
        tf_pl_parts t;
        ck_assert_int_eq(tf_pl_parts_of_plan(p, &t), TF_OK);
        uint64_t h = tf_pl_summary_checksum(p, p->all_stats, &t);
        tf_pl_parts_free(&t);
        hid_t at = H5Aopen(f, "summary_checksum", H5P_DEFAULT);
        ck_assert(at >= 0);
        ck_assert(H5Awrite(at, H5T_NATIVE_UINT64, &h) >= 0);
        H5Aclose(at);
    }
    H5Fclose(f);
}

START_TEST(damaged_permutation_is_refused)
{
    tf_csr a;
    read_cora(&a);
    tf_plan plan, back;
    metis_plan(&a, 3, TF_MODE_FETCH, &plan);
    const char *path = tmp_plan(2);
    tf_h5zstd_register();
    int64_t n = a.nrows;
    int64_t *bad = malloc((size_t)n * sizeof *bad);
    /* Two entries swapped: still a bijection, but the file's hashes differ. */
    ck_assert_int_eq(tf_plan_write(path, &plan, 3), TF_OK);
    memcpy(bad, plan.perm, (size_t)n * sizeof *bad);
    bad[0] = plan.perm[1];
    bad[1] = plan.perm[0];
    rewrite_perm(path, "perm", bad, &plan, 0);
    ck_assert_int_eq(tf_plan_read(path, 0, &back), TF_ERR_FORMAT);
    ck_assert_msg(strstr(tf_error_message(), "checksum mismatch") != NULL, "%s",
                  tf_error_message());
    one_line();
    /* A duplicate entry behind a matching summary checksum: the reader's
     * bijection check. */
    ck_assert_int_eq(tf_plan_write(path, &plan, 3), TF_OK);
    bad[1] = bad[0];
    int64_t *keep = plan.perm;
    plan.perm = bad;
    rewrite_perm(path, "perm", bad, &plan, 1);
    plan.perm = keep;
    ck_assert_int_eq(tf_plan_read(path, 0, &back), TF_ERR_FORMAT);
    ck_assert_msg(strstr(tf_error_message(), "appears twice") != NULL, "%s", tf_error_message());
    ck_assert(strstr(tf_error_message(), path) != NULL);
    one_line();
    /* iperm that is not perm's inverse. */
    ck_assert_int_eq(tf_plan_write(path, &plan, 3), TF_OK);
    memcpy(bad, plan.iperm, (size_t)n * sizeof *bad);
    bad[0] = plan.iperm[1];
    bad[1] = plan.iperm[0];
    keep = plan.iperm;
    plan.iperm = bad;
    rewrite_perm(path, "iperm", bad, &plan, 1);
    plan.iperm = keep;
    ck_assert_int_eq(tf_plan_read(path, 0, &back), TF_ERR_FORMAT);
    ck_assert_msg(strstr(tf_error_message(), "inverse") != NULL, "%s", tf_error_message());
    one_line();
    free(bad);
    unlink(path);
    tf_plan_free(&plan);
    tf_csr_free(&a);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("perm");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, parts_become_contiguous_bands);
    tcase_add_test(tc, perm_check_finds_non_permutations);
    tcase_add_test(tc, permute_is_p_a_pt);
    tcase_add_test(tc, metis_parts_are_balanced_and_reproducible);
    tcase_add_test(tc, metis_plan_carries_the_permutation);
    tcase_add_test(tc, permutation_round_trips_through_the_file);
    tcase_add_test(tc, damaged_permutation_is_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tf_test_run_serial(suite()); }
