/* Plan files: exact round trips, the zstd filter, and every way a plan file
 * can be wrong (not HDF5, not a plan, too new, truncated, flipped bytes,
 * edited but checksummed, missing parts) or fail to be written (no
 * directory, file-size limit, a signal mid-write).
 *
 * Extra modes for the end-to-end script (tests/e2e_h5dump.sh):
 *   test_plan_io --write-sample PATH [SCALE [LEVEL]]
 *                                      writes the synthetic plan to PATH
 *                                      (SCALE multiplies its rows)
 *   test_plan_io --read PATH           reads every rank of PATH, checks it */
#include "tf_test.h"
#include "tf_dense.h"
#include "tf_error.h"
#include "tf_h5zstd.h"
#include "tf_partition.h"
#include "tf_plan.h"
#include "tf_plan_io.h"
#include "tf_plan_layout.h"
#include "tf_plan_write_encode.h"

#include <hdf5.h>
#include <zstd.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define W 32 /* stripe width of the synthetic plans */

/* HDF5 1.10.8 leaks memory (and, for a damaged root group, the whole file)
 * when it meets damaged metadata. The test that feeds it such files sets
 * this flag in its forked child, so that LeakSanitizer (which asks for these
 * suppressions only when it checks, at exit) still reports every leak of
 * ours and, everywhere else, HDF5's too. */
static volatile int g_hdf5_leaks_expected;
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return g_hdf5_leaks_expected ? "leak:libhdf5_serial.so\n" : "";
}

/* ------------------------------------------------------------------ */
/* A synthetic plan with non-trivial numbers in every field              */

static uint64_t rnext(uint64_t *s)
{
    *s = tf_mix64(*s + 0x9E3779B97F4A7C15ULL);
    return *s;
}
static int64_t rint_below(uint64_t *s, int64_t n) { return n > 0 ? (int64_t)(rnext(s) % (uint64_t)n) : 0; }
static float rfloat(uint64_t *s) { return (float)((double)(rnext(s) >> 40) / (1 << 24) * 4.0 - 2.0); }

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        abort();
    return p;
}

/* Compressed sparse rows (or columns): nrows lines of ascending distinct
 * indices below ncols, up to maxper per line. */
static void make_sparse(uint64_t *s, int64_t nrows, int64_t ncols, int maxper, int64_t **ptr,
                        int32_t **idx, float **val, int64_t *nnz)
{
    *ptr = xmalloc((size_t)(nrows + 1) * sizeof **ptr);
    *idx = xmalloc((size_t)(nrows * maxper) * sizeof **idx);
    *val = xmalloc((size_t)(nrows * maxper) * sizeof **val);
    int64_t k = 0, step = ncols / (maxper + 1) > 1 ? ncols / (maxper + 1) : 1;
    (*ptr)[0] = 0;
    for (int64_t i = 0; i < nrows; i++) {
        int64_t c = ncols > 0 ? rint_below(s, maxper + 1) : 0, col = -1;
        for (int64_t e = 0; e < c; e++) {
            col += 1 + rint_below(s, step);
            if (col >= ncols)
                break;
            (*idx)[k] = (int32_t)col;
            (*val)[k++] = rfloat(s);
        }
        (*ptr)[i + 1] = k;
    }
    *nnz = k;
}

static void make_rank(tf_plan *p, int r, uint64_t *s)
{
    tf_rank_plan *rp = &p->parts[r];
    int P = p->nranks;
    rp->rank = r;
    rp->row_begin = p->row_off[r];
    rp->nrows = p->row_off[r + 1] - p->row_off[r];
    rp->brow_begin = p->brow_off[r];
    rp->nbrows = p->brow_off[r + 1] - p->brow_off[r];
    make_sparse(s, rp->nrows, rp->nbrows, 8, &rp->loc_ptr, &rp->loc_idx, &rp->loc_val,
                &rp->loc_nnz);

    /* Collective: about half of the other ranks' stripes. */
    int64_t cap = p->n / W + P;
    rp->recv_src = xmalloc((size_t)cap * 4);
    rp->recv_first = xmalloc((size_t)cap * 4);
    rp->recv_rows = xmalloc((size_t)cap * 4);
    rp->recv_off = xmalloc((size_t)cap * 8);
    for (int q = 0; q < P; q++) {
        int64_t nbq = p->brow_off[q + 1] - p->brow_off[q];
        for (int64_t f = 0; q != r && rp->nrows > 0 && f < nbq; f += W) {
            if (rnext(s) & 1)
                continue;
            int64_t i = rp->n_recv++;
            rp->recv_src[i] = q;
            rp->recv_first[i] = (int32_t)f;
            rp->recv_rows[i] = (int32_t)(nbq - f < W ? nbq - f : W);
            rp->recv_off[i] = rp->coll_buf_rows;
            rp->coll_buf_rows += rp->recv_rows[i];
        }
    }
    make_sparse(s, rp->nrows, rp->coll_buf_rows, 4, &rp->coll_ptr, &rp->coll_idx,
                &rp->coll_val, &rp->coll_nnz);

    /* Sends: a third of (recipient, own stripe) pairs. */
    cap = (int64_t)P * (rp->nbrows / W + 1);
    rp->send_dst = xmalloc((size_t)cap * 4);
    rp->send_first = xmalloc((size_t)cap * 4);
    rp->send_rows = xmalloc((size_t)cap * 4);
    for (int q = 0; q < P; q++)
        for (int64_t f = 0; q != r && f < rp->nbrows; f += W) {
            if (rnext(s) % 3)
                continue;
            int64_t i = rp->n_send++;
            rp->send_dst[i] = q;
            rp->send_first[i] = (int32_t)f;
            rp->send_rows[i] = (int32_t)(rp->nbrows - f < W ? rp->nbrows - f : W);
        }

    /* Fetch runs: disjoint runs of 1..6 rows in the other bands. */
    cap = p->n + P;
    rp->run_owner = xmalloc((size_t)cap * 4);
    rp->run_first = xmalloc((size_t)cap * 4);
    rp->run_count = xmalloc((size_t)cap * 4);
    rp->run_off = xmalloc((size_t)cap * 8);
    for (int q = 0; q < P; q++) {
        int64_t nbq = p->brow_off[q + 1] - p->brow_off[q];
        for (int64_t pos = rint_below(s, 8); q != r && rp->nrows > 0 && pos < nbq;) {
            int64_t left = nbq - pos, cnt = 1 + rint_below(s, left < 6 ? left : 6);
            int64_t i = rp->n_runs++;
            rp->run_owner[i] = q;
            rp->run_first[i] = (int32_t)pos;
            rp->run_count[i] = (int32_t)cnt;
            rp->run_off[i] = rp->fetch_buf_rows;
            rp->fetch_buf_rows += cnt;
            pos += cnt + 1 + rint_below(s, 40);
        }
    }
    rp->fetch_rows = xmalloc((size_t)rp->nrows * 4);
    for (int64_t i = 0; i < rp->nrows; i++)
        if (rnext(s) % 3 == 0)
            rp->fetch_rows[rp->n_fetch_rows++] = (int32_t)i;
    make_sparse(s, rp->fetch_buf_rows, rp->n_fetch_rows, 3, &rp->fet_ptr, &rp->fet_idx,
                &rp->fet_val, &rp->fet_nnz);

    tf_rank_stats *st = &rp->stats;
    int64_t *iv[] = {&st->nnz_local,       &st->nnz_coll,        &st->nnz_fetch,
                     &st->stripes_coll,    &st->stripes_fetch,   &st->coll_rows_recv,
                     &st->coll_rows_sent,  &st->coll_peers_recv, &st->coll_peers_sent,
                     &st->fetch_rows,      &st->fetch_needed,    &st->fetch_requests,
                     &st->remote_distinct, &st->nnz_local_miss, &st->nnz_coll_miss};
    for (size_t i = 0; i < sizeof iv / sizeof iv[0]; i++)
        *iv[i] = rint_below(s, 1000000000) + 1000 * r + (int64_t)i;
    double *dv[] = {&st->t_local,      &st->t_coll_comm,  &st->t_coll_comp,
                    &st->t_fetch_comm, &st->t_fetch_comp, &st->t_coll_half,
                    &st->t_fetch_half, &st->t_total};
    for (size_t i = 0; i < sizeof dv / sizeof dv[0]; i++)
        *dv[i] = (double)(rnext(s) >> 11) * 0x1p-53 * 1e-3 + (double)i;
}

/* Three ranks; rank 1 owns no rows at all (every array empty). scale
 * multiplies the rows. */
static void build_plan(tf_plan *p, int scale, uint64_t seed)
{
    memset(p, 0, sizeof *p);
    uint64_t s = seed;
    int P = 3;
    p->nranks = P;
    p->m = 1000 * scale;
    p->n = 900 * scale;
    p->checksum = 0xDEADBEEFCAFEF00DULL ^ seed;
    p->k_planned = 96;
    p->stripe_width = W;
    p->partition = TF_PART_NNZ;
    p->mode = TF_MODE_COLLECTIVE;
    p->gap = 7;
    p->coeffs.alpha_coll = 21.5e-6;
    p->coeffs.beta_coll = 0.41e-9;
    p->coeffs.alpha_fetch = 4.75e-6;
    p->coeffs.beta_fetch = 1.0 / 3.0 * 1e-9;
    p->coeffs.gamma_local = 0.61e-9;
    p->coeffs.gamma_coll = 0.62e-9;
    p->coeffs.gamma_fetch = 0.93e-9;
    p->coeffs.threads = 3;
    snprintf(p->generated_by, sizeof p->generated_by, "test_plan_io (synthetic, seed %llu)",
             (unsigned long long)seed);
    snprintf(p->creation_date, sizeof p->creation_date, "2024-05-06T07:08:09Z");
    p->row_off = xmalloc((size_t)(P + 1) * 8);
    p->brow_off = xmalloc((size_t)(P + 1) * 8);
    const int64_t ro[] = {0, 600, 600, 1000}, bo[] = {0, 500, 500, 900};
    for (int i = 0; i <= P; i++) {
        p->row_off[i] = ro[i] * scale;
        p->brow_off[i] = bo[i] * scale;
    }
    int64_t cap = p->n / W + P;
    tf_stripe_table *t = &p->stripes;
    t->owner = xmalloc((size_t)cap * 4);
    t->first = xmalloc((size_t)cap * 8);
    t->rows = xmalloc((size_t)cap * 4);
    t->recipients = xmalloc((size_t)cap * 4);
    t->fetchers = xmalloc((size_t)cap * 4);
    for (int q = 0; q < P; q++)
        for (int64_t f = p->brow_off[q]; f < p->brow_off[q + 1]; f += W) {
            int64_t i = t->n++;
            t->owner[i] = q;
            t->first[i] = f;
            t->rows[i] = (int32_t)(p->brow_off[q + 1] - f < W ? p->brow_off[q + 1] - f : W);
            t->recipients[i] = (int32_t)rint_below(&s, P + 1);
            t->fetchers[i] = (int32_t)rint_below(&s, P + 1);
        }
    p->n_parts = P;
    p->parts = calloc((size_t)P, sizeof *p->parts);
    p->all_stats = calloc((size_t)P, sizeof *p->all_stats);
    for (int r = 0; r < P; r++) {
        make_rank(p, r, &s);
        p->all_stats[r] = p->parts[r].stats;
        p->nnz += p->parts[r].loc_nnz + p->parts[r].coll_nnz + p->parts[r].fet_nnz;
    }
}

/* ------------------------------------------------------------------ */
/* Comparison                                                            */

static int arr_eq(const void *a, const void *b, int64_t n, size_t es)
{
    if (n <= 0)
        return 1;
    return a && b && memcmp(a, b, (size_t)n * es) == 0;
}

/* A NULL pointer array of an empty part is written as {0}. */
static int ptr_eq(const int64_t *a, const int64_t *b, int64_t n)
{
    static const int64_t zero[1] = {0};
    if (n == 1) {
        a = a ? a : zero;
        b = b ? b : zero;
    }
    return arr_eq(a, b, n, 8);
}

