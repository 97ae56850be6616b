/* Matrix Market reader: every accepted variant, every rejected input with
 * the message it must give, compressed input (including truncated and
 * corrupted streams), chunk-boundary handling, progress output, and the
 * shipped Cora graph. Inputs are generated here; compressed ones are made
 * with libzstd/zlib in the test itself. */
#include "tf_test.h"
#include "tf_csr.h"
#include "tf_error.h"
#include "tf_mm_read.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

/* ---- helpers ------------------------------------------------------------ */

#define HDR_R "%%MatrixMarket matrix coordinate real general\n"
#define HDR_I "%%MatrixMarket matrix coordinate integer general\n"
#define HDR_P "%%MatrixMarket matrix coordinate pattern general\n"
#define HDR_S "%%MatrixMarket matrix coordinate real symmetric\n"
#define HDR_K "%%MatrixMarket matrix coordinate real skew-symmetric\n"

static const tf_mm_read_options quiet = {0, 0, 0, 0};

static const char *write_tmp(int slot, const char *suffix, const char *data, size_t len)
{
    return tf_test_tmpfile(slot, suffix, data, len);
}

static int read_text(const char *text, tf_csr *a)
{
    const char *path = write_tmp(0, ".mtx", text, strlen(text));
    return tf_mm_read(path, a, &quiet);
}

/* The value at (i, j), 0-based; NAN when the entry is not stored. */
static double at(const tf_csr *a, int64_t i, int32_t j)
{
    for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++)
        if (a->col[k] == j)
            return a->val[k];
    return NAN;
}

static void assert_same(const tf_csr *a, const tf_csr *b)
{
    ck_assert_int_eq(a->nrows, b->nrows);
    ck_assert_int_eq(a->ncols, b->ncols);
    ck_assert_int_eq(a->nnz, b->nnz);
    ck_assert_mem_eq(a->rowptr, b->rowptr, (size_t)(a->nrows + 1) * sizeof *a->rowptr);
    if (a->nnz) {
        ck_assert_mem_eq(a->col, b->col, (size_t)a->nnz * sizeof *a->col);
        ck_assert_mem_eq(a->val, b->val, (size_t)a->nnz * sizeof *a->val);
    }
}

static char *zstd_pack(const char *src, size_t len, size_t *outlen, int checksum)
{
    size_t cap = ZSTD_compressBound(len);
    char *dst = malloc(cap);
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, checksum);
    ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 3);
    size_t n = ZSTD_compress2(cc, dst, cap, src, len);
    ck_assert(!ZSTD_isError(n));
    ZSTD_freeCCtx(cc);
    *outlen = n;
    return dst;
}

static char *gzip_pack(const char *src, size_t len, size_t *outlen)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    ck_assert_int_eq(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&zs, (uLong)len) + 64;
    char *dst = malloc(cap);
    zs.next_in = (unsigned char *)src;
    zs.avail_in = (uInt)len;
    zs.next_out = (unsigned char *)dst;
    zs.avail_out = (uInt)cap;
    ck_assert_int_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
    *outlen = cap - zs.avail_out;
    deflateEnd(&zs);
    return dst;
}

/* A message is one line, names the file and the line ("FILE:LINE:") and
 * contains `what`. */
static void assert_msg(const char *file, int line, const char *what)
{
    const char *msg = tf_error_message();
    char pre[600];
    snprintf(pre, sizeof pre, "%s:%d: ", file, line);
    ck_assert_msg(strncmp(msg, pre, strlen(pre)) == 0, "message '%s' should start with '%s'", msg,
                  pre);
    ck_assert_msg(strstr(msg, what) != NULL, "message '%s' should contain '%s'", msg, what);
    ck_assert_ptr_null(strchr(msg, '\n'));
}

/* Reads `text` from a file and from memory; both must fail with `status`
 * and a message "FILE:LINE: ...what...". */
static void expect_fail(const char *text, size_t len, int status, int line, const char *what)
{
    tf_csr a;
    const char *path = write_tmp(1, ".mtx", text, len);
    int st = tf_mm_read(path, &a, &quiet);
    ck_assert_msg(st == status, "status %d, expected %d (%s) for input '%.60s'", st, status,
                  tf_error_message(), text);
    ck_assert_ptr_null(a.rowptr); /* nothing to free after a failure */
    assert_msg(path, line, what);
    tf_mm_read_options tiny = quiet;
    tiny.chunk_bytes = 3;
    st = tf_mm_read_buffer_opt("mem.mtx", text, len, &a, &tiny);
    ck_assert_int_eq(st, status);
    assert_msg("mem.mtx", line, what);
}

static void expect_fail_s(const char *text, int status, int line, const char *what)
{
    expect_fail(text, strlen(text), status, line, what);
}

/* ---- valid input -------------------------------------------------------- */

START_TEST(real_general_rectangular_with_duplicates)
{
    tf_csr a;
    ck_assert_int_eq(read_text("%%MatrixMarket matrix coordinate real general\n"
                               "% a comment\n"
                               "3 4 5\n"
                               "3 4 1.5\n"
                               "1 2 -2.25\n"
                               "1 2 0.25\n" /* duplicate: summed */
                               "2 1 1e3\n"
                               "3 1 -.5\n",
                               &a),
                     TF_OK);
    ck_assert_int_eq(a.nrows, 3);
    ck_assert_int_eq(a.ncols, 4);
    ck_assert_int_eq(a.nnz, 4);
    ck_assert_int_eq(tf_csr_validate(&a), TF_OK);
    ck_assert_double_eq(at(&a, 0, 1), -2.0);
    ck_assert_double_eq(at(&a, 1, 0), 1000.0);
    ck_assert_double_eq(at(&a, 2, 0), -0.5);
    ck_assert_double_eq(at(&a, 2, 3), 1.5);
    ck_assert(isnan(at(&a, 0, 0)));
    tf_csr_free(&a);
}
END_TEST

START_TEST(integer_and_pattern_fields)
{
    tf_csr a;
    ck_assert_int_eq(read_text("%%MatrixMarket matrix coordinate integer general\n"
                               "2 2 3\n1 1 -7\n2 2 +12\n2 1 9007199254740993\n",
                               &a),
                     TF_OK);
    ck_assert_double_eq(at(&a, 0, 0), -7.0);
    ck_assert_double_eq(at(&a, 1, 1), 12.0);
    ck_assert_double_eq(at(&a, 1, 0), (float)9007199254740993.0);
    tf_csr_free(&a);
    ck_assert_int_eq(read_text("%%MatrixMarket matrix coordinate pattern general\n"
                               "2 3 3\n1 3\n2 1\n1 3\n",
                               &a),
                     TF_OK);
    ck_assert_int_eq(a.nnz, 2);
    ck_assert_double_eq(at(&a, 0, 2), 2.0); /* a duplicated pattern entry sums too */
    ck_assert_double_eq(at(&a, 1, 0), 1.0);
    tf_csr_free(&a);
}
END_TEST

START_TEST(symmetric_is_expanded)
{
    tf_csr a;
    ck_assert_int_eq(read_text("%%MatrixMarket matrix coordinate real symmetric\n"
                               "3 3 4\n1 1 2\n2 1 3\n3 1 4\n3 3 5\n",
                               &a),
                     TF_OK);
    ck_assert_int_eq(a.nnz, 6);
    ck_assert_double_eq(at(&a, 0, 0), 2.0);
    ck_assert_double_eq(at(&a, 1, 0), 3.0);
    ck_assert_double_eq(at(&a, 0, 1), 3.0);
    ck_assert_double_eq(at(&a, 2, 0), 4.0);
    ck_assert_double_eq(at(&a, 0, 2), 4.0);
    ck_assert_double_eq(at(&a, 2, 2), 5.0);
    ck_assert_int_eq(tf_csr_validate(&a), TF_OK);
    tf_csr_free(&a);
    ck_assert_int_eq(read_text("%%MatrixMarket matrix coordinate pattern symmetric\n"
                               "3 3 2\n2 1\n3 2\n",
                               &a),
                     TF_OK);
    ck_assert_int_eq(a.nnz, 4);
    ck_assert_double_eq(at(&a, 1, 2), 1.0);
    tf_csr_free(&a);
}
END_TEST

