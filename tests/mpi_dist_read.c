/* tf_dist_read at every rank count run_tests uses: the bands equal the
 * serial reader's matrix row-sliced, bitwise, for every Matrix Market
 * variant (general, symmetric, skew, pattern, integer, values all 1 but on
 * the last rank (held without values elsewhere), duplicates summed in
 * file order, comments and blank lines between entries, CRLF, no final
 * newline, fewer lines than ranks), with tiny blocks and exchange rounds so
 * that every boundary is crossed, for gzip and zstd input, and for HDF5 CSR
 * input; failures give every rank the serial reader's message (true line
 * numbers, found by any rank), including a file missing on one rank only
 * and malformed HDF5 CSR files. Inputs are generated here. */
#include "tf_test.h"
#include "tf_dcsr.h"
#include "tf_dist_read.h"
#include "tf_error.h"
#include "tf_h5csr.h"
#include "tf_mm_read.h"

#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

static int g_rank, g_size;

static int all_true(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

static int same_message_everywhere(const char *msg)
{
    char mine[1024], first[1024];
    snprintf(mine, sizeof mine, "%s", msg);
    memcpy(first, mine, sizeof first);
    MPI_Bcast(first, sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    return all_true(strcmp(first, mine) == 0);
}

/* ---- text building ------------------------------------------------------ */

typedef struct {
    char *s;
    size_t n, cap;
} sbuf;

__attribute__((format(printf, 2, 3))) static void put(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if ((size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        b->cap = b->cap * 2 + (size_t)k + 64;
        b->s = realloc(b->s, b->cap);
        ck_assert_ptr_nonnull(b->s);
    }
}

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* G_ONES: real values, all 1 but the last few entries, so that the first
 * ranks hold their entries without values and the last one gets some. */
enum { G_GENERAL, G_SYMMETRIC, G_SKEW, G_PATTERN, G_INTEGER, G_ONES };
static const char *const field_of[] = {"real", "real", "real", "pattern", "integer", "real"};
static const char *const sym_of[] = {"general", "symmetric", "skew-symmetric", "general",
                                     "general", "general"};

/* A file of `kind` with `entries` entries (many duplicates, values with 17
 * significant digits so that summing order shows), comment and blank lines
 * between entries, CRLF on some lines, optionally no final newline. */
static char *gen(int kind, int64_t m, int64_t n, int64_t entries, uint64_t seed, int final_nl,
                 size_t *len)
{
    sbuf b = {0};
    if (kind != G_GENERAL && kind != G_PATTERN && kind != G_INTEGER && kind != G_ONES)
        n = m;
    put(&b, "%%%%MatrixMarket matrix coordinate %s %s\n%% made by mpi_dist_read\n",
        field_of[kind], sym_of[kind]);
    put(&b, "%lld %lld %lld\n", (long long)m, (long long)n, (long long)entries);
    uint64_t s = seed * 2654435761u + 1;
    for (int64_t e = 0; e < entries; e++) {
        int64_t i = (int64_t)(rng(&s) % (uint64_t)m) + 1, j = (int64_t)(rng(&s) % (uint64_t)n) + 1;
        if (kind == G_SYMMETRIC && j > i) {
            int64_t t = i;
            i = j;
            j = t;
        }
        if (kind == G_SKEW) {
            if (i == j)
                i = i % m + 1;
            if (j > i) {
                int64_t t = i;
                i = j;
                j = t;
            }
        }
        if (rng(&s) % 7 == 0)
            put(&b, rng(&s) % 2 ? "%% comment %lld\n" : "\n", (long long)e);
        if (kind == G_PATTERN)
            put(&b, "%lld %lld", (long long)i, (long long)j);
        else if (kind == G_ONES)
            put(&b, "%lld %lld %s", (long long)i, (long long)j,
                e + 3 < entries ? "1" : "0.1");
        else if (kind == G_INTEGER)
            put(&b, "%lld\t%lld  %lld", (long long)i, (long long)j,
                (long long)(rng(&s) % 2001) - 1000);
        else
            put(&b, "%lld %lld %.17g", (long long)i, (long long)j,
                ((double)(rng(&s) % 2000001) - 1e6) / 3e3);
        int last = e + 1 == entries;
        if (!last || final_nl)
            put(&b, rng(&s) % 5 == 0 ? "\r\n" : "\n");
    }
    *len = b.n;
    return b.s;
}

/* ---- files shared by the ranks ------------------------------------------- */

static const char *shared_path(int slot, const char *suffix)
{
    static char paths[8][512];
    char *p = paths[slot & 7];
    snprintf(p, sizeof paths[0], "%s/tf_mpi_dist_read_%d_%d%s",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid(), slot, suffix);
    MPI_Bcast(p, sizeof paths[0], MPI_CHAR, 0, MPI_COMM_WORLD);
    return p;
}

/* Rank 0 writes; every rank returns the same path once it is there. */
static const char *share(int slot, const char *suffix, const char *data, size_t len)
{
    const char *p = shared_path(slot, suffix);
    if (g_rank == 0) {
        FILE *f = fopen(p, "wb");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(data, 1, len, f), len);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return p;
}

static void unshare(const char *p)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0)
        remove(p);
}

static char *zstd_pack(const char *src, size_t len, size_t *outlen)
{
    size_t cap = ZSTD_compressBound(len);
    char *dst = malloc(cap);
    size_t k = ZSTD_compress(dst, cap, src, len, 3);
    ck_assert(!ZSTD_isError(k));
    *outlen = k;
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

/* ---- comparison ----------------------------------------------------------- */

/* The ranks' bands follow one another in rank order and cover the rows of
 * a, and d is exactly its band's rows of a. Collective. */
static int same_band(const tf_dcsr *d, const tf_csr *a)
{
    int64_t mine[2] = {d->row0, d->nrows}, *all = malloc((size_t)g_size * 2 * sizeof *all);
    ck_assert_ptr_nonnull(all);
    MPI_Allgather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, MPI_COMM_WORLD);
    int64_t end = 0;
    int ok = 1;
    for (int q = 0; q < g_size; q++) {
        if (all[2 * q + 1] < 0 || (all[2 * q + 1] > 0 && all[2 * q] != end))
            ok = 0;
        if (all[2 * q + 1] > 0)
            end = all[2 * q] + all[2 * q + 1];
    }
    free(all);
    int64_t r0 = d->row0, r1 = d->row0 + d->nrows;
    if (!ok || end != a->nrows || d->m != a->nrows || d->n != a->ncols ||
        d->nnz_total != a->nnz || r0 < 0 || r1 > a->nrows || d->loc.nrows != r1 - r0 ||
        d->loc.ncols != a->ncols)
        return 0;
    int64_t k0 = a->rowptr[r0], nnz = a->rowptr[r1] - k0;
    if (d->loc.nnz != nnz || d->loc.rowptr[0] != 0)
        return 0;
    for (int64_t i = 0; i <= r1 - r0; i++)
        if (d->loc.rowptr[i] != a->rowptr[r0 + i] - k0)
            return 0;
    return nnz == 0 || (memcmp(d->loc.col, a->col + k0, (size_t)nnz * sizeof *a->col) == 0 &&
                        memcmp(d->loc.val, a->val + k0, (size_t)nnz * sizeof *a->val) == 0);
}

/* The distributed read of `path` equals the serial read, with several block
 * and round sizes. chunk: the serial reader's chunk (only decoder error
 * positions depend on it). */
static void check_equal(const char *path)
{
    tf_csr a;
    ck_assert_msg(tf_mm_read(path, &a, NULL) == TF_OK, "%s", tf_error_message());
    static const tf_dist_read_options opts[] = {{0, 0, 0}, {7, 3, 0}, {64, 1, 0}, {1000, 50, 0}};
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        tf_dcsr d;
        int st = tf_dist_read_opt(MPI_COMM_WORLD, path, &d, &opts[k]);
        ck_assert_msg(all_true(st == TF_OK), "rank %d: %s", g_rank, tf_error_message());
        ck_assert_msg(all_true(same_band(&d, &a)), "block %zu round %lld: band differs",
                      opts[k].block_bytes, (long long)opts[k].round_entries);
        tf_dcsr_free(&d);
    }
    tf_csr_free(&a);
}

