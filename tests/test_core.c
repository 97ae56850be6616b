/* Unit tests: CSR building, partitioning, the dense generator, the reference
 * SpMM, the fingerprint and the node's available memory. */
#include "tf_test.h"
#include "tf_csr.h"
#include "tf_dense.h"
#include "tf_error.h"
#include "tf_fingerprint.h"
#include "tf_meminfo.h"
#include "tf_partition.h"
#include "tf_reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

START_TEST(coo_to_csr_sorts_and_sums)
{
    tf_coo coo;
    ck_assert_int_eq(tf_coo_init(&coo, 3, 4, 1), TF_OK);
    ck_assert_int_eq(tf_coo_push(&coo, 2, 3, 1.0), TF_OK);
    ck_assert_int_eq(tf_coo_push(&coo, 0, 1, 2.0), TF_OK);
    ck_assert_int_eq(tf_coo_push(&coo, 2, 0, 3.0), TF_OK);
    ck_assert_int_eq(tf_coo_push(&coo, 0, 1, 0.5), TF_OK); /* duplicate: summed */
    ck_assert_int_eq(tf_coo_push(&coo, 2, 3, -4.0), TF_OK);
    tf_csr a;
    ck_assert_int_eq(tf_csr_from_coo(&a, &coo), TF_OK);
    ck_assert_int_eq(a.nnz, 3);
    ck_assert_int_eq(a.rowptr[1], 1);
    ck_assert_int_eq(a.rowptr[2], 1); /* empty row */
    ck_assert_int_eq(a.col[0], 1);
    ck_assert_float_eq(a.val[0], 2.5f);
    ck_assert_int_eq(a.col[1], 0);
    ck_assert_int_eq(a.col[2], 3);
    ck_assert_float_eq(a.val[2], -3.0f);
    ck_assert_int_eq(tf_csr_validate(&a), TF_OK);
    tf_csr_free(&a);
    tf_coo_free(&coo);
}
END_TEST

/* A matrix started without values (tf_coo_init_ones) gives the CSR the same
 * matrix with values holds, whether it stays without them (duplicates count
 * 1 each; long unsorted rows too) or gets them at its first value that is
 * not 1. */
static void build_both(int ones_then, tf_csr *with, tf_csr *without)
{
    tf_coo a, b;
    ck_assert_int_eq(tf_coo_init(&a, 4, 80, 1), TF_OK);
    ck_assert_int_eq(tf_coo_init_ones(&b, 4, 80, 1), TF_OK);
    ck_assert_ptr_null(b.val);
    for (int e = 0; e < 300; e++) {
        int32_t r = (int32_t)((e * 7) % 4), c = (int32_t)((e * 37 + 11) % 80);
        double v = ones_then && e == 250 ? 0.1 : 1.0;
        ck_assert_int_eq(tf_coo_push(&a, r, c, v), TF_OK);
        ck_assert_int_eq(tf_coo_push(&b, r, c, v), TF_OK);
    }
    ck_assert(ones_then ? b.val != NULL : b.val == NULL);
    ck_assert_int_eq(tf_csr_from_coo(with, &a), TF_OK);
    ck_assert_int_eq(tf_csr_from_coo(without, &b), TF_OK);
    tf_coo_free(&a);
    tf_coo_free(&b);
}

START_TEST(coo_without_values_equals_coo_with_ones)
{
    for (int ones_then = 0; ones_then < 2; ones_then++) {
        tf_csr x, y;
        build_both(ones_then, &x, &y);
        ck_assert_int_eq(x.nnz, y.nnz);
        ck_assert_int_eq(tf_csr_validate(&y), TF_OK);
        ck_assert_mem_eq(x.rowptr, y.rowptr, 5 * sizeof *x.rowptr);
        ck_assert_mem_eq(x.col, y.col, (size_t)x.nnz * sizeof *x.col);
        ck_assert_mem_eq(x.val, y.val, (size_t)x.nnz * sizeof *x.val);
        float most = 0;
        for (int64_t k = 0; k < y.nnz; k++)
            most = y.val[k] > most ? y.val[k] : most;
        ck_assert(most > 1.0f); /* duplicates were summed, not dropped */
        tf_csr_free(&x);
        tf_csr_free(&y);
    }
}
END_TEST

