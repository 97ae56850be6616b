/* The GCN trainer's serial parts (gnn/): the counter-based generator, Glorot
 * init, early stopping, Adam, the softmax cross-entropy and its gradient, the
 * dense kernels against naive loops, and the input readers (features from
 * Matrix Market and from HDF5 give the same rows, labels and split lines,
 * their error messages). */
#include "tf_test.h"

#include "tf_dense_h5.h"
#include "tf_error.h"
#include "tf_gnn_adam.h"
#include "tf_gnn_data.h"
#include "tf_gnn_dense.h"
#include "tf_kernels.h"
#include "tf_gnn_features.h"
#include "tf_gnn_init.h"
#include "tf_gnn_labels.h"
#include "tf_gnn_loss.h"
#include "tf_gnn_rng.h"
#include "tf_gnn_rows.h"
#include "tf_gnn_stop.h"

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

START_TEST(rng_is_a_function_of_its_key)
{
    uint64_t k1 = tf_gnn_rng_key(7, 3, TF_GNN_RNG_DROP_INPUT);
    ck_assert(k1 == tf_gnn_rng_key(7, 3, TF_GNN_RNG_DROP_INPUT));
    ck_assert(k1 != tf_gnn_rng_key(7, 4, TF_GNN_RNG_DROP_INPUT));
    ck_assert(k1 != tf_gnn_rng_key(8, 3, TF_GNN_RNG_DROP_INPUT));
    ck_assert(k1 != tf_gnn_rng_key(7, 3, TF_GNN_RNG_DROP_HIDDEN));
    /* Uniform enough for dropout: the mean and the kept share of 1e5 draws. */
    double sum = 0;
    int kept = 0;
    for (int i = 0; i < 100000; i++) {
        double u = tf_gnn_rng_u01(tf_gnn_rng_node(k1, (uint64_t)i / 10), (uint64_t)i % 10);
        ck_assert(u >= 0 && u < 1);
        sum += u;
        kept += u >= 0.5;
    }
    ck_assert(fabs(sum / 1e5 - 0.5) < 0.01);
    ck_assert(abs(kept - 50000) < 1000);
}
END_TEST

START_TEST(glorot_range_and_determinism)
{
    double a[30 * 7], b[30 * 7];
    tf_gnn_glorot(5, 0, 30, 7, a);
    tf_gnn_glorot(5, 0, 30, 7, b);
    ck_assert(memcmp(a, b, sizeof a) == 0);
    double r = sqrt(6.0 / 37), mx = 0;
    for (int i = 0; i < 30 * 7; i++) {
        ck_assert(fabs(a[i]) <= r);
        mx = fabs(a[i]) > mx ? fabs(a[i]) : mx;
    }
    ck_assert(mx > 0.8 * r);
    tf_gnn_glorot(5, 1, 30, 7, b);
    ck_assert(memcmp(a, b, sizeof a) != 0);
}
END_TEST

START_TEST(early_stopping_rule)
{
    tf_gnn_stop s;
    ck_assert_int_eq(tf_gnn_stop_init(&s, 3), TF_OK);
    /* Epochs 0..3 never stop (e > patience needed), whatever the loss. */
    double l[] = {5, 4, 3, 9, 2, 2.5, 2.4};
    int want[] = {0, 0, 0, 0, 0, 0, 1};
    /* e=4: mean(4,3,9)=5.33 > 2; e=5: mean(3,9,2)=4.67 > 2.5; e=6: mean(9,2,2.5)=4.5 > 2.4
     * would not stop: replace by a rising loss. */
    l[6] = 4.6;
    for (int e = 0; e < 7; e++)
        ck_assert_int_eq(tf_gnn_stop_update(&s, l[e]), want[e]);
    tf_gnn_stop_free(&s);
    ck_assert_int_eq(tf_gnn_stop_init(&s, 0), TF_OK);
    for (int e = 0; e < 50; e++)
        ck_assert_int_eq(tf_gnn_stop_update(&s, e), 0);
    tf_gnn_stop_free(&s);
}
END_TEST