START_TEST(every_variant_equals_the_serial_read)
{
    static const struct {
        int kind;
        int64_t m, n, entries;
        int final_nl;
    } cases[] = {
        {G_GENERAL, 37, 29, 400, 1},  {G_GENERAL, 37, 29, 400, 0},
        {G_SYMMETRIC, 31, 31, 300, 1}, {G_SKEW, 23, 23, 200, 1},
        {G_PATTERN, 40, 17, 250, 0},  {G_INTEGER, 19, 50, 300, 1},
        {G_ONES, 23, 19, 400, 1},     /* duplicates of 1 and 0.1 */
        {G_GENERAL, 3, 3, 2, 1},      /* fewer lines than ranks: empty ranges */
        {G_GENERAL, 5, 4, 0, 1},      /* no entries at all */
        {G_GENERAL, 2, 9, 1, 0},      /* one entry, no final newline */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t len;
        char *t = gen(cases[c].kind, cases[c].m, cases[c].n, cases[c].entries, c + 1,
                      cases[c].final_nl, &len);
        const char *p = share(0, ".mtx", t, len);
        check_equal(p);
        unshare(p);
        free(t);
    }
}
END_TEST

static void h5_from_text(const char *text_path, const char *h5_path, int index_bytes,
                         int value_bytes);

/* A plain file's bands follow its entries, and so do an HDF5 CSR file's: a
 * rank holds about a Q-th of the weight (entries plus rows), within a bin
 * of rows (two heavy rows here), where equal blocks of rows would give the
 * first rank most of the entries (more than TF_DIST_BOUNDS_EXCESS over its
 * share at every Q > 1). */
START_TEST(plain_read_balances_entries)
{
    const int64_t m = 200, n = 2000, heavy = 8, per = 1200;
    sbuf b = {0};
    int64_t nnz = heavy * per + (m - heavy);
    put(&b, "%%%%MatrixMarket matrix coordinate real general\n%lld %lld %lld\n", (long long)m,
        (long long)n, (long long)nnz);
    for (int64_t i = 0; i < heavy; i++)
        for (int64_t j = 0; j < per; j++)
            put(&b, "%lld %lld %lld.5\n", (long long)i + 1, (long long)j + 1, (long long)j);
    for (int64_t i = heavy; i < m; i++)
        put(&b, "%lld %lld 1\n", (long long)i + 1, (long long)(m - i));
    const char *p = share(0, ".mtx", b.s, b.n);
    const char *q = shared_path(6, ".h5");
    h5_from_text(p, q, 4, 8);
    MPI_Barrier(MPI_COMM_WORLD);
    tf_csr a;
    ck_assert_int_eq(tf_mm_read(p, &a, NULL), TF_OK);
    const char *paths[2] = {p, q};
    for (int k = 0; k < 2; k++) {
        tf_dcsr d;
        int st = tf_dist_read(MPI_COMM_WORLD, paths[k], &d);
        ck_assert_msg(all_true(st == TF_OK), "%s", tf_error_message());
        ck_assert(all_true(same_band(&d, &a)));
        int64_t weight = d.loc.nnz + d.nrows, total = nnz + m;
        ck_assert_msg(all_true(weight <= total / g_size + 2 * (per + 1)),
                      "%s: rank %d holds %lld of %lld (entries and rows) over %d ranks",
                      paths[k], g_rank, (long long)weight, (long long)total, g_size);
        tf_dcsr_free(&d);
    }
    tf_csr_free(&a);
    unshare(p);
    unshare(q);
    free(b.s);
}
END_TEST