START_TEST(skew_symmetric_is_expanded_with_negation)
{
    tf_csr a;
    ck_assert_int_eq(read_text("%%MatrixMarket matrix coordinate real skew-symmetric\n"
                               "3 3 2\n2 1 1.5\n3 2 -4\n",
                               &a),
                     TF_OK);
    ck_assert_int_eq(a.nnz, 4);
    ck_assert_double_eq(at(&a, 1, 0), 1.5);
    ck_assert_double_eq(at(&a, 0, 1), -1.5);
    ck_assert_double_eq(at(&a, 2, 1), -4.0);
    ck_assert_double_eq(at(&a, 1, 2), 4.0);
    tf_csr_free(&a);
}
END_TEST

START_TEST(lenient_layout)
{
    /* Mixed-case banner, BOM, CRLF, tabs, leading/trailing blanks, blank and
     * comment lines anywhere after the banner, no final newline. */
    const char *text = "\xEF\xBB\xBF%%matrixmarket MATRIX Coordinate Real General  \r\n"
                       "\r\n"
                       "%comment\r\n"
                       "   % indented comment\r\n"
                       "\t\r\n"
                       "  3\t3   3  \r\n"
                       "\r\n"
                       "  1 1\t\t1.0 \r\n"
                       "% between entries\r\n"
                       "\r\n"
                       "\t2 2 2\t\r\n"
                       "   \r\n"
                       "3 3 3";
    tf_csr a;
    ck_assert_int_eq(read_text(text, &a), TF_OK);
    ck_assert_int_eq(a.nnz, 3);
    ck_assert_double_eq(at(&a, 0, 0), 1.0);
    ck_assert_double_eq(at(&a, 1, 1), 2.0);
    ck_assert_double_eq(at(&a, 2, 2), 3.0);
    tf_csr_free(&a);
    /* Comments and blank lines after the last entry are fine too. */
    ck_assert_int_eq(read_text("%%MatrixMarket matrix coordinate pattern general\n"
                               "1 1 1\n1 1\n\n% trailer\n\n",
                               &a),
                     TF_OK);
    tf_csr_free(&a);
    /* An empty matrix is a matrix. */
    ck_assert_int_eq(read_text("%%MatrixMarket matrix coordinate real general\n0 0 0\n", &a),
                     TF_OK);
    ck_assert_int_eq(a.nrows, 0);
    ck_assert_int_eq(a.nnz, 0);
    tf_csr_free(&a);
}
END_TEST

START_TEST(duplicates_sum_in_double)
{
    /* In float, 1e8 + 1 - 1e8 is 0; summed in double it is 1. */
    tf_csr a;
    ck_assert_int_eq(read_text("%%MatrixMarket matrix coordinate real general\n"
                               "2 2 3\n1 1 1e8\n1 1 1\n1 1 -1e8\n",
                               &a),
                     TF_OK);
    ck_assert_double_eq(at(&a, 0, 0), 1.0);
    tf_csr_free(&a);
}
END_TEST

/* Each value is paired with its own negation as strtod rounds it, printed
 * with 17 digits; the pair sums to exactly 0 only if the reader rounded the
 * short form to the very same double (Sterbenz: the difference of two
 * close doubles is exact, so a one-ulp error shows). */
START_TEST(values_are_correctly_rounded)
{
    static const char *fixed[] = {"0.1", "0.3", "1.7", "123.456", "9007199254740993",
                                  "1e22", "1e-22", "4.35", "2.675", "0.000123456789012345678",
                                  "1e23", "8.589973e9", "3.4028234e38", "1.401298464324817e-45",
                                  "2.2250738585072011e-308", "-0.0", "7e-10", "1234567890123456789"};
    size_t nf = sizeof fixed / sizeof *fixed, nrand = 3000;
    size_t n = nf + nrand;
    size_t cap = 96 * n + 200;
    char *text = malloc(cap);
    size_t len = (size_t)snprintf(text, cap,
                                  "%%%%MatrixMarket matrix coordinate real general\n%zu 2 %zu\n", n,
                                  2 * n);
    uint64_t h = 12345;
    for (size_t k = 0; k < n; k++) {
        char s[64];
        if (k < nf) {
            snprintf(s, sizeof s, "%s", fixed[k]);
        } else {
            h = h * 6364136223846793005ULL + 1442695040888963407ULL;
            int digits = 1 + (int)((h >> 33) % 19);
            /* Magnitudes 1e-21..1e34: inside float32, and large enough
             * that a one-ulp double error survives rounding to float. */
            int exp = (int)((h >> 20) % 36) - 20;
            uint64_t m = h >> 1;
            char ds[32];
            int have = snprintf(ds, sizeof ds, "%llu", (unsigned long long)m);
            if (digits > have)
                digits = have;
            ds[digits] = '\0';
            int point = (int)((h >> 10) % (unsigned)(digits + 1));
            if (k % 3 == 0)
                snprintf(s, sizeof s, "%.*s.%se%d", point, ds, ds + point, exp);
            else if (k % 3 == 1)
                snprintf(s, sizeof s, "%.*s.%s", point, ds, ds + point);
            else
                snprintf(s, sizeof s, "-%s", ds);
        }
        double ref = strtod(s, NULL);
        len += (size_t)snprintf(text + len, cap - len, "%zu 1 %s\n%zu 1 %.17g\n", k + 1, s, k + 1,
                                -ref);
    }
    tf_csr a;
    ck_assert_int_eq(tf_mm_read_buffer("round.mtx", text, len, &a), TF_OK);
    ck_assert_int_eq(a.nnz, (int64_t)n);
    for (int64_t k = 0; k < a.nnz; k++)
        ck_assert_msg(a.val[k] == 0.0f, "row %lld: value misrounded", (long long)k + 1);
    tf_csr_free(&a);
    free(text);
}
END_TEST

/* Writes a as Matrix Market text with varied spacing and number forms. */
static char *mm_text(const tf_csr *a, size_t *len, int shuffle)
{
    size_t cap = 128 + (size_t)a->nnz * 64;
    char *t = malloc(cap);
    size_t n = (size_t)snprintf(t, cap, "%%%%MatrixMarket matrix coordinate real general\n"
                                        "%% generated\n%lld %lld %lld\n",
                                (long long)a->nrows, (long long)a->ncols, (long long)a->nnz);
    int64_t *order = malloc((size_t)(a->nnz ? a->nnz : 1) * sizeof *order);
    int64_t *rowof = malloc((size_t)(a->nnz ? a->nnz : 1) * sizeof *rowof);
    for (int64_t i = 0; i < a->nrows; i++)
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++)
            rowof[k] = i;
    for (int64_t k = 0; k < a->nnz; k++)
        order[k] = k;
    uint64_t h = 99;
    if (shuffle)
        for (int64_t k = a->nnz - 1; k > 0; k--) {
            h = h * 6364136223846793005ULL + 1442695040888963407ULL;
            int64_t j = (int64_t)((h >> 33) % (uint64_t)(k + 1));
            int64_t tmp = order[k];
            order[k] = order[j];
            order[j] = tmp;
        }
    for (int64_t q = 0; q < a->nnz; q++) {
        int64_t k = order[q];
        const char *sep = (q % 5 == 0) ? "\t" : (q % 7 == 0) ? "   " : " ";
        /* 17 digits name the float's exact double, so reading back cannot
         * double-round; some values are short anyway (0.5) and take the
         * reader's fast path. */
        const char *fmt = (q % 4 == 0) ? "%lld%s%d%s%.16e%s" : "%lld%s%d%s%.17g%s";
        n += (size_t)snprintf(t + n, cap - n, fmt, (long long)rowof[k] + 1, sep, a->col[k] + 1,
                              sep, (double)a->val[k], (q % 3 == 0) ? "\r\n" : "\n");
    }
    free(order);
    free(rowof);
    *len = n;
    return t;
}

