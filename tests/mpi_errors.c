/* Failures that reach every rank (run by tests/run_tests.sh at 1-4 ranks):
 * a plan file that is damaged, incomplete, not a plan at all, or whose
 * matrix fingerprint does not match its parts, opened with tf_open. Every
 * rank must return the same status with the same one-line message naming
 * the file, promptly, also when only one rank's part is damaged (the others
 * read theirs without trouble and must not wait for it forever).
 *
 * The same binary makes damaged files for tests/e2e_errors.sh, without
 * MPI (no MPI_Init in these modes):
 *   mpi_errors --not-a-plan PATH           HDF5 file without a plan in it
 *   mpi_errors --b PATH KIND N K           a B file for twoface-exec --b:
 *                                          KIND good | no-dataset | rows
 *                                          (N+1 rows) | one-d | float64 |
 *                                          nan | inf (element (N-1, K-1)
 *                                          not finite; twoface-gcn --features)
 *   mpi_errors --drop PLAN OBJECT          deletes a dataset or group
 *   mpi_errors --edit PLAN DATASET [RANK]  changes element 0 of DATASET, or
 *                                          with RANK the first element of
 *                                          rank RANK's slice of part array
 *                                          DATASET ("local/val": in
 *                                          parts/local/val), through HDF5
 *                                          (HDF5's own checks stay valid:
 *                                          only our checksum can notice)
 *   mpi_errors --flip-chunk PLAN DATASET [RANK]
 *                                          flips a byte in the middle of the
 *                                          first compressed chunk of DATASET,
 *                                          or of rank RANK's slice of part
 *                                          array DATASET
 *   mpi_errors --bad-fingerprint IN OUT    rewrites IN with another matrix
 *                                          fingerprint in its header
 * Each prints nothing and exits 0 on success, else one line and 1. */
#include "tf_test.h"

#include "tf_dense.h"
#include "tf_error.h"
#include "tf_h5zstd.h"
#include "tf_plan_io.h"
#include "tf_plan_layout.h"
#include "tf_planner.h"
#include "twoface.h"

#include <hdf5.h>
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- File surgery (serial, shared by the helper modes and the tests) ---- */

static int surgery_fail(const char *what, const char *path)
{
    return tf_fail(TF_ERR_HDF5, "%s: %s failed", path, what);
}

static int make_not_a_plan(const char *path)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0)
        return surgery_fail("H5Fcreate", path);
    hsize_t d[1] = {16};
    float v[16];
    for (int i = 0; i < 16; i++)
        v[i] = (float)i;
    hid_t sp = H5Screate_simple(1, d, NULL);
    hid_t ds = H5Dcreate2(f, "values", H5T_IEEE_F32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t e = ds >= 0 ? H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) : -1;
    if (ds >= 0)
        H5Dclose(ds);
    H5Sclose(sp);
    H5Fclose(f);
    return e < 0 ? surgery_fail("writing /values", path) : TF_OK;
}

static int make_b(const char *path, const char *kind, int64_t n, int64_t k)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0)
        return surgery_fail("H5Fcreate", path);
    int64_t rows = strcmp(kind, "rows") == 0 ? n + 1 : n;
    int one_d = strcmp(kind, "one-d") == 0;
    int f64 = strcmp(kind, "float64") == 0;
    const char *name = strcmp(kind, "no-dataset") == 0 ? "/A" : "/B";
    int nonfinite = strcmp(kind, "nan") == 0 ? 1 : strcmp(kind, "inf") == 0 ? 2 : 0;
    if (strcmp(kind, "good") && strcmp(kind, "rows") && !one_d && !f64 && !nonfinite &&
        strcmp(kind, "no-dataset")) {
        H5Fclose(f);
        return tf_fail(TF_ERR_ARG, "unknown B kind '%s'", kind);
    }
    size_t count = (size_t)(rows * k);
    float *v = malloc((count ? count : 1) * sizeof *v);
    double *w = malloc((count ? count : 1) * sizeof *w);
    tf_dense_fill(v, 1, 0, rows, k);
    if (nonfinite && count > 0)
        v[count - 1] = nonfinite == 1 ? NAN : INFINITY;
    for (size_t i = 0; i < count; i++)
        w[i] = v[i];
    hsize_t d2[2] = {(hsize_t)rows, (hsize_t)k}, d1[1] = {(hsize_t)count};
    hid_t sp = one_d ? H5Screate_simple(1, d1, NULL) : H5Screate_simple(2, d2, NULL);
    hid_t ds = H5Dcreate2(f, name, f64 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE, sp, H5P_DEFAULT,
                          H5P_DEFAULT, H5P_DEFAULT);
    herr_t e = ds < 0 ? -1
               : f64  ? H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, w)
                      : H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    if (ds >= 0)
        H5Dclose(ds);
    H5Sclose(sp);
    H5Fclose(f);
    free(v);
    free(w);
    return e < 0 ? surgery_fail("writing the B dataset", path) : TF_OK;
}