START_TEST(compressed_input_equals_the_serial_read)
{
    size_t len, zl, gl;
    char *t = gen(G_SYMMETRIC, 41, 41, 500, 99, 1, &len);
    char *z = zstd_pack(t, len, &zl), *g = gzip_pack(t, len, &gl);
    const char *pz = share(1, ".mtx.zst", z, zl);
    check_equal(pz);
    const char *pg = share(2, ".mtx.gz", g, gl);
    check_equal(pg);
    unshare(pz);
    unshare(pg);
    free(t);
    free(z);
    free(g);
}
END_TEST

/* ---- errors --------------------------------------------------------------- */

/* The distributed read of `text` (optionally compressed) fails on every
 * rank with the serial reader's status and message. */
static void check_same_failure(const char *text, size_t len, int compress, size_t block)
{
    size_t wl = len;
    char *w = compress == 1 ? zstd_pack(text, len, &wl)
              : compress == 2 ? gzip_pack(text, len, &wl)
                              : NULL;
    const char *p = share(3, compress == 1 ? ".mtx.zst" : compress == 2 ? ".mtx.gz" : ".mtx",
                          w ? w : text, wl);
    tf_csr a;
    tf_mm_read_options ro = {0, 0, block, 0};
    int serial = tf_mm_read(p, &a, &ro);
    ck_assert_int_ne(serial, TF_OK);
    char want[1024];
    snprintf(want, sizeof want, "%s", tf_error_message());
    tf_dist_read_options o = {block, 5, 0};
    tf_dcsr d;
    int st = tf_dist_read_opt(MPI_COMM_WORLD, p, &d, &o);
    ck_assert_msg(all_true(st == serial), "rank %d: status %d, expected %d (%s)", g_rank, st,
                  serial, tf_error_message());
    ck_assert_msg(all_true(strcmp(tf_error_message(), want) == 0),
                  "rank %d: message '%s', expected '%s'", g_rank, tf_error_message(), want);
    ck_assert(d.loc.rowptr == NULL && d.m == 0);
    unshare(p);
    free(w);
}

/* Replaces entry line `which` (0-based among entry lines) by `bad`. */
static char *spoil(const char *t, size_t len, int64_t which, const char *bad, size_t *outlen)
{
    sbuf b = {0};
    int64_t line = 0, entry = -3; /* banner, comment, size line */
    const char *p = t, *e = t + len;
    while (p < e) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        const char *le = nl ? nl + 1 : e;
        int is_entry = *p != '%' && *p != '\n' && *p != '\r';
        if (entry >= 0 || line < 3) {
            if (line >= 3 && !is_entry) {
                put(&b, "%.*s", (int)(le - p), p);
                p = le;
                line++;
                continue;
            }
        }
        if (entry == which)
            put(&b, "%s\n", bad);
        else
            put(&b, "%.*s", (int)(le - p), p);
        entry++;
        line++;
        p = le;
    }
    *outlen = b.n;
    return b.s;
}

START_TEST(errors_carry_the_true_line_from_any_rank)
{
    size_t len, bl;
    char *t = gen(G_GENERAL, 30, 30, 300, 5, 1, &len);
    /* Late in the file: found by the last rank at every Q. */
    char *b = spoil(t, len, 280, "12 x 1.0", &bl);
    check_same_failure(b, bl, 0, 0);
    check_same_failure(b, bl, 0, 13);
    check_same_failure(b, bl, 1, 0);
    check_same_failure(b, bl, 2, 64);
    free(b);
    /* Two bad lines: the earlier one wins whichever rank finds it. */
    b = spoil(t, len, 150, "1 99 2.0", &bl);
    char *b2 = spoil(b, bl, 290, "3 3 nan", &bl);
    check_same_failure(b2, bl, 0, 0);
    check_same_failure(b2, bl, 2, 0);
    free(b);
    free(b2);
    /* More entries than declared, and too few. */
    sbuf s = {0};
    put(&s, "%%%%MatrixMarket matrix coordinate real general\n4 4 3\n1 1 1\n%% c\n2 2 2\n\n"
            "3 3 3\n4 4 4\n1 2 5\n");
    check_same_failure(s.s, s.n, 0, 0);
    check_same_failure(s.s, s.n, 0, 5);
    check_same_failure(s.s, s.n, 1, 0);
    s.n = 0;
    put(&s, "%%%%MatrixMarket matrix coordinate real general\n4 4 9\n1 1 1\n%% c\n2 2 2\n\n"
            "3 3 3\n4 4 4\n1 2 5");
    check_same_failure(s.s, s.n, 0, 0);
    check_same_failure(s.s, s.n, 0, 4);
    check_same_failure(s.s, s.n, 2, 0);
    /* Header problems (found by rank 0 alone). */
    s.n = 0;
    put(&s, "%%%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n");
    check_same_failure(s.s, s.n, 0, 0);
    s.n = 0;
    put(&s, "%%%%MatrixMarket matrix coordinate real symmetric\n3 3 1\n1 2 1\n");
    check_same_failure(s.s, s.n, 0, 0);
    free(s.s);
    free(t);
}
END_TEST