/* Name of the first field that differs, NULL if all are equal. */
static const char *rank_diff(const tf_rank_plan *a, const tf_rank_plan *b)
{
#define SC(f)                                                                                  \
    if (a->f != b->f)                                                                          \
    return #f
#define AR(f, n)                                                                               \
    if (!arr_eq(a->f, b->f, a->n, sizeof *a->f))                                               \
    return #f
    SC(rank);
    SC(row_begin);
    SC(nrows);
    SC(brow_begin);
    SC(nbrows);
    SC(loc_nnz);
    SC(n_recv);
    SC(coll_buf_rows);
    SC(coll_nnz);
    SC(n_send);
    SC(n_runs);
    SC(fetch_buf_rows);
    SC(n_fetch_rows);
    SC(fet_nnz);
    if (!ptr_eq(a->loc_ptr, b->loc_ptr, a->nrows + 1))
        return "loc_ptr";
    AR(loc_idx, loc_nnz);
    AR(loc_val, loc_nnz);
    AR(recv_src, n_recv);
    AR(recv_first, n_recv);
    AR(recv_rows, n_recv);
    AR(recv_off, n_recv);
    if (!ptr_eq(a->coll_ptr, b->coll_ptr, a->nrows + 1))
        return "coll_ptr";
    AR(coll_idx, coll_nnz);
    AR(coll_val, coll_nnz);
    AR(send_dst, n_send);
    AR(send_first, n_send);
    AR(send_rows, n_send);
    AR(run_owner, n_runs);
    AR(run_first, n_runs);
    AR(run_count, n_runs);
    AR(run_off, n_runs);
    AR(fetch_rows, n_fetch_rows);
    if (!ptr_eq(a->fet_ptr, b->fet_ptr, a->fetch_buf_rows + 1))
        return "fet_ptr";
    AR(fet_idx, fet_nnz);
    AR(fet_val, fet_nnz);
    if (memcmp(&a->stats, &b->stats, sizeof a->stats) != 0)
        return "stats";
    return NULL;
}

static const char *header_diff(const tf_plan *a, const tf_plan *b)
{
    SC(m);
    SC(n);
    SC(nnz);
    SC(checksum);
    SC(nranks);
    SC(k_planned);
    SC(stripe_width);
    SC(partition);
    SC(mode);
    SC(gap);
    SC(normalization);
    SC(symmetric);
    SC(transposed);
    SC(transpose_of);
    SC(comm);
    for (int i = 0; i < TF_NCOEFFS; i++) {
        double x = tf_coeffs_get(&a->coeffs, i), y = tf_coeffs_get(&b->coeffs, i);
        if (memcmp(&x, &y, sizeof x) != 0)
            return tf_coeff_names[i];
    }
    if (strcmp(a->generated_by, b->generated_by) != 0)
        return "generated_by";
    if (strcmp(a->creation_date, b->creation_date) != 0)
        return "creation_date";
    if (!arr_eq(a->row_off, b->row_off, a->nranks + 1, 8))
        return "row_off";
    if (!arr_eq(a->brow_off, b->brow_off, a->nranks + 1, 8))
        return "brow_off";
    SC(stripes.n);
    AR(stripes.owner, stripes.n);
    AR(stripes.first, stripes.n);
    AR(stripes.rows, stripes.n);
    AR(stripes.recipients, stripes.n);
    AR(stripes.fetchers, stripes.n);
    if (!arr_eq(a->all_stats, b->all_stats, a->nranks, sizeof *a->all_stats))
        return "all_stats";
    return NULL;
#undef SC
#undef AR
}

/* ------------------------------------------------------------------ */
/* Files and directories                                                 */

static void tmpdir_new(char *buf, size_t n)
{
    const char *t = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(buf, n, "%s/tfplanio_XXXXXX", t);
    ck_assert_ptr_nonnull(mkdtemp(buf));
}

static int dir_entries(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            n++;
    closedir(d);
    return n;
}

static void tmpdir_rm(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[4200];
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(dir);
}

static long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

static void copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    ck_assert(a && b);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, a)) > 0)
        ck_assert_uint_eq(fwrite(buf, 1, n, b), n);
    fclose(a);
    ck_assert_int_eq(fclose(b), 0);
}

static void xor_byte(const char *path, long off, unsigned char mask)
{
    int fd = open(path, O_RDWR);
    ck_assert_int_ge(fd, 0);
    unsigned char c;
    ck_assert_int_eq(pread(fd, &c, 1, off), 1);
    c ^= mask;
    ck_assert_int_eq(pwrite(fd, &c, 1, off), 1);
    close(fd);
}

/* Fixture: a fresh directory with the synthetic plan written to plan.h5. */
static char g_dir[512], g_path[600];
static tf_plan g_plan;

static void write_fixture(void)
{
    tmpdir_new(g_dir, sizeof g_dir);
    snprintf(g_path, sizeof g_path, "%s/plan.h5", g_dir);
    build_plan(&g_plan, 1, 42);
    ck_assert_msg(tf_plan_write(g_path, &g_plan, TF_PLAN_ZSTD_DEFAULT) == TF_OK, "%s",
                  tf_error_message());
}

static void drop_fixture(void)
{
    tf_plan_free(&g_plan);
    tmpdir_rm(g_dir);
}

/* Every HDF5 handle opened by a read or write is closed again, on error
 * paths too. */
static void assert_no_open_ids(void)
{
    ck_assert_int_eq(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);
}

/* Reads must fail with a one-line message that names the path, and the
 * output must be left empty. Returns the status. */
static int read_fails(const char *path, int rank)
{
    tf_plan out;
    memset(&out, 0xAB, sizeof out);
    int st = tf_plan_read(path, rank, &out);
    ck_assert_int_ne(st, TF_OK);
    ck_assert_msg(strncmp(tf_error_message(), path, strlen(path)) == 0,
                  "message does not start with the path: %s", tf_error_message());
    ck_assert_ptr_null(strchr(tf_error_message(), '\n'));
    ck_assert_ptr_null(out.parts);
    ck_assert_ptr_null(out.row_off);
    ck_assert_int_eq(out.n_parts, 0);
    assert_no_open_ids();
    return st;
}

static void assert_msg_has(const char *needle)
{
    ck_assert_msg(strstr(tf_error_message(), needle) != NULL, "expected '%s' in: %s", needle,
                  tf_error_message());
}

/* HDF5 patches, with HDF5's own error printing off (it would only be noise
 * for the deliberately broken files). */
static hid_t open_rw(const char *path)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    ck_assert_int_eq(tf_h5zstd_register(), TF_OK);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    return f;
}

static void patch_dset(hid_t f, const char *name, hid_t mtype, hsize_t at, const void *v)
{
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    ck_assert_int_ge(d, 0);
    hid_t fs = H5Dget_space(d);
    hsize_t one = 1;
    hid_t ms = H5Screate_simple(1, &one, NULL);
    ck_assert_int_ge(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &at, NULL, &one, NULL), 0);
    ck_assert_int_ge(H5Dwrite(d, mtype, ms, fs, H5P_DEFAULT, v), 0);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
}

/* H5Oopen + H5Aopen: in HDF5 1.10.8 a write through H5Aopen_by_name on a
 * group reports success but does not stick. */
static void patch_attr(hid_t loc, const char *obj, const char *name, hid_t mtype, const void *v)
{
    hid_t o = H5Oopen(loc, obj, H5P_DEFAULT);
    ck_assert_int_ge(o, 0);
    hid_t a = H5Aopen(o, name, H5P_DEFAULT);
    ck_assert_int_ge(a, 0);
    ck_assert_int_ge(H5Awrite(a, mtype, v), 0);
    H5Aclose(a);
    H5Oclose(o);
}

static int64_t extent_of(hid_t f, const char *name)
{
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    ck_assert_int_ge(d, 0);
    hid_t sp = H5Dget_space(d);
    hsize_t n = 0;
    H5Sget_simple_extent_dims(sp, &n, NULL);
    H5Sclose(sp);
    H5Dclose(d);
    return (int64_t)n;
}

/* Stores the summary checksum of plan p with part tables t (NULL: a 2.x
 * file), as a tool that rewrote the file consistently would. */
static void resign_summary(hid_t f, const tf_plan *p, const tf_pl_parts *t)
{
    tf_rank_stats *st = xmalloc((size_t)p->nranks * sizeof *st);
    for (int r = 0; r < p->nranks; r++)
        st[r] = p->all_stats ? p->all_stats[r] : p->parts[r].stats;
    uint64_t h = tf_pl_summary_checksum(p, st, t);
    free(st);
    patch_attr(f, ".", "summary_checksum", H5T_NATIVE_UINT64, &h);
}

/* Replaces the part tables of an open 3.0 file by t (any number of
 * elements) and re-signs the summary: only the reader's structural checks
 * of the tables stand between such a file and a bad read. */
