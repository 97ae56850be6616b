#include "tf_dist_prepare.h"
#include "tf_agree_carry.h"
#include "tf_dist_comm.h"
#include "tf_dist_rows.h"
#include "tf_error.h"
#include "tf_idle.h"
#include "tf_partition.h"
#include "tf_fingerprint.h"
#include "tf_normalize.h"
#include "tf_plan.h"
#include "tf_prepare.h"
#include "tf_transpose.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fingerprint_mine(const tf_dcsr *a)
{
    return a->nrows ? tf_fingerprint_rows(a->loc.rowptr, a->loc.col, a->loc.val, a->row0,
                                          a->nrows)
                    : 0;
}

uint64_t tf_dist_fingerprint(MPI_Comm comm, const tf_dcsr *a, int normalization)
{
    return tf_dist_sum_u64(comm, fingerprint_mine(a)) +
           tf_fingerprint_salt(tf_norm_name(normalization));
}

int tf_dist_fingerprint_agree(MPI_Comm comm, int status, const tf_dcsr *a, int normalization,
                              uint64_t *fp)
{
    uint64_t v = status == TF_OK ? fingerprint_mine(a) : 0;
    int st = tf_agree_allreduce(comm, status, &v, 1, MPI_UINT64_T, MPI_SUM);
    *fp = st == TF_OK ? v + tf_fingerprint_salt(tf_norm_name(normalization)) : 0;
    return st;
}