START_TEST(adam_first_steps)
{
    tf_gnn_adam a;
    ck_assert_int_eq(tf_gnn_adam_init(&a, 2, 0.1), TF_OK);
    double w[2] = {1, -1}, g[2] = {0.5, -2};
    /* Step 1: m^ = g, v^ = g^2, so each weight moves by lr * sign(g). */
    tf_gnn_adam_step(&a, w, g);
    ck_assert(fabs(w[0] - 0.9) < 1e-7 && fabs(w[1] + 0.9) < 1e-7);
    /* Step 2 with the same gradient: again lr * sign(g). */
    tf_gnn_adam_step(&a, w, g);
    ck_assert(fabs(w[0] - 0.8) < 1e-7 && fabs(w[1] + 0.8) < 1e-7);
    tf_gnn_adam_free(&a);
}
END_TEST

START_TEST(xent_gradient_by_differences)
{
    tf_gnn_data d;
    memset(&d, 0, sizeof d);
    int32_t label[4] = {0, 2, 0, 2};
    int8_t split[4] = {TF_GNN_TRAIN, TF_GNN_TRAIN, TF_GNN_VAL, TF_GNN_NONE};
    d.nrows = 4;
    d.classes = 3;
    d.label = label;
    d.split = split;
    float z[12] = {1, 2, 0.5f, -1, 0, 3, 2, 2, 1, 0, 0, 0}, g[12];
    tf_gnn_sums s;
    tf_gnn_xent(z, &d, 2, &s, g);
    ck_assert(s.correct[TF_GNN_TRAIN] == 1 && s.correct[TF_GNN_VAL] == 1); /* tie: first */
    for (int q = 0; q < 12; q++) {
        float z2[12];
        memcpy(z2, z, sizeof z);
        tf_gnn_sums sp, sm;
        z2[q] = z[q] + 1e-3f;
        tf_gnn_xent(z2, &d, 2, &sp, NULL);
        z2[q] = z[q] - 1e-3f;
        tf_gnn_xent(z2, &d, 2, &sm, NULL);
        double h = (double)(z[q] + 1e-3f) - (double)z[q];
        double fd = (sp.loss[TF_GNN_TRAIN] - sm.loss[TF_GNN_TRAIN]) / (2 * h) / 2; /* ntrain */
        ck_assert_msg(fabs(fd - g[q]) < 1e-3, "z[%d]: %g vs %g", q, fd, g[q]);
    }
}
END_TEST

START_TEST(dense_kernels_match_loops)
{
    enum { N = 5, A = 3, B = 4 };
    float h[N * A], g[N * B], out[N * B], back[N * A];
    double w[A * B], gw[A * B] = {0};
    for (int i = 0; i < N * A; i++)
        h[i] = (float)((i * 7) % 5) - 2;
    for (int i = 0; i < N * B; i++)
        g[i] = (float)((i * 3) % 7) - 3;
    for (int i = 0; i < A * B; i++)
        w[i] = 0.25 * (i % 5) - 0.5;
    tf_gnn_hw(h, N, A, w, B, out);
    tf_gnn_htg(h, N, A, g, B, gw);
    tf_gnn_gwt(g, N, B, w, A, back);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < B; j++) {
            double s = 0;
            for (int p = 0; p < A; p++)
                s += h[i * A + p] * w[p * B + j];
            ck_assert(fabs(s - out[i * B + j]) < 1e-6);
        }
    for (int p = 0; p < A; p++)
        for (int j = 0; j < B; j++) {
            double s = 0;
            for (int i = 0; i < N; i++)
                s += h[i * A + p] * g[i * B + j];
            ck_assert(fabs(s - gw[p * B + j]) < 1e-9);
        }
    for (int i = 0; i < N; i++)
        for (int p = 0; p < A; p++) {
            double s = 0;
            for (int j = 0; j < B; j++)
                s += g[i * B + j] * w[p * B + j];
            ck_assert(fabs(s - back[i * A + p]) < 1e-6);
        }
    /* X.W and X^T.G with dropout: dense loops over the same masks. */
    tf_csr x;
    tf_test_random_csr(&x, N, A, 9, 3);
    int64_t ids[N] = {10, 11, 12, 13, 14};
    tf_gnn_drop dr = {tf_gnn_rng_key(1, 2, TF_GNN_RNG_DROP_INPUT), 0.5};
    double gx[A * B] = {0};
    tf_gnn_xw(&x, ids, &dr, w, B, out);
    tf_gnn_xtg(&x, ids, &dr, g, B, gx);
    double ref_out[N * B] = {0}, ref_gx[A * B] = {0};
    for (int i = 0; i < N; i++)
        for (int64_t e = x.rowptr[i]; e < x.rowptr[i + 1]; e++) {
            double v = x.val[e] * tf_gnn_drop_factor(&dr, tf_gnn_rng_node(dr.key, 10 + i), x.col[e]);
            for (int j = 0; j < B; j++) {
                ref_out[i * B + j] += v * w[x.col[e] * B + j];
                ref_gx[x.col[e] * B + j] += v * g[i * B + j];
            }
        }
    for (int q = 0; q < N * B; q++)
        ck_assert(fabs(ref_out[q] - out[q]) < 1e-5);
    for (int q = 0; q < A * B; q++)
        ck_assert(fabs(ref_gx[q] - gx[q]) < 1e-9);
    tf_csr_free(&x);
}
END_TEST