START_TEST(truncated_compressed_input)
{
    size_t len, zl, gl;
    /* 60 x 60 holds the 2000 entries: a smaller matrix fails at its size
     * line, before any stream damage is met. */
    char *t = gen(G_GENERAL, 60, 60, 2000, 7, 1, &len);
    char *z = zstd_pack(t, len, &zl), *g = gzip_pack(t, len, &gl);
    for (size_t block = 0; block <= 512; block += 512) {
        const char *pz = share(4, ".mtx.zst", z, zl * 2 / 3);
        tf_csr a;
        tf_mm_read_options ro = {0, 0, block, 0};
        int serial = tf_mm_read(pz, &a, &ro);
        ck_assert_int_eq(serial, TF_ERR_IO);
        char want[1024];
        snprintf(want, sizeof want, "%s", tf_error_message());
        tf_dist_read_options o = {block, 0, 0};
        tf_dcsr d;
        int st = tf_dist_read_opt(MPI_COMM_WORLD, pz, &d, &o);
        ck_assert(all_true(st == TF_ERR_IO));
        ck_assert_msg(all_true(strcmp(tf_error_message(), want) == 0), "'%s' vs '%s'",
                      tf_error_message(), want);
        unshare(pz);
    }
    /* A stream that decodes well past its header before it fails (gzip cut
     * short; bytes after the last zstd frame or gzip member): rank 0 must
     * hand out the lines it has decoded before it meets the damage, so that
     * the failure names the line the serial reader reaches, with 1 MiB
     * blocks as with small ones. */
    char *zg = malloc(zl + 8), *gg = malloc(gl + 8);
    ck_assert(zg && gg);
    memcpy(zg, z, zl);
    memcpy(zg + zl, "garbage\n", 8);
    memcpy(gg, g, gl);
    memcpy(gg + gl, "garbage\n", 8);
    for (size_t block = 0; block <= 512; block += 512) {
        check_same_failure(g, gl - 12, 0, block);
        check_same_failure(zg, zl + 8, 0, block);
        check_same_failure(gg, gl + 8, 0, block);
    }
    free(zg);
    free(gg);
    /* A truncated plain file: too few entries, named at its last line. */
    check_same_failure(t, len / 2, 0, 0);
    check_same_failure(g, gl - 20, 0, 0); /* a gzip stream cut short */
    free(t);
    free(z);
    free(g);
}
END_TEST

START_TEST(missing_on_one_rank_only)
{
    size_t len;
    char *t = gen(G_GENERAL, 10, 10, 30, 3, 1, &len);
    size_t zl;
    char *z = zstd_pack(t, len, &zl);
    for (int compressed = 0; compressed < 2; compressed++) {
        const char *p = compressed ? share(5, ".mtx.zst", z, zl) : share(5, ".mtx", t, len);
        char mine[600];
        snprintf(mine, sizeof mine, "%s%s", p, g_rank == g_size - 1 ? ".not-here" : "");
        tf_dcsr d;
        int st = tf_dist_read(MPI_COMM_WORLD, mine, &d);
        ck_assert(all_true(st == TF_ERR_IO));
        ck_assert_msg(strstr(tf_error_message(), "cannot open") &&
                          strstr(tf_error_message(), ".not-here"),
                      "%s", tf_error_message());
        ck_assert(same_message_everywhere(tf_error_message()));
        unshare(p);
    }
    free(t);
    free(z);
}
END_TEST

/* ---- HDF5 CSR -------------------------------------------------------------- */

/* Writes the CSR arrays of a generated file with its rows' entries in file
 * order (unsorted, duplicates kept): the HDF5 read must then equal the text
 * read bitwise. */
static void h5_from_text(const char *text_path, const char *h5_path, int index_bytes,
                         int value_bytes)
{
    if (g_rank != 0)
        return;
    tf_mm_header h;
    tf_mm_stream *s;
    ck_assert_int_eq(tf_mm_stream_open(text_path, 0, &h, &s), TF_OK);
    tf_coo coo;
    ck_assert_int_eq(tf_coo_init(&coo, h.m, h.n, 16), TF_OK);
    const char *txt;
    size_t len;
    int64_t first, seen = 0, err;
    while (tf_mm_stream_next(s, &txt, &len, &first) == TF_OK && len)
        ck_assert_int_eq(tf_mm_parse_lines("x", &h, txt, len, first, 1, &seen, &coo, &err), TF_OK);
    tf_mm_stream_close(s);
    int64_t *ptr = calloc((size_t)h.m + 1, sizeof *ptr), *pos = calloc((size_t)h.m + 1, 8);
    int64_t *i64 = malloc((size_t)(coo.n + 1) * 8);
    int32_t *i32 = malloc((size_t)(coo.n + 1) * 4);
    double *v64 = malloc((size_t)(coo.n + 1) * 8);
    float *v32 = malloc((size_t)(coo.n + 1) * 4);
    for (int64_t e = 0; e < coo.n; e++)
        ptr[coo.row[e] + 1]++;
    for (int64_t i = 0; i < h.m; i++)
        ptr[i + 1] += ptr[i];
    memcpy(pos, ptr, (size_t)h.m * 8);
    for (int64_t e = 0; e < coo.n; e++) {
        int64_t k = pos[coo.row[e]]++;
        i64[k] = i32[k] = coo.col[e];
        v64[k] = coo.val[e];
        v32[k] = (float)coo.val[e];
    }
    const void *vals = value_bytes == 8 ? (void *)v64 : value_bytes == 4 ? (void *)v32 : NULL;
    ck_assert_msg(tf_h5csr_write(h5_path, h.m, h.n, ptr, index_bytes == 8 ? (void *)i64 : (void *)i32,
                                 index_bytes, vals, value_bytes) == TF_OK,
                  "%s", tf_error_message());
    tf_coo_free(&coo);
    free(ptr);
    free(pos);
    free(i64);
    free(i32);
    free(v64);
    free(v32);
}