START_TEST(roundtrip_every_chunk_size_and_compression)
{
    tf_csr ref;
    tf_test_random_csr(&ref, 300, 250, 3000, 4);
    size_t len;
    char *text = mm_text(&ref, &len, 1);
    const size_t chunks[] = {0, 1, 2, 3, 5, 7, 13, 64, 4096};
    for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
        tf_mm_read_options opt = quiet;
        opt.chunk_bytes = chunks[c];
        tf_csr a;
        ck_assert_int_eq(tf_mm_read_buffer_opt("rt.mtx", text, len, &a, &opt), TF_OK);
        assert_same(&a, &ref);
        tf_csr_free(&a);
    }
    size_t zl, gl;
    char *z = zstd_pack(text, len, &zl, 1);
    char *g = gzip_pack(text, len, &gl);
    for (size_t c = 0; c < 4; c++) {
        tf_mm_read_options opt = quiet;
        opt.chunk_bytes = chunks[c];
        tf_csr a;
        ck_assert_int_eq(tf_mm_read(write_tmp(2, ".mtx.zst", z, zl), &a, &opt), TF_OK);
        assert_same(&a, &ref);
        tf_csr_free(&a);
        ck_assert_int_eq(tf_mm_read(write_tmp(3, ".mtx.gz", g, gl), &a, &opt), TF_OK);
        assert_same(&a, &ref);
        tf_csr_free(&a);
    }
    /* Content decides, not the suffix. */
    tf_csr a;
    ck_assert_int_eq(tf_mm_read(write_tmp(4, ".mtx", z, zl), &a, &quiet), TF_OK);
    assert_same(&a, &ref);
    tf_csr_free(&a);
    ck_assert_int_eq(tf_mm_read(write_tmp(4, ".mtx.zst", g, gl), &a, &quiet), TF_OK);
    assert_same(&a, &ref);
    tf_csr_free(&a);
    ck_assert_int_eq(tf_mm_read(write_tmp(4, ".mtx.gz", text, len), &a, &quiet), TF_OK);
    assert_same(&a, &ref);
    tf_csr_free(&a);
    ck_assert_int_eq(tf_mm_read_buffer("mem.zst", z, zl, &a), TF_OK);
    assert_same(&a, &ref);
    tf_csr_free(&a);
    free(z);
    free(g);
    free(text);
    tf_csr_free(&ref);
}
END_TEST

/* Spans many 1 MiB chunks with the default options, and both sorted and
 * shuffled entry orders (the CSR builder has a fast path for sorted ones). */
START_TEST(large_file_default_chunks)
{
    tf_csr ref;
    tf_test_random_csr(&ref, 20000, 15000, 150000, 11);
    for (int shuffle = 0; shuffle < 2; shuffle++) {
        size_t len;
        char *text = mm_text(&ref, &len, shuffle);
        ck_assert(len > 3 * (1 << 20));
        tf_csr a;
        const char *path = write_tmp(2, ".mtx", text, len);
        ck_assert_int_eq(tf_mm_read(path, &a, &quiet), TF_OK);
        assert_same(&a, &ref);
        tf_csr_free(&a);
        unlink(path); /* megabytes: do not leave them in /tmp */
        size_t zl;
        char *z = zstd_pack(text, len, &zl, 0);
        path = write_tmp(3, ".mtx.zst", z, zl);
        ck_assert_int_eq(tf_mm_read(path, &a, &quiet), TF_OK);
        assert_same(&a, &ref);
        tf_csr_free(&a);
        unlink(path);
        free(z);
        free(text);
    }
    tf_csr_free(&ref);
}
END_TEST

START_TEST(concatenated_frames_and_members)
{
    const char *p1 = "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 ";
    const char *p2 = "5\n2 2 6\n";
    size_t l1, l2;
    char *z1 = zstd_pack(p1, strlen(p1), &l1, 1), *z2 = zstd_pack(p2, strlen(p2), &l2, 0);
    char *zz = malloc(l1 + l2);
    memcpy(zz, z1, l1);
    memcpy(zz + l1, z2, l2);
    tf_csr a;
    ck_assert_int_eq(tf_mm_read_buffer("cat.zst", zz, l1 + l2, &a), TF_OK);
    ck_assert_double_eq(at(&a, 0, 0), 5.0);
    ck_assert_double_eq(at(&a, 1, 1), 6.0);
    tf_csr_free(&a);
    char *g1 = gzip_pack(p1, strlen(p1), &l1), *g2 = gzip_pack(p2, strlen(p2), &l2);
    char *gg = malloc(l1 + l2);
    memcpy(gg, g1, l1);
    memcpy(gg + l1, g2, l2);
    ck_assert_int_eq(tf_mm_read_buffer("cat.gz", gg, l1 + l2, &a), TF_OK);
    ck_assert_double_eq(at(&a, 1, 1), 6.0);
    tf_csr_free(&a);
    free(z1), free(z2), free(zz), free(g1), free(g2), free(gg);
}
END_TEST

START_TEST(cora_shipped_graph)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/examples/data/cora.mtx.zst", tf_test_srcdir());
    ck_assert_msg(access(path, R_OK) == 0, "%s: the shipped graph is missing (TF_SRCDIR?)", path);
    tf_csr a;
    ck_assert_int_eq(tf_mm_read(path, &a, NULL), TF_OK);
    ck_assert_int_eq(a.nrows, 2708);
    ck_assert_int_eq(a.ncols, 2708);
    ck_assert_int_eq(a.nnz, 10556);
    ck_assert_int_eq(tf_csr_validate(&a), TF_OK);
    for (int64_t i = 0; i < a.nrows; i++)
        for (int64_t k = a.rowptr[i]; k < a.rowptr[i + 1]; k++) {
            ck_assert_float_eq(a.val[k], 1.0f);
            ck_assert(!isnan(at(&a, a.col[k], (int32_t)i))); /* expanded: A == A^T */
        }
    tf_csr_free(&a);
}
END_TEST

/* ---- sizes and limits --------------------------------------------------- */

START_TEST(entry_counts_are_64_bit_and_bounded)
{
    /* 5e9 entries fit a 100000 x 100000 matrix; a compressed file cannot be
     * checked against its size, so the reader must not allocate for them up
     * front (ASan would fail that allocation) and must report the shortfall. */
    const char *text = "%%MatrixMarket matrix coordinate pattern general\n"
                       "100000 100000 5000000000\n1 1\n2 2\n";
    size_t zl;
    char *z = zstd_pack(text, strlen(text), &zl, 0);
    const char *path = write_tmp(2, ".mtx.zst", z, zl);
    tf_csr a;
    ck_assert_int_eq(tf_mm_read(path, &a, &quiet), TF_ERR_PARSE);
    assert_msg(path, 5, "after 2 of 5000000000 declared entries");
    free(z);
    /* A plain file is checked against the bytes it has. */
    expect_fail_s(text, TF_ERR_PARSE, 2, "can hold at most 2");
    /* And an explicit cap wins over everything. */
    tf_mm_read_options opt = quiet;
    opt.max_entries = 1;
    path = write_tmp(2, ".mtx", text, strlen(text));
    ck_assert_int_eq(tf_mm_read(path, &a, &opt), TF_ERR_RANGE);
    assert_msg(path, 2, "more than the limit of 1");
    opt.max_entries = 10;
    const char *ok = "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 1\n2 2\n";
    ck_assert_int_eq(tf_mm_read(write_tmp(2, ".mtx", ok, strlen(ok)), &a, &opt), TF_OK);
    tf_csr_free(&a);
}
END_TEST

