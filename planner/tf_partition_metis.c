#include "tf_partition_metis.h"
#include "tf_error.h"
#include "tf_plan_perm.h"

#include <metis.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* A plan is a pure function of its inputs: the same matrix and ranks give
 * the same partition on every run. */
#define TF_METIS_SEED 1

/* The symmetrised pattern without the diagonal, in METIS's CSR form:
 * row j lists the union of A's row j and A's column j, ascending. Merging
 * two sorted lists (A's row and the row of A^T, made by a counting sort)
 * dedups for free. */
static int sym_graph(const tf_csr *a, idx_t **xadj_out, idx_t **adj_out)
{
    int64_t n = a->nrows;
    int64_t *tptr = calloc((size_t)n + 1, sizeof *tptr);
    int32_t *tcol = malloc((size_t)(a->nnz > 0 ? a->nnz : 1) * sizeof *tcol);
    idx_t *xadj = malloc(((size_t)n + 1) * sizeof *xadj);
    idx_t *adj = NULL;
    int st = TF_OK;
    if (!tptr || !tcol || !xadj) {
        st = tf_fail(TF_ERR_NOMEM, "out of memory for the graph of %lld rows", (long long)n);
        goto out;
    }
    for (int64_t e = 0; e < a->nnz; e++)
        tptr[a->col[e] + 1]++;
    for (int64_t j = 0; j < n; j++)
        tptr[j + 1] += tptr[j];
    {
        int64_t *pos = malloc(((size_t)n + 1) * sizeof *pos);
        if (!pos) {
            st = tf_fail(TF_ERR_NOMEM, "out of memory for the graph of %lld rows", (long long)n);
            goto out;
        }
        memcpy(pos, tptr, ((size_t)n + 1) * sizeof *pos);
        for (int64_t i = 0; i < n; i++) /* rows in order: each column list ascends */
            for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++)
                tcol[pos[a->col[e]]++] = (int32_t)i;
        free(pos);
    }
    /* Two passes over the merge: count, then fill. */
    for (int pass = 0; pass < 2; pass++) {
        int64_t total = 0;
        for (int64_t j = 0; j < n; j++) {
            int64_t x = a->rowptr[j], xe = a->rowptr[j + 1], y = tptr[j], ye = tptr[j + 1];
            if (pass == 0)
                xadj[j] = (idx_t)total;
            while (x < xe || y < ye) {
                int64_t c;
                if (y >= ye || (x < xe && a->col[x] < tcol[y]))
                    c = a->col[x++];
                else if (x >= xe || tcol[y] < a->col[x])
                    c = tcol[y++];
                else {
                    c = a->col[x++];
                    y++;
                }
                if (c == j)
                    continue;
                if (pass == 1)
                    adj[total] = (idx_t)c;
                total++;
            }
        }
        if (pass == 0) {
            if (total > (int64_t)IDX_MAX) {
                st = tf_fail(TF_ERR_RANGE,
                             "the symmetrised graph has %lld adjacency entries, more than "
                             "this METIS build's %d-bit idx_t holds",
                             (long long)total, IDXTYPEWIDTH);
                goto out;
            }
            xadj[n] = (idx_t)total;
            adj = malloc((size_t)(total > 0 ? total : 1) * sizeof *adj);
            if (!adj) {
                st = tf_fail(TF_ERR_NOMEM, "out of memory for a graph of %lld edges",
                             (long long)total / 2);
                goto out;
            }
        }
    }
out:
    free(tptr);
    free(tcol);
    if (st) {
        free(xadj);
        free(adj);
        return st;
    }
    *xadj_out = xadj;
    *adj_out = adj;
    return TF_OK;
}

void tf_metis_options_default(tf_metis_options *mo)
{
    mo->balance = TF_METIS_BALANCE_NNZ;
    mo->objective = TF_METIS_OBJ_CUT;
}

int tf_metis_objective_parse(const char *s, int *objective)
{
    if (strcmp(s, "cut") == 0)
        *objective = TF_METIS_OBJ_CUT;
    else if (strcmp(s, "vol") == 0)
        *objective = TF_METIS_OBJ_VOL;
    else
        return tf_fail(TF_ERR_ARG, "METIS objective '%s': expected cut or vol", s);
    return TF_OK;
}

int tf_metis_balance_parse(const char *s, int *balance)
{
    if (strcmp(s, "nnz") == 0)
        *balance = TF_METIS_BALANCE_NNZ;
    else if (strcmp(s, "nnz+rows") == 0)
        *balance = TF_METIS_BALANCE_NNZ_ROWS;
    else
        return tf_fail(TF_ERR_ARG, "METIS balance '%s': expected nnz or nnz+rows", s);
    return TF_OK;
}

const char *tf_metis_objective_name(int objective)
{
    return objective == TF_METIS_OBJ_VOL ? "vol" : "cut";
}

const char *tf_metis_balance_name(int balance)
{
    return balance == TF_METIS_BALANCE_NNZ_ROWS ? "nnz+rows" : "nnz";
}