START_TEST(hdf5_csr_equals_the_text_read)
{
    static const struct {
        int kind, index_bytes, value_bytes;
    } cases[] = {{G_GENERAL, 4, 8}, {G_SYMMETRIC, 8, 8}, {G_PATTERN, 4, 0}, {G_INTEGER, 8, 4}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t len;
        char *t = gen(cases[c].kind, 33, 21, 300, 40 + c, 1, &len);
        const char *p = share(0, ".mtx", t, len);
        const char *q = shared_path(6, ".h5");
        h5_from_text(p, q, cases[c].index_bytes, cases[c].value_bytes);
        MPI_Barrier(MPI_COMM_WORLD);
        tf_csr a, b;
        ck_assert_int_eq(tf_mm_read(p, &a, NULL), TF_OK);
        /* float32 data was rounded once already: same result, since the
         * text read rounds once too, only for non-duplicated entries. */
        ck_assert_msg(tf_h5csr_read(q, &b) == TF_OK, "%s", tf_error_message());
        tf_dcsr d;
        int st = tf_dist_read(MPI_COMM_WORLD, q, &d);
        ck_assert_msg(all_true(st == TF_OK), "%s", tf_error_message());
        ck_assert(all_true(same_band(&d, &b)));
        if (cases[c].value_bytes != 4)
            ck_assert(all_true(same_band(&d, &a)));
        tf_dcsr_free(&d);
        tf_csr_free(&a);
        tf_csr_free(&b);
        unshare(p);
        unshare(q);
        free(t);
    }
}
END_TEST