/* The row arrays follow the size line's rows, not the file's bytes: a size
 * line whose rows do not fit in the memory available is refused before
 * anything is allocated, and a caller's own bound replaces that figure. */
START_TEST(declared_rows_bounded_by_available_memory)
{
    /* 2 M rows take 48 MB of row arrays; 16 MiB are available. */
    setenv("TWOFACE_MEM_AVAILABLE_MIB", "16", 1);
    const char *rows2m = HDR_P "2000000 3 1\n1 1\n";
    expect_fail_s(rows2m, TF_ERR_NOMEM, 2,
                  "a 2000000 x 3 matrix's row arrays (24 bytes a row): need 45.8 MiB, more "
                  "than the 16.0 MiB TWOFACE_MEM_AVAILABLE_MIB allows");
    /* The 70-byte file of 2^31 - 1 rows and columns and no entries: refused
     * at once (it allocated and touched 16 GiB before). */
    const char *huge = HDR_P "2147483647 2147483647 0\n";
    expect_fail_s(huge, TF_ERR_NOMEM, 2, "need 48.0 GiB, more than the 16.0 MiB");
    /* From a compressed stream alike. */
    size_t zl;
    char *z = zstd_pack(huge, strlen(huge), &zl, 0);
    tf_csr a;
    ck_assert_int_eq(tf_mm_read(write_tmp(2, ".mtx.zst", z, zl), &a, &quiet), TF_ERR_NOMEM);
    free(z);
    /* A matrix whose rows fit reads as before. */
    const char *small = HDR_P "100000 3 1\n1 1\n";
    ck_assert_int_eq(tf_mm_read(write_tmp(2, ".mtx", small, strlen(small)), &a, &quiet), TF_OK);
    ck_assert_int_eq(a.nrows, 100000);
    tf_csr_free(&a);
    /* A caller's bound: larger (reads), smaller (refused, named), none. */
    const char *path = write_tmp(2, ".mtx", rows2m, strlen(rows2m));
    tf_mm_read_options opt = quiet;
    opt.max_memory = 64 << 20;
    ck_assert_msg(tf_mm_read(path, &a, &opt) == TF_OK, "%s", tf_error_message());
    ck_assert_int_eq(a.nrows, 2000000);
    tf_csr_free(&a);
    opt.max_memory = 1 << 20;
    ck_assert_int_eq(tf_mm_read(path, &a, &opt), TF_ERR_NOMEM);
    assert_msg(path, 2, "need 45.8 MiB, more than the limit of 1.0 MiB");
    opt.max_memory = -1;
    ck_assert_int_eq(tf_mm_read(path, &a, &opt), TF_OK);
    tf_csr_free(&a);
    /* A bad figure is the variable's error, not a silent default. */
    setenv("TWOFACE_MEM_AVAILABLE_MIB", "lots", 1);
    ck_assert_int_eq(tf_mm_read(path, &a, &quiet), TF_ERR_ARG);
    assert_msg(path, 2, "TWOFACE_MEM_AVAILABLE_MIB=lots: expected a positive whole number");
    unsetenv("TWOFACE_MEM_AVAILABLE_MIB");
}
END_TEST

/* A pipe has no size: nothing can be checked up front, the entry storage
 * must start small, and progress has no percentage. */
START_TEST(reads_from_a_pipe)
{
    const char *texts[2] = {HDR_P "100000 100000 3000000000\n1 1\n2 2\n",
                            HDR_P "3 3 2\n1 1\n3 2\n"};
    for (int k = 0; k < 2; k++) {
        int fds[2];
        ck_assert_int_eq(pipe(fds), 0);
        ck_assert_int_eq(write(fds[1], texts[k], strlen(texts[k])), (long)strlen(texts[k]));
        close(fds[1]);
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
        tf_csr a;
        int st = tf_mm_read(path, &a, &quiet);
        close(fds[0]);
        if (k == 0) {
            ck_assert_int_eq(st, TF_ERR_PARSE);
            assert_msg(path, 5, "after 2 of 3000000000 declared entries");
        } else {
            ck_assert_int_eq(st, TF_OK);
            ck_assert_int_eq(a.nnz, 2);
            ck_assert_double_eq(at(&a, 2, 1), 1.0);
            tf_csr_free(&a);
        }
    }
}
END_TEST

/* ---- errors ------------------------------------------------------------- */

START_TEST(bad_banner)
{
    expect_fail_s("", TF_ERR_PARSE, 1, "empty file");
    expect_fail_s("3 3 1\n1 1 1\n", TF_ERR_PARSE, 1, "expected the banner '%%MatrixMarket matrix");
    expect_fail_s("%%MatrixMarkt matrix coordinate real general\n1 1 0\n", TF_ERR_PARSE, 1,
                  "found '%%MatrixMarkt matrix");
    expect_fail_s("\n" HDR_R "1 1 0\n", TF_ERR_PARSE, 1, "expected the banner");
    /* An HDF5 file (a plan given as the matrix) is named, not shown as bytes;
     * other bytes outside printable ASCII are quoted. */
    static const char h5[] = "\x89HDF\r\n\x1a\n\x02\x08\x08\x00";
    expect_fail(h5, sizeof h5 - 1, TF_ERR_PARSE, 1,
                "this is an HDF5 file, not a Matrix Market file");
    expect_fail_s("caf\xc3\xa9 matrix\n", TF_ERR_PARSE, 1, "found 'caf\\xc3\\xa9 matrix'");
    expect_fail_s("%%MatrixMarket matrix coordinate real\n1 1 0\n", TF_ERR_PARSE, 1,
                  "banner has 4 words, expected 5");
    expect_fail_s("%%MatrixMarket vector coordinate real general\n", TF_ERR_FORMAT, 1,
                  "object 'vector' not supported");
    expect_fail_s("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", TF_ERR_FORMAT, 1,
                  "format 'array' (dense) not supported");
    expect_fail_s("%%MatrixMarket matrix sparse real general\n", TF_ERR_PARSE, 1,
                  "unknown format 'sparse'");
    expect_fail_s("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
                  TF_ERR_FORMAT, 1, "field 'complex' not supported");
    expect_fail_s("%%MatrixMarket matrix coordinate double general\n", TF_ERR_PARSE, 1,
                  "unknown field 'double'");
    expect_fail_s("%%MatrixMarket matrix coordinate real hermitian\n", TF_ERR_FORMAT, 1,
                  "symmetry 'hermitian' not supported");
    expect_fail_s("%%MatrixMarket matrix coordinate real symmetrical\n", TF_ERR_PARSE, 1,
                  "unknown symmetry 'symmetrical'");
}
END_TEST