/* Rows of a matrix without values sorted by runs and merges: lengths
 * that take an odd and an even number of merge passes, each row checked
 * against a count of what was pushed (columns ascending, duplicates
 * summed). */
START_TEST(coo_without_values_long_rows_sorted)
{
    static const int len[] = {33, 50, 64, 65, 100, 129, 300, 1000};
    const int nr = (int)(sizeof len / sizeof len[0]), nc = 700;
    tf_coo a;
    ck_assert_int_eq(tf_coo_init_ones(&a, nr, nc, 16), TF_OK);
    int *count = calloc((size_t)nr * nc, sizeof *count);
    uint64_t x = 12345;
    for (int r = 0; r < nr; r++)
        for (int k = 0; k < len[r]; k++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            int32_t c = (int32_t)((x >> 33) % (uint64_t)nc);
            ck_assert_int_eq(tf_coo_push(&a, r, c, 1.0), TF_OK);
            count[r * nc + c]++;
        }
    ck_assert_ptr_null(a.val);
    tf_csr m;
    ck_assert_int_eq(tf_csr_from_coo(&m, &a), TF_OK);
    ck_assert_int_eq(tf_csr_validate(&m), TF_OK);
    for (int r = 0; r < nr; r++) {
        int64_t e = m.rowptr[r];
        for (int c = 0; c < nc; c++) {
            if (!count[r * nc + c])
                continue;
            ck_assert_int_lt(e, m.rowptr[r + 1]);
            ck_assert_int_eq(m.col[e], c);
            ck_assert_float_eq(m.val[e], (float)count[r * nc + c]);
            e++;
        }
        ck_assert_int_eq(e, m.rowptr[r + 1]);
    }
    free(count);
    tf_csr_free(&m);
    tf_coo_free(&a);
}
END_TEST

/* Consuming the triplets gives the CSR that copying gives, on each of the
 * build's paths (input sorted or not, with values or without, duplicates,
 * rows long enough for the merge sort), and leaves the triplets zeroed,
 * also when the build fails. */
static void fill(tf_coo *c, int sorted, int values, int cap)
{
    if (values)
        ck_assert_int_eq(tf_coo_init(c, 5, 120, cap), TF_OK);
    else
        ck_assert_int_eq(tf_coo_init_ones(c, 5, 120, cap), TF_OK);
    for (int e = 0; e < 400; e++) {
        int32_t r, col;
        if (sorted) {
            r = (int32_t)(e / 80);
            col = (int32_t)((e % 80) + (e % 80) / 3); /* ascending, no gaps between rows */
        } else {
            r = (int32_t)((e * 7) % 5);
            col = (int32_t)((e * 37 + 11) % 90);
        }
        if (r == 3)
            continue; /* an empty row */
        ck_assert_int_eq(tf_coo_push(c, r, col, values ? 0.25 * (e % 9) - 1.0 : 1.0), TF_OK);
        if (sorted && e % 11 == 0) /* a duplicate right after, still sorted */
            ck_assert_int_eq(tf_coo_push(c, r, col, values ? 0.5 : 1.0), TF_OK);
    }
}

START_TEST(coo_take_equals_copy)
{
    for (int sorted = 0; sorted < 2; sorted++)
        for (int values = 0; values < 2; values++)
            for (int cap = 16; cap <= 2048; cap *= 128) { /* grown, and with room to spare */
                tf_coo a, b;
                fill(&a, sorted, values, cap);
                fill(&b, sorted, values, cap);
                tf_csr x, y;
                ck_assert_int_eq(tf_csr_from_coo_rows(&x, &a, 10), TF_OK);
                ck_assert_int_eq(tf_csr_from_coo_take(&y, &b, 10), TF_OK);
                ck_assert_ptr_null(b.row);
                ck_assert_ptr_null(b.col);
                ck_assert_ptr_null(b.val);
                ck_assert_int_eq(b.n, 0);
                ck_assert_int_eq(tf_csr_validate(&y), TF_OK);
                ck_assert_int_eq(x.nnz, y.nnz);
                ck_assert_int_lt(y.nnz, a.n); /* duplicates were summed */
                ck_assert_mem_eq(x.rowptr, y.rowptr, 6 * sizeof *x.rowptr);
                ck_assert_mem_eq(x.col, y.col, (size_t)x.nnz * sizeof *x.col);
                ck_assert_mem_eq(x.val, y.val, (size_t)x.nnz * sizeof *x.val);
                tf_csr_free(&x);
                tf_csr_free(&y);
                tf_coo_free(&a);
            }
    tf_coo c;
    tf_coo_init(&c, 1, 1, 4);
    tf_coo_push(&c, 0, 0, 3e38);
    tf_coo_push(&c, 0, 0, 3e38);
    tf_csr z;
    ck_assert_int_eq(tf_csr_from_coo_take(&z, &c, 0), TF_ERR_RANGE);
    ck_assert_ptr_null(c.row);
    ck_assert_ptr_null(z.col);
}
END_TEST