static int drop_object(const char *path, const char *obj)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0)
        return surgery_fail("H5Fopen", path);
    herr_t e = H5Ldelete(f, obj, H5P_DEFAULT);
    H5Fclose(f);
    return e < 0 ? surgery_fail("H5Ldelete", path) : TF_OK;
}

/* Where rank `rank`'s slice of part array `array` ("local/col") starts in
 * parts/<array>, and that dataset's name, from parts/offsets (format 3.0). */
static int slice_of(const char *path, const char *array, int rank, char *dset, size_t n,
                    hsize_t *at)
{
    int cnt = -1;
    for (int i = 0; i < N_RANK_ARRAYS; i++)
        if (strcmp(tf_pl_rank_arrays[i].name, array) == 0)
            cnt = tf_pl_rank_arrays[i].count;
    if (cnt < 0)
        return tf_fail(TF_ERR_ARG, "'%s' is not a part array", array);
    snprintf(dset, n, "%s/%s", PARTS_GROUP, array);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return surgery_fail("H5Fopen", path);
    hid_t d = H5Dopen2(f, PARTS_OFFSETS, H5P_DEFAULT);
    hid_t mt = H5Tcreate(H5T_COMPOUND, 8);
    hid_t fs = d >= 0 ? H5Dget_space(d) : -1;
    hsize_t one = 1, r = (hsize_t)rank;
    hid_t ms = H5Screate_simple(1, &one, NULL);
    int64_t v = -1;
    int ok = d >= 0 && fs >= 0 && H5Tinsert(mt, tf_pl_count_names[cnt], 0, H5T_NATIVE_INT64) >= 0 &&
             H5Sselect_hyperslab(fs, H5S_SELECT_SET, &r, NULL, &one, NULL) >= 0 &&
             H5Dread(d, mt, ms, fs, H5P_DEFAULT, &v) >= 0;
    H5Sclose(ms);
    if (fs >= 0)
        H5Sclose(fs);
    H5Tclose(mt);
    if (d >= 0)
        H5Dclose(d);
    H5Fclose(f);
    if (!ok)
        return surgery_fail("reading parts/offsets", path);
    *at = (hsize_t)v;
    return TF_OK;
}

/* Element 0 of an integer or float dataset changes (x -> x + 1), through
 * HDF5, so that its checksums and filters stay valid. */
static int edit_dataset(const char *path, const char *dset, hsize_t first)
{
    if (tf_h5zstd_register() != TF_OK)
        return TF_ERR_HDF5;
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0)
        return surgery_fail("H5Fopen", path);
    int st = TF_OK;
    hid_t d = H5Dopen2(f, dset, H5P_DEFAULT);
    hid_t sp = d >= 0 ? H5Dget_space(d) : -1;
    hid_t t = d >= 0 ? H5Dget_type(d) : -1;
    hssize_t n = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    if (d < 0 || sp < 0 || t < 0 || n < 1 + (hssize_t)first) {
        st = surgery_fail("opening a non-empty dataset", dset);
    } else {
        hsize_t at[1] = {first}, one[1] = {1};
        hid_t ms = H5Screate_simple(1, one, NULL);
        H5Sselect_elements(sp, H5S_SELECT_SET, 1, at);
        double v = 0;
        hid_t mt = H5T_NATIVE_DOUBLE;
        if (H5Dread(d, mt, ms, sp, H5P_DEFAULT, &v) < 0)
            st = surgery_fail("H5Dread", dset);
        v += 1.0;
        if (st == TF_OK && H5Dwrite(d, mt, ms, sp, H5P_DEFAULT, &v) < 0)
            st = surgery_fail("H5Dwrite", dset);
        H5Sclose(ms);
    }
    if (t >= 0)
        H5Tclose(t);
    if (sp >= 0)
        H5Sclose(sp);
    if (d >= 0)
        H5Dclose(d);
    H5Fclose(f);
    return st;
}