static int cmp_i32(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* vals[u] = the value that column need[u] (ascending, distinct) has in a
 * vector distributed in the bands off, of which this rank holds
 * mine[0 .. off[me+1] - off[me]). */
static int lookup(MPI_Comm comm, const int64_t *off, const double *mine, const int32_t *need,
                  int64_t nneed, double *vals)
{
    int Q, me;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    int64_t *c = calloc((size_t)Q * 4, sizeof *c);
    int32_t *req = NULL;
    double *ans = NULL;
    int st = c ? TF_OK : tf_fail(TF_ERR_NOMEM, "out of memory for %d ranks", Q);
    int64_t *s = c, *r = c + Q, *sd = c + 2 * Q, *rd = c + 3 * Q, rtot = 0;
    /* Collectives follow: every rank goes on, or none. */
    st = tf_agree(comm, st);
    if (st == TF_OK) {
        for (int64_t u = 0; u < nneed; u++)
            s[tf_partition_owner(off, Q, need[u])]++;
        st = tf_dist_counts(comm, s, r, sd, rd, NULL, &rtot);
    }
    if (st == TF_OK) {
        req = malloc((size_t)(rtot ? rtot : 1) * sizeof *req);
        ans = malloc((size_t)(rtot ? rtot : 1) * sizeof *ans);
        if (!req || !ans)
            st = tf_fail(TF_ERR_NOMEM, "out of memory answering %lld lookups", (long long)rtot);
    }
    /* The answers are sized by the lookups this rank serves: agree before
     * the exchanges. */
    st = tf_agree(comm, st);
    /* need is ascending, so it is already grouped by owner. */
    for (int q = 0; st == TF_OK && q < Q; q++) {
        s[q] *= 4, r[q] *= 4, sd[q] *= 4, rd[q] *= 4;
    }
    if (st == TF_OK)
        st = tf_dist_alltoallv(comm, need, s, sd, req, r, rd);
    for (int64_t t = 0; st == TF_OK && t < rtot; t++)
        ans[t] = mine[req[t] - off[me]];
    for (int q = 0; st == TF_OK && q < Q; q++) {
        s[q] *= 2, r[q] *= 2, sd[q] *= 2, rd[q] *= 2;
    }
    if (st == TF_OK)
        st = tf_dist_alltoallv(comm, ans, r, rd, vals, s, sd);
    free(c);
    free(req);
    free(ans);
    return st;
}

static int normalize_gcn(MPI_Comm comm, tf_dcsr *a)
{
    if (a->m != a->n)
        return tf_agree(comm, tf_fail(TF_ERR_ARG,
                        "gcn normalisation needs a square matrix (A + I), this one is "
                        "%lld x %lld", (long long)a->m, (long long)a->n));
    int Q, me;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    tf_dcsr s = *a, t; /* s.mirrored stays: it says how the matrix was read */
    memset(&s.loc, 0, sizeof s.loc);
    memset(&t, 0, sizeof t);
    int st = tf_agree(comm, tf_norm_add_loops(&a->loc, a->row0, &s.loc));
    if (st)
        return st;
    s.nnz_total = tf_dist_sum_i64(comm, s.loc.nnz);
    st = tf_dist_transpose(comm, &s, &t);
    double *rs = NULL, *cs = NULL, *cv = NULL;
    int32_t *need = NULL;
    int64_t *off = NULL;
    if (st == TF_OK) {
        rs = malloc((size_t)(s.nrows ? s.nrows : 1) * sizeof *rs);
        cs = malloc((size_t)(t.nrows ? t.nrows : 1) * sizeof *cs);
        off = malloc((size_t)(Q + 1) * sizeof *off);
        if (!rs || !cs || !off)
            st = tf_fail(TF_ERR_NOMEM, "out of memory for degrees");
    }
    /* Columns are summed in row order: row j of the transpose. */
    for (int64_t i = 0; st == TF_OK && i < t.nrows; i++)
        cs[i] = tf_norm_row_sum(&t.loc, i);
    tf_dcsr_free(&t);
    /* Square, and the transpose in the bands of A + I: this rank's rows and
     * columns of the degree vectors are the same indices, so the first bad one over the
     * ranks is the serial loop's first. */
    for (int64_t i = 0; st == TF_OK && i < s.nrows; i++) {
        rs[i] = tf_norm_row_sum(&s.loc, i);
        const char *what = rs[i] < 0 ? "row" : cs[i] < 0 ? "column" : NULL;
        if (what)
            st = tf_fail(TF_ERR_ARG,
                         "gcn normalisation: %s %lld of A + I sums to %g; the square root of "
                         "a negative degree is undefined",
                         what, (long long)(s.row0 + i) + 1, rs[i] < 0 ? rs[i] : cs[i]);
    }
    st = tf_agree(comm, st);
    int64_t nu = 0;
    if (st == TF_OK) {
        for (int64_t i = 0; i < s.nrows; i++) {
            rs[i] = tf_norm_inv_sqrt(rs[i]);
            cs[i] = tf_norm_inv_sqrt(cs[i]);
        }
        need = malloc((size_t)(s.loc.nnz ? s.loc.nnz : 1) * sizeof *need);
        if (!need)
            st = tf_fail(TF_ERR_NOMEM, "out of memory for %lld columns", (long long)s.loc.nnz);
        else {
            memcpy(need, s.loc.col, (size_t)s.loc.nnz * sizeof *need);
            qsort(need, (size_t)s.loc.nnz, sizeof *need, cmp_i32);
            for (int64_t e = 0; e < s.loc.nnz; e++)
                if (e == 0 || need[e] != need[e - 1])
                    need[nu++] = need[e];
            cv = malloc((size_t)(nu ? nu : 1) * sizeof *cv);
            if (!cv)
                st = tf_fail(TF_ERR_NOMEM, "out of memory for %lld degrees", (long long)nu);
        }
    }
    st = tf_agree(comm, tf_dist_row_bounds(comm, st, &s, off));
    if (st == TF_OK)
        st = tf_agree(comm, lookup(comm, off, cs, need, nu, cv));
    if (st == TF_OK) {
        for (int64_t i = 0; st == TF_OK && i < s.nrows; i++)
            for (int64_t e = s.loc.rowptr[i]; st == TF_OK && e < s.loc.rowptr[i + 1]; e++) {
                int32_t j = s.loc.col[e];
                /* need is sorted: binary search for j's degree. */
                int64_t lo = 0, hi = nu - 1;
                while (lo < hi) {
                    int64_t mid = (lo + hi) / 2;
                    if (need[mid] < j)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                st = tf_norm_store(&s.loc.val[e], (double)s.loc.val[e] * (rs[i] * cv[lo]),
                           s.row0 + i, j);
            }
        st = tf_agree(comm, st);
    }
    free(rs);
    free(cs);
    free(cv);
    free(need);
    free(off);
    if (st) {
        tf_csr_free(&s.loc);
        return st;
    }
    tf_csr_free(&a->loc);
    *a = s;
    return TF_OK;
}

/* residue: the ranks' sum of tf_csr_symmetry_residue, or NULL to make it.
 * The status is agreed (the transpose's). */
static int is_symmetric(MPI_Comm comm, const tf_dcsr *a, const uint64_t *residue, int *sym)
{
    *sym = 0;
    if (a->m != a->n)
        return TF_OK;
    /* Most directed graphs are told apart without the transpose. */
    if ((residue ? *residue : tf_dist_sum_u64(comm, tf_csr_symmetry_residue(&a->loc, a->row0))) !=
        0)
        return TF_OK;
    tf_dcsr t;
    int st = tf_dist_transpose_carried(comm, a, &t);
    /* A square matrix and its transpose in the same bands: the same local
     * rows. The count of ranks where they differ carries the agreement on
     * the transpose. */
    int64_t differ = st == TF_OK &&
                     !(t.nrows == a->nrows && t.loc.nnz == a->loc.nnz &&
                       memcmp(t.loc.rowptr, a->loc.rowptr, (size_t)(a->nrows + 1) * 8) == 0 &&
                       (a->loc.nnz == 0 ||
                        (memcmp(t.loc.col, a->loc.col, (size_t)a->loc.nnz * 4) == 0 &&
                         memcmp(t.loc.val, a->loc.val, (size_t)a->loc.nnz * 4) == 0)));
    tf_dcsr_free(&t);
    if ((st = tf_agree_allreduce(comm, st, &differ, 1, MPI_INT64_T, MPI_SUM)))
        return st;
    *sym = differ == 0;
    return TF_OK;
}

int tf_dist_prepare(MPI_Comm comm, tf_dcsr *a, int normalization, int transpose,
                    tf_plan_options *o)
{
    int st;
    switch (normalization) {
    case TF_NORM_NONE: st = TF_OK; break;
    case TF_NORM_GCN: st = normalize_gcn(comm, a); break;
    case TF_NORM_MEAN: /* row sums only: each rank's own rows */
        st = tf_agree(comm, tf_norm_mean_rows(&a->loc, a->row0));
        break;
    default: st = tf_fail(TF_ERR_ARG, "unknown normalisation %d", normalization); break;
    }
    if (st)
        return st;
    /* A symmetric Matrix Market file, mirrored by the reader, equals its
     * transpose, and so does its gcn normalisation: the test would
     * transpose it to find that out (the rule of tf_matrix_prepare_read). */
    int known = tf_prepare_symmetric_as_read(a->mirrored, normalization, transpose);
    /* The symmetry test's first sum goes with the count of nonzeros when
     * the matrix it tests is this one. */
    uint64_t sums[2] = {(uint64_t)a->loc.nnz, 0};
    int early = !transpose && a->m == a->n && !known;
    if (early)
        sums[1] = tf_csr_symmetry_residue(&a->loc, a->row0);
    tf_mpi_allreduce_idle(MPI_IN_PLACE, sums, early ? 2 : 1, MPI_UINT64_T, MPI_SUM, comm);
    a->nnz_total = (int64_t)sums[0];
    uint64_t forward = transpose ? tf_dist_fingerprint(comm, a, normalization) : 0;
    if (transpose) {
        tf_dcsr t;
        if ((st = tf_dist_transpose(comm, a, &t)) != TF_OK)
            return st;
        tf_dcsr_free(a);
        *a = t;
    }
    int sym = known;
    if (!known && (st = is_symmetric(comm, a, early ? &sums[1] : NULL, &sym)) != TF_OK)
        return st;
    o->normalization = normalization;
    o->transposed = transpose != 0;
    o->transpose_of = forward;
    o->symmetric = sym;
    return TF_OK;
}