START_TEST(csr_sum_out_of_float_range)
{
    tf_coo coo;
    tf_coo_init(&coo, 1, 1, 4);
    tf_coo_push(&coo, 0, 0, 3e38);
    tf_coo_push(&coo, 0, 0, 3e38);
    tf_csr a;
    ck_assert_int_eq(tf_csr_from_coo(&a, &coo), TF_ERR_RANGE);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "float32"));
    tf_coo_free(&coo);
}
END_TEST

START_TEST(csr_validate_catches_unsorted)
{
    tf_csr a;
    tf_csr_alloc(&a, 1, 5, 2);
    a.rowptr[1] = 2;
    a.col[0] = 3;
    a.col[1] = 1;
    a.val[0] = a.val[1] = 1;
    ck_assert_int_eq(tf_csr_validate(&a), TF_ERR_FORMAT);
    a.col[1] = 7;
    ck_assert_int_eq(tf_csr_validate(&a), TF_ERR_FORMAT);
    tf_csr_free(&a);
}
END_TEST

START_TEST(partition_rows_balanced_and_more_parts_than_rows)
{
    int64_t off[8];
    ck_assert_int_eq(tf_partition_rows(10, 3, off), TF_OK);
    ck_assert_int_eq(off[1], 4);
    ck_assert_int_eq(off[2], 7);
    ck_assert_int_eq(off[3], 10);
    ck_assert_int_eq(tf_partition_rows(2, 5, off), TF_OK);
    ck_assert_int_eq(off[5], 2);
    int owned = 0;
    for (int p = 0; p < 5; p++)
        owned += off[p + 1] > off[p];
    ck_assert_int_eq(owned, 2);
    ck_assert_int_eq(tf_partition_owner(off, 5, 0), 0);
    ck_assert_int_eq(tf_partition_owner(off, 5, 1), 1);
    ck_assert_int_eq(tf_partition_rows(5, 0, off), TF_ERR_ARG);
}
END_TEST

START_TEST(partition_nnz_balances_nonzeros)
{
    /* Row i has i+1 nonzeros: 1+2+...+8 = 36; 2 parts want ~18 each. */
    tf_coo coo;
    tf_coo_init(&coo, 8, 8, 64);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j <= i; j++)
            tf_coo_push(&coo, i, j, 1.0);
    tf_csr a;
    tf_csr_from_coo(&a, &coo);
    int64_t off[3];
    ck_assert_int_eq(tf_partition_nnz(&a, 2, off), TF_OK);
    ck_assert_int_eq(off[0], 0);
    ck_assert_int_eq(off[2], 8);
    int64_t left = a.rowptr[off[1]];
    ck_assert(left >= 15 && left <= 21);
    /* More parts than rows: every row owned exactly once. */
    int64_t off2[12];
    ck_assert_int_eq(tf_partition_nnz(&a, 11, off2), TF_OK);
    for (int p = 0; p < 11; p++)
        ck_assert(off2[p + 1] >= off2[p]);
    ck_assert_int_eq(off2[11], 8);
    for (int64_t i = 0; i < 8; i++) {
        int q = tf_partition_owner(off2, 11, i);
        ck_assert(off2[q] <= i && i < off2[q + 1]);
    }
    tf_csr_free(&a);
    tf_coo_free(&coo);
}
END_TEST