static int flip_chunk(const char *path, const char *dset, hsize_t first, long *where)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return surgery_fail("H5Fopen", path);
    hid_t d = H5Dopen2(f, dset, H5P_DEFAULT);
    hid_t sp = d >= 0 ? H5Dget_space(d) : -1;
    hsize_t off[1], nchunks = 0;
    unsigned mask = 0;
    haddr_t addr = 0;
    hsize_t size = 0;
    off[0] = first;
    int ok = sp >= 0 && H5Dget_num_chunks(d, sp, &nchunks) >= 0 && nchunks > 0 &&
             H5Dget_chunk_info_by_coord(d, off, &mask, &addr, &size) >= 0 && size > 8;
    if (sp >= 0)
        H5Sclose(sp);
    if (d >= 0)
        H5Dclose(d);
    H5Fclose(f);
    if (!ok)
        return tf_fail(TF_ERR_ARG, "%s: dataset '%s' is not chunked (too small?)", path, dset);
    *where = (long)(addr + size / 2);
    FILE *fp = fopen(path, "r+b");
    if (!fp)
        return tf_fail(TF_ERR_IO, "%s: cannot open", path);
    int c = fseek(fp, *where, SEEK_SET) == 0 ? fgetc(fp) : EOF;
    int w = c != EOF && fseek(fp, *where, SEEK_SET) == 0 && fputc(c ^ 0x10, fp) != EOF;
    w = fclose(fp) == 0 && w;
    return w ? TF_OK : tf_fail(TF_ERR_IO, "%s: cannot flip byte %ld", path, *where);
}

static int bad_fingerprint(const char *in, const char *out)
{
    tf_plan p;
    int st = tf_plan_read(in, TF_PLAN_READ_ALL, &p);
    if (st)
        return st;
    p.checksum ^= 0x5A5AULL;
    if (p.alt) /* the runner-up must describe the same (wrong) matrix */
        p.alt->checksum ^= 0x5A5AULL;
    st = tf_plan_write(out, &p, TF_PLAN_ZSTD_DEFAULT);
    tf_plan_free(&p);
    return st;
}

static int helper_main(int argc, char **argv)
{
    const char *mode = argv[1];
    int st;
    if (strcmp(mode, "--not-a-plan") == 0 && argc == 3)
        st = make_not_a_plan(argv[2]);
    else if (strcmp(mode, "--b") == 0 && argc == 6)
        st = make_b(argv[2], argv[3], atoll(argv[4]), atoll(argv[5]));
    else if (strcmp(mode, "--drop") == 0 && argc == 4)
        st = drop_object(argv[2], argv[3]);
    else if ((strcmp(mode, "--edit") == 0 || strcmp(mode, "--flip-chunk") == 0) &&
             (argc == 4 || argc == 5)) {
        char dset[96];
        hsize_t first = 0;
        snprintf(dset, sizeof dset, "%s", argv[3]);
        st = argc == 5 ? slice_of(argv[2], argv[3], atoi(argv[4]), dset, sizeof dset, &first)
                       : TF_OK;
        long at;
        if (st == TF_OK)
            st = mode[2] == 'e' ? edit_dataset(argv[2], dset, first)
                                : flip_chunk(argv[2], dset, first, &at);
    } else if (strcmp(mode, "--bad-fingerprint") == 0 && argc == 4)
        st = bad_fingerprint(argv[2], argv[3]);
    else
        st = tf_fail(TF_ERR_ARG, "unknown helper mode or wrong arguments: %s (see the header "
                                 "of tests/mpi_errors.c)", mode);
    if (st)
        fprintf(stderr, "mpi_errors: %s\n", tf_error_message());
    return st ? 1 : 0;
}

/* ---- MPI tests ----------------------------------------------------------- */

static int g_rank, g_size;
static char g_dir[256];