START_TEST(bad_size_line)
{
    expect_fail_s(HDR_R, TF_ERR_PARSE, 2, "unexpected end of file, expected the size line");
    expect_fail_s(HDR_R "% only comments\n\n", TF_ERR_PARSE, 4, "expected the size line");
    expect_fail_s(HDR_R "3 3\n", TF_ERR_PARSE, 2, "expected the size line 'rows cols entries', found 2 tokens");
    expect_fail_s(HDR_R "3 3 1 1\n", TF_ERR_PARSE, 2, "found 4 tokens");
    expect_fail_s(HDR_R "3 x 1\n", TF_ERR_PARSE, 2, "number of columns 'x' is not an integer");
    expect_fail_s(HDR_R "3 3 1.0\n", TF_ERR_PARSE, 2, "number of entries '1.0' is not an integer");
    expect_fail_s(HDR_R "-3 3 1\n", TF_ERR_PARSE, 2, "number of rows -3 is negative");
    expect_fail_s(HDR_R "3 3 -1\n", TF_ERR_PARSE, 2, "number of entries -1 is negative");
    expect_fail_s(HDR_R "3000000000 3 1\n", TF_ERR_RANGE, 2, "dimension 3000000000 (number of rows) exceeds 2147483647");
    expect_fail_s(HDR_R "3 2147483648 1\n", TF_ERR_RANGE, 2, "exceeds 2147483647");
    expect_fail_s(HDR_R "99999999999999999999 3 1\n", TF_ERR_RANGE, 2,
                  "number of rows '99999999999999999999' overflows int64");
    expect_fail_s(HDR_R "2 2 5\n", TF_ERR_PARSE, 2, "5 entries declared, but a 2 x 2 matrix has only 4 positions");
    expect_fail_s(HDR_S "2 2 4\n", TF_ERR_PARSE, 2, "only 3 positions in its lower triangle");
    expect_fail_s(HDR_K "2 2 2\n", TF_ERR_PARSE, 2, "only 1 positions strictly below the diagonal");
    expect_fail_s(HDR_S "2 3 1\n2 1 1\n", TF_ERR_PARSE, 2, "must be square");
    /* Dimensions at the limit are fine (nothing is allocated per row until
     * the CSR is built, so use an empty matrix with no rows). */
    tf_csr a;
    ck_assert_int_eq(read_text(HDR_R "0 2147483647 0\n", &a), TF_OK);
    ck_assert_int_eq(a.ncols, 2147483647);
    tf_csr_free(&a);
}
END_TEST

START_TEST(entry_count_mismatch)
{
    /* (The comment keeps the file long enough for two entries, else the
     * size check against the file length fires first.) */
    expect_fail_s(HDR_R "3 3 2\n1 1 1\n%\n", TF_ERR_PARSE, 5,
                  "unexpected end of file after 1 of 2 declared entries");
    expect_fail_s(HDR_R "3 3 2\n1 1 1\n% c\n\n", TF_ERR_PARSE, 6, "after 1 of 2 declared");
    expect_fail_s(HDR_R "3 3 1\n1 1 1\n2 2 2\n", TF_ERR_PARSE, 4, "more entries than the 1 declared");
    expect_fail_s(HDR_R "3 3 0\n\n1 1 1\n", TF_ERR_PARSE, 4, "more entries than the 0 declared");
}
END_TEST

START_TEST(bad_indices)
{
    expect_fail_s(HDR_R "3 3 1\n0 1 1\n", TF_ERR_PARSE, 3, "row index 0 out of range 1..3");
    expect_fail_s(HDR_R "3 3 1\n1 0 1\n", TF_ERR_PARSE, 3, "column index 0 out of range 1..3");
    expect_fail_s(HDR_R "3 3 1\n-1 1 1\n", TF_ERR_PARSE, 3, "row index -1 out of range");
    expect_fail_s(HDR_R "3 3 1\n1 -2 1\n", TF_ERR_PARSE, 3, "column index -2 out of range");
    expect_fail_s(HDR_R "3 3 1\n4 1 1\n", TF_ERR_PARSE, 3, "row index 4 out of range 1..3");
    expect_fail_s(HDR_R "3 5 1\n1 6 1\n", TF_ERR_PARSE, 3, "column index 6 out of range 1..5");
    expect_fail_s(HDR_R "3 3 1\n99999999999999999999 1 1\n", TF_ERR_PARSE, 3,
                  "row index '99999999999999999999' overflows int64");
    expect_fail_s(HDR_R "3 3 1\n1 9223372036854775808 1\n", TF_ERR_PARSE, 3,
                  "column index '9223372036854775808' overflows int64");
    expect_fail_s(HDR_R "3 3 1\n1.5 1 1\n", TF_ERR_PARSE, 3, "row index '1.5' is not an integer");
    expect_fail_s(HDR_R "3 3 1\n1 x 1\n", TF_ERR_PARSE, 3, "column index 'x' is not an integer");
    expect_fail_s(HDR_R "3 3 1\n1 2x 1\n", TF_ERR_PARSE, 3, "column index '2x' is not an integer");
    /* Long but in range: many leading zeros are still the number 1. */
    tf_csr a;
    ck_assert_int_eq(read_text(HDR_R "3 3 1\n000000000000000000000000001 3 1\n", &a), TF_OK);
    ck_assert_double_eq(at(&a, 0, 2), 1.0);
    tf_csr_free(&a);
}
END_TEST

START_TEST(bad_values)
{
    expect_fail_s(HDR_R "2 2 1\n1 1 abc\n", TF_ERR_PARSE, 3, "value 'abc' is not a number");
    expect_fail_s(HDR_R "2 2 1\n1 1 nan\n", TF_ERR_PARSE, 3, "value 'nan' is not a number");
    expect_fail_s(HDR_R "2 2 1\n1 1 inf\n", TF_ERR_PARSE, 3, "value 'inf' is not a number");
    expect_fail_s(HDR_R "2 2 1\n1 1 -Infinity\n", TF_ERR_PARSE, 3, "'-Infinity' is not a number");
    expect_fail_s(HDR_R "2 2 1\n1 1 0x10\n", TF_ERR_PARSE, 3, "'0x10' is not a number");
    expect_fail_s(HDR_R "2 2 1\n1 1 1e\n", TF_ERR_PARSE, 3, "'1e' is not a number");
    expect_fail_s(HDR_R "2 2 1\n1 1 .\n", TF_ERR_PARSE, 3, "'.' is not a number");
    expect_fail_s(HDR_R "2 2 1\n1 1 1,5\n", TF_ERR_PARSE, 3, "'1,5' is not a number");
    expect_fail_s(HDR_R "2 2 1\n1 1 1e400\n", TF_ERR_RANGE, 3, "value '1e400' out of range");
    expect_fail_s(HDR_R "2 2 1\n1 1 -1e39\n", TF_ERR_RANGE, 3, "value '-1e39' out of range (float32");
    expect_fail_s(HDR_I "2 2 1\n1 1 1.5\n", TF_ERR_PARSE, 3,
                  "value '1.5' is not an integer (the field is integer)");
    expect_fail_s(HDR_I "2 2 1\n1 1 1e3\n", TF_ERR_PARSE, 3, "is not an integer");
    expect_fail_s(HDR_I "2 2 1\n1 1 seven\n", TF_ERR_PARSE, 3, "value 'seven' is not a number");
    expect_fail_s(HDR_I "2 2 1\n1 1 99999999999999999999\n", TF_ERR_RANGE, 3,
                  "integer value '99999999999999999999' out of int64 range");
    /* Tiny values underflow to (sub)normal numbers; that is not an error. */
    tf_csr a;
    ck_assert_int_eq(read_text(HDR_R "1 1 1\n1 1 1e-400\n", &a), TF_OK);
    ck_assert_double_eq(a.val[0], 0.0);
    tf_csr_free(&a);
    /* A sum that leaves float32 is reported with the file name. */
    const char *path = write_tmp(0, ".mtx", HDR_R "2 2 2\n1 1 3e38\n1 1 3e38\n",
                                 strlen(HDR_R "2 2 2\n1 1 3e38\n1 1 3e38\n"));
    ck_assert_int_eq(tf_mm_read(path, &a, &quiet), TF_ERR_RANGE);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), path));
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "float32"));
}
END_TEST