int tf_partition_metis(const tf_csr *a, int nparts, const tf_metis_options *mo_in, int32_t *part)
{
    tf_metis_options mo;
    if (mo_in)
        mo = *mo_in;
    else
        tf_metis_options_default(&mo);
    if ((mo.balance != TF_METIS_BALANCE_NNZ && mo.balance != TF_METIS_BALANCE_NNZ_ROWS) ||
        (mo.objective != TF_METIS_OBJ_CUT && mo.objective != TF_METIS_OBJ_VOL))
        return tf_fail(TF_ERR_ARG, "METIS options: unknown balance %d or objective %d",
                       mo.balance, mo.objective);
    int64_t n = a->nrows;
    if (a->nrows != a->ncols)
        return tf_fail(TF_ERR_ARG,
                       "--partition metis renumbers rows and columns alike and needs a square "
                       "matrix; this one is %lld x %lld (use --partition rows or nnz)",
                       (long long)a->nrows, (long long)a->ncols);
    if (nparts < 1)
        return tf_fail(TF_ERR_ARG, "cannot partition into %d parts", nparts);
    if (n > (int64_t)IDX_MAX)
        return tf_fail(TF_ERR_RANGE, "%lld rows exceed this METIS build's %d-bit idx_t",
                       (long long)n, IDXTYPEWIDTH);
    if (nparts == 1 || n <= nparts || a->nnz == 0) {
        /* Nothing for METIS to decide (it rejects some of these cases). */
        int64_t base = n / nparts, extra = n % nparts, j = 0;
        for (int p = 0; p < nparts && j < n; p++)
            for (int64_t c = 0; c < base + (p < extra ? 1 : 0); c++)
                part[j++] = p;
        return TF_OK;
    }
    idx_t *xadj = NULL, *adj = NULL;
    int st = sym_graph(a, &xadj, &adj);
    if (st)
        return st;
    idx_t nv = (idx_t)n, ncon = mo.balance == TF_METIS_BALANCE_NNZ_ROWS ? 2 : 1, np = nparts;
    idx_t objval = 0;
    idx_t *vwgt = malloc((size_t)n * (size_t)ncon * sizeof *vwgt);
    idx_t *where = malloc((size_t)n * sizeof *where);
    if (!vwgt || !where) {
        st = tf_fail(TF_ERR_NOMEM, "out of memory for METIS on %lld rows", (long long)n);
        goto out;
    }
    for (int64_t j = 0; j < n; j++) {
        int64_t w = a->rowptr[j + 1] - a->rowptr[j];
        if (w > (int64_t)IDX_MAX / nparts) {
            st = tf_fail(TF_ERR_RANGE, "row %lld: %lld nonzeros exceed METIS's weight range",
                         (long long)j, (long long)w);
            goto out;
        }
        vwgt[j * ncon] = (idx_t)w;
        if (ncon == 2)
            vwgt[j * ncon + 1] = 1;
    }
    if (a->nnz > (int64_t)IDX_MAX) {
        st = tf_fail(TF_ERR_RANGE, "%lld nonzeros exceed METIS's %d-bit weight sum",
                     (long long)a->nnz, IDXTYPEWIDTH);
        goto out;
    }
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_OBJTYPE] =
        mo.objective == TF_METIS_OBJ_VOL ? METIS_OBJTYPE_VOL : METIS_OBJTYPE_CUT;
    options[METIS_OPTION_SEED] = TF_METIS_SEED;
    options[METIS_OPTION_NUMBERING] = 0;
    int rc = METIS_PartGraphKway(&nv, &ncon, xadj, adj, vwgt, NULL, NULL, &np, NULL, NULL,
                                 options, &objval, where);
    if (rc != METIS_OK) {
        st = tf_fail(rc == METIS_ERROR_MEMORY ? TF_ERR_NOMEM : TF_ERR_INTERNAL,
                     "METIS_PartGraphKway failed (%s) on %lld rows into %d parts",
                     rc == METIS_ERROR_INPUT    ? "input error"
                     : rc == METIS_ERROR_MEMORY ? "out of memory"
                                                : "error",
                     (long long)n, nparts);
        goto out;
    }
    for (int64_t j = 0; j < n; j++) {
        if (where[j] < 0 || where[j] >= nparts) {
            st = tf_fail(TF_ERR_INTERNAL, "METIS put row %lld into part %lld of %d",
                         (long long)j, (long long)where[j], nparts);
            goto out;
        }
        part[j] = (int32_t)where[j];
    }
out:
    free(xadj);
    free(adj);
    free(vwgt);
    free(where);
    return st;
}

int tf_metis_order(const tf_csr *a, int nparts, const tf_metis_options *mo, int64_t **perm_out,
                   int64_t **iperm_out, int64_t *off, tf_csr *ap, double *metis_s)
{
    memset(ap, 0, sizeof *ap);
    *perm_out = *iperm_out = NULL;
    int64_t n = a->nrows;
    int32_t *part = malloc((size_t)(n > 0 ? n : 1) * sizeof *part);
    int64_t *perm = malloc((size_t)(n > 0 ? n : 1) * sizeof *perm);
    int64_t *iperm = malloc((size_t)(n > 0 ? n : 1) * sizeof *iperm);
    int st = part && perm && iperm
                 ? TF_OK
                 : tf_fail(TF_ERR_NOMEM, "out of memory renumbering %lld rows", (long long)n);
    double t0 = omp_get_wtime();
    if (st == TF_OK)
        st = tf_partition_metis(a, nparts, mo, part);
    if (metis_s)
        *metis_s = omp_get_wtime() - t0;
    if (st == TF_OK)
        st = tf_perm_from_parts(part, n, nparts, perm, iperm, off);
    if (st == TF_OK)
        st = tf_csr_permute(a, perm, iperm, ap);
    free(part);
    if (st) {
        free(perm);
        free(iperm);
        return st;
    }
    *perm_out = perm;
    *iperm_out = iperm;
    return TF_OK;
}