static int all_true(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* Every rank holds exactly rank 0's message, and it is not empty. */
static int same_message_everywhere(const char *msg)
{
    char m0[1024];
    memset(m0, 0, sizeof m0);
    snprintf(m0, sizeof m0, "%s", msg);
    MPI_Bcast(m0, (int)sizeof m0, MPI_CHAR, 0, MPI_COMM_WORLD);
    return all_true(strcmp(m0, msg) == 0 && msg[0] != '\0' && strchr(msg, '\n') == NULL);
}

/* Rank 0 writes a plan of a random matrix for the communicator's size (every
 * rank with rows and nonzeros of every kind) and applies `damage` to it. */
static void plan_file(const char *name, int (*damage)(const char *path), char *path, size_t n)
{
    int st = TF_OK;
    snprintf(path, n, "%s/%s.h5", g_dir, name);
    if (g_rank == 0) {
        tf_csr a;
        tf_test_random_csr(&a, 400, 400, 20000, 77);
        tf_plan_options o;
        tf_plan_options_default(&o);
        o.nranks = g_size;
        o.stripe_width = 8;
        tf_plan plan;
        st = tf_plan_build(&a, &o, &plan);
        if (st == TF_OK) {
            st = tf_plan_write(path, &plan, TF_PLAN_ZSTD_DEFAULT);
            tf_plan_free(&plan);
        }
        tf_csr_free(&a);
        if (st == TF_OK && damage)
            st = damage(path);
        if (st)
            fprintf(stderr, "plan_file %s: %s\n", name, tf_error_message());
    }
    ck_assert(all_true(st == TF_OK));
}

/* tf_open on every rank: the same failure everywhere, within a few seconds
 * (a rank waiting for another that gave up would hang until the Check
 * timeout). Returns the agreed message. */
static void open_fails_everywhere(const char *path, int expect_status, const char *expect_text,
                                  char *msg, size_t n)
{
    double t0 = MPI_Wtime();
    tf_handle *h = (tf_handle *)&t0; /* must come back NULL */
    int st = tf_open(path, MPI_COMM_WORLD, &h);
    double dt = MPI_Wtime() - t0;
    snprintf(msg, n, "%s", tf_last_error());
    ck_assert_msg(all_true(st == expect_status && h == NULL), "rank %d: status %d: %s", g_rank, st,
                  msg);
    ck_assert_msg(same_message_everywhere(msg), "rank %d: message differs: %s", g_rank, msg);
    ck_assert_msg(strstr(msg, expect_text) != NULL, "'%s' not in: %s", expect_text, msg);
    ck_assert_msg(all_true(dt < 30.0), "tf_open took %.1f s", dt);
}

static void remove_path(const char *path)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0)
        unlink(path);
}

static char g_last_rank_part[64];
static void set_last_rank(void)
{
    snprintf(g_last_rank_part, sizeof g_last_rank_part, "rank %d's", g_size - 1);
}

static int damage_edit_last_rank(const char *path)
{
    char d[96];
    hsize_t at;
    int st = slice_of(path, "local/rowptr", g_size - 1, d, sizeof d, &at);
    return st ? st : edit_dataset(path, d, at);
}

static int damage_drop_part_dataset(const char *path)
{
    return drop_object(path, "parts/fetch/colptr");
}

static int damage_flip_last_rank(const char *path)
{
    /* The largest array of the last rank is chunked and compressed. */
    static const char *const names[] = {"local/col", "collective/col", "fetch/row", "local/val",
                                        "collective/val", "fetch/val"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char d[96];
        long at;
        hsize_t first;
        H5E_auto2_t fn;
        void *data;
        H5Eget_auto2(H5E_DEFAULT, &fn, &data);
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
        int st = slice_of(path, names[i], g_size - 1, d, sizeof d, &first);
        if (st == TF_OK)
            st = flip_chunk(path, d, first, &at);
        H5Eset_auto2(H5E_DEFAULT, fn, data);
        if (st == TF_OK)
            return TF_OK;
    }
    return tf_fail(TF_ERR_INTERNAL, "%s: no chunk of the last rank's part to damage", path);
}

static int damage_fingerprint(const char *path) { return bad_fingerprint(path, path); }

/* Only the last rank's part is edited (values changed through HDF5, so that
 * HDF5 sees nothing wrong): only that rank fails its checksum, and every
 * rank reports its message. */