START_TEST(dense_generator_is_deterministic_and_k_independent)
{
    float row8[8], row3[3];
    tf_dense_fill(row8, 42, 17, 1, 8);
    tf_dense_fill(row3, 42, 17, 1, 3);
    for (int k = 0; k < 3; k++)
        ck_assert_float_eq(row8[k], row3[k]);
    for (int k = 0; k < 8; k++) {
        ck_assert_float_eq(row8[k], tf_dense_value(42, 17, k));
        ck_assert(row8[k] >= -1.0f && row8[k] < 1.0f);
    }
    ck_assert(tf_dense_value(42, 17, 0) != tf_dense_value(43, 17, 0));
    ck_assert(tf_dense_value(42, 17, 0) != tf_dense_value(42, 18, 0));
    /* Mean of many values is near zero: the values are spread over [-1, 1). */
    double s = 0;
    for (int j = 0; j < 10000; j++)
        s += tf_dense_value(1, j, 0);
    ck_assert(fabs(s / 10000) < 0.05);
}
END_TEST

START_TEST(reference_matches_hand_computation)
{
    /* A = [1 2; 0 3], B = [1 2; 3 4] -> C = [7 10; 9 12] */
    tf_coo coo;
    tf_coo_init(&coo, 2, 2, 4);
    tf_coo_push(&coo, 0, 0, 1);
    tf_coo_push(&coo, 0, 1, 2);
    tf_coo_push(&coo, 1, 1, 3);
    tf_csr a;
    tf_csr_from_coo(&a, &coo);
    float b[4] = {1, 2, 3, 4};
    double c[4];
    tf_reference_spmm(&a, 0, 2, b, 2, c);
    ck_assert_double_eq(c[0], 7);
    ck_assert_double_eq(c[1], 10);
    ck_assert_double_eq(c[2], 9);
    ck_assert_double_eq(c[3], 12);
    double c1[2];
    tf_reference_spmm(&a, 1, 2, b, 2, c1); /* one band only */
    ck_assert_double_eq(c1[0], 9);
    /* generator form equals explicit form */
    float bg[2 * 5];
    tf_dense_fill(bg, 9, 0, 2, 5);
    double cg1[10], cg2[10];
    tf_reference_spmm(&a, 0, 2, bg, 5, cg1);
    tf_reference_spmm_gen(&a, 0, 2, 9, 5, cg2);
    for (int i = 0; i < 10; i++)
        ck_assert_double_eq(cg1[i], cg2[i]);
    float cf[4] = {7, 10, 9, 12.5f};
    double absrow[2] = {3, 3};
    double err = tf_reference_scaled_error(cf, c, absrow, 2, 2, 4);
    ck_assert_double_eq_tol(err, 0.5 / 12.0, 1e-12);
    tf_csr_free(&a);
    tf_coo_free(&coo);
}
END_TEST

/* The fingerprint hashes rows in interleaved lanes and over threads; it
 * must equal the definition, a sum of tf_row_hash, on rows of every
 * length: empty ones, a hub that outlives the other lanes, and more rows
 * than the threaded path's threshold. */
START_TEST(fingerprint_matches_row_hash_sum)
{
    const int64_t n = 70001;
    int64_t *ptr = malloc((size_t)(n + 1) * sizeof *ptr);
    ptr[0] = 0;
    for (int64_t r = 0; r < n; r++) {
        int64_t len = r % 7 == 3 ? 0 : r % 5;
        if (r == 9 || r == 40000)
            len = 3000;
        ptr[r + 1] = ptr[r] + len;
    }
    int32_t *col = malloc((size_t)ptr[n] * sizeof *col);
    float *val = malloc((size_t)ptr[n] * sizeof *val);
    for (int64_t e = 0; e < ptr[n]; e++) {
        col[e] = (int32_t)(e % 100000);
        val[e] = (float)(e % 13) - 6.5f;
    }
    for (int64_t nrows = 0; nrows <= n; nrows = nrows < 9 ? nrows + 1 : nrows * 3 + 1) {
        uint64_t want = 0;
        for (int64_t r = 0; r < nrows; r++)
            want += tf_row_hash(123 + r, col + ptr[r], val + ptr[r], ptr[r + 1] - ptr[r]);
        ck_assert_msg(tf_fingerprint_rows(ptr, col, val, 123, nrows) == want, "%lld rows",
                      (long long)nrows);
    }
    uint64_t want = 0;
    for (int64_t r = 0; r < n; r++)
        want += tf_row_hash(r, col + ptr[r], val + ptr[r], ptr[r + 1] - ptr[r]);
    ck_assert(tf_fingerprint_rows(ptr, col, val, 0, n) == want);
    free(ptr);
    free(col);
    free(val);
}
END_TEST

