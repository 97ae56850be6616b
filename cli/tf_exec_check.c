#include "tf_exec_check.h"

#include "tf_csr.h"
#include "tf_dense_h5.h"
#include "tf_bf16.h"
#include "tf_error.h"
#include "tf_exec_ids.h"
#include "tf_reference.h"

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

/* sum_j |A(i,j)| of this rank's rows. */
static double *abs_row_sums(const tf_csr *rows)
{
    double *absrow = malloc((size_t)(rows->nrows + 1) * sizeof *absrow);
    if (!absrow)
        return NULL;
    for (int64_t i = 0; i < rows->nrows; i++) {
        double s = 0.0;
        for (int64_t e = rows->rowptr[i]; e < rows->rowptr[i + 1]; e++)
            s += fabs((double)rows->val[e]);
        absrow[i] = s;
    }
    return absrow;
}

int tf_exec_check_rows(const tf_handle *h, const char *b_path, int k, uint64_t seed,
                       float *const *cs, int nc, double *errs)
{
    /* Columns in original ids: B (generated or from b_path) is in those. */
    tf_csr orig;
    const tf_csr *rows;
    if (tf_exec_rows_original(h, &orig, &rows))
        return tf_agree(h->comm, TF_ERR_NOMEM);
    int64_t nr = rows->nrows;
    double *absrow = abs_row_sums(rows);
    const int64_t BLK = 1024;
    double *cref = malloc((size_t)BLK * (size_t)k * sizeof *cref);
    for (int x = 0; x < nc; x++)
        errs[x] = 0.0;
    if (!absrow || !cref) {
        free(absrow);
        free(cref);
        tf_csr_free(&orig);
        return tf_fail(TF_ERR_NOMEM, "out of memory for --check");
    }
    int st = TF_OK;
    double bmax = 1.0; /* generator values lie in [-1, 1) */
    tf_csr compact;
    memset(&compact, 0, sizeof compact);
    float *bneed = NULL;
    if (b_path) {
        /* The distinct columns this rank's rows use, read from the file, and
         * a copy of the rows with columns renumbered into that list. */
        int64_t n = rows->ncols;
        int32_t *map = malloc((size_t)(n + 1) * sizeof *map);
        st = map ? tf_csr_alloc(&compact, nr, 0, rows->nnz)
                 : tf_fail(TF_ERR_NOMEM, "out of memory for --check");
        int64_t nneed = 0;
        int32_t *need = NULL;
        if (st == TF_OK) {
            for (int64_t j = 0; j < n; j++)
                map[j] = -1;
            for (int64_t e = 0; e < rows->nnz; e++)
                map[rows->col[e]] = 0;
            need = malloc((size_t)(n + 1) * sizeof *need);
            if (!need)
                st = tf_fail(TF_ERR_NOMEM, "out of memory for --check");
        }
        if (st == TF_OK) {
            for (int64_t j = 0; j < n; j++)
                if (map[j] == 0) {
                    map[j] = (int32_t)nneed;
                    need[nneed++] = (int32_t)j;
                }
            compact.ncols = nneed;
            memcpy(compact.rowptr, rows->rowptr, (size_t)(nr + 1) * sizeof *compact.rowptr);
            for (int64_t e = 0; e < rows->nnz; e++) {
                compact.col[e] = map[rows->col[e]];
                compact.val[e] = rows->val[e];
            }
            bneed = malloc((size_t)(nneed > 0 ? nneed : 1) * (size_t)k * sizeof *bneed);
            st = bneed ? tf_dense_h5_read_row_set(b_path, "/B", need, nneed, k, bneed)
                       : tf_fail(TF_ERR_NOMEM, "out of memory for --check");
        }
        bmax = 0.0;
        for (int64_t x = 0; st == TF_OK && x < nneed * k; x++)
            if (fabs((double)bneed[x]) > bmax)
                bmax = fabs((double)bneed[x]);
        free(map);
        free(need);
    }
    /* The scale uses the largest |B| anywhere, the same on every rank. */
    int st_all = tf_agree(h->comm, st);
    if (st_all == TF_OK) {
        double g = bmax;
        MPI_Allreduce(&g, &bmax, 1, MPI_DOUBLE, MPI_MAX, h->comm);
        for (int64_t r0 = 0; r0 < nr; r0 += BLK) {
            int64_t r1 = r0 + BLK < nr ? r0 + BLK : nr;
            if (b_path)
                tf_reference_spmm(&compact, r0, r1, bneed, k, cref);
            else
                tf_reference_spmm_gen(rows, r0, r1, seed, k, cref);
            for (int x = 0; x < nc; x++) {
                double e = tf_reference_scaled_error(cs[x] + r0 * k, cref, absrow + r0, r1 - r0,
                                                     k, bmax > 0 ? bmax : 1.0);
                if (!(e <= errs[x])) /* NaN-safe max */
                    errs[x] = e;
            }
        }
        MPI_Allreduce(MPI_IN_PLACE, errs, nc, MPI_DOUBLE, MPI_MAX, h->comm);
    }
    tf_csr_free(&compact);
    tf_csr_free(&orig);
    free(bneed);
    free(absrow);
    free(cref);
    return st_all;
}

/* Max over this rank's entries of |C - C0| / (sum_j |A(i,j)| max|B|). */
static double scaled_diff(const double *absrow, int64_t nr, int k, const float *c,
                          const float *c0, double bmax)
{
    double worst = 0.0;
    for (int64_t i = 0; i < nr; i++) {
        double scale = absrow[i] * bmax + 1e-30;
        for (int64_t x = 0; x < k; x++) {
            double d = fabs((double)c[i * k + x] - (double)c0[i * k + x]);
            if (!(d == d))
                return INFINITY;
            if (d / scale > worst)
                worst = d / scale;
        }
    }
    return worst;
}

double tf_exec_bmax(MPI_Comm comm, const float *b, int64_t nbrows, int k)
{
    double bmax = 0.0;
    for (int64_t x = 0; x < nbrows * k; x++)
        if (fabs((double)b[x]) > bmax)
            bmax = fabs((double)b[x]);
    MPI_Allreduce(MPI_IN_PLACE, &bmax, 1, MPI_DOUBLE, MPI_MAX, comm);
    return bmax > 0 ? bmax : 1.0;
}

void tf_exec_compare(const tf_handle *h, int k, float *const *cs, int nc, double bmax,
                     double *diffs)
{
    const tf_csr *rows = tf_handle_rows(h);
    double *absrow = abs_row_sums(rows);
    if (!absrow)
        MPI_Abort(h->comm, 1);
    diffs[0] = 0.0;
    for (int x = 1; x < nc; x++)
        diffs[x] = scaled_diff(absrow, rows->nrows, k, cs[x], cs[0], bmax);
    MPI_Allreduce(MPI_IN_PLACE, diffs, nc, MPI_DOUBLE, MPI_MAX, h->comm);
    free(absrow);
}

double tf_exec_check_tol(int bf16_sides) { return TF_EXEC_CHECK_TOL + bf16_sides * TF_BF16_REL_BOUND; }