START_TEST(one_rank_part_edited)
{
    char path[512], msg[1024];
    plan_file("edited", damage_edit_last_rank, path, sizeof path);
    open_fails_everywhere(path, TF_ERR_FORMAT, g_last_rank_part, msg, sizeof msg);
    ck_assert_msg(strstr(msg, "checksum") != NULL, "%s", msg);
    ck_assert_msg(strncmp(msg, path, strlen(path)) == 0, "does not name the file: %s", msg);
    remove_path(path);
}
END_TEST

/* A flipped byte inside a compressed chunk of the last rank: HDF5's
 * Fletcher-32 filter catches it (a failed HDF5 read, TF_ERR_HDF5). */
START_TEST(one_rank_chunk_flipped)
{
    char path[512], msg[1024];
    plan_file("flipped", damage_flip_last_rank, path, sizeof path);
    open_fails_everywhere(path, TF_ERR_HDF5, g_last_rank_part, msg, sizeof msg);
    ck_assert_msg(strstr(msg, "checksum") != NULL, "%s", msg);
    ck_assert_msg(strncmp(msg, path, strlen(path)) == 0, "does not name the file: %s", msg);
    remove_path(path);
}
END_TEST

/* A part dataset is missing: every rank fails alike. */
START_TEST(part_dataset_missing)
{
    char path[512], msg[1024];
    plan_file("dropped", damage_drop_part_dataset, path, sizeof path);
    open_fails_everywhere(path, TF_ERR_FORMAT, "'parts/fetch/colptr'", msg, sizeof msg);
    ck_assert_msg(strstr(msg, "missing") != NULL, "%s", msg);
    remove_path(path);
}
END_TEST

/* A consistent file whose header fingerprint is not that of its parts:
 * every rank reads its part without complaint; only the sum over the ranks
 * shows it. */
START_TEST(fingerprint_mismatch_in_file)
{
    char path[512], msg[1024];
    plan_file("fingerprint", damage_fingerprint, path, sizeof path);
    open_fails_everywhere(path, TF_ERR_FORMAT, "fingerprint mismatch", msg, sizeof msg);
    remove_path(path);
}
END_TEST

static int damage_truncate(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || truncate(path, sb.st_size / 2) != 0)
        return tf_fail(TF_ERR_IO, "%s: cannot truncate", path);
    return TF_OK;
}

static int damage_not_hdf5(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return tf_fail(TF_ERR_IO, "%s: cannot write", path);
    fputs("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n", f);
    return fclose(f) == 0 ? TF_OK : tf_fail(TF_ERR_IO, "%s: cannot write", path);
}

static int damage_replace_by_other_hdf5(const char *path) { return make_not_a_plan(path); }

/* Files that are not plans, or not whole ones: every rank fails alike. */
START_TEST(files_that_are_not_plans)
{
    char path[512], msg[1024];
    plan_file("truncated", damage_truncate, path, sizeof path);
    open_fails_everywhere(path, TF_ERR_FORMAT, path, msg, sizeof msg);
    remove_path(path);
    plan_file("text", damage_not_hdf5, path, sizeof path);
    open_fails_everywhere(path, TF_ERR_FORMAT, "not an HDF5 file", msg, sizeof msg);
    remove_path(path);
    plan_file("other", damage_replace_by_other_hdf5, path, sizeof path);
    open_fails_everywhere(path, TF_ERR_FORMAT, path, msg, sizeof msg);
    remove_path(path);
    open_fails_everywhere(g_dir, TF_ERR_IO, "directory", msg, sizeof msg);
    char missing[600];
    snprintf(missing, sizeof missing, "%s/none.h5", g_dir);
    open_fails_everywhere(missing, TF_ERR_IO, missing, msg, sizeof msg);
}
END_TEST

/* Every rank reads its own copy where there is no shared file system, and
 * one node's copy may be another plan of the same matrix. With the last
 * rank's plan of another mode (the others' carrying a runner-up the last
 * one lacks) or another stripe width, the ranks waited for each other in
 * the start-up trial or ran on schedules that did not match; now every rank
 * stops in tf_open with one message. */