static void rewrite_tables(hid_t f, const tf_plan *p, const tf_pl_parts *t, int n_entries,
                           int n_offsets)
{
    const char *names[2] = {"parts/ranks", "parts/offsets"};
    hid_t ft[2] = {tf_pl_entry_type(1), tf_pl_offsets_type(1)};
    hid_t mt[2] = {tf_pl_entry_type(0), tf_pl_offsets_type(0)};
    const void *data[2] = {t->rank, t->off};
    hsize_t n[2] = {(hsize_t)n_entries, (hsize_t)n_offsets};
    for (int i = 0; i < 2; i++) {
        ck_assert_int_ge(H5Ldelete(f, names[i], H5P_DEFAULT), 0);
        hid_t sp = H5Screate_simple(1, &n[i], NULL);
        hid_t d = H5Dcreate2(f, names[i], ft[i], sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        ck_assert_int_ge(d, 0);
        ck_assert_int_ge(H5Dwrite(d, mt[i], H5S_ALL, H5S_ALL, H5P_DEFAULT, data[i]), 0);
        H5Dclose(d);
        H5Sclose(sp);
        H5Tclose(ft[i]);
        H5Tclose(mt[i]);
    }
    resign_summary(f, p, t);
}

/* Rewrites an open 3.0 file of plan p (no runner-up) in the layout of
 * format 2.4, one group rank_%06d per rank, with p's arrays: what the 2.x
 * reader path reads. */
static void to_format_2(hid_t f, const tf_plan *p)
{
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    H5Pset_attr_phase_change(gcpl, 64, 48);
    for (int r = 0; r < p->nranks; r++) {
        const tf_rank_plan *rp = &p->parts[r];
        char g[32];
        snprintf(g, sizeof g, "rank_%06d", r);
        hid_t gid = H5Gcreate2(f, g, H5P_DEFAULT, gcpl, H5P_DEFAULT);
        ck_assert_int_ge(gid, 0);
        const char *an[] = {"row_begin", "nrows", "brow_begin", "nbrows", "coll_buf_rows",
                            "fetch_buf_rows"};
        const int64_t av[] = {rp->row_begin,    rp->nrows,         rp->brow_begin,
                              rp->nbrows,       rp->coll_buf_rows, rp->fetch_buf_rows};
        hid_t sp = H5Screate(H5S_SCALAR);
        for (int i = 0; i < 8; i++) {
            hid_t ft = i == 0 ? H5T_STD_I32LE : i == 7 ? H5T_STD_U64LE : H5T_STD_I64LE;
            uint64_t ck = tf_plan_rank_checksum(rp);
            int32_t rk = r;
            hid_t a = H5Acreate2(gid, i == 0 ? "rank" : i == 7 ? "checksum" : an[i - 1], ft, sp,
                                 H5P_DEFAULT, H5P_DEFAULT);
            ck_assert_int_ge(a, 0);
            ck_assert_int_ge(H5Awrite(a, i == 0 ? H5T_NATIVE_INT32
                                         : i == 7 ? H5T_NATIVE_UINT64
                                                  : H5T_NATIVE_INT64,
                                      i == 0 ? (const void *)&rk
                                      : i == 7 ? (const void *)&ck
                                               : (const void *)&av[i - 1]),
                             0);
            H5Aclose(a);
        }
        H5Sclose(sp);
        const char *folders[] = {"local", "collective", "send", "fetch"};
        for (int i = 0; i < 4; i++) {
            hid_t sub = H5Gcreate2(gid, folders[i], H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            ck_assert_int_ge(sub, 0);
            H5Gclose(sub);
        }
        for (int i = 0; i < N_RANK_ARRAYS; i++) {
            int k = tf_pl_rank_arrays[i].kind;
            hsize_t n = (hsize_t)tf_pl_count_get(rp, tf_pl_rank_arrays[i].count);
            hid_t s = H5Screate_simple(1, &n, NULL);
            hid_t d = H5Dcreate2(gid, tf_pl_rank_arrays[i].name, tf_pl_kind_ftype(k), s,
                                 H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            ck_assert_int_ge(d, 0);
            if (n)
                ck_assert_int_ge(H5Dwrite(d, tf_pl_kind_mtype(k), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                                          tf_pl_array_get(rp, i)),
                                 0);
            H5Dclose(d);
            H5Sclose(s);
        }
        H5Gclose(gid);
    }
    H5Pclose(gcpl);
    ck_assert_int_ge(H5Ldelete(f, "parts", H5P_DEFAULT), 0);
    int32_t v[2] = {2, 4};
    patch_attr(f, ".", "format_version", H5T_NATIVE_INT32, v);
    resign_summary(f, p, NULL);
}

/* ------------------------------------------------------------------ */
/* Round trips                                                           */

static void check_roundtrip(const char *path, const tf_plan *ref)
{
    tf_plan h;
    ck_assert_msg(tf_plan_read(path, TF_PLAN_READ_HEADER, &h) == TF_OK, "%s", tf_error_message());
    const char *d = header_diff(ref, &h);
    ck_assert_msg(d == NULL, "header field %s differs", d);
    ck_assert_int_eq(h.n_parts, 0);
    ck_assert_ptr_null(h.parts);
    tf_plan_free(&h);

    for (int r = 0; r < ref->nranks; r++) {
        tf_plan one;
        ck_assert_msg(tf_plan_read(path, r, &one) == TF_OK, "rank %d: %s", r, tf_error_message());
        d = header_diff(ref, &one);
        ck_assert_msg(d == NULL, "rank %d: header field %s differs", r, d);
        ck_assert_int_eq(one.n_parts, 1);
        ck_assert_int_eq(one.first_rank, r);
        d = rank_diff(&ref->parts[r], &one.parts[0]);
        ck_assert_msg(d == NULL, "rank %d: field %s differs", r, d);
        ck_assert_uint_eq(tf_plan_rank_checksum(&one.parts[0]),
                          tf_plan_rank_checksum(&ref->parts[r]));
        tf_plan_free(&one);
    }

    tf_plan all;
    ck_assert_msg(tf_plan_read(path, TF_PLAN_READ_ALL, &all) == TF_OK, "%s", tf_error_message());
    ck_assert_int_eq(all.n_parts, ref->nranks);
    ck_assert_int_eq(all.first_rank, 0);
    for (int r = 0; r < ref->nranks; r++) {
        d = rank_diff(&ref->parts[r], &all.parts[r]);
        ck_assert_msg(d == NULL, "all: rank %d: field %s differs", r, d);
    }
    tf_plan_free(&all);
    assert_no_open_ids();
}

START_TEST(roundtrip_every_field)
{
    write_fixture();
    /* The fixture has what the test needs: an empty rank, and datasets on
     * both sides of the compact/chunked limit. */
    ck_assert_int_eq(g_plan.parts[1].nrows, 0);
    ck_assert_int_eq(g_plan.parts[1].loc_nnz + g_plan.parts[1].n_recv + g_plan.parts[1].n_runs, 0);
    ck_assert(g_plan.parts[0].loc_nnz * 4 > 4096);
    check_roundtrip(g_path, &g_plan);

    /* Empty arrays come back as NULL, pointer arrays of empty parts as {0}. */
    tf_plan one;
    ck_assert_int_eq(tf_plan_read(g_path, 1, &one), TF_OK);
    ck_assert_ptr_null(one.parts[0].loc_idx);
    ck_assert_ptr_null(one.parts[0].fetch_rows);
    ck_assert_ptr_nonnull(one.parts[0].loc_ptr);
    ck_assert_int_eq(one.parts[0].loc_ptr[0], 0);
    ck_assert_int_eq(one.parts[0].fet_ptr[0], 0);
    tf_plan_free(&one);

    /* No rank 3; the temporary file is gone. */
    ck_assert_int_eq(tf_plan_read(g_path, 3, &one), TF_ERR_ARG);
    ck_assert_int_eq(dir_entries(g_dir, ""), 1);
    drop_fixture();
}
END_TEST

START_TEST(roundtrip_levels_and_null_pointer_arrays)
{
    char dir[512], path[600];
    tmpdir_new(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/p.h5", dir);
    tf_plan p;
    build_plan(&p, 2, 7);
    /* A planner may leave the pointer arrays of an empty part NULL. */
    free(p.parts[1].loc_ptr);
    free(p.parts[1].fet_ptr);
    p.parts[1].loc_ptr = p.parts[1].fet_ptr = NULL;
    const int levels[] = {0, 1, 19};
    for (int i = 0; i < 3; i++) {
        ck_assert_msg(tf_plan_write(path, &p, levels[i]) == TF_OK, "%s", tf_error_message());
        check_roundtrip(path, &p);
    }
    ck_assert_int_eq(tf_plan_write(path, &p, -1), TF_ERR_ARG);
    ck_assert_int_eq(tf_plan_write(path, &p, 23), TF_ERR_ARG);
    tf_plan_free(&p);
    tmpdir_rm(dir);
}
END_TEST

START_TEST(creation_date_filled_in_when_empty)
{
    char dir[512], path[600];
    tmpdir_new(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/p.h5", dir);
    tf_plan p, h;
    build_plan(&p, 1, 3);
    p.creation_date[0] = '\0';
    ck_assert_int_eq(tf_plan_write(path, &p, 3), TF_OK);
    ck_assert_int_eq(tf_plan_read(path, TF_PLAN_READ_HEADER, &h), TF_OK);
    /* 2024-05-06T07:08:09Z */
    ck_assert_uint_eq(strlen(h.creation_date), 20);
    ck_assert(h.creation_date[4] == '-' && h.creation_date[10] == 'T' && h.creation_date[19] == 'Z');
    tf_plan_free(&h);
    tf_plan_free(&p);
    tmpdir_rm(dir);
}
END_TEST

START_TEST(writer_refuses_invalid_plans)
{
    char dir[512], path[600];
    tmpdir_new(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/p.h5", dir);
    tf_plan p;
    build_plan(&p, 1, 5);
    int32_t saved = p.parts[0].loc_idx[3];
    p.parts[0].loc_idx[3] = (int32_t)p.parts[0].nbrows; /* one past the band */
    ck_assert_int_eq(tf_plan_write(path, &p, 3), TF_ERR_INTERNAL);
    assert_msg_has("local/col[3]");
    p.parts[0].loc_idx[3] = saved;
    p.parts[2].stats.t_total += 1; /* differs from all_stats */
    ck_assert_int_eq(tf_plan_write(path, &p, 3), TF_ERR_INTERNAL);
    assert_msg_has("stats");
    p.parts[2].stats.t_total -= 1;
    p.n_parts = 1; /* a partial plan */
    ck_assert_int_eq(tf_plan_write(path, &p, 3), TF_ERR_ARG);
    p.n_parts = 3;
    ck_assert_int_eq(dir_entries(dir, ""), 0);
    tf_plan_free(&p);
    tmpdir_rm(dir);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The zstd filter                                                       */

START_TEST(zstd_filter_large_dataset_roundtrip)
{
    ck_assert_int_eq(tf_h5zstd_register(), TF_OK);
    ck_assert_int_eq(tf_h5zstd_register(), TF_OK); /* idempotent */
    ck_assert_int_gt(H5Zfilter_avail(TF_H5Z_FILTER_ZSTD), 0);
    char dir[512], path[600];
    tmpdir_new(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/z.h5", dir);

    /* Sorted column indices: the kind of data plans are made of. */
    const hsize_t n = 4u << 20;
    int32_t *a = xmalloc(n * 4), *b = xmalloc(n * 4);
    uint64_t s = 1;
    for (hsize_t i = 0, c = 0; i < n; i++) {
        c += rint_below(&s, 16);
        a[i] = (int32_t)(c % 1000000);
    }
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hsize_t chunk = 65536;
    unsigned cd[1] = {5};
    ck_assert_int_ge(H5Pset_chunk(dcpl, 1, &chunk), 0);
    ck_assert_int_ge(H5Pset_shuffle(dcpl), 0);
    ck_assert_int_ge(H5Pset_filter(dcpl, TF_H5Z_FILTER_ZSTD, H5Z_FLAG_MANDATORY, 1, cd), 0);
    hid_t d = H5Dcreate2(f, "x", H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    ck_assert_int_ge(d, 0);
    ck_assert_int_ge(H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, a), 0);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(sp);
    ck_assert_int_ge(H5Fclose(f), 0);

    f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    d = H5Dopen2(f, "x", H5P_DEFAULT);
    hsize_t stored = H5Dget_storage_size(d);
    ck_assert_msg(stored > 0 && stored < n * 4 / 3, "stored %llu of %llu bytes",
                  (unsigned long long)stored, (unsigned long long)n * 4);
    dcpl = H5Dget_create_plist(d);
    unsigned flags, cdv[1];
    size_t ncd = 1;
    ck_assert_int_ge(H5Pget_filter_by_id2(dcpl, TF_H5Z_FILTER_ZSTD, &flags, &ncd, cdv, 0, NULL,
                                          NULL),
                     0);
    ck_assert_uint_eq(cdv[0], 5);
    H5Pclose(dcpl);
    ck_assert_int_ge(H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, b), 0);
    ck_assert(memcmp(a, b, n * 4) == 0);
    H5Dclose(d);
    H5Fclose(f);
    free(a);
    free(b);
    tmpdir_rm(dir);
}
END_TEST

/* The writer filters chunks itself and hands them to H5Dwrite_chunk
 * (format/tf_plan_write_encode.h); they must be the bytes HDF5's own
 * pipeline stores for the dataset's filters, or readers would see
 * checksum errors or wrong values. Full chunks and short slices padded
 * with zeros, of int32 and int64, at zstd levels 0 (Fletcher-32 only) and
 * 3, compared with H5Dread_chunk. */
START_TEST(encoded_chunks_are_hdf5_pipeline_bytes)
{
    ck_assert_int_eq(tf_h5zstd_register(), TF_OK);
    char dir[512], path[600];
    tmpdir_new(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/c.h5", dir);
    const int64_t c = 4096; /* elements per chunk; two chunks per dataset */
    int64_t *v64 = xmalloc(2 * c * 8);
    int32_t *v32 = xmalloc(2 * c * 4);
    uint64_t s = 7;
    for (int64_t i = 0, x = 0; i < 2 * c; i++) {
        x += rint_below(&s, 40);
        v64[i] = x;
        v32[i] = (int32_t)(x % 100000);
    }
    const int levels[] = {0, 3};
    for (int li = 0; li < 2; li++) {
        for (int wide = 0; wide < 2; wide++) {
            size_t es = wide ? 8 : 4;
            const void *data = wide ? (const void *)v64 : (const void *)v32;
            hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
            hsize_t n = (hsize_t)(2 * c), ch = (hsize_t)c;
            hid_t sp = H5Screate_simple(1, &n, NULL);
            hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
            unsigned cd[1] = {(unsigned)levels[li]};
            ck_assert_int_ge(H5Pset_chunk(dcpl, 1, &ch), 0);
            if (levels[li]) {
                ck_assert_int_ge(H5Pset_shuffle(dcpl), 0);
                ck_assert_int_ge(
                    H5Pset_filter(dcpl, TF_H5Z_FILTER_ZSTD, H5Z_FLAG_MANDATORY, 1, cd), 0);
            }
            ck_assert_int_ge(H5Pset_fletcher32(dcpl), 0);
            hid_t d = H5Dcreate2(f, "x", wide ? H5T_STD_I64LE : H5T_STD_I32LE, sp, H5P_DEFAULT,
                                 dcpl, H5P_DEFAULT);
            ck_assert_int_ge(d, 0);
            ck_assert_int_ge(H5Dwrite(d, wide ? H5T_NATIVE_INT64 : H5T_NATIVE_INT32, H5S_ALL,
                                      H5S_ALL, H5P_DEFAULT, data),
                             0);
            size_t cap = 2 * (size_t)c * es + 1024, len = 0;
            unsigned char *mine = xmalloc(cap), *theirs = xmalloc(cap);
            unsigned char *plain = xmalloc((size_t)c * es), *shuf = xmalloc((size_t)c * es);
            for (int k = 0; k < 2; k++) {
                hsize_t off = (hsize_t)(k * c), size = 0;
                uint32_t mask = 1;
                ck_assert_int_ge(H5Dget_chunk_storage_size(d, &off, &size), 0);
                ck_assert_uint_le(size, cap);
                ck_assert_int_ge(H5Dread_chunk(d, H5P_DEFAULT, &off, &mask, theirs), 0);
                ck_assert_uint_eq(mask, 0);
                ck_assert_int_eq(tf_pl_encode_chunk(mine, cap, plain, shuf,
                                                    (const char *)data + (size_t)(k * c) * es, c,
                                                    c, es, levels[li], &len),
                                 TF_OK);
                ck_assert_msg(len == size && memcmp(mine, theirs, len) == 0,
                              "level %d, %zu-byte elements, chunk %d: %zu bytes vs HDF5's %llu",
                              levels[li], es, k, len, (unsigned long long)size);
            }
            /* A short slice is a whole chunk with a zero tail: the same
             * bytes as HDF5's pipeline stores for that zero-padded chunk,
             * from a tail of a few elements to nearly all of it. */
            const int64_t shorts[] = {c - 5, c / 3, 1};
            for (int si = 0; si < 3; si++) {
                int64_t m = shorts[si];
                unsigned char *padded = xmalloc((size_t)c * es);
                memcpy(padded, data, (size_t)m * es);
                memset(padded + (size_t)m * es, 0, (size_t)(c - m) * es);
                char name[16];
                snprintf(name, sizeof name, "y%d", si);
                hsize_t one = (hsize_t)c, off0 = 0, size = 0;
                hid_t sp1 = H5Screate_simple(1, &one, NULL);
                hid_t y = H5Dcreate2(f, name, wide ? H5T_STD_I64LE : H5T_STD_I32LE, sp1,
                                     H5P_DEFAULT, dcpl, H5P_DEFAULT);
                ck_assert_int_ge(y, 0);
                ck_assert_int_ge(H5Dwrite(y, wide ? H5T_NATIVE_INT64 : H5T_NATIVE_INT32, H5S_ALL,
                                          H5S_ALL, H5P_DEFAULT, padded),
                                 0);
                uint32_t mask = 1;
                ck_assert_int_ge(H5Dget_chunk_storage_size(y, &off0, &size), 0);
                ck_assert_uint_le(size, cap);
                ck_assert_int_ge(H5Dread_chunk(y, H5P_DEFAULT, &off0, &mask, theirs), 0);
                ck_assert_int_eq(tf_pl_encode_chunk(mine, cap, plain, shuf, data, m, c, es,
                                                    levels[li], &len),
                                 TF_OK);
                ck_assert_msg(len == size && memcmp(mine, theirs, len) == 0,
                              "level %d, %zu-byte elements, %lld of %lld elements: %zu bytes "
                              "vs HDF5's %llu",
                              levels[li], es, (long long)m, (long long)c, len,
                              (unsigned long long)size);
                H5Dclose(y);
                H5Sclose(sp1);
                free(padded);
            }
            /* And a short chunk (zero-padded) reads back through HDF5. */
            ck_assert_int_eq(tf_pl_encode_chunk(mine, cap, plain, shuf, data, c - 5, c, es,
                                                levels[li], &len),
                             TF_OK);
            hsize_t off = 0;
            ck_assert_int_ge(H5Dwrite_chunk(d, H5P_DEFAULT, 0, &off, len, mine), 0);
            void *back = xmalloc(2 * (size_t)c * es);
            ck_assert_int_ge(H5Dread(d, wide ? H5T_NATIVE_INT64 : H5T_NATIVE_INT32, H5S_ALL,
                                     H5S_ALL, H5P_DEFAULT, back),
                             0);
            ck_assert(memcmp(back, data, (size_t)(c - 5) * es) == 0);
            for (size_t b = (size_t)(c - 5) * es; b < (size_t)c * es; b++)
                ck_assert_int_eq(((unsigned char *)back)[b], 0);
            free(back);
            free(mine);
            free(theirs);
            free(plain);
            free(shuf);
            H5Dclose(d);
            H5Pclose(dcpl);
            H5Sclose(sp);
            ck_assert_int_ge(H5Fclose(f), 0);
        }
    }
    free(v64);
    free(v32);
    tmpdir_rm(dir);
}
END_TEST

START_TEST(zstd_register_survives_h5close)
{
    ck_assert_int_eq(tf_h5zstd_register(), TF_OK);
    ck_assert_int_ge(H5close(), 0); /* forgets every registered filter */
    ck_assert_int_ge(H5open(), 0);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    ck_assert_int_eq(tf_h5zstd_register(), TF_OK);
    ck_assert_int_gt(H5Zfilter_avail(TF_H5Z_FILTER_ZSTD), 0);
    write_fixture(); /* and plans still work */
    check_roundtrip(g_path, &g_plan);
    drop_fixture();
}
END_TEST

/* Runs the filter function the way HDF5 does; returns its result. */
static size_t run_filter(unsigned flags, const void *in, size_t n, void **out)
{
    size_t size = n;
    void *buf = H5allocate_memory(n ? n : 1, 0);
    memcpy(buf, in, n);
    unsigned cd[1] = {3};
    size_t r = tf_h5zstd_class.filter(flags, 1, cd, n, &size, &buf);
    *out = buf;
    return r;
}

START_TEST(zstd_filter_rejects_bad_frames)
{
    char text[4096];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = "twoface"[i % 7];
    void *z, *u;
    size_t zn = run_filter(0, text, sizeof text, &z);
    ck_assert_uint_gt(zn, 0);
    ck_assert_uint_lt(zn, sizeof text);
    size_t un = run_filter(H5Z_FLAG_REVERSE, z, zn, &u);
    ck_assert_uint_eq(un, sizeof text);
    ck_assert(memcmp(u, text, sizeof text) == 0);
    H5free_memory(u);

    /* Garbage, a truncated frame, a corrupted frame: failure, never a crash. */
    ck_assert_uint_eq(run_filter(H5Z_FLAG_REVERSE, text, 100, &u), 0);
    H5free_memory(u);
    ck_assert_uint_eq(run_filter(H5Z_FLAG_REVERSE, z, zn - 3, &u), 0);
    H5free_memory(u);
    unsigned char *bad = xmalloc(zn);
    memcpy(bad, z, zn);
    bad[zn / 2] ^= 0xFF;
    bad[zn - 1] ^= 0xFF;
    void *o;
    size_t r = run_filter(H5Z_FLAG_REVERSE, bad, zn, &o);
    ck_assert(r == 0 || (r == sizeof text)); /* zstd may or may not see it */
    H5free_memory(o);
    /* A frame that does not record its size is refused. */
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 0);
    unsigned char frame[8192];
    ZSTD_outBuffer ob = {frame, sizeof frame, 0};
    ZSTD_inBuffer ib = {text, sizeof text, 0};
    ck_assert_uint_eq(ZSTD_compressStream2(cc, &ob, &ib, ZSTD_e_end), 0);
    ZSTD_freeCCtx(cc);
    ck_assert_uint_eq(run_filter(H5Z_FLAG_REVERSE, frame, ob.pos, &u), 0);
    H5free_memory(u);
    free(bad);
    H5free_memory(z);
    H5Eclear2(H5E_DEFAULT);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Files that are not (valid) plans                                     */

START_TEST(not_hdf5_and_missing_files)
{
    const char *p = tf_test_tmpfile(0, ".h5", "%%MatrixMarket matrix\n", 22);
    ck_assert_int_eq(read_fails(p, 0), TF_ERR_FORMAT);
    char want[600];
    snprintf(want, sizeof want, "%s: not an HDF5 file", p);
    ck_assert_str_eq(tf_error_message(), want);
    unlink(p);
    p = tf_test_tmpfile(1, ".h5", "", 0);
    ck_assert_int_eq(read_fails(p, TF_PLAN_READ_HEADER), TF_ERR_FORMAT);
    unlink(p);
    ck_assert_int_eq(read_fails("/nonexistent/dir/plan.h5", 0), TF_ERR_IO);
    assert_msg_has("No such file");
    ck_assert_int_eq(read_fails("/tmp", 0), TF_ERR_IO);
}
END_TEST

START_TEST(hdf5_without_format_attribute)
{
    char dir[512], path[600];
    tmpdir_new(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/other.h5", dir);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t n = 3;
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(f, "data", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dclose(d);
    H5Sclose(sp);
    H5Fclose(f);
    ck_assert_int_eq(read_fails(path, 0), TF_ERR_FORMAT);
    char want[700];
    snprintf(want, sizeof want, "%s: not a twoface plan (no 'format' attribute)", path);
    ck_assert_str_eq(tf_error_message(), want);
    tmpdir_rm(dir);
}
END_TEST

START_TEST(newer_major_version_rejected_newer_minor_accepted)
{
    write_fixture();
    hid_t f = open_rw(g_path);
    int32_t v[2] = {TF_PLAN_VERSION_MAJOR + 1, 3};
    patch_attr(f, ".", "format_version", H5T_NATIVE_INT32, v);
    H5Fclose(f);
    ck_assert_int_eq(read_fails(g_path, 0), TF_ERR_FORMAT);
    char want[700];
    snprintf(want, sizeof want,
             "%s: plan format version %d.3 is newer than this twoface (%d.x); re-plan or upgrade",
             g_path, TF_PLAN_VERSION_MAJOR + 1, TF_PLAN_VERSION_MAJOR);
    ck_assert_str_eq(tf_error_message(), want);

    /* Minor versions only add: a reader of 1.0 reads 1.7, extra content and all. */
    f = open_rw(g_path);
    v[0] = TF_PLAN_VERSION_MAJOR;
    v[1] = TF_PLAN_VERSION_MINOR + 7;
    patch_attr(f, ".", "format_version", H5T_NATIVE_INT32, v);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, "added_in_a_later_minor", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT32, v);
    H5Aclose(a);
    H5Sclose(sp);
    H5Fclose(f);
    check_roundtrip(g_path, &g_plan);
    drop_fixture();
}
END_TEST

/* Replaces string attribute `name` of the root by `value`. */
static void patch_attr_str(hid_t f, const char *name, const char *value)
{
    ck_assert_int_ge(H5Adelete(f, name), 0);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, strlen(value) + 1);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_int_ge(a, 0);
    ck_assert_int_ge(H5Awrite(a, t, value), 0);
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
}

/* Format 2.2: normalization, symmetric, transposed, transpose_of. */
START_TEST(matrix_kind_attributes_roundtrip_and_2_1_files)
{
    write_fixture();
    ck_assert_int_eq(g_plan.normalization, TF_NORM_NONE);
    check_roundtrip(g_path, &g_plan);
    g_plan.normalization = TF_NORM_GCN;
    g_plan.transposed = 1;
    g_plan.transpose_of = 0x0123456789ABCDEFULL;
    ck_assert_msg(tf_plan_write(g_path, &g_plan, 3) == TF_OK, "%s", tf_error_message());
    check_roundtrip(g_path, &g_plan);

    /* A file of 2.1 has none of the four: none, unknown symmetry, not transposed. */
    hid_t f = open_rw(g_path);
    to_format_2(f, &g_plan);
    int32_t v[2] = {2, 1};
    patch_attr(f, ".", "format_version", H5T_NATIVE_INT32, v);
    const char *added[] = {"normalization", "symmetric", "transposed", "transpose_of"};
    for (int i = 0; i < 4; i++)
        ck_assert_int_ge(H5Adelete(f, added[i]), 0);
    H5Fclose(f);
    g_plan.normalization = TF_NORM_NONE;
    g_plan.transposed = 0;
    g_plan.transpose_of = 0;
    check_roundtrip(g_path, &g_plan);

    /* In 2.2 they are required, and checked. */
    f = open_rw(g_path);
    v[1] = 2;
    patch_attr(f, ".", "format_version", H5T_NATIVE_INT32, v);
    H5Fclose(f);
    read_fails(g_path, 0);
    assert_msg_has("attribute 'normalization'");
    ck_assert_msg(tf_plan_write(g_path, &g_plan, 3) == TF_OK, "%s", tf_error_message());
    f = open_rw(g_path);
    patch_attr_str(f, "normalization", "softmax");
    H5Fclose(f);
    ck_assert_int_eq(read_fails(g_path, 0), TF_ERR_FORMAT);
    assert_msg_has("attribute 'normalization' = 'softmax' is not none, gcn or mean");
    ck_assert_msg(tf_plan_write(g_path, &g_plan, 3) == TF_OK, "%s", tf_error_message());
    f = open_rw(g_path);
    int32_t one = 1, two = 2;
    patch_attr(f, ".", "symmetric", H5T_NATIVE_INT32, &one); /* of a 1000 x 900 matrix */
    H5Fclose(f);
    ck_assert_int_eq(read_fails(g_path, 0), TF_ERR_FORMAT);
    assert_msg_has("symmetric = 1 for a 1000 x 900 matrix");
    ck_assert_msg(tf_plan_write(g_path, &g_plan, 3) == TF_OK, "%s", tf_error_message());
    f = open_rw(g_path);
    patch_attr(f, ".", "transposed", H5T_NATIVE_INT32, &two);
    H5Fclose(f);
    ck_assert_int_eq(read_fails(g_path, 0), TF_ERR_FORMAT);
    assert_msg_has("expected 0 or 1");
    ck_assert_msg(tf_plan_write(g_path, &g_plan, 3) == TF_OK, "%s", tf_error_message());
    f = open_rw(g_path);
    patch_attr(f, ".", "transposed", H5T_NATIVE_INT32, &one); /* but no transpose_of */
    H5Fclose(f);
    ck_assert_int_eq(read_fails(g_path, 0), TF_ERR_FORMAT);
    assert_msg_has("attribute 'transpose_of'");

    /* The writer refuses what the reader would. */
    g_plan.symmetric = 1;
    ck_assert_int_eq(tf_plan_write(g_path, &g_plan, 3), TF_ERR_INTERNAL);
    assert_msg_has("symmetric = 1 for a 1000 x 900 matrix");
    g_plan.symmetric = 0;
    g_plan.transpose_of = 5;
    ck_assert_int_eq(tf_plan_write(g_path, &g_plan, 3), TF_ERR_INTERNAL);
    assert_msg_has("transpose_of is set in a plan that is not transposed");
    g_plan.transpose_of = 0;
    g_plan.normalization = 9;
    ck_assert_int_eq(tf_plan_write(g_path, &g_plan, 3), TF_ERR_INTERNAL);
    assert_msg_has("unknown normalisation 9");
    g_plan.normalization = TF_NORM_NONE;
    drop_fixture();
}
END_TEST

/* Format 3.2: the work partition is a value of the partition attribute;
 * a kind the reader does not know is refused with one line. */
START_TEST(work_partition_roundtrip)
{
    write_fixture();
    g_plan.partition = TF_PART_WORK;
    ck_assert_msg(tf_plan_write(g_path, &g_plan, 3) == TF_OK, "%s", tf_error_message());
    check_roundtrip(g_path, &g_plan);
    tf_plan back;
    ck_assert_int_eq(tf_plan_read(g_path, TF_PLAN_READ_HEADER, &back), TF_OK);
    ck_assert_int_eq(back.partition, TF_PART_WORK);
    tf_plan_free(&back);
    hid_t f = open_rw(g_path);
    patch_attr_str(f, "partition", "flops");
    H5Fclose(f);
    ck_assert_int_eq(read_fails(g_path, 0), TF_ERR_FORMAT);
    assert_msg_has("attribute 'partition' = 'flops' is not rows, nnz, work or metis");
    /* auto is an option the planner resolves: a plan never has it. */
    f = open_rw(g_path);
    patch_attr_str(f, "partition", "auto");
    H5Fclose(f);
    ck_assert_int_eq(read_fails(g_path, 0), TF_ERR_FORMAT);
    assert_msg_has("attribute 'partition' = 'auto' is not rows, nnz, work or metis");
    g_plan.partition = TF_PART_AUTO;
    ck_assert_int_eq(tf_plan_write(g_path, &g_plan, 3), TF_ERR_INTERNAL);
    g_plan.partition = 7;
    ck_assert_int_eq(tf_plan_write(g_path, &g_plan, 3), TF_ERR_INTERNAL);
    drop_fixture();
}
END_TEST

/* Format 2.3: comm, what B rows travel as; 2.2 files read as f32. */
START_TEST(comm_attribute_roundtrip_and_2_2_files)
{
    write_fixture();
    ck_assert_int_eq(g_plan.comm, TF_PREC_F32);
    check_roundtrip(g_path, &g_plan);
    g_plan.comm = TF_PREC_BF16;
    ck_assert_msg(tf_plan_write(g_path, &g_plan, 3) == TF_OK, "%s", tf_error_message());
    check_roundtrip(g_path, &g_plan);
    tf_plan back;
    ck_assert_int_eq(tf_plan_read(g_path, 0, &back), TF_OK);
    ck_assert_int_eq(back.coeffs.elem_bytes, 2); /* the model the plan was made with */
    tf_plan_free(&back);

    /* 2.2 has no comm: float32. */
    hid_t f = open_rw(g_path);
    to_format_2(f, &g_plan);
    int32_t v[2] = {2, 2};
    patch_attr(f, ".", "format_version", H5T_NATIVE_INT32, v);
    ck_assert_int_ge(H5Adelete(f, "comm"), 0);
    H5Fclose(f);
    g_plan.comm = TF_PREC_F32;
    check_roundtrip(g_path, &g_plan);

    /* In 2.3 it is required, and checked. */
    f = open_rw(g_path);
    v[1] = 3;
    patch_attr(f, ".", "format_version", H5T_NATIVE_INT32, v);
    H5Fclose(f);
    read_fails(g_path, 0);
    assert_msg_has("attribute 'comm'");
    ck_assert_msg(tf_plan_write(g_path, &g_plan, 3) == TF_OK, "%s", tf_error_message());
    f = open_rw(g_path);
    patch_attr_str(f, "comm", "fp8");
    H5Fclose(f);
    ck_assert_int_eq(read_fails(g_path, 0), TF_ERR_FORMAT);
    assert_msg_has("attribute 'comm' = 'fp8' is not f32 or bf16");

    /* The writer refuses what the reader would. */
    g_plan.comm = 7;
    ck_assert_int_eq(tf_plan_write(g_path, &g_plan, 3), TF_ERR_INTERNAL);
    assert_msg_has("unknown precision 7");
    g_plan.comm = TF_PREC_F32;
    drop_fixture();
}
END_TEST

/* Rewrites g_path's rank_stats with its first `keep` members only and
 * stamps the file `major`.`minor` (a 2.x file gets the 2.x layout of the
 * parts): the file an older writer made. */
static void strip_rank_stats(int keep, int major, int minor)
{
    hid_t f = open_rw(g_path);
    hid_t d = H5Dopen2(f, "rank_stats", H5P_DEFAULT);
    hid_t t = H5Dget_type(d), sp = H5Dget_space(d);
    int nm = H5Tget_nmembers(t);
    ck_assert_int_eq(nm, 29);
    hid_t old = H5Tcreate(H5T_COMPOUND, (size_t)keep * 8);
    for (int i = 0; i < keep; i++) {
        char *name = H5Tget_member_name(t, (unsigned)i);
        hid_t mt = H5Tget_member_type(t, (unsigned)i);
        ck_assert_int_ge(H5Tinsert(old, name, H5Tget_member_offset(t, (unsigned)i), mt), 0);
        H5Tclose(mt);
        H5free_memory(name);
    }
    void *buf = xmalloc((size_t)g_plan.nranks * (size_t)keep * 8);
    ck_assert_int_ge(H5Dread(d, old, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), 0);
    H5Dclose(d);
    ck_assert_int_ge(H5Ldelete(f, "rank_stats", H5P_DEFAULT), 0);
    d = H5Dcreate2(f, "rank_stats", old, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_int_ge(d, 0);
    ck_assert_int_ge(H5Dwrite(d, old, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), 0);
    free(buf);
    H5Dclose(d);
    H5Sclose(sp);
    H5Tclose(old);
    H5Tclose(t);
    if (major == 2)
        to_format_2(f, &g_plan);
    int32_t v[2] = {major, minor};
    patch_attr(f, ".", "format_version", H5T_NATIVE_INT32, v);
    H5Fclose(f);
}

/* Format 2.4 added the reuse counts to rank_stats, 3.1 the rows of C, 3.3
 * the fetch kernel's misses; an older file lacks those members (its plans
 * were made without the terms): they read as 0 and the summary checksum it
 * was written with still holds, a 3.2, 3.0 or 2.4 file's with its earlier
 * counts set included. */
START_TEST(rank_stats_of_2_3_files_read_without_reuse_counts)
{
    write_fixture();
    for (int r = 0; r < g_plan.nranks; r++) {
        g_plan.parts[r].stats.rows_local = 100 + r;
        g_plan.parts[r].stats.rows_coll = 7 * r;
        g_plan.parts[r].stats.nnz_fetch_miss = 3 * r + 1;
        g_plan.all_stats[r] = g_plan.parts[r].stats;
    }
    ck_assert_msg(tf_plan_write(g_path, &g_plan, 3) == TF_OK, "%s", tf_error_message());
    check_roundtrip(g_path, &g_plan); /* nonzero counts travel */

    /* 3.2: rows of C, no fetch misses. */
    for (int r = 0; r < g_plan.nranks; r++) {
        g_plan.parts[r].stats.nnz_fetch_miss = 0;
        g_plan.all_stats[r] = g_plan.parts[r].stats;
    }
    ck_assert_msg(tf_plan_write(g_path, &g_plan, 3) == TF_OK, "%s", tf_error_message());
    strip_rank_stats(28, 3, 2);
    check_roundtrip(g_path, &g_plan);

    /* 3.0 and 2.4: reuse counts set, no rows. */
    int64_t miss = 0;
    for (int r = 0; r < g_plan.nranks; r++) {
        g_plan.parts[r].stats.rows_local = g_plan.parts[r].stats.rows_coll = 0;
        g_plan.all_stats[r] = g_plan.parts[r].stats;
        miss += g_plan.all_stats[r].nnz_local_miss + g_plan.all_stats[r].nnz_coll_miss;
    }
    ck_assert_int_gt(miss, 0);
    ck_assert_msg(tf_plan_write(g_path, &g_plan, 3) == TF_OK, "%s", tf_error_message());
    strip_rank_stats(26, 3, 0);
    check_roundtrip(g_path, &g_plan);
    ck_assert_msg(tf_plan_write(g_path, &g_plan, 3) == TF_OK, "%s", tf_error_message());
    strip_rank_stats(26, 2, 4);
    check_roundtrip(g_path, &g_plan);

    /* 2.3: neither. */
    for (int r = 0; r < g_plan.nranks; r++) {
        g_plan.parts[r].stats.nnz_local_miss = g_plan.parts[r].stats.nnz_coll_miss = 0;
        g_plan.all_stats[r] = g_plan.parts[r].stats;
    }
    ck_assert_msg(tf_plan_write(g_path, &g_plan, 3) == TF_OK, "%s", tf_error_message());
    strip_rank_stats(24, 2, 3);
    check_roundtrip(g_path, &g_plan);
    drop_fixture();
}
END_TEST

/* A consistent runner-up for `p` (tf_plan_check_alt): another synthetic
 * plan of the same shape, claiming the same matrix. */
static tf_plan *make_alt(const tf_plan *p, uint64_t seed)
{
    tf_plan *a = xmalloc(sizeof *a);
    build_plan(a, 1, seed);
    a->checksum = p->checksum;
    a->nnz = p->nnz;
    a->mode = TF_MODE_FETCH;
    return a;
}

START_TEST(alternative_plan_roundtrip_and_checks)
{
    tmpdir_new(g_dir, sizeof g_dir);
    snprintf(g_path, sizeof g_path, "%s/plan.h5", g_dir);
    build_plan(&g_plan, 1, 42);
    g_plan.alt = make_alt(&g_plan, 43);
    ck_assert_int_eq(tf_plan_check_alt(&g_plan, g_plan.alt), TF_OK);
    ck_assert_msg(tf_plan_write(g_path, &g_plan, TF_PLAN_ZSTD_DEFAULT) == TF_OK, "%s",
                  tf_error_message());
    const tf_plan *ref = g_plan.alt;
    for (int r = TF_PLAN_READ_ALL; r < ref->nranks; r++) {
        tf_plan one;
        ck_assert_msg(tf_plan_read(g_path, r, &one) == TF_OK, "rank %d: %s", r, tf_error_message());
        ck_assert_ptr_nonnull(one.alt);
        ck_assert_ptr_null(one.alt->alt);
        const char *d = header_diff(&g_plan, &one);
        ck_assert_msg(d == NULL, "rank %d: header field %s differs", r, d);
        d = header_diff(ref, one.alt);
        ck_assert_msg(d == NULL, "rank %d: alternative header field %s differs", r, d);
        ck_assert_int_eq(one.alt->n_parts, one.n_parts);
        ck_assert_int_eq(one.alt->first_rank, one.first_rank);
        for (int i = 0; i < one.n_parts; i++) {
            d = rank_diff(&ref->parts[one.first_rank + i], &one.alt->parts[i]);
            ck_assert_msg(d == NULL, "rank %d: alternative part field %s differs", r, d);
            d = rank_diff(&g_plan.parts[one.first_rank + i], &one.parts[i]);
            ck_assert_msg(d == NULL, "rank %d: part field %s differs", r, d);
        }
        tf_plan_free(&one); /* frees the alternative too (ASan checks) */
    }
    assert_no_open_ids();

    /* The reader holds the runner-up to the plan: another fingerprint in
     * its group is refused, naming the group. */
    hid_t f = open_rw(g_path);
    uint64_t other = g_plan.checksum ^ 1;
    patch_attr(f, "alternative", "checksum", H5T_NATIVE_UINT64, &other);
    H5Fclose(f);
    ck_assert_int_eq(read_fails(g_path, 1), TF_ERR_FORMAT);
    assert_msg_has("alternative plan: matrix (size, nonzeros or fingerprint) differs");

    /* The writer refuses what the reader would: other bands, other ranks,
     * a nested alternative; the file is left as it was. */
    long before = file_size(g_path);
    g_plan.alt->brow_off[1] += 1;
    ck_assert_int_eq(tf_plan_write(g_path, &g_plan, 0), TF_ERR_INTERNAL);
    g_plan.alt->brow_off[1] -= 1;
    g_plan.alt->alt = make_alt(&g_plan, 44);
    ck_assert_int_eq(tf_plan_write(g_path, &g_plan, 0), TF_ERR_INTERNAL);
    assert_msg_has("has an alternative of its own");
    ck_assert_int_eq(file_size(g_path), before);
    drop_fixture();
}
END_TEST

/* Number of hard links to the object at `name` (HDF5's reference count). */
static unsigned link_count(const char *path, const char *name)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    H5O_info_t info;
    ck_assert_int_ge(H5Oget_info_by_name(f, name, &info, H5P_DEFAULT), 0);
    H5Fclose(f);
    return info.rc;
}

/* Reads every rank of `path` back and compares plan and runner-up with
 * the plan written. */
static void check_alt_roundtrip(const char *path, const tf_plan *p)
{
    for (int r = TF_PLAN_READ_ALL; r < p->nranks; r++) {
        tf_plan one;
        ck_assert_msg(tf_plan_read(path, r, &one) == TF_OK, "rank %d: %s", r, tf_error_message());
        ck_assert_ptr_nonnull(one.alt);
        for (int i = 0; i < one.n_parts; i++) {
            const char *d = rank_diff(&p->alt->parts[one.first_rank + i], &one.alt->parts[i]);
            ck_assert_msg(d == NULL, "rank %d: alternative part field %s differs", r, d);
            d = rank_diff(&p->parts[one.first_rank + i], &one.parts[i]);
            ck_assert_msg(d == NULL, "rank %d: part field %s differs", r, d);
        }
        tf_plan_free(&one);
    }
}

/* A runner-up's dataset whose every slice is the plan's is a hard link to
 * the plan's (docs/plan-format.md, "Storage settings"), and so is every
 * empty dataset to the first empty one of its type; a single rank's slice
 * that differs keeps the runner-up's own dataset. */
START_TEST(runner_up_shares_datasets)
{
    tmpdir_new(g_dir, sizeof g_dir);
    snprintf(g_path, sizeof g_path, "%s/plan.h5", g_dir);
    build_plan(&g_plan, 1, 42);
    g_plan.alt = xmalloc(sizeof *g_plan.alt);
    build_plan(g_plan.alt, 1, 42); /* the same arrays */
    g_plan.alt->mode = TF_MODE_FETCH;
    ck_assert_int_eq(tf_plan_check_alt(&g_plan, g_plan.alt), TF_OK);
    ck_assert_int_gt(g_plan.parts[2].loc_nnz, 0);
    ck_assert_int_eq(g_plan.parts[1].loc_nnz, 0); /* an empty slice on the way */
    ck_assert_msg(tf_plan_write(g_path, &g_plan, TF_PLAN_ZSTD_DEFAULT) == TF_OK, "%s",
                  tf_error_message());
    check_alt_roundtrip(g_path, &g_plan);
    ck_assert_uint_eq(link_count(g_path, "/parts/local/val"), 2);
    ck_assert_uint_eq(link_count(g_path, "/alternative/parts/fetch/row"), 2);
    ck_assert_uint_eq(link_count(g_path, "/alternative/row_offsets"), 2);
    ck_assert_uint_eq(link_count(g_path, "/alternative/stripes/fetchers"), 2);
    ck_assert_uint_eq(link_count(g_path, "/alternative/parts/ranks"), 1);

    /* One value of the last rank's slice differs: its own dataset, and the
     * values read back are the runner-up's. */
    g_plan.alt->parts[2].loc_val[g_plan.alt->parts[2].loc_nnz - 1] += 1.0f;
    ck_assert_msg(tf_plan_write(g_path, &g_plan, TF_PLAN_ZSTD_DEFAULT) == TF_OK, "%s",
                  tf_error_message());
    check_alt_roundtrip(g_path, &g_plan);
    ck_assert_uint_eq(link_count(g_path, "/parts/local/val"), 1);
    ck_assert_uint_eq(link_count(g_path, "/parts/local/col"), 2);

    drop_fixture();
}
END_TEST

START_TEST(truncated_file)
{
    write_fixture();
    long size = file_size(g_path);
    char cut[700];
    snprintf(cut, sizeof cut, "%s/cut.h5", g_dir);
    const long sizes[] = {8, 100, size / 4, size / 2, size - 4096, size - 1};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        copy_file(g_path, cut);
        ck_assert_int_eq(truncate(cut, sizes[i]), 0);
        read_fails(cut, TF_PLAN_READ_ALL);
        read_fails(cut, 0);
    }
    drop_fixture();
}
END_TEST

/* Address and size of the first chunk of a chunked dataset. */
static void chunk_location(const char *path, const char *dset, haddr_t *addr, hsize_t *size)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, dset, H5P_DEFAULT);
    ck_assert_int_ge(d, 0);
    hsize_t off[1];
    unsigned mask;
    hid_t sp = H5Dget_space(d);
    ck_assert_int_ge(H5Dget_chunk_info(d, sp, 0, off, &mask, addr, size), 0);
    H5Sclose(sp);
    ck_assert_uint_eq(mask, 0); /* every filter applied, zstd included */
    H5Dclose(d);
    H5Fclose(f);
}

START_TEST(flipped_byte_in_compressed_chunk)
{
    write_fixture();
    ck_assert_int_eq(tf_h5zstd_register(), TF_OK);
    haddr_t addr;
    hsize_t size;
    chunk_location(g_path, "parts/local/col", &addr, &size);
    ck_assert_uint_gt(size, 16);
    xor_byte(g_path, (long)(addr + size / 2), 0x10);
    ck_assert_int_ne(read_fails(g_path, 0), TF_OK);
    assert_msg_has("'parts/local/col', rank 0's slice");
    assert_msg_has("Fletcher32");
    /* Only what is read is checked: the header and rank 2 are intact. */
    tf_plan ok;
    ck_assert_int_eq(tf_plan_read(g_path, 2, &ok), TF_OK);
    ck_assert_ptr_null(rank_diff(&g_plan.parts[2], &ok.parts[0]));
    tf_plan_free(&ok);
    drop_fixture();
}
END_TEST

/* Sets the filter mask of the chunk stored at `addr` in its v1 B-tree node
 * (the index of every chunked dataset a V18-bounded writer makes): nodes
 * are "TREE", type 1 for raw data, level, entries, two sibling addresses,
 * then per entry the key (chunk size, filter mask, 2 offsets for a 1-D
 * dataset) and the child's address. Fails the test unless exactly one
 * entry points at addr. */
static void set_chunk_mask(const char *path, haddr_t addr, uint32_t mask)
{
    long size = file_size(path);
    ck_assert_int_gt(size, 0);
    unsigned char *b = xmalloc((size_t)size);
    FILE *fp = fopen(path, "rb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fread(b, 1, (size_t)size, fp), (size_t)size);
    fclose(fp);
    long at = -1;
    int hits = 0;
    for (long i = 0; i + 24 <= size; i++) {
        if (memcmp(b + i, "TREE", 4) != 0 || b[i + 4] != 1 || b[i + 5] != 0)
            continue;
        unsigned used = b[i + 6] | (unsigned)b[i + 7] << 8;
        for (unsigned e = 0; e < used; e++) {
            long key = i + 24 + (long)e * 32;
            uint64_t child = 0;
            if (key + 32 > size)
                break;
            memcpy(&child, b + key + 24, 8); /* little-endian, as is this host */
            if (child == (uint64_t)addr) {
                at = key + 4;
                hits++;
            }
        }
    }
    free(b);
    ck_assert_int_eq(hits, 1);
    for (int k = 0; k < 4; k++)
        xor_byte(path, at + k, (unsigned char)(mask >> (8 * k)));
}

/* A damaged chunk index saying a chunk skips filters is refused before
 * HDF5 reads the chunk: HDF5 1.10.8 would skip zstd and copy a whole chunk
 * out of the smaller stored buffer (an over-read inside libhdf5, found by
 * fuzzing, tests/fuzz/crashes/README.md). */
START_TEST(chunk_skipping_filters_refused_before_reading)
{
    /* The fuzzing reproducer: a format 2.2 plan, rank_000000/local/val. */
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fuzz/crashes/hdf5-chunk-filter-mask.h5",
             tf_test_srcdir());
    ck_assert_int_eq(tf_h5zstd_register(), TF_OK);
    ck_assert_int_eq(read_fails(path, TF_PLAN_READ_ALL), TF_ERR_FORMAT);
    assert_msg_has(": dataset 'rank_000000/local/val': the chunk at element 0 skips filters "
                   "(mask 0x776f72)");
    assert_msg_has("the file is damaged");

    /* Format 3.0: only the rank whose slice holds the chunk is refused. */
    write_fixture();
    hid_t f = H5Fopen(g_path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "parts/local/val", H5P_DEFAULT);
    ck_assert_int_ge(d, 0);
    hid_t sp = H5Dget_space(d);
    hsize_t nchunks = 0, off[1];
    unsigned mask;
    haddr_t addr;
    hsize_t csize;
    ck_assert_int_ge(H5Dget_num_chunks(d, sp, &nchunks), 0);
    ck_assert_uint_ge(nchunks, 2);
    ck_assert_int_ge(H5Dget_chunk_info(d, sp, nchunks - 1, off, &mask, &addr, &csize), 0);
    H5Sclose(sp);
    H5Dclose(d);
    H5Fclose(f);
    ck_assert_uint_gt(off[0], 0);
    set_chunk_mask(g_path, addr, 0x4);
    int last = g_plan.nranks - 1;
    ck_assert_int_eq(read_fails(g_path, last), TF_ERR_FORMAT);
    char want[128];
    snprintf(want, sizeof want, ": dataset 'parts/local/val': the chunk at element %llu skips "
             "filters (mask 0x4)", (unsigned long long)off[0]);
    assert_msg_has(want);
    ck_assert_int_eq(read_fails(g_path, TF_PLAN_READ_ALL), TF_ERR_FORMAT);
    assert_msg_has(want);
    tf_plan ok;
    ck_assert_int_eq(tf_plan_read(g_path, 0, &ok), TF_OK);
    tf_plan_free(&ok);
    assert_no_open_ids();
    drop_fixture();
}
END_TEST

START_TEST(flipped_bytes_anywhere_never_go_unnoticed)
{
    write_fixture();
    g_hdf5_leaks_expected = 1;
    long size = file_size(g_path);
    int failed = 0;
    /* ~300 offsets spread over the whole file: superblock, object headers,
     * chunk index, compact and chunked data. */
    long step = size / 300 > 1 ? size / 300 : 1;
    for (long off = 0; off < size; off += step + (off % 7)) {
        xor_byte(g_path, off, 0x5A);
        tf_plan out;
        int st = tf_plan_read(g_path, TF_PLAN_READ_ALL, &out);
        if (st != TF_OK) {
            ck_assert_msg(strncmp(tf_error_message(), g_path, strlen(g_path)) == 0, "offset %ld: %s",
                          off, tf_error_message());
            failed++;
        } else {
            const char *d = header_diff(&g_plan, &out);
            for (int r = 0; !d && r < g_plan.nranks; r++)
                d = rank_diff(&g_plan.parts[r], &out.parts[r]);
            ck_assert_msg(d == NULL, "offset %ld: flipped byte changed %s silently", off, d);
            tf_plan_free(&out);
        }
        xor_byte(g_path, off, 0x5A);
    }
    ck_assert_int_gt(failed, 0);
    /* A flip in the root group's object header trips an HDF5 1.10.8 bug:
     * H5Fclose succeeds but the library keeps the file, and at exit prints
     * "infinite loop closing library". Nothing of ours is open. */
    assert_no_open_ids();
    drop_fixture();
}
END_TEST

START_TEST(checksum_catches_edit_of_part_dataset)
{
    write_fixture();
    /* Rewritten through HDF5, so Fletcher-32 is recomputed: only the rank
     * checksum can notice the change. */
    hid_t f = open_rw(g_path);
    int32_t v = (g_plan.parts[2].send_dst[0] + 1) % 3;
    ck_assert_int_gt(g_plan.parts[2].n_send, 0);
    int64_t at[1];
    hid_t d = H5Dopen2(f, "parts/offsets", H5P_DEFAULT);
    hid_t mt = H5Tcreate(H5T_COMPOUND, 8);
    H5Tinsert(mt, "send", 0, H5T_NATIVE_INT64);
    hsize_t two = 2, one = 1;
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, &one, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &two, NULL, &one, NULL);
    ck_assert_int_ge(H5Dread(d, mt, ms, fs, H5P_DEFAULT, at), 0);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Tclose(mt);
    H5Dclose(d);
    patch_dset(f, "parts/send/dst", H5T_NATIVE_INT32, (hsize_t)at[0], &v);
    H5Fclose(f);
    ck_assert_int_eq(read_fails(g_path, 2), TF_ERR_FORMAT);
    assert_msg_has("rank 2's part");
    assert_msg_has("checksum mismatch");
    tf_plan ok;
    ck_assert_int_eq(tf_plan_read(g_path, 0, &ok), TF_OK);
    tf_plan_free(&ok);
    drop_fixture();
}
END_TEST

/* Sets array[at] (dataset `dset` of `rank`) to `bad` in a copy of the plan
 * and re-signs the rank: only the structural checks stand between such a
 * file and an out-of-bounds access in the executor. */
static void edit_and_resign(int rank, const char *dset, int32_t *array, int64_t at, int32_t bad,
                            const char *expect)
{
    int32_t saved = array[at];
    array[at] = bad;
    tf_pl_parts t;
    ck_assert_int_eq(tf_pl_parts_of_plan(&g_plan, &t), TF_OK);
    array[at] = saved;
    char cut[700], full[96];
    snprintf(cut, sizeof cut, "%s/edit.h5", g_dir);
    snprintf(full, sizeof full, "parts/%s", dset);
    int cnt = -1;
    for (int i = 0; i < N_RANK_ARRAYS; i++)
        if (strcmp(tf_pl_rank_arrays[i].name, dset) == 0)
            cnt = tf_pl_rank_arrays[i].count;
    ck_assert_int_ge(cnt, 0);
    copy_file(g_path, cut);
    hid_t f = open_rw(cut);
    patch_dset(f, full, H5T_NATIVE_INT32, (hsize_t)(t.off[rank * N_COUNTS + cnt] + at), &bad);
    rewrite_tables(f, &g_plan, &t, t.nranks, t.nranks + 1);
    tf_pl_parts_free(&t);
    H5Fclose(f);
    ck_assert_int_eq(read_fails(cut, rank), TF_ERR_FORMAT);
    assert_msg_has(expect);
    unlink(cut);
}

START_TEST(structural_checks_behind_valid_checksums)
{
    write_fixture();
    tf_rank_plan *r0 = &g_plan.parts[0], *r2 = &g_plan.parts[2];
    edit_and_resign(0, "local/col", r0->loc_idx, 5, (int32_t)r0->nbrows, "local/col[5]");
    edit_and_resign(0, "local/col", r0->loc_idx, 0, -1, "local/col[0]");
    edit_and_resign(2, "fetch/run_count", r2->run_count, 0, 1 << 20, "fetch/run[0]");
    edit_and_resign(2, "fetch/row", r2->fet_idx, 1, (int32_t)r2->n_fetch_rows, "fetch/row[1]");
    edit_and_resign(2, "collective/recv_src", r2->recv_src, 0, 3, "collective/recv[0]");
    drop_fixture();
}
END_TEST

/* Replaces dataset `name` of the plan at path by an empty one of `type`:
 * one dimension of its length plus `extra`, or with rank 2 a second
 * dimension of 1. */
static void replace_dataset(const char *path, const char *name, hid_t type, int rank,
                            int64_t extra)
{
    hid_t f = open_rw(path);
    hsize_t dims[2] = {(hsize_t)(extent_of(f, name) + extra), 1};
    ck_assert_int_ge(H5Ldelete(f, name, H5P_DEFAULT), 0);
    hid_t sp = H5Screate_simple(rank, dims, NULL);
    hid_t d = H5Dcreate2(f, name, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_int_ge(d, 0);
    H5Dclose(d);
    H5Sclose(sp);
    H5Fclose(f);
}

START_TEST(wrong_type_or_size_names_the_dataset)
{
    write_fixture();
    /* fetch/val rewritten as integers, local/val one element short. */
    replace_dataset(g_path, "parts/fetch/val", H5T_STD_I32LE, 1, 0);
    read_fails(g_path, 2);
    assert_msg_has("'parts/fetch/val' is not 32-bit floating point");
    replace_dataset(g_path, "parts/local/val", H5T_IEEE_F32LE, 1, -1);
    read_fails(g_path, 0);
    assert_msg_has("'parts/local/val' has");
    assert_msg_has("says where it ends");
    drop_fixture();
}
END_TEST

/* The header's datasets and the parts' go through the same check of type
 * and rank: a header dataset of floats, a part dataset of two dimensions. */
START_TEST(wrong_type_or_rank_in_header_and_parts)
{
    write_fixture();
    replace_dataset(g_path, "stripes/owner", H5T_IEEE_F32LE, 1, 0);
    ck_assert_int_eq(read_fails(g_path, TF_PLAN_READ_HEADER), TF_ERR_FORMAT);
    assert_msg_has("'stripes/owner' is not 32-bit signed integer");
    drop_fixture();

    write_fixture();
    replace_dataset(g_path, "parts/local/col", H5T_STD_I32LE, 2, 0);
    ck_assert_int_eq(read_fails(g_path, 0), TF_ERR_FORMAT);
    assert_msg_has("'parts/local/col' is not one-dimensional");
    drop_fixture();
}
END_TEST

START_TEST(missing_rank_group_and_dataset)
{
    write_fixture();
    hid_t f = open_rw(g_path);
    ck_assert_int_ge(H5Ldelete(f, "parts/fetch/colptr", H5P_DEFAULT), 0);
    H5Fclose(f);
    ck_assert_int_eq(read_fails(g_path, 1), TF_ERR_FORMAT);
    assert_msg_has("dataset 'parts/fetch/colptr' is missing");
    read_fails(g_path, TF_PLAN_READ_ALL);
    tf_plan ok;
    ck_assert_int_eq(tf_plan_read(g_path, TF_PLAN_READ_HEADER, &ok), TF_OK);
    tf_plan_free(&ok);

    /* A 2.x file: one group per rank. */
    ck_assert_int_eq(tf_plan_write(g_path, &g_plan, 3), TF_OK);
    f = open_rw(g_path);
    to_format_2(f, &g_plan);
    H5Fclose(f);
    check_roundtrip(g_path, &g_plan);
    f = open_rw(g_path);
    ck_assert_int_ge(H5Ldelete(f, "rank_000001", H5P_DEFAULT), 0);
    ck_assert_int_ge(H5Ldelete(f, "rank_000002/fetch/colptr", H5P_DEFAULT), 0);
    H5Fclose(f);
    ck_assert_int_eq(read_fails(g_path, 1), TF_ERR_FORMAT);
    assert_msg_has("rank_000001");
    read_fails(g_path, TF_PLAN_READ_ALL);
    read_fails(g_path, 2);
    assert_msg_has("dataset 'rank_000002/fetch/colptr' is missing");
    /* Ranks whose part is intact still load. */
    ck_assert_int_eq(tf_plan_read(g_path, 0, &ok), TF_OK);
    ck_assert_ptr_null(rank_diff(&g_plan.parts[0], &ok.parts[0]));
    tf_plan_free(&ok);
    ck_assert_int_eq(tf_plan_read(g_path, TF_PLAN_READ_HEADER, &ok), TF_OK);
    tf_plan_free(&ok);
    drop_fixture();
}
END_TEST

/* Format 3.0: the part tables, damaged behind a valid summary checksum. */
START_TEST(bad_part_tables_are_one_line_errors)
{
    write_fixture();
    char cut[700];
    snprintf(cut, sizeof cut, "%s/tables.h5", g_dir);
    tf_pl_parts t;
    ck_assert_int_eq(tf_pl_parts_of_plan(&g_plan, &t), TF_OK);
    const int P = t.nranks;
    ck_assert_int_eq(P, 3);
    int64_t *off = t.off;
    const int L = N_LOC, F = N_FBUF1;
    ck_assert_int_gt(off[1 * N_COUNTS + L], 0);
    /* The layout: every slice on a chunk boundary, the last chunk padded. */
    for (int p = 0; p < P; p++)
        for (int c = 0; c < N_COUNTS; c++)
            ck_assert_int_eq(off[p * N_COUNTS + c] % (t.chunk[c] ? t.chunk[c] : 1), 0);

    /* Offsets that go down. */
    copy_file(g_path, cut);
    hid_t f = open_rw(cut);
    int64_t keep = off[2 * N_COUNTS + L];
    off[2 * N_COUNTS + L] = off[1 * N_COUNTS + L] - 1;
    rewrite_tables(f, &g_plan, &t, P, P + 1);
    off[2 * N_COUNTS + L] = keep;
    H5Fclose(f);
    ck_assert_int_eq(read_fails(cut, 0), TF_ERR_FORMAT);
    assert_msg_has("dataset 'parts/offsets': local[2]");
    assert_msg_has("must not decrease");

    /* A slice longer than its room. */
    copy_file(g_path, cut);
    f = open_rw(cut);
    int64_t keep_nnz = t.rank[0].loc_nnz;
    t.rank[0].loc_nnz = off[1 * N_COUNTS + L] + 1;
    rewrite_tables(f, &g_plan, &t, P, P + 1);
    t.rank[0].loc_nnz = keep_nnz;
    H5Fclose(f);
    ck_assert_int_eq(read_fails(cut, 1), TF_ERR_FORMAT);
    assert_msg_has("rank 0's 'local' slice");
    assert_msg_has("does not fit");

    /* The last offset past the end of the datasets. */
    copy_file(g_path, cut);
    f = open_rw(cut);
    keep = off[P * N_COUNTS + F];
    off[P * N_COUNTS + F] += t.chunk[F];
    rewrite_tables(f, &g_plan, &t, P, P + 1);
    off[P * N_COUNTS + F] = keep;
    H5Fclose(f);
    ck_assert_int_eq(read_fails(cut, 0), TF_ERR_FORMAT);
    assert_msg_has("'parts/fetch/colptr' has");
    assert_msg_has("parts/offsets/colptr[3]");

    /* Tables for the wrong number of ranks. */
    copy_file(g_path, cut);
    f = open_rw(cut);
    rewrite_tables(f, &g_plan, &t, P - 1, P + 1);
    H5Fclose(f);
    ck_assert_int_eq(read_fails(cut, TF_PLAN_READ_HEADER), TF_ERR_FORMAT);
    assert_msg_has("dataset 'parts/ranks' has 2 elements, expected 3 (nranks)");
    copy_file(g_path, cut);
    f = open_rw(cut);
    rewrite_tables(f, &g_plan, &t, P, P);
    H5Fclose(f);
    ck_assert_int_eq(read_fails(cut, 0), TF_ERR_FORMAT);
    assert_msg_has("dataset 'parts/offsets' has 3 elements, expected 4 (nranks + 1)");

    /* A negative length. */
    copy_file(g_path, cut);
    f = open_rw(cut);
    t.rank[1].n_send = -4;
    rewrite_tables(f, &g_plan, &t, P, P + 1);
    H5Fclose(f);
    ck_assert_int_eq(read_fails(cut, 0), TF_ERR_FORMAT);
    assert_msg_has("n_send[1] = -4 is out of range");
    tf_pl_parts_free(&t);

    /* Without re-signing, the summary checksum notices any table edit. */
    copy_file(g_path, cut);
    f = open_rw(cut);
    hid_t ft = tf_pl_entry_type(0);
    tf_pl_rank_entry e[3];
    hid_t d = H5Dopen2(f, "parts/ranks", H5P_DEFAULT);
    ck_assert_int_ge(H5Dread(d, ft, H5S_ALL, H5S_ALL, H5P_DEFAULT, e), 0);
    e[2].checksum ^= 1;
    ck_assert_int_ge(H5Dwrite(d, ft, H5S_ALL, H5S_ALL, H5P_DEFAULT, e), 0);
    H5Dclose(d);
    H5Tclose(ft);
    H5Fclose(f);
    ck_assert_int_eq(read_fails(cut, TF_PLAN_READ_HEADER), TF_ERR_FORMAT);
    assert_msg_has("summary checksum mismatch");
    drop_fixture();
}
END_TEST

/* Plans written by 2.x (the fuzzing seeds are 2.2 files) still load. */
START_TEST(format_2_files_still_load)
{
    const char *names[] = {"s8_3ranks.h5", "metis_gcn_3ranks.h5", "mix3_fetch.h5"};
    for (int i = 0; i < 3; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/tests/fuzz/corpus_plan/%s", tf_test_srcdir(), names[i]);
        tf_plan p;
        ck_assert_msg(tf_plan_read(path, TF_PLAN_READ_ALL, &p) == TF_OK, "%s",
                      tf_error_message());
        ck_assert_int_eq(p.n_parts, p.nranks);
        int64_t nnz = 0;
        for (int r = 0; r < p.n_parts; r++)
            nnz += p.parts[r].loc_nnz + p.parts[r].coll_nnz + p.parts[r].fet_nnz;
        ck_assert_int_eq(nnz, p.nnz);
        tf_plan_free(&p);
    }
    assert_no_open_ids();
}
END_TEST

START_TEST(summary_checksum_covers_global_arrays)
{
    write_fixture();
    hid_t f = open_rw(g_path);
    int32_t v = g_plan.stripes.recipients[0] == 0 ? 1 : 0;
    patch_dset(f, "stripes/recipients", H5T_NATIVE_INT32, 0, &v);
    H5Fclose(f);
    ck_assert_int_eq(read_fails(g_path, TF_PLAN_READ_HEADER), TF_ERR_FORMAT);
    assert_msg_has("summary checksum mismatch");
    drop_fixture();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Writes that must fail cleanly                                         */

START_TEST(write_into_missing_directory)
{
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "/tmp/tf_no_such_dir_%d", (int)getpid());
    snprintf(path, sizeof path, "%s/sub/plan.h5", dir);
    tf_plan p;
    build_plan(&p, 1, 1);
    ck_assert_int_eq(tf_plan_write(path, &p, 3), TF_ERR_IO);
    assert_msg_has("No such file or directory");
    assert_no_open_ids();
    ck_assert_int_eq(access(dir, F_OK), -1);
    tf_plan_free(&p);
}
END_TEST

/* In a child (the limit must not outlive the test): a plan larger than
 * RLIMIT_FSIZE must fail, leave no temporary file and keep the old plan. */
START_TEST(write_under_file_size_limit)
{
    write_fixture();
    long before = file_size(g_path);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct rlimit rl = {64 * 1024, 64 * 1024};
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(10);
        tf_plan big;
        build_plan(&big, 20, 9);
        int st = tf_plan_write(g_path, &big, 1);
        tf_plan_free(&big);
        if (st == TF_OK)
            _exit(11);
        if (!strstr(tf_error_message(), g_path))
            _exit(12);
        if (dir_entries(g_dir, "plan.h5.tmp") != 0)
            _exit(13);
        if (H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) != 0)
            _exit(14);
        tf_plan_free(&g_plan);
        exit(0); /* exit, not _exit: LeakSanitizer checks the error path */
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    ck_assert_int_eq(dir_entries(g_dir, ""), 1);
    ck_assert_int_eq(file_size(g_path), before);
    check_roundtrip(g_path, &g_plan);
    drop_fixture();
}
END_TEST

/* A signal during the write: the child dies of it, and neither the plan
 * nor the temporary file is left behind. */
START_TEST(signal_during_write_removes_temporary)
{
    const int sigs[] = {SIGTERM, SIGINT};
    for (int k = 0; k < 2; k++) {
        char dir[512], path[600], tmp[700];
        tmpdir_new(dir, sizeof dir);
        snprintf(path, sizeof path, "%s/plan.h5", dir);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            tf_plan big;
            build_plan(&big, 300, 11);
            tf_plan_write(path, &big, 19); /* slow: a few MB at level 19 */
            _exit(0);
        }
        /* The temporary name is unique (tf_outpath): its prefix is known. */
        snprintf(tmp, sizeof tmp, "plan.h5.tmp.%d.", (int)pid);
        int seen = 0;
        for (int i = 0; i < 60000 && !seen; i++) {
            seen = dir_entries(dir, tmp) > 0;
            if (!seen)
                usleep(1000);
        }
        ck_assert_msg(seen, "temporary file never appeared");
        usleep(20000); /* into the data */
        kill(pid, sigs[k]);
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == sigs[k],
                      "child was not killed by signal %d (status %d)", sigs[k], status);
        ck_assert_int_eq(dir_entries(dir, ""), 0);
        tmpdir_rm(dir);
    }
}
END_TEST

/* ------------------------------------------------------------------ */

/* TF_TEST_ONLY=name runs a single test (Check itself selects only suites
 * and cases). */
static Suite *suite(void)
{
    const struct {
        const char *name;
        const TTest *test;
    } tests[] = {
#define T(t) {#t, t}
        T(roundtrip_every_field),
        T(roundtrip_levels_and_null_pointer_arrays),
        T(encoded_chunks_are_hdf5_pipeline_bytes),
        T(creation_date_filled_in_when_empty),
        T(writer_refuses_invalid_plans),
        T(zstd_filter_large_dataset_roundtrip),
        T(zstd_filter_rejects_bad_frames),
        T(zstd_register_survives_h5close),
        T(not_hdf5_and_missing_files),
        T(hdf5_without_format_attribute),
        T(newer_major_version_rejected_newer_minor_accepted),
        T(rank_stats_of_2_3_files_read_without_reuse_counts),
        T(alternative_plan_roundtrip_and_checks),
        T(runner_up_shares_datasets),
        T(matrix_kind_attributes_roundtrip_and_2_1_files),
        T(comm_attribute_roundtrip_and_2_2_files),
        T(work_partition_roundtrip),
        T(truncated_file),
        T(flipped_byte_in_compressed_chunk),
        T(chunk_skipping_filters_refused_before_reading),
        T(flipped_bytes_anywhere_never_go_unnoticed),
        T(checksum_catches_edit_of_part_dataset),
        T(structural_checks_behind_valid_checksums),
        T(wrong_type_or_size_names_the_dataset),
        T(wrong_type_or_rank_in_header_and_parts),
        T(missing_rank_group_and_dataset),
        T(bad_part_tables_are_one_line_errors),
        T(format_2_files_still_load),
        T(summary_checksum_covers_global_arrays),
        T(write_into_missing_directory),
        T(write_under_file_size_limit),
        T(signal_during_write_removes_temporary),
#undef T
    };
    const char *only = getenv("TF_TEST_ONLY");
    Suite *s = suite_create("plan_io");
    TCase *tc = tcase_create("plan_io");
    tcase_set_timeout(tc, 120);
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
        if (!only || strcmp(only, tests[i].name) == 0)
            tcase_add_test(tc, tests[i].test);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && argc <= 5 && strcmp(argv[1], "--write-sample") == 0) {
        int scale = argc > 3 ? atoi(argv[3]) : 1;
        int level = argc > 4 ? atoi(argv[4]) : TF_PLAN_ZSTD_DEFAULT;
        tf_plan p;
        build_plan(&p, scale > 0 ? scale : 1, 42);
        int st = tf_plan_write(argv[2], &p, level);
        tf_plan_free(&p);
        if (st != TF_OK)
            fprintf(stderr, "test_plan_io: %s\n", tf_error_message());
        return st == TF_OK ? 0 : 1;
    }
    if (argc == 3 && strcmp(argv[1], "--read") == 0) {
        tf_plan p;
        if (tf_plan_read(argv[2], TF_PLAN_READ_ALL, &p) != TF_OK) {
            fprintf(stderr, "test_plan_io: %s\n", tf_error_message());
            return 1;
        }
        int64_t nnz = 0;
        for (int r = 0; r < p.n_parts; r++)
            nnz += p.parts[r].loc_nnz + p.parts[r].coll_nnz + p.parts[r].fet_nnz;
        printf("%s: %d ranks, %lld x %lld, %lld nonzeros (%lld in the parts), mode %s\n", argv[2],
               p.nranks, (long long)p.m, (long long)p.n, (long long)p.nnz, (long long)nnz,
               tf_mode_name(p.mode));
        int ok = nnz == p.nnz;
        tf_plan_free(&p);
        return ok ? 0 : 1;
    }
    return tf_test_run_serial(suite());
}
