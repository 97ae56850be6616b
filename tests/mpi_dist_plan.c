/* The distributed planner against the serial one, at whatever number of
 * ranks mpirun gives (tests/run_tests.sh: 1-4): the matrix is generated
 * identically on every rank, cut into block rows (tf_dcsr), prepared and
 * planned with tf_dist_*; every rank checks its own parts, all_stats and
 * (rank 0) the stripe table against tf_plan_build of the whole matrix,
 * array by array and bit for bit (a metis plan on more than one rank: the
 * serial plan on its permutation). Plans for P below, equal to and above the
 * number of ranks, with ranks holding no rows. Checks are reduced over the
 * ranks (all_true) so that all fail together and none hangs. Each case is
 * also planned encoded as built (tf_dist_plan_build_enc): its parts keep no
 * arrays, and the file it writes is the serial plan's, byte for byte, with
 * the twoface mode's last candidate both kept and dropped. */
#include "tf_test.h"

#include "tf_dist_comm.h"
#include "tf_dist_planner.h"
#include "tf_dist_prepare.h"
#include "tf_dist_rows.h"
#include "tf_error.h"
#include "tf_partition.h"
#include "tf_plan_layout.h"
#include "tf_planner.h"
#include "tf_plan_io.h"
#include "tf_dist_write.h"
#include "tf_prepare.h"
#include "tf_transpose.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_rank, g_size;
/* The runner-up's mode of the last plan_matrix (-1: none). */
static int g_alt_mode;
static int g_partition; /* the last plan's, as plan_matrix made it */