START_TEST(bad_token_counts)
{
    expect_fail_s(HDR_R "2 2 1\n1 1\n", TF_ERR_PARSE, 3, "expected 3 tokens (row col value), found 2");
    expect_fail_s(HDR_R "2 2 1\n1\n%\n", TF_ERR_PARSE, 3, "found 1");
    expect_fail_s(HDR_R "2 2 1\n1 1 1 1\n", TF_ERR_PARSE, 3, "expected 3 tokens (row col value), found 4");
    expect_fail_s(HDR_P "2 2 1\n1 1 1\n", TF_ERR_PARSE, 3, "expected 2 tokens (row col), found 3");
    expect_fail_s(HDR_P "2 2 2\n1 1\n2\n%\n", TF_ERR_PARSE, 4, "expected 2 tokens (row col), found 1");
}
END_TEST

START_TEST(bad_triangles)
{
    expect_fail_s(HDR_K "3 3 2\n2 1 1\n2 2 1\n", TF_ERR_PARSE, 4,
                  "diagonal entry (2, 2) in a skew-symmetric matrix");
    expect_fail_s(HDR_S "3 3 2\n2 1 1\n1 3 1\n", TF_ERR_PARSE, 4,
                  "entry (1, 3) is above the diagonal; a symmetric file stores only the lower triangle");
    expect_fail_s(HDR_K "3 3 1\n1 2 1\n", TF_ERR_PARSE, 3, "above the diagonal; a skew-symmetric");
}
END_TEST

START_TEST(binary_and_long_lines)
{
    expect_fail(HDR_R "2 2 1\n1 \0 1\n", sizeof(HDR_R "2 2 1\n1 \0 1\n") - 1, TF_ERR_PARSE, 3,
                "binary data (byte 0x00) where a matrix entry was expected");
    expect_fail(HDR_R "% a \0 comment\n2 2 0\n", sizeof(HDR_R "% a \0 comment\n2 2 0\n") - 1,
                TF_ERR_PARSE, 2, "binary data (NUL byte) in a comment line");
    expect_fail(HDR_R "2 2 0\n% a \0\n", sizeof(HDR_R "2 2 0\n% a \0\n") - 1, TF_ERR_PARSE, 3,
                "NUL byte");
    expect_fail(HDR_R "2\x01 2 0\n", sizeof(HDR_R "2\x01 2 0\n") - 1, TF_ERR_PARSE, 2,
                "binary data (byte 0x01), expected the size line");
    /* Random binary garbage: blamed on line 1, where the banner should be. */
    char junk[4096];
    uint64_t h = 7;
    for (size_t k = 0; k < sizeof junk; k++) {
        h = h * 6364136223846793005ULL + 1442695040888963407ULL;
        junk[k] = (char)(h >> 56);
    }
    junk[0] = 0x00;
    expect_fail(junk, sizeof junk, TF_ERR_PARSE, 1, "binary data");
    junk[0] = '%';
    junk[1] = '%';
    junk[2] = 'M';
    expect_fail(junk, sizeof junk, TF_ERR_PARSE, 1, "");
    expect_fail("\xFD" "7zXZ\0", 6, TF_ERR_FORMAT, 1, "xz-compressed input is not supported");
    expect_fail_s("BZh91AY&SY", TF_ERR_FORMAT, 1, "bzip2-compressed input is not supported");

    /* 2 MiB without a newline: rejected without buffering it all. */
    size_t big = (size_t)2 << 20;
    char *t = malloc(big + 200);
    size_t n = strlen(HDR_R "2 2 1\n");
    memcpy(t, HDR_R "2 2 1\n", n);
    memset(t + n, '7', big);
    expect_fail(t, n + big, TF_ERR_PARSE, 3, "line longer than 1048576 bytes");
    /* A long comment line that does end. */
    t[n] = '%';
    t[n + TF_MM_MAX_LINE + 10] = '\n';
    expect_fail(t, n + TF_MM_MAX_LINE + 11, TF_ERR_PARSE, 3, "line longer than");
    /* Just under the cap is fine. */
    t[n + TF_MM_MAX_LINE - 1] = '\n';
    memcpy(t + n + TF_MM_MAX_LINE, "1 1 1\n", 6);
    tf_csr a;
    ck_assert_int_eq(tf_mm_read_buffer("ok.mtx", t, n + TF_MM_MAX_LINE + 6, &a), TF_OK);
    tf_csr_free(&a);
    free(t);
}
END_TEST

START_TEST(io_errors)
{
    tf_csr a;
    ck_assert_int_eq(tf_mm_read("/nonexistent/dir/graph.mtx", &a, NULL), TF_ERR_IO);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "/nonexistent/dir/graph.mtx: cannot open"));
    ck_assert_int_eq(tf_mm_read("/", &a, &quiet), TF_ERR_IO);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "read failed"));
    ck_assert_int_eq(tf_mm_read_buffer("null", NULL, 0, &a), TF_ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "null:1: empty file"));
    ck_assert_int_eq(tf_mm_read_buffer(NULL, NULL, 5, &a), TF_ERR_ARG);
}
END_TEST

static const char *small_text =
    HDR_R "% test\n5 5 6\n1 1 1.5\n2 2 2.5\n3 3 3.5\n4 4 4.5\n5 5 5.5\n5 1 -1\n";

START_TEST(truncated_and_corrupt_zstd)
{
    size_t zl;
    char *z = zstd_pack(small_text, strlen(small_text), &zl, 1);
    tf_csr a;
    const char *path = write_tmp(2, ".mtx.zst", z, zl / 2);
    ck_assert_int_eq(tf_mm_read(path, &a, &quiet), TF_ERR_IO);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), path));
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "truncated zstd stream"));
    /* Every proper prefix is truncated (the frame has a checksum at the end). */
    for (size_t cut = 1; cut < zl; cut++) {
        int st = tf_mm_read_buffer("cut.zst", z, cut, &a);
        ck_assert_msg(st != TF_OK, "prefix of %zu bytes accepted", cut);
        ck_assert_ptr_null(strchr(tf_error_message(), '\n'));
    }
    /* Losing the last bytes (the checksum) is truncation, not corruption. */
    ck_assert_int_eq(tf_mm_read_buffer("cut.zst", z, zl - 1, &a), TF_ERR_IO);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "cut.zst:"));
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "truncated zstd stream"));
    /* A flipped byte in the compressed data fails the checksum or decoding. */
    z[zl / 2] ^= 0x5a;
    path = write_tmp(2, ".mtx.zst", z, zl);
    ck_assert_int_ne(tf_mm_read(path, &a, &quiet), TF_OK);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), path));
    z[zl / 2] ^= 0x5a;
    /* Any single flip anywhere: an error or (header bits zstd ignores) a
     * result; never a crash, a leak, or a multi-line message. */
    for (size_t k = 0; k < zl; k++)
        for (int bit = 0; bit < 8; bit++) {
            z[k] ^= (char)(1 << bit);
            int st = tf_mm_read_buffer("flip.zst", z, zl, &a);
            if (st == TF_OK)
                tf_csr_free(&a);
            else
                ck_assert_ptr_null(strchr(tf_error_message(), '\n'));
            z[k] ^= (char)(1 << bit);
        }
    /* Garbage after the frame is not silently ignored. */
    char *zg = malloc(zl + 8);
    memcpy(zg, z, zl);
    memcpy(zg + zl, "garbage!", 8);
    ck_assert_int_eq(tf_mm_read_buffer("tail.zst", zg, zl + 8, &a), TF_ERR_IO);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "corrupt zstd stream"));
    /* Just the magic number. */
    ck_assert_int_eq(tf_mm_read_buffer("magic.zst", z, 4, &a), TF_ERR_IO);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "magic.zst:1: truncated zstd stream"));
    free(zg);
    free(z);
}
END_TEST