static int g_other_mode, g_other_width;
static int damage_other_plan(const char *path)
{
    tf_csr a;
    tf_test_random_csr(&a, 400, 400, 20000, 77);
    tf_plan_options o;
    tf_plan_options_default(&o);
    o.nranks = g_size;
    o.stripe_width = g_other_width;
    o.mode = g_other_mode;
    tf_plan plan;
    int st = tf_plan_build(&a, &o, &plan);
    if (st == TF_OK) {
        st = tf_plan_write(path, &plan, TF_PLAN_ZSTD_DEFAULT);
        tf_plan_free(&plan);
    }
    tf_csr_free(&a);
    return st;
}

START_TEST(ranks_open_different_plans)
{
    char path[512], other[512], msg[1024];
    plan_file("same", NULL, path, sizeof path);
    const int variants[3][2] = {{TF_MODE_FETCH, 8}, {TF_MODE_COLLECTIVE, 8}, {TF_MODE_TWOFACE, 16}};
    for (int v = 0; v < 3; v++) {
        g_other_mode = variants[v][0];
        g_other_width = variants[v][1];
        plan_file("other", damage_other_plan, other, sizeof other);
        const char *mine = g_rank == g_size - 1 ? other : path;
        if (g_size == 1) {
            tf_handle *h = NULL;
            ck_assert_msg(tf_open(mine, MPI_COMM_WORLD, &h) == TF_OK, "%s", tf_last_error());
            tf_close(h);
        } else {
            char want[128];
            snprintf(want, sizeof want, "rank %d holds another plan than rank 0", g_size - 1);
            open_fails_everywhere(mine, TF_ERR_FORMAT, want, msg, sizeof msg);
        }
        remove_path(other);
    }
    /* Two copies of one plan are the same plan. */
    snprintf(other, sizeof other, "%s/copy.h5", g_dir);
    if (g_rank == 0) {
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path, other);
        ck_assert_int_eq(system(cmd), 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    tf_handle *h = NULL;
    ck_assert_msg(all_true(tf_open(g_rank % 2 ? other : path, MPI_COMM_WORLD, &h) == TF_OK),
                  "%s", tf_last_error());
    tf_close(h);
    remove_path(other);
    remove_path(path);
}
END_TEST

/* A file missing on one node only (each reads its own copy): the agreed
 * message says on which rank, since the name alone does not. */
START_TEST(plan_missing_on_one_rank)
{
    char path[512], missing[600], msg[1024];
    plan_file("present", NULL, path, sizeof path);
    snprintf(missing, sizeof missing, "%s/absent.h5", g_dir);
    if (g_size > 1) {
        char want[128];
        snprintf(want, sizeof want, "absent.h5: cannot open: No such file or directory (rank %d; "
                 "1 of %d ranks cannot read it)", g_size - 1, g_size);
        open_fails_everywhere(g_rank == g_size - 1 ? missing : path, TF_ERR_IO, want, msg,
                              sizeof msg);
    }
    /* Missing everywhere: the plain message. */
    open_fails_everywhere(missing, TF_ERR_IO, "absent.h5: cannot open", msg, sizeof msg);
    ck_assert_ptr_null(strstr(msg, "ranks cannot read it"));
    remove_path(path);
}
END_TEST

static Suite *make_suite(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    set_last_rank();
    if (g_rank == 0) {
        const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        snprintf(g_dir, sizeof g_dir, "%s/tf_mpi_errors.XXXXXX", tmp);
        if (!mkdtemp(g_dir))
            abort();
    }
    MPI_Bcast(g_dir, (int)sizeof g_dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    Suite *s = suite_create("mpi_errors");
    TCase *tc = tcase_create("errors");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, one_rank_part_edited);
    tcase_add_test(tc, one_rank_chunk_flipped);
    tcase_add_test(tc, part_dataset_missing);
    tcase_add_test(tc, fingerprint_mismatch_in_file);
    tcase_add_test(tc, files_that_are_not_plans);
    tcase_add_test(tc, ranks_open_different_plans);
    tcase_add_test(tc, plan_missing_on_one_rank);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strncmp(argv[1], "--", 2) == 0)
        return helper_main(argc, argv);
    int rc = tf_test_run_mpi(&argc, &argv, make_suite);
    /* tf_test_run_mpi has finalised MPI; every rank saw its last file
     * removed by rank 0 before that. */
    if (g_rank == 0)
        rmdir(g_dir);
    return rc;
}