/* The register-tiled paths: widths 16 (the hidden layer's tile) and 20 (a tile
 * and a remainder), rows of X longer than the 256-entry dropout chunk, in
 * every kernel variant this CPU runs, against a double reference. */
START_TEST(dense_tiles_every_variant)
{
    enum { N = 6, A = 600 };
    int nv = 0;
    const char *const *names = tf_kern_variants(&nv);
    tf_csr x;
    tf_test_random_csr(&x, N, A, 2400, 17); /* about 400 per row: above the 256-entry chunk */
    int64_t longest = 0;
    for (int i = 0; i < N; i++)
        if (x.rowptr[i + 1] - x.rowptr[i] > longest)
            longest = x.rowptr[i + 1] - x.rowptr[i];
    ck_assert_int_gt(longest, 256);
    int64_t ids[N] = {3, 1, 4, 1000, 5, 9};
    for (int bw = 16; bw <= 20; bw += 4) {
        double *w = malloc(sizeof(double) * A * bw);
        float *out = malloc(sizeof(float) * N * bw), *g = malloc(sizeof(float) * N * bw);
        double *ref = calloc((size_t)N * bw, sizeof(double));
        ck_assert(w && out && g && ref);
        for (int q = 0; q < A * bw; q++)
            w[q] = 0.01 * (q % 13) - 0.06;
        for (int q = 0; q < N * bw; q++)
            g[q] = (float)(q % 5) - 2.0f;
        tf_gnn_drop dr = {tf_gnn_rng_key(7, 3, TF_GNN_RNG_DROP_INPUT), 0.5};
        for (int i = 0; i < N; i++)
            for (int64_t e = x.rowptr[i]; e < x.rowptr[i + 1]; e++) {
                double v = x.val[e] *
                           tf_gnn_drop_factor(&dr, tf_gnn_rng_node(dr.key, (uint64_t)ids[i]),
                                              x.col[e]);
                for (int j = 0; j < bw; j++)
                    ref[i * bw + j] += v * w[x.col[e] * bw + j];
            }
        for (int v = 0; v < nv; v++) {
            if (!tf_kern_available(names[v]))
                continue;
            ck_assert_int_eq(tf_kern_select(names[v]), TF_OK);
            double *gx = calloc((size_t)A * bw, sizeof(double));
            ck_assert(gx);
            tf_gnn_xw(&x, ids, &dr, w, bw, out);
            tf_gnn_xtg(&x, ids, &dr, g, bw, gx);
            for (int q = 0; q < N * bw; q++)
                ck_assert_msg(fabs(ref[q] - out[q]) < 1e-4, "%s, width %d: X.W[%d] = %g, expected %g",
                              names[v], bw, q, out[q], ref[q]);
            for (int i = 0; i < N; i++)
                for (int64_t e = x.rowptr[i]; e < x.rowptr[i + 1]; e++) {
                    double f = tf_gnn_drop_factor(&dr, tf_gnn_rng_node(dr.key, (uint64_t)ids[i]),
                                                  x.col[e]);
                    for (int j = 0; j < bw; j++)
                        gx[x.col[e] * bw + j] -= x.val[e] * f * g[i * bw + j];
                }
            for (int q = 0; q < A * bw; q++)
                ck_assert_msg(fabs(gx[q]) < 1e-9, "%s, width %d: X^T.G[%d] off by %g", names[v],
                              bw, q, gx[q]);
            free(gx);
        }
        free(w);
        free(out);
        free(g);
        free(ref);
    }
    tf_kern_select(NULL);
    tf_csr_free(&x);
}
END_TEST