START_TEST(truncated_and_corrupt_gzip)
{
    size_t gl;
    char *g = gzip_pack(small_text, strlen(small_text), &gl);
    tf_csr a;
    const char *path = write_tmp(3, ".mtx.gz", g, gl - 6);
    ck_assert_int_eq(tf_mm_read(path, &a, &quiet), TF_ERR_IO);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), path));
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "truncated gzip stream"));
    for (size_t cut = 2; cut < gl; cut++)
        ck_assert_int_ne(tf_mm_read_buffer("cut.gz", g, cut, &a), TF_OK);
    /* The CRC catches a flipped data byte. */
    g[gl / 2] ^= 0x10;
    ck_assert_int_eq(tf_mm_read_buffer("flip.gz", g, gl, &a), TF_ERR_IO);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "corrupt gzip stream"));
    g[gl / 2] ^= 0x10;
    for (size_t k = 0; k < gl; k++) {
        g[k] ^= (char)0x81;
        int st = tf_mm_read_buffer("flip.gz", g, gl, &a);
        if (st == TF_OK)
            tf_csr_free(&a);
        else
            ck_assert_ptr_null(strchr(tf_error_message(), '\n'));
        g[k] ^= (char)0x81;
    }
    char *gt = malloc(gl + 3);
    memcpy(gt, g, gl);
    memcpy(gt + gl, "xyz", 3);
    ck_assert_int_eq(tf_mm_read_buffer("tail.gz", gt, gl + 3, &a), TF_ERR_IO);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "corrupt gzip stream"));
    free(gt);
    free(g);
}
END_TEST

/* Cheap in-process fuzzing: mutated valid inputs, plain and compressed, with
 * tiny chunks. The assertions are the sanitizers' (make sanitize) plus the
 * one-line message rule. */
START_TEST(mutations_never_crash)
{
    const char *seeds[] = {small_text,
                           HDR_P "4 4 3\n1 2\n3 4\n4 4\n",
                           "%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n1 1 4\n"
                           "2 1 -5\n3 3 6\n",
                           HDR_K "3 3 2\n2 1 1e-3\n3 1 2.5e+2\n"};
    uint64_t h = 2024;
    char buf[512];
    for (int it = 0; it < 4000; it++) {
        const char *s = seeds[it % 4];
        size_t len = strlen(s);
        memcpy(buf, s, len);
        int edits = 1 + it % 4;
        for (int e = 0; e < edits; e++) {
            h = h * 6364136223846793005ULL + 1442695040888963407ULL;
            size_t pos = (size_t)((h >> 33) % len);
            static const char alphabet[] = "0123456789 \t\r\n%-+.eE\0x9";
            switch ((h >> 20) % 4) {
            case 0: buf[pos] = alphabet[(h >> 8) % (sizeof alphabet - 1)]; break;
            case 1: buf[pos] = (char)(h >> 40); break;
            case 2: /* delete */
                memmove(buf + pos, buf + pos + 1, len - pos - 1);
                len--;
                break;
            default: /* duplicate a byte */
                if (len + 1 < sizeof buf) {
                    memmove(buf + pos + 1, buf + pos, len - pos);
                    len++;
                }
            }
        }
        tf_mm_read_options opt = quiet;
        opt.chunk_bytes = 1 + (size_t)(it % 9);
        tf_csr a;
        int st = tf_mm_read_buffer_opt("fuzz.mtx", buf, len, &a, &opt);
        if (st == TF_OK) {
            ck_assert_int_eq(tf_csr_validate(&a), TF_OK);
            tf_csr_free(&a);
        } else {
            ck_assert_ptr_null(strchr(tf_error_message(), '\n'));
            ck_assert_ptr_nonnull(strstr(tf_error_message(), "fuzz.mtx"));
        }
        if (it % 8 == 0) {
            size_t zl;
            char *z = zstd_pack(buf, len, &zl, 0);
            int stz = tf_mm_read_buffer_opt("fuzz.mtx", z, zl, &a, &opt);
            ck_assert_int_eq(stz == TF_OK, st == TF_OK); /* same verdict compressed or not */
            if (stz == TF_OK)
                tf_csr_free(&a);
            free(z);
        }
    }
}
END_TEST

/* ---- progress ----------------------------------------------------------- */

/* Runs a read with stderr redirected to a file and returns what was
 * written there (static buffer). */
static const char *stderr_of_read(const char *path, int progress)
{
    static char out[4096];
    const char *cap = write_tmp(5, ".err", "", 0);
    int saved = dup(2);
    int fd = open(cap, O_WRONLY | O_TRUNC);
    ck_assert_int_ge(fd, 0);
    dup2(fd, 2);
    close(fd);
    tf_mm_read_options opt = quiet;
    opt.progress = progress;
    tf_csr a;
    int st = tf_mm_read(path, &a, &opt);
    dup2(saved, 2);
    close(saved);
    ck_assert_int_eq(st, TF_OK);
    tf_csr_free(&a);
    FILE *f = fopen(cap, "rb");
    size_t n = fread(out, 1, sizeof out - 1, f);
    fclose(f);
    out[n] = '\0';
    return out;
}

START_TEST(progress_only_when_asked_or_on_a_terminal)
{
    const char *path = write_tmp(0, ".mtx", small_text, strlen(small_text));
    /* Forced on: a \r-updated line naming the file, erased at the end. */
    const char *err = stderr_of_read(path, 1);
    ck_assert_msg(err[0] == '\r', "progress output '%s'", err);
    ck_assert_ptr_nonnull(strstr(err, "reading "));
    ck_assert_ptr_nonnull(strstr(err, "%"));
    ck_assert_ptr_null(strchr(err, '\n'));
    size_t n = strlen(err);
    ck_assert(n > 2 && err[n - 1] == '\r' && err[n - 2] == ' ');
    /* Off, and auto with stderr not a terminal: silent. */
    ck_assert_str_eq(stderr_of_read(path, 0), "");
    ck_assert_str_eq(stderr_of_read(path, -1), "");
}
END_TEST

/* ---- the pieces: header, blocks of lines, entry parsing ------------------ */

START_TEST(header_alone)
{
    const char *text = "\xEF\xBB\xBF" "%%MatrixMarket matrix coordinate integer Symmetric\n"
                       "% a comment\r\n\n4 4 2\n2 1 7\n4 4 1\n";
    const char *path = write_tmp(0, ".mtx", text, strlen(text));
    tf_mm_header h;
    ck_assert_int_eq(tf_mm_read_header(path, &h), TF_OK);
    ck_assert_int_eq(h.m, 4);
    ck_assert_int_eq(h.n, 4);
    ck_assert_int_eq(h.declared, 2);
    ck_assert_int_eq(h.field, TF_MM_INTEGER);
    ck_assert_int_eq(h.symmetry, TF_MM_SYMMETRIC);
    ck_assert_int_eq(h.compression, TF_MM_PLAIN);
    ck_assert_int_eq(h.file_size, (int64_t)strlen(text));
    ck_assert_int_eq(h.data_offset, (int64_t)(strstr(text, "2 1 7") - text));
    ck_assert_int_eq(h.data_line, 4);
    /* The size line as the unterminated last line. */
    const char *only = "%%MatrixMarket matrix coordinate real general\n3 3 0";
    path = write_tmp(1, ".mtx", only, strlen(only));
    ck_assert_int_eq(tf_mm_read_header(path, &h), TF_OK);
    ck_assert_int_eq(h.data_offset, (int64_t)strlen(only));
    ck_assert_int_eq(h.data_line, 2);
    /* Compressed: recognised, and the header's errors are the reader's. */
    size_t zl;
    char *z = zstd_pack(text, strlen(text), &zl, 0);
    ck_assert_int_eq(tf_mm_read_header(write_tmp(2, ".mtx.zst", z, zl), &h), TF_OK);
    ck_assert_int_eq(h.compression, TF_MM_ZSTD);
    free(z);
    const char *bad = "%%MatrixMarket matrix coordinate real general\n% only comments\n";
    path = write_tmp(3, ".mtx", bad, strlen(bad));
    ck_assert_int_eq(tf_mm_read_header(path, &h), TF_ERR_PARSE);
    assert_msg(path, 3, "expected the size line");
}
END_TEST