static int all_true(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* Rows [r0, r1) of a as a tf_dcsr. */
static void slice(const tf_csr *a, int64_t r0, int64_t r1, tf_dcsr *d)
{
    memset(d, 0, sizeof *d);
    int64_t z0 = a->rowptr[r0], z1 = a->rowptr[r1];
    ck_assert_int_eq(tf_csr_alloc(&d->loc, r1 - r0, a->ncols, z1 - z0), TF_OK);
    for (int64_t i = r0; i <= r1; i++)
        d->loc.rowptr[i - r0] = a->rowptr[i] - z0;
    memcpy(d->loc.col, a->col + z0, (size_t)(z1 - z0) * sizeof *a->col);
    memcpy(d->loc.val, a->val + z0, (size_t)(z1 - z0) * sizeof *a->val);
    d->m = a->nrows;
    d->n = a->ncols;
    d->nnz_total = a->nnz;
    d->row0 = r0;
    d->nrows = r1 - r0;
}

static void block_slice(const tf_csr *a, tf_dcsr *d)
{
    slice(a, tf_dcsr_block(a->nrows, g_size, g_rank), tf_dcsr_block(a->nrows, g_size, g_rank + 1),
          d);
}

/* Bands other than blocks, as the reader makes them from the entries:
 * rank 0 most rows, rank 1 none on 3 ranks or more. */
static void skew_slice(const tf_csr *a, tf_dcsr *d)
{
    int64_t m = a->nrows, off[65];
    ck_assert_int_le(g_size, 64);
    off[0] = 0;
    for (int r = 1; r < g_size; r++)
        off[r] = m - (int64_t)(g_size - r) * (m / (4 * g_size));
    if (g_size >= 3)
        off[2] = off[1];
    off[g_size] = m;
    slice(a, off[g_rank], off[g_rank + 1], d);
}

/* Do the rows of d equal rows [d->row0, ...) of a, bit for bit? */
static int same_rows(const tf_csr *a, const tf_dcsr *d)
{
    if (d->m != a->nrows || d->n != a->ncols)
        return 0;
    int64_t z0 = a->rowptr[d->row0];
    for (int64_t i = 0; i <= d->nrows; i++)
        if (d->loc.rowptr[i] != a->rowptr[d->row0 + i] - z0)
            return 0;
    size_t nz = (size_t)d->loc.nnz;
    return nz == 0 || (memcmp(d->loc.col, a->col + z0, nz * 4) == 0 &&
                       memcmp(d->loc.val, a->val + z0, nz * 4) == 0);
}

static int same_part(const tf_rank_plan *x, const tf_rank_plan *y)
{
    if (x->rank != y->rank || x->row_begin != y->row_begin || x->nrows != y->nrows ||
        x->brow_begin != y->brow_begin || x->nbrows != y->nbrows ||
        x->coll_buf_rows != y->coll_buf_rows || x->fetch_buf_rows != y->fetch_buf_rows ||
        memcmp(&x->stats, &y->stats, sizeof x->stats) != 0)
        return 0;
    for (int i = 0; i < N_RANK_ARRAYS; i++) {
        const tf_pl_array_desc *d = &tf_pl_rank_arrays[i];
        int64_t n = tf_pl_count_get(x, d->count);
        if (n != tf_pl_count_get(y, d->count))
            return 0;
        if (n && memcmp(tf_pl_array_get(x, i), tf_pl_array_get(y, i),
                        (size_t)n * tf_pl_kind_size(d->kind)) != 0)
            return 0;
    }
    return 1;
}

/* The distributed plan's share equals the serial plan. */
static int same_plan(const tf_plan *s, const tf_plan *d)
{
    if (!s || !d)
        return s == d;
    int P = s->nranks;
    if (d->nranks != P || d->m != s->m || d->n != s->n || d->nnz != s->nnz ||
        d->checksum != s->checksum || d->mode != s->mode || d->gap != s->gap ||
        d->symmetric != s->symmetric || d->transposed != s->transposed ||
        d->transpose_of != s->transpose_of || d->normalization != s->normalization ||
        memcmp(d->row_off, s->row_off, (size_t)(P + 1) * 8) != 0 ||
        memcmp(d->brow_off, s->brow_off, (size_t)(P + 1) * 8) != 0 ||
        memcmp(d->all_stats, s->all_stats, (size_t)P * sizeof *s->all_stats) != 0 ||
        d->first_rank != tf_dist_first_part(P, g_size, g_rank) ||
        d->first_rank + d->n_parts != tf_dist_first_part(P, g_size, g_rank + 1))
        return 0;
    for (int i = 0; i < d->n_parts; i++)
        if (!same_part(&s->parts[d->first_rank + i], &d->parts[i]))
            return 0;
    if (g_rank == 0) {
        const tf_stripe_table *a = &s->stripes, *b = &d->stripes;
        size_t S = (size_t)a->n;
        if (b->n != a->n || memcmp(a->owner, b->owner, S * 4) || memcmp(a->first, b->first, S * 8) ||
            memcmp(a->rows, b->rows, S * 4) || memcmp(a->recipients, b->recipients, S * 4) ||
            memcmp(a->fetchers, b->fetchers, S * 4))
            return 0;
        if ((s->perm == NULL) != (d->perm == NULL) ||
            (s->perm && (memcmp(s->perm, d->perm, (size_t)s->n * 8) ||
                         memcmp(s->iperm, d->iperm, (size_t)s->n * 8))))
            return 0;
    }
    return 1;
}

static unsigned char *slurp(const char *path, long *n);

/* Does part rp hold no arrays (a shell, tf_rank_plan_drop)? */
static int is_shell(const tf_rank_plan *rp)
{
    /* A row pointer of one entry reads as a shared zero (tf_pl_array_get). */
    for (int i = 0; i < N_RANK_ARRAYS; i++)
        if (tf_pl_count_get(rp, tf_pl_rank_arrays[i].count) > 1 && tf_pl_array_get(rp, i))
            return 0;
    return 1;
}

/* A fresh directory under TMPDIR, made by rank 0, its name on every rank. */
static void shared_dir(const char *tag, char dir[256])
{
    dir[0] = '\0';
    if (g_rank == 0) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, 256, "%s/%s_XXXXXX", t && t[0] ? t : "/tmp", tag);
        ck_assert_ptr_nonnull(mkdtemp(dir));
    }
    MPI_Bcast(dir, 256, MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* shared_dir's directory and the two files the write tests compare: the
 * distributed planner's and the serial one's. */
static void shared_files(const char *tag, char dir[256], char dpath[300], char spath[300])
{
    shared_dir(tag, dir);
    snprintf(dpath, 300, "%s/dist.h5", dir);
    snprintf(spath, 300, "%s/serial.h5", dir);
}

/* One creation date for a plan and its runner-up, so that files compare. */
static void fix_date(tf_plan *p)
{
    for (tf_plan *x = p; x; x = x->alt)
        snprintf(x->creation_date, sizeof x->creation_date, "2026-01-02T03:04:05Z");
}

/* A random n x n matrix of about nnz entries, whole (a) and in blocks of
 * rows (d), both prepared for P = nranks, nnz bands, K = 32: so for the
 * serial planner, dopt for the distributed one. */
static void nnz_inputs(int64_t n, int64_t nnz, uint64_t seed, int nranks, tf_csr *a, tf_dcsr *d,
                       tf_plan_options *so, tf_plan_options *dopt)
{
    tf_test_random_csr(a, n, n, nnz, seed);
    block_slice(a, d);
    tf_plan_options_default(so);
    so->nranks = nranks;
    so->partition = TF_PART_NNZ;
    so->k = 32;
    *dopt = *so;
    ck_assert_int_eq(tf_matrix_prepare(a, TF_NORM_NONE, 0, so), TF_OK);
    ck_assert(all_true(tf_dist_prepare(MPI_COMM_WORLD, d, TF_NORM_NONE, 0, dopt) == TF_OK));
}

/* Plans d encoded as built and writes it: the file must be the one
 * tf_plan_write makes of the serial plan sp (same creation date). */
static void check_encoded(tf_dcsr *d, const tf_plan_options *dopt, tf_plan *sp)
{
    char dir[256], dpath[300], spath[300];
    shared_files("tf_dist_enc", dir, dpath, spath);
    tf_plan_options o = *dopt;
    o.timing = NULL;
    tf_plan ep;
    tf_dist_enc enc[2];
    int st = tf_dist_plan_build_enc(MPI_COMM_WORLD, d, &o, 3, &ep, enc);
    ck_assert_msg(all_true(st == TF_OK), "tf_dist_plan_build_enc: %s", tf_error_message());
    int ok = enc[0].n_parts == ep.n_parts && (ep.alt ? enc[1].n_parts == ep.alt->n_parts
                                                     : enc[1].n_parts == 0) &&
             (sp->alt != NULL) == (ep.alt != NULL);
    for (int i = 0; ok && i < ep.n_parts; i++)
        ok = is_shell(&ep.parts[i]) && (!ep.alt || is_shell(&ep.alt->parts[i]));
    ck_assert_msg(all_true(ok), "encoded plan: parts keep arrays or encoded parts missing");
    fix_date(sp);
    fix_date(&ep);
    st = tf_dist_plan_write_enc(MPI_COMM_WORLD, dpath, &ep, enc, 3);
    ck_assert_msg(all_true(st == TF_OK), "tf_dist_plan_write_enc: %s", tf_error_message());
    int same = 1;
    if (g_rank == 0) {
        ck_assert_int_eq(tf_plan_write(spath, sp, 3), TF_OK);
        long n1, n2;
        unsigned char *b1 = slurp(dpath, &n1), *b2 = slurp(spath, &n2);
        same = b1 && b2 && n1 == n2 && memcmp(b1, b2, (size_t)n1) == 0;
        free(b1);
        free(b2);
        unlink(dpath);
        unlink(spath);
        rmdir(dir);
    }
    ck_assert_msg(all_true(same), "the file of the plan encoded as built differs from the "
                                  "serial plan's (mode %d, P %d)", dopt->mode, dopt->nranks);
    tf_dist_enc_free(&enc[0]);
    tf_dist_enc_free(&enc[1]);
    tf_plan_free(&ep);
}

/* Plans a both ways with options set by the case (coefficients c, or the
 * defaults when NULL; no_pure: keep the greedy hybrid) and returns the
 * plan's classes (tf_plan_classes). */
static const char *plan_matrix(tf_csr *a, int P, int partition, int mode, int norm,
                               int transpose, const tf_coeffs *c, int no_pure)
{
    const int64_t m = a->nrows, n = a->ncols;
    tf_dcsr d, d2;
    block_slice(a, &d);
    /* The plan written from the second copy must not depend on its bands. */
    skew_slice(a, &d2);
    tf_plan_options so, dopt;
    tf_plan_options_default(&so);
    so.nranks = P;
    so.partition = partition;
    so.mode = mode;
    so.k = 32;
    so.no_pure_check = no_pure;
    if (c)
        so.coeffs = *c;
    dopt = so;
    tf_plan_options dopt2 = so;
    ck_assert_int_eq(tf_matrix_prepare(a, norm, transpose, &so), TF_OK);
    int st = tf_dist_prepare(MPI_COMM_WORLD, &d, norm, transpose, &dopt);
    ck_assert_msg(all_true(st == TF_OK), "tf_dist_prepare: %s", tf_error_message());
    ck_assert(all_true(so.symmetric == dopt.symmetric && so.transpose_of == dopt.transpose_of));
    ck_assert_msg(all_true(same_rows(a, &d)), "prepared rows differ (norm %d, transpose %d)",
                  norm, transpose);
    tf_plan sp, dp;
    st = tf_dist_plan_build(MPI_COMM_WORLD, &d, &dopt, &dp);
    ck_assert_msg(all_true(st == TF_OK), "tf_dist_plan_build: %s", tf_error_message());
    /* A metis plan made on more than one rank has PT-Scotch's parts, not
     * METIS's (docs/planning.md): the serial plan to match is the one made
     * on the same renumbering and bands. */
    int64_t *perm = NULL, *iperm = NULL;
    if (partition == TF_PART_METIS && g_size > 1) {
        perm = malloc((size_t)(m > 0 ? m : 1) * sizeof *perm);
        iperm = malloc((size_t)(m > 0 ? m : 1) * sizeof *iperm);
        if (g_rank == 0) {
            memcpy(perm, dp.perm, (size_t)m * sizeof *perm);
            memcpy(iperm, dp.iperm, (size_t)m * sizeof *iperm);
        }
        MPI_Bcast(perm, (int)m, MPI_INT64_T, 0, MPI_COMM_WORLD);
        MPI_Bcast(iperm, (int)m, MPI_INT64_T, 0, MPI_COMM_WORLD);
        so.perm = perm;
        so.iperm = iperm;
        so.row_off = dp.row_off;
        so.brow_off = dp.brow_off;
    }
    ck_assert_int_eq(tf_plan_build(a, &so, &sp), TF_OK);
    ck_assert_msg(all_true(same_plan(&sp, &dp) && same_plan(sp.alt, dp.alt)),
                  "plan differs: %lld x %lld, P %d, partition %d, mode %d, norm %d", (long long)m,
                  (long long)n, P, partition, mode, norm);
    /* A metis plan on several ranks comes from PT-Scotch, run again here. */
    if (partition != TF_PART_METIS) {
        st = tf_dist_prepare(MPI_COMM_WORLD, &d2, norm, transpose, &dopt2);
        ck_assert_msg(all_true(st == TF_OK), "tf_dist_prepare: %s", tf_error_message());
        check_encoded(&d2, &dopt2, &sp);
    } else {
        tf_dcsr_free(&d2);
    }
    const char *classes = tf_plan_classes(&sp);
    g_alt_mode = sp.alt ? sp.alt->mode : -1;
    g_partition = sp.partition;
    tf_plan_free(&sp);
    tf_plan_free(&dp);
    free(perm);
    free(iperm);
    return classes;
}

/* Plans a random m x n matrix (seed) both ways. */
static void plan_case(int64_t m, int64_t n, int64_t nnz, uint64_t seed, int P, int partition,
                      int mode, int norm, int transpose)
{
    tf_csr a;
    tf_test_random_csr(&a, m, n, nnz, seed);
    /* Positive weights: degrees for the normalisations. */
    for (int64_t e = 0; e < a.nnz; e++)
        a.val[e] = (a.val[e] < 0 ? -a.val[e] : a.val[e]) + 0.125f;
    plan_matrix(&a, P, partition, mode, norm, transpose, NULL, 0);
    tf_csr_free(&a);
}

/* The distributed transpose against the serial one: a square matrix's in
 * the matrix's own bands (skewed here), any other in blocks of its rows. */
static void transpose_case(int64_t m, int64_t n, int64_t nnz, uint64_t seed, int skew)
{
    tf_csr a, t;
    tf_test_random_csr(&a, m, n, nnz, seed);
    ck_assert_int_eq(tf_csr_transpose(&a, &t), TF_OK);
    tf_dcsr d, dt;
    if (skew)
        skew_slice(&a, &d);
    else
        block_slice(&a, &d);
    ck_assert_int_eq(tf_dist_transpose(MPI_COMM_WORLD, &d, &dt), TF_OK);
    int band = m == n ? dt.row0 == d.row0 && dt.nrows == d.nrows
                      : dt.row0 == tf_dcsr_block(n, g_size, g_rank);
    ck_assert(all_true(band && same_rows(&t, &dt)));
    tf_dcsr_free(&d);
    tf_dcsr_free(&dt);
    tf_csr_free(&a);
    tf_csr_free(&t);
}

START_TEST(test_transpose)
{
    transpose_case(61, 45, 500, 3, 0);
    transpose_case(40, 40, 300, 5, 1);
}
END_TEST

/* The bands a matrix is in, and its move into blocks. */
START_TEST(bands_of_a_matrix)
{
    tf_csr a;
    tf_test_random_csr(&a, 40, 40, 300, 5);
    tf_dcsr d;
    skew_slice(&a, &d);
    int64_t off[65];
    ck_assert_int_eq(tf_dist_row_bounds(MPI_COMM_WORLD, TF_OK, &d, off), TF_OK);
    ck_assert(all_true(off[g_rank] == d.row0 && off[g_rank + 1] == d.row0 + d.nrows &&
                       off[0] == 0 && off[g_size] == 40));
    ck_assert_int_eq(tf_dist_to_blocks(MPI_COMM_WORLD, &d), TF_OK);
    ck_assert(all_true(d.row0 == tf_dcsr_block(40, g_size, g_rank) && same_rows(&a, &d)));
    tf_dcsr_free(&d);
    tf_csr_free(&a);
}
END_TEST

/* The exchange without requests (a rank that could not allocate them)
 * beside ranks that post every message: every pairing of the two, bytes
 * from rank q to rank p that say where they come from, and pairs that
 * exchange nothing. */
START_TEST(test_alltoallv_pairwise)
{
    int64_t *c = calloc((size_t)g_size * 4, sizeof *c);
    int64_t *s = c, *r = c + g_size, *sd = c + 2 * g_size, *rd = c + 3 * g_size;
    for (int q = 0; q < g_size; q++)
        s[q] = (g_rank + 2 * q) % 3 == 0 ? 0 : 1 + (g_rank * 7 + q * 3) % 11;
    int64_t stot = 0, rtot = 0;
    ck_assert_int_eq(tf_dist_counts(MPI_COMM_WORLD, s, r, sd, rd, &stot, &rtot), TF_OK);
    unsigned char *sb = malloc((size_t)stot + 1), *rb = malloc((size_t)rtot + 1);
    for (int q = 0; q < g_size; q++)
        for (int64_t i = 0; i < s[q]; i++)
            sb[sd[q] + i] = (unsigned char)(g_rank * 31 + q * 5 + i);
    for (int mode = 0; mode < 3; mode++) {
        /* 0: every rank without requests; 1, 2: the odd or the even ones. */
        int pairwise = mode == 0 || g_rank % 2 == mode - 1;
        memset(rb, 0xff, (size_t)rtot + 1);
        int st = pairwise ? tf_dist_alltoallv_pairwise(MPI_COMM_WORLD, sb, s, sd, rb, r, rd)
                          : tf_dist_alltoallv(MPI_COMM_WORLD, sb, s, sd, rb, r, rd);
        int ok = st == TF_OK && rb[rtot] == 0xff;
        for (int q = 0; q < g_size; q++)
            for (int64_t i = 0; i < r[q]; i++)
                ok = ok && rb[rd[q] + i] == (unsigned char)(q * 31 + g_rank * 5 + i);
        ck_assert_msg(all_true(ok), "mode %d: rank %d got other bytes", mode, g_rank);
    }
    free(sb);
    free(rb);
    free(c);
}
END_TEST

START_TEST(test_redistribute)
{
    tf_csr a;
    tf_test_random_csr(&a, 50, 50, 300, 5);
    tf_dcsr d, e;
    block_slice(&a, &d);
    /* Everything to the last rank, then uneven bands with empty ones. */
    int64_t *off = malloc((size_t)(g_size + 1) * sizeof *off);
    for (int r = 0; r <= g_size; r++)
        off[r] = r == g_size ? 50 : 0;
    ck_assert_int_eq(tf_dist_redistribute(MPI_COMM_WORLD, TF_OK, &d, off, &e), TF_OK);
    ck_assert(all_true(same_rows(&a, &e) && e.nrows == (g_rank == g_size - 1 ? 50 : 0)));
    for (int r = 0; r <= g_size; r++)
        off[r] = r == 0 ? 0 : r == g_size ? 50 : (r % 2 ? 7 * r : off[r - 1]);
    ck_assert_int_eq(tf_dist_redistribute(MPI_COMM_WORLD, TF_OK, &e, off, &d), TF_OK);
    ck_assert(all_true(same_rows(&a, &d) && d.row0 == off[g_rank]));
    /* Back to block rows: the low ranks' bands lie wholly before later
     * ranks' blocks (an out-of-range read once, which crashed at 64 ranks). */
    tf_dist_block_bounds(50, g_size, off);
    ck_assert_int_eq(tf_dist_redistribute(MPI_COMM_WORLD, TF_OK, &d, off, &e), TF_OK);
    ck_assert(all_true(same_rows(&a, &e) && e.row0 == off[g_rank] &&
                       e.nrows == off[g_rank + 1] - off[g_rank]));
    tf_dcsr_free(&e);
    free(off);
    tf_csr_free(&a);
}
END_TEST

START_TEST(test_plans_nnz)
{
    for (int P = 1; P <= 7; P += 2)
        plan_case(120, 120, 900, 7 + P, P, TF_PART_NNZ, TF_MODE_TWOFACE, TF_NORM_NONE, 0);
}
END_TEST

/* 200 x 200, 4 nonzeros a row: the first 100 rows reread their group's 4
 * columns (hits), the rest read scattered ones (misses), so the reuse of B
 * rows moves the cuts of work bands. */
static void reuse_matrix(tf_csr *a)
{
    tf_coo coo;
    ck_assert_int_eq(tf_coo_init(&coo, 200, 200, 800), TF_OK);
    for (int64_t i = 0; i < 200; i++)
        for (int64_t t = 0; t < 4; t++)
            ck_assert_int_eq(tf_coo_push(&coo, i, i < 100 ? (i / 10) * 4 + t
                                                          : (i * 37 + t * 53) % 200, 1.0),
                             TF_OK);
    ck_assert_int_eq(tf_csr_from_coo(a, &coo), TF_OK);
    tf_coo_free(&coo);
}

/* Bands of equal work: integer prefix sums over the planning ranks give the
 * serial bands at every Q, with the built-in row weight and with one from a
 * calibration (37/16 nonzeros, not a whole number), and with the reuse of
 * B rows counted over the whole row-order stream. Skewed rows (a few long
 * ones among many empty) make the row weight move the cuts. */
START_TEST(test_plans_work)
{
    for (int P = 1; P <= 7; P += 2)
        plan_case(120, 120, 900, 41 + P, P, TF_PART_WORK, TF_MODE_TWOFACE, TF_NORM_NONE, 0);
    plan_case(70, 40, 400, 45, 3, TF_PART_WORK, TF_MODE_TWOFACE, TF_NORM_NONE, 0);
    plan_case(3, 3, 5, 46, 4, TF_PART_WORK, TF_MODE_TWOFACE, TF_NORM_NONE, 0);
    plan_case(0, 0, 0, 47, 2, TF_PART_WORK, TF_MODE_TWOFACE, TF_NORM_NONE, 0);
    tf_coo coo;
    ck_assert_int_eq(tf_coo_init(&coo, 150, 150, 1200), TF_OK);
    for (int64_t i = 0; i < 150; i++)
        for (int64_t j = 0; j < (i % 10 == 3 ? 40 : i % 3 == 0 ? 1 : 0); j++)
            ck_assert_int_eq(tf_coo_push(&coo, i, (i * 7 + j * 13) % 150, 1.0), TF_OK);
    tf_csr a;
    ck_assert_int_eq(tf_csr_from_coo(&a, &coo), TF_OK);
    tf_coo_free(&coo);
    tf_coeffs c;
    tf_coeffs_default(&c);
    c.gamma_row = c.gamma_local * 37.0 / 16.0;
    for (int P = 2; P <= 6; P += 2) {
        plan_matrix(&a, P, TF_PART_WORK, TF_MODE_TWOFACE, TF_NORM_NONE, 0, NULL, 0);
        plan_matrix(&a, P, TF_PART_WORK, TF_MODE_TWOFACE, TF_NORM_NONE, 0, &c, 0);
    }
    tf_csr_free(&a);
    /* The reuse window carried across planning ranks, windows of 5
     * nonzeros (within one planning rank's rows) and of 300 (across
     * several). */
    reuse_matrix(&a);
    tf_coeffs r;
    tf_coeffs_default(&r);
    ck_assert(r.gamma_cached > 0 && r.gamma_cached < r.gamma_local);
    for (int w = 5; w <= 300; w += 295) {
        r.cache_bytes = 4.0 * 32 * w; /* K = 32 */
        for (int P = 2; P <= 5; P++)
            plan_matrix(&a, P, TF_PART_WORK, TF_MODE_TWOFACE, TF_NORM_NONE, 0, &r, 0);
    }
    /* No reuse term: the cut of rows and nonzeros, as the serial planner's. */
    r.cache_bytes = 0;
    for (int P = 2; P <= 5; P += 3)
        plan_matrix(&a, P, TF_PART_WORK, TF_MODE_TWOFACE, TF_NORM_NONE, 0, &r, 0);
    tf_csr_free(&a);
}
END_TEST

/* --partition auto: both band sets weighed with the one prefix over the
 * planning ranks, the same choice and bands as the serial planner at every
 * Q. The matrix whose first half rereads its columns (cheap) and second
 * half does not (dear) takes work with the reuse term, and keeps nnz
 * without it (every row 4 nonzeros: both cuts alike). */
START_TEST(test_plans_auto)
{
    for (int P = 1; P <= 7; P += 2)
        plan_case(120, 120, 900, 51 + P, P, TF_PART_AUTO, TF_MODE_TWOFACE, TF_NORM_NONE, 0);
    plan_case(0, 0, 0, 57, 2, TF_PART_AUTO, TF_MODE_TWOFACE, TF_NORM_NONE, 0);
    tf_csr a;
    reuse_matrix(&a);
    tf_coeffs r;
    tf_coeffs_default(&r);
    r.cache_bytes = 4.0 * 32 * 5; /* a window of 5 nonzeros at K = 32 */
    for (int P = 2; P <= 5; P++) {
        plan_matrix(&a, P, TF_PART_AUTO, TF_MODE_TWOFACE, TF_NORM_NONE, 0, &r, 0);
        ck_assert_int_eq(g_partition, TF_PART_WORK);
    }
    r.cache_bytes = 0;
    for (int P = 2; P <= 5; P += 3) {
        plan_matrix(&a, P, TF_PART_AUTO, TF_MODE_TWOFACE, TF_NORM_NONE, 0, &r, 0);
        ck_assert_int_eq(g_partition, TF_PART_NNZ);
    }
    tf_csr_free(&a);
}
END_TEST

START_TEST(test_plans_modes)
{
    plan_case(90, 90, 700, 21, 4, TF_PART_ROWS, TF_MODE_FETCH, TF_NORM_NONE, 0);
    plan_case(90, 90, 700, 22, 5, TF_PART_ROWS, TF_MODE_COLLECTIVE, TF_NORM_NONE, 0);
    plan_case(70, 40, 400, 23, 3, TF_PART_NNZ, TF_MODE_TWOFACE, TF_NORM_NONE, 0);
    plan_case(3, 3, 5, 24, 4, TF_PART_NNZ, TF_MODE_TWOFACE, TF_NORM_NONE, 0);
    plan_case(0, 0, 0, 25, 2, TF_PART_NNZ, TF_MODE_TWOFACE, TF_NORM_NONE, 0);
}
END_TEST

START_TEST(test_plans_prepared)
{
    plan_case(100, 100, 800, 31, 4, TF_PART_NNZ, TF_MODE_TWOFACE, TF_NORM_GCN, 0);
    plan_case(100, 100, 800, 32, 3, TF_PART_NNZ, TF_MODE_TWOFACE, TF_NORM_MEAN, 1);
    plan_case(100, 100, 800, 33, 5, TF_PART_METIS, TF_MODE_TWOFACE, TF_NORM_GCN, 1);
}
END_TEST

/* Every row uses a few of the first 64 columns (hubs owned by the first
 * ranks, wanted by every rank) and a few others. */
static void hub_matrix(tf_csr *a)
{
    const int64_t n = 640;
    tf_coo coo;
    ck_assert_int_eq(tf_coo_init(&coo, n, n, 8 * n), TF_OK);
    uint64_t h = 12345;
    for (int64_t i = 0; i < n; i++) {
        ck_assert_int_eq(tf_coo_push(&coo, i, i, 1.0), TF_OK);
        for (int x = 0; x < 6; x++) {
            h = h * 6364136223846793005ULL + 1442695040888963407ULL;
            int64_t j = (int64_t)((h >> 33) % (uint64_t)(x < 3 ? 64 : n));
            ck_assert_int_eq(tf_coo_push(&coo, i, j, 1.0), TF_OK);
        }
    }
    ck_assert_int_eq(tf_csr_from_coo(a, &coo), TF_OK);
    tf_coo_free(&coo);
}

/* Coefficients of two thread groups (tf_cost_rank_time), without the
 * cache, row and handshake terms, with the given collective byte price and
 * fetch prices. */
static tf_coeffs two_groups(double beta_coll, double alpha_fetch, double beta_fetch)
{
    tf_coeffs c;
    memset(&c, 0, sizeof c);
    c.alpha_coll = 1e-6;
    c.beta_coll = beta_coll;
    c.alpha_fetch = alpha_fetch;
    c.beta_fetch = beta_fetch;
    c.gamma_local = c.gamma_coll = c.gamma_fetch = 1e-9;
    c.threads = 2;
    return c;
}

START_TEST(test_plans_hybrid)
{
    /* The classification's rounds at work: every row uses a few of the first
     * 64 columns (hubs owned by ranks 0 and 1, wanted by every rank) and a
     * few others, and the coefficients make the hubs' owners the
     * bottleneck, so recipients are split between fetch and collective -
     * the case where the rounds' exchanged counts decide the plan, which
     * must still not depend on the number of planning ranks. */
    tf_csr a;
    hub_matrix(&a);
    tf_coeffs c = two_groups(4e-9, 5e-6, 1e-9);
    for (int P = 5; P <= 16; P += 11) {
        const char *cls =
            plan_matrix(&a, P, TF_PART_ROWS, TF_MODE_TWOFACE, TF_NORM_NONE, 0, &c, 1);
        ck_assert_msg(strcmp(cls, "hybrid") == 0, "P = %d: classes %s, not hybrid", P, cls);
    }
    tf_csr_free(&a);
}
END_TEST

START_TEST(test_plans_third_kept)
{
    /* A hybrid classification, so that all three candidates are built and,
     * encoded as built (check_encoded), the third (all-collective) lean.
     * With cheap collectives it is the runner-up, built again in full; with
     * dearer ones the all-fetch plan is, and the lean one is dropped. Both
     * must give the serial plan and its file. */
    tf_csr a;
    hub_matrix(&a);
    static const struct {
        double beta_coll, alpha_fetch;
        int P, alt_mode;
    } cases[] = {
        {1e-9, 1e-5, 5, TF_MODE_COLLECTIVE},
        {1e-9, 1e-5, 16, TF_MODE_COLLECTIVE},
        {2e-9, 5e-6, 5, TF_MODE_FETCH},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tf_coeffs c = two_groups(cases[k].beta_coll, cases[k].alpha_fetch, 1e-9);
        const char *cls =
            plan_matrix(&a, cases[k].P, TF_PART_ROWS, TF_MODE_TWOFACE, TF_NORM_NONE, 0, &c, 0);
        ck_assert_msg(strcmp(cls, "hybrid") == 0 && g_alt_mode == cases[k].alt_mode,
                      "case %zu: classes %s, runner-up mode %d, expected hybrid and %d", k, cls,
                      g_alt_mode, cases[k].alt_mode);
    }
    tf_csr_free(&a);
}
END_TEST

START_TEST(test_plans_fetch_skipped)
{
    /* An all-collective classification: where the fetch plan's floor
     * (tf_plan_fetch_floor) rules it out, it is not built, and where it
     * does not, it is built and carried as the runner-up. Either way the
     * ranks' plan and file are the serial ones. */
    tf_csr a;
    tf_test_random_csr(&a, 120, 120, 900, 61);
    for (int k = 0; k < 2; k++) {
        tf_coeffs c = two_groups(1e-10, 2e-6, 1e-10);
        c.alpha_sync = k ? 2e-6 : 1e-5;
        tf_plan_options o;
        tf_plan_options_default(&o);
        o.nranks = 4;
        o.k = 32;
        o.mode = TF_MODE_COLLECTIVE;
        o.coeffs = c;
        tf_plan pc;
        ck_assert_int_eq(tf_plan_build(&a, &o, &pc), TF_OK);
        ck_assert_int_eq(tf_plan_fetch_may_count(&pc, 0), k);
        tf_plan_free(&pc);
        const char *cls = plan_matrix(&a, 4, TF_PART_NNZ, TF_MODE_TWOFACE, TF_NORM_NONE, 0, &c, 0);
        ck_assert_msg(strcmp(cls, "collective") == 0 && g_alt_mode == (k ? TF_MODE_FETCH : -1),
                      "case %d: classes %s, runner-up mode %d", k, cls, g_alt_mode);
    }
    tf_csr_free(&a);
}
END_TEST

/* Whole file's bytes, or NULL. */
static unsigned char *slurp(const char *path, long *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *b = NULL;
    *n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (*n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (b = malloc((size_t)*n + 1)) && fread(b, 1, (size_t)*n, f) != (size_t)*n) {
        free(b);
        b = NULL;
    }
    if (f)
        fclose(f);
    return b;
}

/* tf_dist_plan_write: every rank encodes its own parts and rank 0 places
 * the chunks. The file must be the one tf_plan_write makes of the serial
 * plan, byte for byte (same creation date), at zstd levels 0 and 3, with
 * parts large enough for several chunks (65536 values); every rank reads
 * its parts back. A part that fails its checks on one rank fails the call
 * on every rank with that rank's message, and leaves no file. */
START_TEST(test_write)
{
    char dir[256], dpath[300], spath[300];
    shared_files("tf_dist_write", dir, dpath, spath);

    tf_csr a;
    tf_dcsr d;
    tf_plan_options so, dopt;
    /* P = 2: at Q = 1 one rank holds both parts, at Q > 2 some hold none. */
    nnz_inputs(900, 500000, 41, 2, &a, &d, &so, &dopt);
    tf_plan sp, dp;
    ck_assert(all_true(tf_dist_plan_build(MPI_COMM_WORLD, &d, &dopt, &dp) == TF_OK));
    ck_assert_int_eq(tf_plan_build(&a, &so, &sp), TF_OK);
    int64_t most = 0;
    for (int p = 0; p < sp.nranks; p++) {
        const tf_rank_plan *r = &sp.parts[p];
        int64_t big = r->loc_nnz > r->coll_nnz ? r->loc_nnz : r->coll_nnz;
        big = big > r->fet_nnz ? big : r->fet_nnz;
        most = big > most ? big : most;
    }
    ck_assert_int_gt(most, 65536);
    snprintf(sp.creation_date, sizeof sp.creation_date, "2026-01-02T03:04:05Z");
    snprintf(dp.creation_date, sizeof dp.creation_date, "2026-01-02T03:04:05Z");
    if (sp.alt)
        memcpy(sp.alt->creation_date, sp.creation_date, sizeof sp.creation_date);
    if (dp.alt)
        memcpy(dp.alt->creation_date, dp.creation_date, sizeof dp.creation_date);

    const int levels[] = {0, 3};
    for (int li = 0; li < 2; li++) {
        int st = tf_dist_plan_write(MPI_COMM_WORLD, dpath, &dp, levels[li]);
        ck_assert_msg(all_true(st == TF_OK), "tf_dist_plan_write: %s", tf_error_message());
        int same = 1;
        if (g_rank == 0) {
            ck_assert_int_eq(tf_plan_write(spath, &sp, levels[li]), TF_OK);
            long n1, n2;
            unsigned char *b1 = slurp(dpath, &n1), *b2 = slurp(spath, &n2);
            same = b1 && b2 && n1 == n2 && memcmp(b1, b2, (size_t)n1) == 0;
            free(b1);
            free(b2);
        }
        ck_assert_msg(all_true(same), "level %d: the file differs from the serial plan's",
                      levels[li]);
        int ok = 1;
        for (int i = 0; i < dp.n_parts; i++) {
            tf_plan back;
            ok = ok && tf_plan_read(dpath, dp.first_rank + i, &back) == TF_OK &&
                 same_part(&back.parts[0], &dp.parts[i]);
            tf_plan_free(&back);
        }
        ck_assert_msg(all_true(ok), "level %d: a part read back differs", levels[li]);
    }

    /* The last part, on whichever rank holds it, points past its own B rows. */
    unlink(dpath);
    int holder = dp.n_parts > 0 && dp.first_rank + dp.n_parts == dp.nranks;
    tf_rank_plan *bad = holder ? &dp.parts[dp.n_parts - 1] : NULL;
    ck_assert(all_true(!holder || bad->loc_nnz > 0));
    if (holder)
        bad->loc_idx[0] = (int32_t)bad->nbrows;
    int st = tf_dist_plan_write(MPI_COMM_WORLD, dpath, &dp, 3);
    char want[64];
    snprintf(want, sizeof want, "rank %d: local/col[0]", dp.nranks - 1);
    ck_assert_msg(all_true(st == TF_ERR_INTERNAL && strstr(tf_error_message(), want) &&
                           strstr(tf_error_message(), "refusing to write an invalid plan") &&
                           access(dpath, F_OK) != 0),
                  "status %d: %s (expected '%s')", st, tf_error_message(), want);
    if (g_rank == 0) {
        unlink(spath);
        rmdir(dir);
    }
    tf_plan_free(&sp);
    tf_plan_free(&dp);
    tf_csr_free(&a);
}
END_TEST

/* The window of parts rank 0 keeps in flight (tf_dist_write_window): 12
 * parts, more than the widest window, so that holders are asked for
 * several at once; one part at a time, three, three under a byte limit
 * that admits one, and the default all make the serial plan's file. A part
 * whose chunk sizes do not add up, found by rank 0 halfway through with
 * others in flight, fails the call on every rank with its message, leaves
 * no file and no rank waiting. */
START_TEST(test_write_window)
{
    char dir[256], dpath[300], spath[300];
    shared_files("tf_dist_window", dir, dpath, spath);

    tf_csr a;
    tf_dcsr d;
    tf_plan_options so, dopt;
    nnz_inputs(600, 30000, 77, 12, &a, &d, &so, &dopt);
    tf_plan sp, ep;
    ck_assert_int_eq(tf_plan_build(&a, &so, &sp), TF_OK);
    tf_dist_enc enc[2];
    ck_assert(all_true(tf_dist_plan_build_enc(MPI_COMM_WORLD, &d, &dopt, 3, &ep, enc) == TF_OK));
    fix_date(&sp);
    fix_date(&ep);
    if (g_rank == 0)
        ck_assert_int_eq(tf_plan_write(spath, &sp, 3), TF_OK);

    const int parts[] = {1, 3, 3, 0};
    const int64_t bytes[] = {1, (int64_t)1 << 30, 1, 0};
    for (int w = 0; w < 4; w++) {
        tf_dist_write_window(parts[w], bytes[w]);
        int st = tf_dist_plan_write_enc(MPI_COMM_WORLD, dpath, &ep, enc, 3);
        ck_assert_msg(all_true(st == TF_OK), "window %d: %s", w, tf_error_message());
        int same = 1;
        if (g_rank == 0) {
            long n1, n2;
            unsigned char *b1 = slurp(dpath, &n1), *b2 = slurp(spath, &n2);
            same = b1 && b2 && n1 == n2 && memcmp(b1, b2, (size_t)n1) == 0;
            free(b1);
            free(b2);
        }
        ck_assert_msg(all_true(same), "window %d parts %lld bytes: the file differs",
                      parts[w], (long long)bytes[w]);
        unlink(dpath);
    }

    /* Part 9's first chunk claims a byte more than it holds. */
    const int bad = 9;
    if (bad >= ep.first_rank && bad < ep.first_rank + ep.n_parts)
        enc[0].parts[bad - ep.first_rank].sizes[0] += 1;
    tf_dist_write_window(3, (int64_t)1 << 30);
    int st = tf_dist_plan_write_enc(MPI_COMM_WORLD, dpath, &ep, enc, 3);
    tf_dist_write_window(0, 0);
    char want[32];
    snprintf(want, sizeof want, "part %d:", bad);
    ck_assert_msg(all_true(st == TF_ERR_INTERNAL && strstr(tf_error_message(), want) &&
                           access(dpath, F_OK) != 0),
                  "status %d: %s (expected '%s')", st, tf_error_message(), want);
    if (g_rank == 0) {
        unlink(spath);
        rmdir(dir);
    }
    tf_dist_enc_free(&enc[0]);
    tf_dist_enc_free(&enc[1]);
    tf_plan_free(&ep);
    tf_plan_free(&sp);
    tf_dcsr_free(&d);
    tf_csr_free(&a);
}
END_TEST

static Suite *make_suite(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    Suite *s = suite_create("dist_plan");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_transpose);
    tcase_add_test(tc, bands_of_a_matrix);
    tcase_add_test(tc, test_alltoallv_pairwise);
    tcase_add_test(tc, test_redistribute);
    tcase_add_test(tc, test_plans_nnz);
    tcase_add_test(tc, test_plans_work);
    tcase_add_test(tc, test_plans_auto);
    tcase_add_test(tc, test_plans_modes);
    tcase_add_test(tc, test_plans_fetch_skipped);
    tcase_add_test(tc, test_plans_prepared);
    tcase_add_test(tc, test_plans_hybrid);
    tcase_add_test(tc, test_plans_third_kept);
    tcase_add_test(tc, test_write);
    tcase_add_test(tc, test_write_window);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv) { return tf_test_run_mpi(&argc, &argv, make_suite); }