static void data_for(tf_gnn_data *d, int64_t n, const int64_t *ids, int64_t nrows)
{
    memset(d, 0, sizeof *d);
    d->n = n;
    d->nrows = nrows;
    d->ids = ids;
}

START_TEST(features_mtx_and_h5_agree)
{
    const char mtx[] = "%%MatrixMarket matrix coordinate real general\n4 3 5\n1 1 1\n2 3 2.5\n"
                       "3 2 4\n4 1 1\n4 3 3\n";
    const char *mp = tf_test_tmpfile(0, ".mtx", mtx, sizeof mtx - 1);
    float dense[12] = {1, 0, 0, 0, 0, 2.5f, 0, 4, 0, 1, 0, 3};
    char h5[300], spec[320];
    snprintf(h5, sizeof h5, "%s/tftest_%d_feat.h5", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    ck_assert_int_eq(tf_dense_h5_write(h5, "/X", 4, 3, dense), TF_OK);
    snprintf(spec, sizeof spec, "%s:/X", h5);
    int64_t ids[2] = {3, 1}; /* any order: a permuted plan's rows */
    tf_gnn_data a, b;
    data_for(&a, 4, ids, 2);
    data_for(&b, 4, ids, 2);
    ck_assert_int_eq(tf_gnn_features_read(mp, &a), TF_OK);
    ck_assert_int_eq(tf_gnn_features_read(spec, &b), TF_OK);
    ck_assert_int_eq(a.x.nnz, 3);
    ck_assert_int_eq(b.x.nnz, 3);
    for (int64_t e = 0; e < 3; e++) {
        ck_assert_int_eq(a.x.col[e], b.x.col[e]);
        ck_assert(a.x.val[e] == b.x.val[e]);
    }
    ck_assert(a.x.rowptr[1] == 2 && a.x.val[0] == 1 && a.x.val[1] == 3 && a.x.val[2] == 2.5f);
    tf_gnn_row_normalise(&a.x);
    ck_assert(fabs(a.x.val[0] - 0.25) < 1e-7 && fabs(a.x.val[2] - 1) < 1e-7);
    tf_gnn_data_free(&a);
    tf_gnn_data_free(&b);
    tf_gnn_data c;
    data_for(&c, 5, ids, 2);
    ck_assert_int_eq(tf_gnn_features_read(spec, &c), TF_ERR_FORMAT);
    ck_assert(strstr(tf_error_message(), "4 rows of features, but the plan's graph has 5 nodes"));
    tf_gnn_data_free(&c);
    unlink(h5);
    unlink(mp);
}
END_TEST

START_TEST(labels_and_split_lines)
{
    const char lab[] = "2\r\n 0 \n1\n\t3\n";
    const char spl[] = "train\nnone\ntest\nval\n";
    const char *lp = tf_test_tmpfile(1, ".txt", lab, sizeof lab - 1);
    const char *sp = tf_test_tmpfile(2, ".txt", spl, sizeof spl - 1);
    int64_t ids[2] = {3, 0};
    int32_t *map;
    ck_assert_int_eq(tf_gnn_id_map(ids, 2, 4, &map), TF_OK);
    tf_gnn_data d;
    data_for(&d, 4, ids, 2);
    ck_assert_int_eq(tf_gnn_labels_read(lp, map, &d), TF_OK);
    ck_assert_int_eq(tf_gnn_split_read(sp, map, &d), TF_OK);
    ck_assert(d.label[0] == 3 && d.label[1] == 2 && d.classes == 4);
    ck_assert(d.split[0] == TF_GNN_VAL && d.split[1] == TF_GNN_TRAIN);
    tf_gnn_data_free(&d);
    const char *bad[][2] = {{"0\n1\n\n2\n", ":3: blank line, but node 2 needs one"},
                            {"0\n1\n2.5\n2\n", ":3: expected a class 0..4095, got '2.5'"},
                            {"0\n1\n4096\n2\n", ":3: expected a class"},
                            {"0\n1\n2\n", ":4: the file ends after 3 lines"}};
    for (int i = 0; i < 4; i++) {
        const char *p = tf_test_tmpfile(3, ".txt", bad[i][0], strlen(bad[i][0]));
        data_for(&d, 4, ids, 2);
        ck_assert_int_eq(tf_gnn_labels_read(p, map, &d), TF_ERR_PARSE);
        ck_assert_msg(strstr(tf_error_message(), bad[i][1]), "%s", tf_error_message());
        tf_gnn_data_free(&d);
        unlink(p);
    }
    const char *p = tf_test_tmpfile(3, ".txt", "train\nTrain\n", 12);
    data_for(&d, 4, ids, 2);
    ck_assert_int_eq(tf_gnn_split_read(p, map, &d), TF_ERR_PARSE);
    ck_assert(strstr(tf_error_message(), ":2: expected train, val, test or none, got 'Train'"));
    tf_gnn_data_free(&d);
    unlink(p);
    unlink(lp);
    unlink(sp);
    free(map);
}
END_TEST

static const char *h5_path(const char *name)
{
    static char buf[400];
    snprintf(buf, sizeof buf, "%s/tftest_%d_%s.h5", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid(), name);
    return buf;
}

static void expect_features_fail(const char *spec, int status, const char *needle)
{
    int64_t ids[4] = {0, 1, 2, 3};
    tf_gnn_data d;
    data_for(&d, 4, ids, 4);
    ck_assert_int_eq(tf_gnn_features_read(spec, &d), status);
    ck_assert_msg(strstr(tf_error_message(), needle), "'%s' lacks '%s'", tf_error_message(),
                  needle);
    tf_gnn_data_free(&d);
}

/* HDF5 features agree with the Matrix Market reader: no NaN, no Inf, and a
 * row needs at least one feature. */
START_TEST(features_must_be_finite_and_present)
{
    char spec[1000];
    const char *h5 = h5_path("nan");
    float dense[12] = {1, 0, 0, 0, 0, 2.5f, 0, 4, 0, 1, 0, 3};
    const float bad[3] = {NAN, INFINITY, -INFINITY};
    const char *shown[3] = {"nan", "inf", "-inf"};
    for (int k = 0; k < 3; k++) {
        dense[2 * 3 + 1] = bad[k];
        ck_assert_int_eq(tf_dense_h5_write(h5, "/X", 4, 3, dense), TF_OK);
        snprintf(spec, sizeof spec, "%s:/X", h5);
        char needle[200];
        snprintf(needle, sizeof needle, "dataset /X, row 2, column 1 (from 0): %s is not a finite "
                 "number", shown[k]);
        expect_features_fail(spec, TF_ERR_FORMAT, needle);
    }
    /* The same value in Matrix Market: refused by its reader, naming the line. */
    const char mtx[] = "%%MatrixMarket matrix coordinate real general\n4 3 2\n1 1 1\n3 2 nan\n";
    const char *mp = tf_test_tmpfile(0, ".mtx", mtx, sizeof mtx - 1);
    expect_features_fail(mp, TF_ERR_PARSE, ":4:");
    unlink(mp);
    /* Width 0 */
    ck_assert_int_eq(tf_dense_h5_write(h5, "/E", 4, 0, dense), TF_OK);
    snprintf(spec, sizeof spec, "%s:/E", h5);
    expect_features_fail(spec, TF_ERR_FORMAT, "dataset /E has no columns");
    const char mtx0[] = "%%MatrixMarket matrix coordinate real general\n4 0 0\n";
    mp = tf_test_tmpfile(0, ".mtx", mtx0, sizeof mtx0 - 1);
    expect_features_fail(mp, TF_ERR_FORMAT, "no feature columns");
    unlink(mp);
    /* An HDF5 file without its dataset: the hint, not its bytes. */
    snprintf(spec, sizeof spec, "%s: this is an HDF5 file; did you mean %s:/dataset?", h5, h5);
    expect_features_fail(h5, TF_ERR_ARG, spec);
    unlink(h5);
}
END_TEST

/* A rows x cols float32 dataset /X in chunks of 1 x 1024 that are never
 * written: a file of a few hundred bytes, whatever its width. */
static void write_wide(const char *path, hsize_t rows, hsize_t cols)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t d[2] = {rows, cols}, c[2] = {1, 1024};
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    ck_assert(f >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, 2, c) >= 0);
    hid_t sp = H5Screate_simple(2, d, NULL);
    hid_t x = H5Dcreate2(f, "/X", H5T_IEEE_F32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    ck_assert(x >= 0);
    H5Dclose(x);
    H5Sclose(sp);
    H5Pclose(dcpl);
    H5Fclose(f);
}