/* A raw HDF5 CSR file with chosen types and contents. */
static void write_raw(const char *path, hid_t ptr_type, const int64_t *ptr, int64_t m1,
                      hid_t idx_type, const int64_t *idx, int64_t nnz, hid_t val_type,
                      const double *val, int shape_as_dataset, const int64_t shape[2])
{
    if (g_rank != 0)
        return;
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert(f >= 0);
    struct {
        const char *name;
        hid_t type, mem;
        const void *buf;
        int64_t n;
    } ds[3] = {{"indptr", ptr_type, H5T_NATIVE_INT64, ptr, m1},
               {"indices", idx_type, H5T_NATIVE_INT64, idx, nnz},
               {"data", val_type, H5T_NATIVE_DOUBLE, val, nnz}};
    for (int k = 0; k < 3; k++) {
        if (ds[k].type < 0)
            continue;
        hsize_t d = (hsize_t)ds[k].n;
        hid_t sp = H5Screate_simple(1, &d, NULL);
        hid_t x = H5Dcreate2(f, ds[k].name, ds[k].type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        ck_assert(x >= 0);
        ck_assert(H5Dwrite(x, ds[k].mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, ds[k].buf) >= 0);
        H5Dclose(x);
        H5Sclose(sp);
    }
    hsize_t two = 2;
    hid_t sp = H5Screate_simple(1, &two, NULL);
    /* shape_as_dataset: 0 attribute, 1 dataset, 2 both alike, 3 both with
     * the attribute's columns 4 more. */
    if (shape_as_dataset) {
        hid_t x = H5Dcreate2(f, "shape", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dwrite(x, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, shape);
        H5Dclose(x);
    }
    if (shape_as_dataset != 1) {
        const int64_t other[2] = {shape[0], shape[1] + 4};
        hid_t a = H5Acreate2(f, "shape", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT);
        H5Awrite(a, H5T_NATIVE_INT64, shape_as_dataset == 3 ? other : shape);
        H5Aclose(a);
    }
    H5Sclose(sp);
    H5Fclose(f);
}

static void expect_h5_failure(const char *path, int status, const char *what)
{
    MPI_Barrier(MPI_COMM_WORLD);
    tf_csr a;
    int serial = tf_h5csr_read(path, &a);
    ck_assert_int_eq(serial, status);
    char want[1024];
    snprintf(want, sizeof want, "%s", tf_error_message());
    ck_assert_msg(strstr(want, what) && strstr(want, path), "'%s' should name '%s'", want, what);
    tf_dcsr d;
    int st = tf_dist_read(MPI_COMM_WORLD, path, &d);
    ck_assert(all_true(st == status));
    ck_assert_msg(all_true(strcmp(tf_error_message(), want) == 0), "'%s' vs '%s'",
                  tf_error_message(), want);
}

START_TEST(hdf5_csr_errors)
{
    /* 6 x 5, rows of 1, 0, 2, 1, 0, 2 entries; unsorted with a duplicate. */
    const int64_t shape[2] = {6, 5};
    int64_t ptr[7] = {0, 1, 1, 3, 4, 4, 6};
    int64_t idx[6] = {4, 2, 0, 3, 1, 1};
    double val[6] = {1, 2, 3, 4, 0.5, 0.25};
    const char *p = shared_path(7, ".h5");
    /* Good, with shape as a dataset, an int32 shape attribute, or both
     * saying the same. */
    for (int sd = 0; sd < 3; sd++) {
        write_raw(p, H5T_STD_I64LE, ptr, 7, H5T_STD_I32LE, idx, 6, H5T_IEEE_F32LE, val, sd, shape);
        MPI_Barrier(MPI_COMM_WORLD);
        tf_dcsr d;
        ck_assert(all_true(tf_dist_read(MPI_COMM_WORLD, p, &d) == TF_OK));
        int64_t nnz = d.nnz_total;
        ck_assert_int_eq(nnz, 5); /* the duplicate (5, 1) summed */
        if (d.row0 <= 5 && 5 < d.row0 + d.nrows) {
            int64_t k = d.loc.rowptr[5 - d.row0];
            ck_assert_int_eq(d.loc.col[k], 1);
            ck_assert(d.loc.val[k] == 0.75f);
        }
        if (d.row0 <= 2 && 2 < d.row0 + d.nrows) {
            int64_t k = d.loc.rowptr[2 - d.row0];
            ck_assert(d.loc.col[k] == 0 && d.loc.col[k + 1] == 2); /* sorted */
        }
        tf_dcsr_free(&d);
    }
    write_raw(p, H5T_STD_I64LE, ptr, 7, H5T_STD_I32LE, idx, 6, H5T_IEEE_F32LE, val, 3, shape);
    expect_h5_failure(p, TF_ERR_FORMAT,
                      "the 'shape' attribute (6 x 9) and the 'shape' dataset (6 x 5) disagree");
    write_raw(p, H5T_STD_I64LE, ptr, 7, H5T_IEEE_F64LE, idx, 6, -1, val, 0, shape);
    expect_h5_failure(p, TF_ERR_FORMAT, "dataset 'indices' holds float64, expected int32 or int64");
    write_raw(p, H5T_STD_U64LE, ptr, 7, H5T_STD_I64LE, idx, 6, -1, val, 0, shape);
    expect_h5_failure(p, TF_ERR_FORMAT, "dataset 'indptr' holds uint64, expected int64");
    write_raw(p, H5T_STD_I64LE, ptr, 7, H5T_STD_I64LE, idx, 6, H5T_STD_I32LE, val, 0, shape);
    expect_h5_failure(p, TF_ERR_FORMAT, "dataset 'data' holds int32, expected float32 or float64");
    write_raw(p, H5T_STD_I64LE, ptr, 6, H5T_STD_I64LE, idx, 6, -1, val, 0, shape);
    expect_h5_failure(p, TF_ERR_FORMAT, "'indptr' has 6 entries, expected rows + 1 = 7");
    int64_t bad[7] = {0, 1, 3, 2, 4, 4, 6}; /* decreases after row 2 */
    write_raw(p, H5T_STD_I64LE, bad, 7, H5T_STD_I64LE, idx, 6, -1, val, 0, shape);
    expect_h5_failure(p, TF_ERR_FORMAT, "indptr[3] = 2 < indptr[2] = 3");
    int64_t past_end[7] = {0, 1, 1, 3, 9, 9, 6}; /* past 'indices' at row 3 */
    write_raw(p, H5T_STD_I64LE, past_end, 7, H5T_STD_I64LE, idx, 6, -1, val, 0, shape);
    expect_h5_failure(p, TF_ERR_FORMAT, "indptr[4] = 9 (row 3) is past the end of 'indices', 6 entries");
    /* Extreme pointers, which the search for the bands' ends reads too. */
    int64_t huge[7] = {0, 1, INT64_MAX, 3, 4, 4, 6};
    write_raw(p, H5T_STD_I64LE, huge, 7, H5T_STD_I64LE, idx, 6, -1, val, 0, shape);
    expect_h5_failure(p, TF_ERR_FORMAT, "indptr[2] = 9223372036854775807 (row 1) is past the end");
    int64_t negative[7] = {0, INT64_MIN, -1, 3, 4, 4, 6};
    write_raw(p, H5T_STD_I64LE, negative, 7, H5T_STD_I64LE, idx, 6, -1, val, 0, shape);
    expect_h5_failure(p, TF_ERR_FORMAT, "indptr[1] = -9223372036854775808 < indptr[0] = 0");
    int64_t short_end[7] = {0, 1, 1, 3, 4, 4, 5};
    write_raw(p, H5T_STD_I64LE, short_end, 7, H5T_STD_I64LE, idx, 6, -1, val, 0, shape);
    expect_h5_failure(p, TF_ERR_FORMAT, "indptr[6] is 5, expected the length of 'indices', 6");
    int64_t bad_idx[6] = {4, 2, 0, 3, 5, 1}; /* column 5 of 5, in row 5 */
    write_raw(p, H5T_STD_I64LE, ptr, 7, H5T_STD_I64LE, bad_idx, 6, -1, val, 0, shape);
    expect_h5_failure(p, TF_ERR_FORMAT, "indices[4] = 5 (row 5) is outside 0..4");
    double nan_val[6] = {1, 2, 3, NAN, 1, 1};
    write_raw(p, H5T_STD_I64LE, ptr, 7, H5T_STD_I64LE, idx, 6, H5T_IEEE_F64LE, nan_val, 0, shape);
    expect_h5_failure(p, TF_ERR_RANGE, "data[3] = nan (row 3) is not a finite");
    unshare(p);
}
END_TEST


/* The 'shape' attribute of an HDF5 CSR file. */
static void write_shape_attr(hid_t f, const int64_t shape[2])
{
    hsize_t two = 2;
    hid_t sp = H5Screate_simple(1, &two, NULL);
    hid_t a = H5Acreate2(f, "shape", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert(a >= 0);
    H5Awrite(a, H5T_NATIVE_INT64, shape);
    H5Aclose(a);
    H5Sclose(sp);
}

/* An HDF5 CSR file of m rows and no entries whose 'indptr' is chunked and
 * never written (its m + 1 zeros are the fill value): a few hundred bytes
 * whatever m. */
static void write_shape_only(const char *path, int64_t m, int64_t n)
{
    if (g_rank == 0) {
        hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        ck_assert(f >= 0);
        hsize_t d = (hsize_t)m + 1, chunk = 1 << 16, zero = 0;
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        ck_assert(H5Pset_chunk(dcpl, 1, &chunk) >= 0);
        hid_t sp = H5Screate_simple(1, &d, NULL);
        hid_t x = H5Dcreate2(f, "indptr", H5T_STD_I64LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        ck_assert(x >= 0);
        H5Dclose(x);
        H5Sclose(sp);
        H5Pclose(dcpl);
        sp = H5Screate_simple(1, &zero, NULL);
        x = H5Dcreate2(f, "indices", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dclose(x);
        H5Sclose(sp);
        const int64_t shape[2] = {m, n};
        write_shape_attr(f, shape);
        H5Fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Every rank fails reading `path` with TF_ERR_NOMEM and one message that
 * contains `what`. */
static void expect_nomem(const char *path, const tf_dist_read_options *o, const char *what)
{
    tf_dcsr d;
    int st = tf_dist_read_opt(MPI_COMM_WORLD, path, &d, o);
    ck_assert_msg(all_true(st == TF_ERR_NOMEM), "rank %d: status %d: %s", g_rank, st,
                  tf_error_message());
    ck_assert(same_message_everywhere(tf_error_message()));
    ck_assert_msg(strstr(tf_error_message(), what) && strstr(tf_error_message(), path),
                  "'%s' should name the file and '%s'", tf_error_message(), what);
    ck_assert_ptr_null(strchr(tf_error_message(), '\n'));
    ck_assert_ptr_null(d.loc.rowptr);
}

/* The bands' row arrays follow the declared rows (the size line, 'shape'),
 * not what the file holds, so they are checked against the memory the node
 * has (here 16 MiB, shared by the ranks on it) before anything is read. */
START_TEST(declared_rows_bounded_by_available_memory)
{
    setenv("TWOFACE_MEM_AVAILABLE_MIB", "16", 1);
    /* 2 M rows: 45.8 MiB of row arrays in all, wherever the bands are. */
    const char *text = "%%MatrixMarket matrix coordinate pattern general\n2000000 3 1\n1 1\n";
    const char *p = share(0, ".mtx", text, strlen(text));
    expect_nomem(p, NULL, "TWOFACE_MEM_AVAILABLE_MIB allows");
    size_t zl;
    char *z = zstd_pack(text, strlen(text), &zl);
    const char *pz = share(1, ".mtx.zst", z, zl);
    free(z);
    expect_nomem(pz, NULL, "TWOFACE_MEM_AVAILABLE_MIB allows");
    /* A per-rank bound of the caller's replaces the node's figure. */
    tf_dist_read_options big = {0, 0, 64 << 20}, small = {0, 0, 1 << 20};
    tf_dcsr d;
    ck_assert(all_true(tf_dist_read_opt(MPI_COMM_WORLD, p, &d, &big) == TF_OK));
    ck_assert_int_eq(d.m, 2000000);
    tf_dcsr_free(&d);
    expect_nomem(p, &small, "more than the limit of 1.0 MiB");
    /* The 70-byte file of 2^31 - 1 rows: refused at once. */
    const char *huge = "%%MatrixMarket matrix coordinate pattern general\n"
                       "2147483647 2147483647 0\n";
    const char *ph = share(2, ".mtx", huge, strlen(huge));
    expect_nomem(ph, NULL, "2147483647 x 2147483647");
    unshare(p);
    unshare(pz);
    unshare(ph);

    /* HDF5 CSR: 'shape' says 2 M rows and 'indptr' has them, unwritten. */
    const char *h = shared_path(3, ".h5");
    write_shape_only(h, 2000000, 3);
    tf_csr a;
    ck_assert_int_eq(tf_h5csr_read(h, &a), TF_ERR_NOMEM);
    ck_assert_msg(strstr(tf_error_message(), "a 2000000 x 3 matrix's row arrays (32 bytes a "
                                             "row): need 61.0 MiB, more than the 16.0 MiB"),
                  "%s", tf_error_message());
    ck_assert_ptr_null(a.rowptr);
    expect_nomem(h, NULL, "TWOFACE_MEM_AVAILABLE_MIB allows");
    ck_assert(all_true(tf_dist_read_opt(MPI_COMM_WORLD, h, &d, &big) == TF_OK));
    ck_assert_int_eq(d.m, 2000000);
    tf_dcsr_free(&d);
    write_shape_only(h, 2147483647, 2147483647);
    expect_nomem(h, NULL, "2147483647 x 2147483647");
    unshare(h);
    unsetenv("TWOFACE_MEM_AVAILABLE_MIB");
}
END_TEST

/* A 4 x 4 HDF5 CSR file whose last row holds nnz entries, all in column 0:
 * 'indices' is chunked and never written (its zeros are the fill value),
 * so the file takes a few KiB whatever nnz. */
static void write_entries_only(const char *path, int64_t nnz)
{
    if (g_rank == 0) {
        hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        ck_assert(f >= 0);
        const int64_t ptr[5] = {0, 0, 0, 0, nnz}, shape[2] = {4, 4};
        hsize_t five = 5, n = (hsize_t)nnz, chunk = nnz < (1 << 16) ? n : 1 << 16;
        hid_t sp = H5Screate_simple(1, &five, NULL);
        hid_t x = H5Dcreate2(f, "indptr", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT,
                             H5P_DEFAULT);
        ck_assert(H5Dwrite(x, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptr) >= 0);
        H5Dclose(x);
        H5Sclose(sp);
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        ck_assert(H5Pset_chunk(dcpl, 1, &chunk) >= 0);
        sp = H5Screate_simple(1, &n, NULL);
        x = H5Dcreate2(f, "indices", H5T_STD_I64LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        ck_assert(x >= 0);
        H5Dclose(x);
        H5Sclose(sp);
        H5Pclose(dcpl);
        write_shape_attr(f, shape);
        H5Fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The entries a part reads follow 'indptr', not the file's bytes: 10 M of
 * them (480 MB while read) are refused under 16 MiB before allocating, on
 * every rank alike; a bound of the caller's that they fit in reads them. */
START_TEST(hdf5_entries_bounded_by_available_memory)
{
    setenv("TWOFACE_MEM_AVAILABLE_MIB", "16", 1);
    const char *h = shared_path(4, ".h5");
    write_entries_only(h, 10000000);
    tf_csr a;
    ck_assert_int_eq(tf_h5csr_read(h, &a), TF_ERR_NOMEM);
    ck_assert_msg(strstr(tf_error_message(), "rows 0..3 hold 10000000 entries (48 bytes each "
                                             "while read): need 457.8 MiB, more than the 16.0 "
                                             "MiB TWOFACE_MEM_AVAILABLE_MIB allows"),
                  "%s", tf_error_message());
    ck_assert_ptr_null(a.rowptr);
    expect_nomem(h, NULL, "hold 10000000 entries");
    write_entries_only(h, 1000);
    ck_assert_msg(tf_h5csr_read(h, &a) == TF_OK, "%s", tf_error_message());
    ck_assert_int_eq(a.nnz, 1); /* the duplicates summed */
    ck_assert(a.val[0] == 1000.0f);
    tf_csr_free(&a);
    unshare(h);
    unsetenv("TWOFACE_MEM_AVAILABLE_MIB");
}
END_TEST

/* Each node may read its own copy of an HDF5 CSR file; copies of other
 * shapes (the last rank's 6 x 4 against 6 x 5) cut bands that do not fit
 * together, and the exchanges aborted the job. */
START_TEST(hdf5_copies_of_other_shapes)
{
    const int64_t ptr[7] = {0, 1, 1, 3, 4, 4, 6};
    const int64_t idx[6] = {3, 2, 0, 3, 1, 1};
    const float val[6] = {1, 2, 3, 4, 0.5f, 0.25f};
    const char *p5 = shared_path(5, ".h5"), *p4 = shared_path(6, ".h5");
    if (g_rank == 0) {
        ck_assert_int_eq(tf_h5csr_write(p5, 6, 5, ptr, idx, 8, val, 4), TF_OK);
        ck_assert_int_eq(tf_h5csr_write(p4, 6, 4, ptr, idx, 8, val, 4), TF_OK);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    tf_dcsr d;
    int st = tf_dist_read(MPI_COMM_WORLD, g_size > 1 && g_rank == g_size - 1 ? p4 : p5, &d);
    if (g_size == 1) {
        ck_assert_int_eq(st, TF_OK);
        tf_dcsr_free(&d);
    } else {
        ck_assert(all_true(st == TF_ERR_FORMAT));
        ck_assert(same_message_everywhere(tf_error_message()));
        char want[200];
        snprintf(want, sizeof want, "%s: rank %d's copy is 6 x 4, rank 0's 6 x 5: every rank "
                 "must read the same file", p4, g_size - 1);
        ck_assert_msg(strstr(tf_error_message(), want), "%s", tf_error_message());
        ck_assert_ptr_null(d.loc.rowptr);
    }
    unshare(p5);
    unshare(p4);
}
END_TEST

static Suite *suite(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    Suite *s = suite_create("dist_read");
    TCase *tc = tcase_create("dist_read");
    tcase_add_test(tc, every_variant_equals_the_serial_read);
    tcase_add_test(tc, plain_read_balances_entries);
    tcase_add_test(tc, compressed_input_equals_the_serial_read);
    tcase_add_test(tc, errors_carry_the_true_line_from_any_rank);
    tcase_add_test(tc, truncated_compressed_input);
    tcase_add_test(tc, missing_on_one_rank_only);
    tcase_add_test(tc, hdf5_csr_equals_the_text_read);
    tcase_add_test(tc, hdf5_csr_errors);
    tcase_add_test(tc, declared_rows_bounded_by_available_memory);
    tcase_add_test(tc, hdf5_copies_of_other_shapes);
    tcase_add_test(tc, hdf5_entries_bounded_by_available_memory);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv) { return tf_test_run_mpi(&argc, &argv, suite); }