START_TEST(parse_lines_with_true_line_numbers)
{
    tf_mm_header h = {.m = 3, .n = 3, .declared = 2, .field = TF_MM_REAL,
                      .symmetry = TF_MM_SYMMETRIC};
    tf_coo coo;
    ck_assert_int_eq(tf_coo_init(&coo, 3, 3, 0), TF_OK);
    int64_t seen = 0, err = -1;
    const char *t = "2 1 5\r\n% note\n\n3 3 1.5\n";
    ck_assert_int_eq(tf_mm_parse_lines("f.mtx", &h, t, strlen(t), 10, 1, &seen, &coo, &err),
                     TF_OK);
    ck_assert_int_eq(seen, 2);
    ck_assert_int_eq(err, 0);
    ck_assert_int_eq(coo.n, 3); /* (2,1) mirrored, (3,3) not */
    ck_assert(coo.row[0] == 1 && coo.col[0] == 0 && coo.val[0] == 5.0);
    ck_assert(coo.row[1] == 0 && coo.col[1] == 1 && coo.val[1] == 5.0);
    ck_assert(coo.row[2] == 2 && coo.col[2] == 2 && coo.val[2] == 1.5);
    /* One entry too many, at the line where it is. */
    const char *more = "\n1 1 2\n";
    ck_assert_int_eq(tf_mm_parse_lines("f.mtx", &h, more, strlen(more), 20, 1, &seen, &coo,
                                       &err), TF_ERR_PARSE);
    ck_assert_int_eq(err, 21);
    assert_msg("f.mtx", 21, "more entries than the 2 declared");
    /* Without the check the count just goes on. */
    ck_assert_int_eq(tf_mm_parse_lines("f.mtx", &h, more, strlen(more), 20, 0, &seen, &coo,
                                       &err), TF_OK);
    ck_assert_int_eq(seen, 3);
    /* Errors name the true line; entries before it stay. */
    const char *bad = "3 2 1\n1 2 1\n";
    int64_t n0 = coo.n;
    ck_assert_int_eq(tf_mm_parse_lines("f.mtx", &h, bad, strlen(bad), 100, 0, &seen, &coo,
                                       &err), TF_ERR_PARSE);
    ck_assert_int_eq(err, 101);
    assert_msg("f.mtx", 101, "above the diagonal");
    ck_assert_int_eq(coo.n, n0 + 2);
    /* Only complete lines. */
    ck_assert_int_eq(tf_mm_parse_lines("f.mtx", &h, "1 1 1", 5, 1, 0, &seen, &coo, &err),
                     TF_ERR_ARG);
    /* The count of lines consumed is every newline: entries, comments, blank
     * lines, CRLF alike (the distributed reader numbers its next block with it). */
    int64_t lines = -1;
    const char *mix = "1 1 1\r\n% c\n\n\r\n2 2 2\n%\n3 3 3\n";
    ck_assert_int_eq(tf_mm_parse_lines_counted("f.mtx", &h, mix, strlen(mix), 7, 0, &seen, &coo,
                                               &err, &lines),
                     TF_OK);
    ck_assert_int_eq(lines, 7);
    ck_assert_int_eq(tf_mm_parse_lines_counted("f.mtx", &h, "", 0, 7, 0, &seen, &coo, &err,
                                               &lines),
                     TF_OK);
    ck_assert_int_eq(lines, 0);
    tf_coo_free(&coo);
}
END_TEST

START_TEST(stream_blocks_are_the_text_after_the_header)
{
    const char *text = HDR_R "% c\n3 3 4\n1 1 1\n\n% mid\n2 2 2\n3 3 3.25\r\n1 3 -1";
    size_t zl, gl;
    char *z = zstd_pack(text, strlen(text), &zl, 1), *g = gzip_pack(text, strlen(text), &gl);
    const char *paths[3] = {write_tmp(0, ".mtx", text, strlen(text)),
                            write_tmp(1, ".mtx.zst", z, zl), write_tmp(2, ".mtx.gz", g, gl)};
    const char *after = strstr(text, "1 1 1");
    for (int k = 0; k < 3; k++) {
        /* sw: the blocks change size after the header (a header read in
         * small blocks, the entries in large ones, or the other way). */
        for (int run = 0; run < 8; run++) {
            int sw = run / 4;
            size_t chunk = (size_t)1 << (2 * (run % 4));
            tf_mm_header h;
            tf_mm_stream *s;
            ck_assert_int_eq(tf_mm_stream_open(paths[k], chunk, &h, &s), TF_OK);
            ck_assert_int_eq(h.data_line, 3);
            if (sw)
                tf_mm_stream_set_chunk(s, 65 - chunk);
            char got[256] = "";
            size_t n = 0;
            int64_t expect_line = 4;
            for (;;) {
                const char *t;
                size_t len;
                int64_t first;
                ck_assert_int_eq(tf_mm_stream_next(s, &t, &len, &first), TF_OK);
                ck_assert_int_eq(first, expect_line);
                if (!len)
                    break;
                ck_assert(t[len - 1] == '\n');
                for (size_t i = 0; i < len; i++)
                    expect_line += t[i] == '\n';
                ck_assert_uint_lt(n + len, sizeof got);
                memcpy(got + n, t, len);
                n += len;
            }
            tf_mm_stream_close(s);
            /* The last line gets its newline. */
            ck_assert_uint_eq(n, strlen(after) + 1);
            ck_assert(memcmp(got, after, n - 1) == 0 && got[n - 1] == '\n');
            ck_assert_int_eq(expect_line, 10);
        }
    }
    free(z);
    free(g);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("mm_read");
    TCase *tc = tcase_create("mm_read");
    tcase_set_timeout(tc, 120); /* the mutation and flip loops, under ASan */
    tcase_add_test(tc, real_general_rectangular_with_duplicates);
    tcase_add_test(tc, integer_and_pattern_fields);
    tcase_add_test(tc, symmetric_is_expanded);
    tcase_add_test(tc, skew_symmetric_is_expanded_with_negation);
    tcase_add_test(tc, lenient_layout);
    tcase_add_test(tc, duplicates_sum_in_double);
    tcase_add_test(tc, values_are_correctly_rounded);
    tcase_add_test(tc, roundtrip_every_chunk_size_and_compression);
    tcase_add_test(tc, large_file_default_chunks);
    tcase_add_test(tc, concatenated_frames_and_members);
    tcase_add_test(tc, cora_shipped_graph);
    tcase_add_test(tc, entry_counts_are_64_bit_and_bounded);
    tcase_add_test(tc, declared_rows_bounded_by_available_memory);
    tcase_add_test(tc, reads_from_a_pipe);
    tcase_add_test(tc, bad_banner);
    tcase_add_test(tc, bad_size_line);
    tcase_add_test(tc, entry_count_mismatch);
    tcase_add_test(tc, bad_indices);
    tcase_add_test(tc, bad_values);
    tcase_add_test(tc, bad_token_counts);
    tcase_add_test(tc, bad_triangles);
    tcase_add_test(tc, binary_and_long_lines);
    tcase_add_test(tc, io_errors);
    tcase_add_test(tc, truncated_and_corrupt_zstd);
    tcase_add_test(tc, truncated_and_corrupt_gzip);
    tcase_add_test(tc, mutations_never_crash);
    tcase_add_test(tc, progress_only_when_asked_or_on_a_terminal);
    tcase_add_test(tc, header_alone);
    tcase_add_test(tc, parse_lines_with_true_line_numbers);
    tcase_add_test(tc, stream_blocks_are_the_text_after_the_header);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tf_test_run_serial(suite()); }