/* HDF5 features as wide as their dims say, not as the file's bytes: a
 * width past 32 bits is refused (4 x 2^62 made the buffers' sizes wrap to
 * 0 and the reader run off them), one that does not fit the memory
 * available is refused before allocating, and wide rows that fit are read
 * (a bounce buffer of 4096 rows was allocated whatever the rows asked
 * for: 64 GB for 4 rows of 4 M floats, "out of memory"). */
START_TEST(wide_h5_features_bounded)
{
    char spec[1000];
    const char *h5 = h5_path("wide");
    snprintf(spec, sizeof spec, "%s:/X", h5);
    write_wide(h5, 4, (hsize_t)1 << 62);
    expect_features_fail(spec, TF_ERR_RANGE,
                         "dataset /X has 4611686018427387904 columns, more than 2147483647");
    setenv("TWOFACE_MEM_AVAILABLE_MIB", "256", 1);
    write_wide(h5, 4, 100000000);
    expect_features_fail(spec, TF_ERR_NOMEM, "dataset /X: 4 x 100000000 dense features on this "
                         "rank: need 3.0 GiB, more than the 256.0 MiB TWOFACE_MEM_AVAILABLE_MIB");
    write_wide(h5, 4, 4000000);
    int64_t ids[4] = {0, 1, 2, 3};
    tf_gnn_data d;
    data_for(&d, 4, ids, 4);
    ck_assert_msg(tf_gnn_features_read(spec, &d) == TF_OK, "%s", tf_error_message());
    ck_assert_int_eq(d.x.ncols, 4000000);
    ck_assert_int_eq(d.x.nnz, 0); /* the fill value */
    tf_gnn_data_free(&d);
    unsetenv("TWOFACE_MEM_AVAILABLE_MIB");
    unlink(h5);
}
END_TEST