START_TEST(fingerprint_is_partition_independent)
{
    tf_csr a;
    tf_test_random_csr(&a, 50, 40, 300, 7);
    uint64_t whole = tf_fingerprint_rows(a.rowptr, a.col, a.val, 0, a.nrows);
    /* Split rows 0..20 and 20..50: the shares sum to the whole. */
    uint64_t s1 = tf_fingerprint_rows(a.rowptr, a.col, a.val, 0, 20);
    int64_t *rp2 = malloc(31 * sizeof *rp2);
    for (int i = 0; i <= 30; i++)
        rp2[i] = a.rowptr[20 + i] - a.rowptr[20];
    uint64_t s2 = tf_fingerprint_rows(rp2, a.col + a.rowptr[20], a.val + a.rowptr[20], 20, 30);
    ck_assert(s1 + s2 == whole);
    a.val[3] += 1.0f; /* any change shows */
    ck_assert(tf_fingerprint_rows(a.rowptr, a.col, a.val, 0, a.nrows) != whole);
    free(rp2);
    tf_csr_free(&a);
}
END_TEST

START_TEST(error_messages_are_one_line)
{
    ck_assert_int_eq(tf_fail(TF_ERR_PARSE, "bad token '%s'", "a\nb"), TF_ERR_PARSE);
    ck_assert_str_eq(tf_error_message(), "bad token 'a?b'");
    tf_fail_prefix(TF_ERR_PARSE, "file.mtx:3");
    ck_assert_str_eq(tf_error_message(), "file.mtx:3: bad token 'a?b'");
    ck_assert_str_eq(tf_strerror(TF_ERR_NOMEM), "out of memory");
    ck_assert_str_eq(tf_strerror(999), "unknown status");
}
END_TEST

/* TWOFACE_MEM_AVAILABLE_MIB overrides /proc/meminfo; anything but a
 * positive whole number of MiB is an error, not a silent fallback. */
START_TEST(mem_available_reads_the_override)
{
    int64_t b = 0;
    setenv("TWOFACE_MEM_AVAILABLE_MIB", "12", 1);
    ck_assert_int_eq(tf_mem_available(&b), TF_OK);
    ck_assert_int_eq(b, (int64_t)12 << 20);
    static const char *const bad[] = {"0", "-5", "1x", "x", " 3", "9999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("TWOFACE_MEM_AVAILABLE_MIB", bad[i], 1);
        ck_assert_msg(tf_mem_available(&b) == TF_ERR_ARG, "'%s' accepted", bad[i]);
        ck_assert(strstr(tf_error_message(), "TWOFACE_MEM_AVAILABLE_MIB") != NULL);
    }
    /* Unset (or empty): the node's own figure, which Linux always has. */
    unsetenv("TWOFACE_MEM_AVAILABLE_MIB");
    ck_assert_int_eq(tf_mem_available(&b), TF_OK);
#ifdef __linux__
    ck_assert(b > 0);
#endif
    setenv("TWOFACE_MEM_AVAILABLE_MIB", "", 1);
    ck_assert_int_eq(tf_mem_available(&b), TF_OK);
    unsetenv("TWOFACE_MEM_AVAILABLE_MIB");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("core");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, coo_to_csr_sorts_and_sums);
    tcase_add_test(tc, coo_without_values_equals_coo_with_ones);
    tcase_add_test(tc, csr_sum_out_of_float_range);
    tcase_add_test(tc, coo_take_equals_copy);
    tcase_add_test(tc, csr_validate_catches_unsorted);
    tcase_add_test(tc, partition_rows_balanced_and_more_parts_than_rows);
    tcase_add_test(tc, partition_nnz_balances_nonzeros);
    tcase_add_test(tc, dense_generator_is_deterministic_and_k_independent);
    tcase_add_test(tc, reference_matches_hand_computation);
    tcase_add_test(tc, fingerprint_is_partition_independent);
    tcase_add_test(tc, fingerprint_matches_row_hash_sum);
    tcase_add_test(tc, coo_without_values_long_rows_sorted);
    tcase_add_test(tc, error_messages_are_one_line);
    tcase_add_test(tc, mem_available_reads_the_override);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tf_test_run_serial(suite()); }