START_TEST(labels_blank_binary_and_trailing_lines)
{
    int64_t ids[2] = {3, 0};
    int32_t *map;
    ck_assert_int_eq(tf_gnn_id_map(ids, 2, 4, &map), TF_OK);
    tf_gnn_data d;
    /* Trailing blank lines are accepted. */
    const char ok_text[] = "2\n0\n1\n3\n\n \n\r\n";
    const char *p = tf_test_tmpfile(3, ".txt", ok_text, sizeof ok_text - 1);
    data_for(&d, 4, ids, 2);
    ck_assert_msg(tf_gnn_labels_read(p, map, &d) == TF_OK, "%s", tf_error_message());
    ck_assert(d.label[0] == 3 && d.label[1] == 2);
    tf_gnn_data_free(&d);
    unlink(p);
    const char *bad[][2] = {{"0\n1\n2\n3\n\n5\n", ":6: more than 4 lines"},
                            {"0\n1\n2\n\n", ":4: blank line, but node 3 needs one"},
                            {"0\n\x01\xff\x1b[2J\n2\n3\n", ":2: expected a class 0..4095, "
                                                                "got '\\x01\\xff\\x1b[2J'"}};
    for (int i = 0; i < 3; i++) {
        p = tf_test_tmpfile(3, ".txt", bad[i][0], strlen(bad[i][0]));
        data_for(&d, 4, ids, 2);
        ck_assert_int_eq(tf_gnn_labels_read(p, map, &d), TF_ERR_PARSE);
        ck_assert_msg(strstr(tf_error_message(), bad[i][1]), "'%s' lacks '%s'",
                      tf_error_message(), bad[i][1]);
        tf_gnn_data_free(&d);
        unlink(p);
    }
    /* A line of 5000 bytes: refused by its length, as /dev/zero is, which
     * the reader used to take whole until the process was killed. */
    static char longline[5008];
    for (int which = 0; which < 2; which++) {
        memset(longline, 0, sizeof longline);
        memcpy(longline, which ? "val\n" : "0\n", which ? 4 : 2);
        memset(longline + strlen(longline), '7', 5000);
        strcat(longline, "\n");
        p = tf_test_tmpfile(3, ".txt", longline, strlen(longline));
        data_for(&d, 4, ids, 2);
        ck_assert_int_eq(which ? tf_gnn_split_read(p, map, &d) : tf_gnn_labels_read(p, map, &d),
                         TF_ERR_PARSE);
        ck_assert_msg(strstr(tf_error_message(), ":2: line longer than 4096 bytes"), "%s",
                      tf_error_message());
        tf_gnn_data_free(&d);
        unlink(p);
    }
    const char *h5 = h5_path("labels");
    float one[4] = {0, 1, 2, 3};
    ck_assert_int_eq(tf_dense_h5_write(h5, "/y", 4, 1, one), TF_OK);
    data_for(&d, 4, ids, 2);
    ck_assert_int_eq(tf_gnn_labels_read(h5, map, &d), TF_ERR_PARSE);
    ck_assert_msg(strstr(tf_error_message(), ": this is an HDF5 file; expected text"), "%s",
                  tf_error_message());
    tf_gnn_data_free(&d);
    data_for(&d, 4, ids, 2);
    ck_assert_int_eq(tf_gnn_split_read(h5, map, &d), TF_ERR_PARSE);
    tf_gnn_data_free(&d);
    unlink(h5);
    free(map);
}
END_TEST

START_TEST(loss_must_be_finite)
{
    ck_assert_int_eq(tf_gnn_loss_finite(3, 1.25), TF_OK);
    ck_assert_int_eq(tf_gnn_loss_finite(7, NAN), TF_ERR_RANGE);
    ck_assert_msg(strstr(tf_error_message(), "epoch 7: the training loss is not finite (nan); "),
                  "%s", tf_error_message());
    ck_assert_int_eq(tf_gnn_loss_finite(2, -INFINITY), TF_ERR_RANGE);
    ck_assert(strstr(tf_error_message(), "epoch 2: the training loss is not finite (-inf)"));
}
END_TEST

START_TEST(random_inputs_do_not_depend_on_the_rows_held)
{
    int64_t all[6] = {0, 1, 2, 3, 4, 5}, some[2] = {4, 1};
    tf_gnn_data a, b;
    data_for(&a, 6, all, 6);
    data_for(&b, 6, some, 2);
    ck_assert_int_eq(tf_gnn_features_random(9, 5, &a), TF_OK);
    ck_assert_int_eq(tf_gnn_features_random(9, 5, &b), TF_OK);
    ck_assert_int_eq(tf_gnn_labels_random(9, 4, &a), TF_OK);
    ck_assert_int_eq(tf_gnn_labels_random(9, 4, &b), TF_OK);
    ck_assert_int_eq(tf_gnn_split_random(9, &a), TF_OK);
    ck_assert_int_eq(tf_gnn_split_random(9, &b), TF_OK);
    for (int i = 0; i < 2; i++) {
        int64_t g = some[i];
        ck_assert(memcmp(a.x.val + g * 5, b.x.val + i * 5, 5 * sizeof(float)) == 0);
        ck_assert(a.label[g] == b.label[i] && a.split[g] == b.split[i]);
    }
    tf_gnn_data_free(&a);
    tf_gnn_data_free(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("test_gnn_parts");
    TCase *tc = tcase_create("gnn");
    tcase_add_test(tc, rng_is_a_function_of_its_key);
    tcase_add_test(tc, glorot_range_and_determinism);
    tcase_add_test(tc, early_stopping_rule);
    tcase_add_test(tc, adam_first_steps);
    tcase_add_test(tc, xent_gradient_by_differences);
    tcase_add_test(tc, dense_kernels_match_loops);
    tcase_add_test(tc, dense_tiles_every_variant);
    tcase_add_test(tc, features_mtx_and_h5_agree);
    tcase_add_test(tc, labels_and_split_lines);
    tcase_add_test(tc, random_inputs_do_not_depend_on_the_rows_held);
    tcase_add_test(tc, features_must_be_finite_and_present);
    tcase_add_test(tc, wide_h5_features_bounded);
    tcase_add_test(tc, labels_blank_binary_and_trailing_lines);
    tcase_add_test(tc, loss_must_be_finite);
    suite_add_tcase(s, tc);
    return tf_test_run_serial(s);
}
