#include "tf_dist_partition.h"
#include "tf_dist_comm.h"
#include "tf_dist_planner.h"
#include "tf_dist_rows.h"
#include "tf_error.h"
#include "tf_idle.h"
#include "tf_partition.h"
#include "tf_plan_perm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <scotch.h>
#include <ptscotch.h>

/* The serial partitioner's seed and tolerance (tf_partition_metis.c):
 * a plan is a pure function of its inputs and ranks. */
#define TF_SCOTCH_SEED 1
#define TF_SCOTCH_IMBALANCE 0.03

/* Row j's part when there is nothing to partition, as tf_partition_metis
 * assigns it: the first n % nparts parts get one row more. */
static int32_t trivial_part(int64_t j, int64_t n, int nparts)
{
    int64_t base = n / nparts, extra = n % nparts, big = extra * (base + 1);
    return (int32_t)(j < big ? j / (base + 1) : extra + (j - big) / base);
}

/* The rows of the symmetrised graph without the diagonal, merged from A's
 * rows and A^T's (both ascending), in SCOTCH's distributed CSR form. */
static int sym_rows(const tf_dcsr *a, const tf_dcsr *at, SCOTCH_Num **vert_out,
                    SCOTCH_Num **edge_out, int64_t *nedge)
{
    const tf_csr *x = &a->loc, *y = &at->loc;
    const int64_t nr = a->nrows;
    SCOTCH_Num *vert = malloc(((size_t)nr + 1) * sizeof *vert), *edge = NULL;
    if (!vert)
        return tf_fail(TF_ERR_NOMEM, "out of memory for the graph of %lld rows", (long long)nr);
    for (int pass = 0; pass < 2; pass++) {
        int64_t total = 0;
        for (int64_t i = 0; i < nr; i++) {
            const int64_t g = a->row0 + i;
            int64_t p = x->rowptr[i], pe = x->rowptr[i + 1], q = y->rowptr[i], qe = y->rowptr[i + 1];
            if (pass == 0)
                vert[i] = (SCOTCH_Num)total;
            while (p < pe || q < qe) {
                int64_t c;
                if (q >= qe || (p < pe && x->col[p] < y->col[q]))
                    c = x->col[p++];
                else if (p >= pe || y->col[q] < x->col[p])
                    c = y->col[q++];
                else {
                    c = x->col[p++];
                    q++;
                }
                if (c == g)
                    continue;
                if (pass == 1)
                    edge[total] = (SCOTCH_Num)c;
                total++;
            }
        }
        if (pass == 0) {
            if (total > (int64_t)SCOTCH_NUMMAX) {
                free(vert);
                return tf_fail(TF_ERR_RANGE,
                               "rows %lld-%lld have %lld graph edges, more than PT-Scotch's "
                               "%d-bit SCOTCH_Num holds",
                               (long long)a->row0, (long long)(a->row0 + nr), (long long)total,
                               (int)sizeof(SCOTCH_Num) * 8);
            }
            vert[nr] = (SCOTCH_Num)total;
            *nedge = total;
            edge = malloc((size_t)(total > 0 ? total : 1) * sizeof *edge);
            if (!edge) {
                free(vert);
                return tf_fail(TF_ERR_NOMEM, "out of memory for %lld graph edges",
                               (long long)total);
            }
        }
    }
    *vert_out = vert;
    *edge_out = edge;
    return TF_OK;
}

static int scotch_fail(const char *what, const tf_dcsr *a, int64_t nedge, int nparts)
{
    return tf_fail(TF_ERR_INTERNAL, "%s failed on rows %lld-%lld (%lld graph edges) into %d parts",
                   what, (long long)a->row0, (long long)(a->row0 + a->nrows), (long long)nedge,
                   nparts);
}

/* PT-Scotch on the local rows' graph; part[] gets the local rows' parts. */
static int scotch_parts(MPI_Comm comm, const tf_dcsr *a, SCOTCH_Num *vert, SCOTCH_Num *edge,
                        int64_t nedge, int nparts, int32_t *part)
{
    const int64_t nr = a->nrows;
    SCOTCH_Num *velo = malloc((size_t)(nr > 0 ? nr : 1) * sizeof *velo);
    SCOTCH_Num *where = malloc((size_t)(nr > 0 ? nr : 1) * sizeof *where);
    int st = velo && where ? TF_OK
                           : tf_fail(TF_ERR_NOMEM, "out of memory for %lld vertices", (long long)nr);
    for (int64_t i = 0; st == TF_OK && i < nr; i++)
        velo[i] = (SCOTCH_Num)(a->loc.rowptr[i + 1] - a->loc.rowptr[i]);
    st = tf_agree(comm, st);
    if (st) {
        free(velo);
        free(where);
        return st;
    }
    SCOTCH_Context ctx;
    SCOTCH_Dgraph g, gc;
    SCOTCH_Strat strat;
    int have_ctx = 0, have_g = 0, have_gc = 0, have_strat = 0;
    const char *what = NULL;
    /* One thread per rank: the ranks already share the cores, and a
     * threaded run is not reproducible. Deterministic mode and a fixed
     * seed make the parts a function of the graph, nparts and Q. */
    if (SCOTCH_contextInit(&ctx) != 0)
        what = "SCOTCH_contextInit";
    else {
        have_ctx = 1;
        if (SCOTCH_contextOptionSetNum(&ctx, SCOTCH_OPTIONNUMDETERMINISTIC, 1) != 0 ||
            SCOTCH_contextOptionSetNum(&ctx, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1) != 0)
            what = "SCOTCH_contextOptionSetNum";
        else if (SCOTCH_contextThreadSpawn(&ctx, 1, NULL) != 0)
            what = "SCOTCH_contextThreadSpawn";
        else {
            SCOTCH_contextRandomSeed(&ctx, TF_SCOTCH_SEED);
            SCOTCH_contextRandomReset(&ctx);
        }
    }
    if (!what) {
        if (SCOTCH_dgraphInit(&g, comm) != 0)
            what = "SCOTCH_dgraphInit";
        else
            have_g = 1;
    }
    /* dgraphBuild and dgraphPart are collective: the ranks agree on the
     * local steps before each, so that none enters one alone. */
    st = tf_agree(comm, what ? scotch_fail(what, a, nedge, nparts) : TF_OK);
    if (st == TF_OK &&
        SCOTCH_dgraphBuild(&g, 0, (SCOTCH_Num)nr, (SCOTCH_Num)nr, vert, NULL, velo, NULL,
                           (SCOTCH_Num)nedge, (SCOTCH_Num)nedge, edge, NULL, NULL) != 0)
        what = "SCOTCH_dgraphBuild";
    if (st == TF_OK && !what) {
        if (SCOTCH_dgraphInit(&gc, comm) != 0)
            what = "SCOTCH_dgraphInit";
        else
            have_gc = 1;
    }
    if (st == TF_OK && !what && SCOTCH_contextBindDgraph(&ctx, &g, &gc) != 0)
        what = "SCOTCH_contextBindDgraph";
    if (st == TF_OK && !what) {
        if (SCOTCH_stratInit(&strat) != 0)
            what = "SCOTCH_stratInit";
        else
            have_strat = 1;
    }
    int Q;
    MPI_Comm_size(comm, &Q);
    if (st == TF_OK && !what &&
        SCOTCH_stratDgraphMapBuild(&strat, SCOTCH_STRATDEFAULT, (SCOTCH_Num)Q, (SCOTCH_Num)nparts,
                                   TF_SCOTCH_IMBALANCE) != 0)
        what = "SCOTCH_stratDgraphMapBuild";
    if (st == TF_OK)
        st = tf_agree(comm, what ? scotch_fail(what, a, nedge, nparts) : TF_OK);
    if (st == TF_OK && SCOTCH_dgraphPart(&gc, (SCOTCH_Num)nparts, &strat, where) != 0)
        what = "SCOTCH_dgraphPart";
    if (st == TF_OK && what)
        st = scotch_fail(what, a, nedge, nparts);
    for (int64_t i = 0; st == TF_OK && i < nr; i++) {
        if (where[i] < 0 || where[i] >= nparts)
            st = tf_fail(TF_ERR_INTERNAL, "PT-Scotch put row %lld into part %lld of %d",
                         (long long)(a->row0 + i), (long long)where[i], nparts);
        else
            part[i] = (int32_t)where[i];
    }
    if (have_strat)
        SCOTCH_stratExit(&strat);
    if (have_gc)
        SCOTCH_dgraphExit(&gc);
    if (have_g)
        SCOTCH_dgraphExit(&g);
    if (have_ctx)
        SCOTCH_contextExit(&ctx);
    free(velo);
    free(where);
    return tf_agree(comm, st);
}

int tf_dist_partition_parts(MPI_Comm comm, const tf_dcsr *a, int nparts,
                            const tf_metis_options *mo_in, int32_t *part)
{
    tf_metis_options mo;
    if (mo_in)
        mo = *mo_in;
    else
        tf_metis_options_default(&mo);
    int Q, me;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    const int64_t n = a->m;
    if (a->m != a->n)
        return tf_fail(TF_ERR_ARG,
                       "--partition metis renumbers rows and columns alike and needs a square "
                       "matrix; this one is %lld x %lld (use --partition rows or nnz)",
                       (long long)a->m, (long long)a->n);
    if (nparts < 1)
        return tf_fail(TF_ERR_ARG, "cannot partition into %d parts", nparts);
    int st = TF_OK;
    if (a->row0 != tf_dcsr_block(n, Q, me) || a->row0 + a->nrows != tf_dcsr_block(n, Q, me + 1))
        st = tf_fail(TF_ERR_INTERNAL, "rank %d holds rows %lld-%lld, not its block", me,
                     (long long)a->row0, (long long)(a->row0 + a->nrows));
    if ((st = tf_agree(comm, st)))
   return st;
    if (nparts == 1 || n <= nparts || a->nnz_total == 0) {
        for (int64_t i = 0; i < a->nrows; i++)
            part[i] = trivial_part(a->row0 + i, n, nparts);
        return TF_OK;
    }
    if (mo.balance != TF_METIS_BALANCE_NNZ)
        return tf_fail(TF_ERR_ARG, "--metis-balance %s: PT-Scotch, the partitioner of "
                                   "twoface-plan on %d ranks, balances one weight (nnz); plan "
                                   "with one rank for nnz+rows",
                       tf_metis_balance_name(mo.balance), Q);
    if (mo.objective != TF_METIS_OBJ_CUT)
        return tf_fail(TF_ERR_ARG, "--metis-objective %s: PT-Scotch, the partitioner of "
                                   "twoface-plan on %d ranks, minimises the edge cut only; plan "
                                   "with one rank for vol",
                       tf_metis_objective_name(mo.objective), Q);
    if (n > (int64_t)SCOTCH_NUMMAX || a->nnz_total > (int64_t)SCOTCH_NUMMAX)
        return tf_fail(TF_ERR_RANGE, "%lld rows and %lld nonzeros exceed PT-Scotch's %d-bit "
                                     "SCOTCH_Num",
                       (long long)n, (long long)a->nnz_total, (int)sizeof(SCOTCH_Num) * 8);
    tf_dcsr at;
    st = tf_dist_transpose(comm, a, &at);
    if (st)
        return st;
    SCOTCH_Num *vert = NULL, *edge = NULL;
    int64_t nedge = 0;
    st = sym_rows(a, &at, &vert, &edge, &nedge);
    tf_dcsr_free(&at);
    st = tf_agree(comm, st);
    if (st == TF_OK && tf_dist_sum_i64(comm, nedge) > (int64_t)SCOTCH_NUMMAX)
        st = tf_fail(TF_ERR_RANGE, "the symmetrised graph has more adjacency entries than "
                                   "PT-Scotch's %d-bit SCOTCH_Num holds",
                     (int)sizeof(SCOTCH_Num) * 8);
    if (st == TF_OK)
        st = scotch_parts(comm, a, vert, edge, nedge, nparts, part);
    free(vert);
    free(edge);
    return st;
}

/* One moved row: its new id and length; its entries travel separately. */
typedef struct {
    int64_t row, len;
} row_hdr;

typedef struct {
    int32_t col;
    float val;
} entry;

static int entry_cmp(const void *x, const void *y)
{
    const entry *a = x, *b = y;
    return (a->col > b->col) - (a->col < b->col);
}

/* Byte counts and displacements from element counts. */
static void bytes(int64_t *c, int Q, int64_t size)
{
    for (int q = 0; q < 4 * Q; q++)
        c[q] *= size;
}

/* newcol[e] = the new id of column a->col[e], asked of the rank whose block
 * holds that row (it knows the new ids of its rows: newid). */
static int lookup_cols(MPI_Comm comm, const tf_dcsr *a, const int64_t *blk,
                       const int64_t *newid, int32_t *newcol)
{
    int Q;
    MPI_Comm_size(comm, &Q);
    const tf_csr *x = &a->loc;
    int64_t *c = calloc((size_t)Q * 4, sizeof *c), stot = 0, rtot = 0;
    int64_t *pos = malloc((size_t)Q * sizeof *pos);
    int32_t *ask = NULL, *got = NULL;
    int st = c && pos ? TF_OK : tf_fail(TF_ERR_NOMEM, "out of memory for %d ranks", Q);
    int64_t *s = c, *r = c + Q, *sd = c + 2 * Q, *rd = c + 3 * Q;
    /* Collectives follow: every rank goes on, or none. */
    st = tf_agree(comm, st);
    if (st == TF_OK) {
        for (int64_t e = 0; e < x->nnz; e++)
            s[tf_partition_owner(blk, Q, x->col[e])]++;
        st = tf_dist_counts(comm, s, r, sd, rd, &stot, &rtot);
    }
    if (st == TF_OK) {
        ask = malloc((size_t)(stot ? stot : 1) * sizeof *ask);
        got = malloc((size_t)(rtot ? rtot : 1) * sizeof *got);
        if (!ask || !got)
            st = tf_fail(TF_ERR_NOMEM, "out of memory renumbering %lld columns",
                         (long long)(stot + rtot));
    }
    st = tf_agree(comm, st);
    if (st == TF_OK) {
        memcpy(pos, sd, (size_t)Q * sizeof *pos);
        for (int64_t e = 0; e < x->nnz; e++)
            ask[pos[tf_partition_owner(blk, Q, x->col[e])]++] = x->col[e];
        bytes(c, Q, (int64_t)sizeof(int32_t));
        st = tf_agree(comm, tf_dist_alltoallv(comm, ask, s, sd, got, r, rd));
    }
    if (st == TF_OK) {
        /* Answer in place, then the answers travel back the same way. */
        for (int64_t t = 0; t < rtot; t++)
            got[t] = (int32_t)newid[got[t] - a->row0];
        st = tf_agree(comm, tf_dist_alltoallv(comm, got, r, rd, ask, s, sd));
    }
    if (st == TF_OK) {
        for (int q = 0; q < Q; q++)
            pos[q] = sd[q] / (int64_t)sizeof(int32_t);
        for (int64_t e = 0; e < x->nnz; e++)
            newcol[e] = ask[pos[tf_partition_owner(blk, Q, x->col[e])]++];
    }
    free(c);
    free(pos);
    free(ask);
    free(got);
    return st;
}

/* Rows go to the ranks of their new bands (tgt), with new row ids and the
 * new columns; each row's entries are then sorted. */
static int move_rows(MPI_Comm comm, const tf_dcsr *a, const int64_t *tgt, const int64_t *newid,
                     const int32_t *newcol, tf_dcsr *ap)
{
    int Q, me;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    const tf_csr *x = &a->loc;
    const int64_t nr = a->nrows;
    int64_t *rc = calloc((size_t)Q * 8, sizeof *rc), rstot = 0, rrtot = 0, zstot = 0, zrtot = 0;
    int64_t *pos = malloc((size_t)Q * 2 * sizeof *pos);
    int *dst = malloc((size_t)(nr ? nr : 1) * sizeof *dst);
    row_hdr *hs = NULL, *hr = NULL;
    int32_t *cs = NULL, *cr = NULL;
    float *vs = NULL, *vr = NULL;
    int st = rc && pos && dst ? TF_OK : tf_fail(TF_ERR_NOMEM, "out of memory moving %lld rows",
                                                (long long)nr);
    int64_t *zc = rc + 4 * Q; /* entries: send, recv, sdispl, rdispl */
    /* Collectives follow, and dst is sized by this rank's rows: every rank
     * goes on, or none. */
    st = tf_agree(comm, st);
    if (st == TF_OK) {
        for (int64_t i = 0; i < nr; i++) {
            dst[i] = tf_partition_owner(tgt, Q, newid[i]);
            rc[dst[i]]++;
            zc[dst[i]] += x->rowptr[i + 1] - x->rowptr[i];
        }
        st = tf_dist_counts(comm, rc, rc + Q, rc + 2 * Q, rc + 3 * Q, &rstot, &rrtot);
        if (st == TF_OK)
            st = tf_dist_counts(comm, zc, zc + Q, zc + 2 * Q, zc + 3 * Q, &zstot, &zrtot);
    }
    if (st == TF_OK && rrtot != tgt[me + 1] - tgt[me])
        st = tf_fail(TF_ERR_INTERNAL, "rank %d: received %lld rows for a band of %lld", me,
                     (long long)rrtot, (long long)(tgt[me + 1] - tgt[me]));
    if (st == TF_OK) {
        hs = malloc((size_t)(rstot ? rstot : 1) * sizeof *hs);
        hr = malloc((size_t)(rrtot ? rrtot : 1) * sizeof *hr);
        cs = malloc((size_t)(zstot ? zstot : 1) * sizeof *cs);
        vs = malloc((size_t)(zstot ? zstot : 1) * sizeof *vs);
        cr = malloc((size_t)(zrtot ? zrtot : 1) * sizeof *cr);
        vr = malloc((size_t)(zrtot ? zrtot : 1) * sizeof *vr);
        if (!hs || !hr || !cs || !vs || !cr || !vr)
            st = tf_fail(TF_ERR_NOMEM, "out of memory moving %lld nonzeros",
                         (long long)(zstot + zrtot));
    }
    st = tf_agree(comm, st);
    if (st == TF_OK) {
        memcpy(pos, rc + 2 * Q, (size_t)Q * sizeof *pos);
        memcpy(pos + Q, zc + 2 * Q, (size_t)Q * sizeof *pos);
        for (int64_t i = 0; i < nr; i++) {
            int q = dst[i];
            int64_t b = x->rowptr[i], len = x->rowptr[i + 1] - b;
            hs[pos[q]++] = (row_hdr){newid[i], len};
            memcpy(cs + pos[Q + q], newcol + b, (size_t)len * sizeof *cs);
            memcpy(vs + pos[Q + q], x->val + b, (size_t)len * sizeof *vs);
            pos[Q + q] += len;
        }
        bytes(rc, Q, (int64_t)sizeof(row_hdr));
        st = tf_dist_alltoallv(comm, hs, rc, rc + 2 * Q, hr, rc + Q, rc + 3 * Q);
        bytes(zc, Q, 4);
        if (st == TF_OK)
            st = tf_dist_alltoallv(comm, cs, zc, zc + 2 * Q, cr, zc + Q, zc + 3 * Q);
        if (st == TF_OK)
            st = tf_dist_alltoallv(comm, vs, zc, zc + 2 * Q, vr, zc + Q, zc + 3 * Q);
        st = tf_agree(comm, st);
    }
    free(hs);
    free(cs);
    free(vs);
    hs = NULL;
    cs = NULL;
    vs = NULL;
    const int64_t r0 = tgt[me];
    if (st == TF_OK)
        st = tf_csr_alloc(&ap->loc, rrtot, a->n, zrtot);
    int64_t wmax = 0;
    if (st == TF_OK) {
        for (int64_t t = 0; t < rrtot; t++) {
            ap->loc.rowptr[hr[t].row - r0 + 1] = hr[t].len;
            if (hr[t].len > wmax)
                wmax = hr[t].len;
        }
        for (int64_t i = 0; i < rrtot; i++)
            ap->loc.rowptr[i + 1] += ap->loc.rowptr[i];
        int64_t z = 0;
        for (int64_t t = 0; t < rrtot; t++) {
            int64_t o = ap->loc.rowptr[hr[t].row - r0];
            memcpy(ap->loc.col + o, cr + z, (size_t)hr[t].len * sizeof *cr);
            memcpy(ap->loc.val + o, vr + z, (size_t)hr[t].len * sizeof *vr);
            z += hr[t].len;
        }
    }
    free(hr);
    free(cr);
    free(vr);
    entry *buf = NULL;
    if (st == TF_OK && !(buf = malloc((size_t)(wmax ? wmax : 1) * sizeof *buf)))
        st = tf_fail(TF_ERR_NOMEM, "out of memory sorting a row of %lld entries",
                     (long long)wmax);
    for (int64_t i = 0; st == TF_OK && i < rrtot; i++) {
        int64_t b = ap->loc.rowptr[i], len = ap->loc.rowptr[i + 1] - b;
        int sorted = 1;
        for (int64_t k = 1; k < len && sorted; k++)
            sorted = ap->loc.col[b + k - 1] < ap->loc.col[b + k];
        if (sorted)
            continue;
        for (int64_t k = 0; k < len; k++)
            buf[k] = (entry){ap->loc.col[b + k], ap->loc.val[b + k]};
        qsort(buf, (size_t)len, sizeof *buf, entry_cmp);
        for (int64_t k = 0; k < len; k++) {
            ap->loc.col[b + k] = buf[k].col;
            ap->loc.val[b + k] = buf[k].val;
        }
    }
    free(buf);
    free(rc);
    free(pos);
    free(dst);
    st = tf_agree(comm, st);
    if (st) {
        tf_csr_free(&ap->loc);
        return st;
    }
    ap->m = a->m;
    ap->n = a->n;
    ap->nnz_total = a->nnz_total;
    ap->row0 = r0;
    ap->nrows = rrtot;
    ap->loc.nnz = zrtot;
    return TF_OK;
}

/* perm and iperm on rank 0 from every rank's new ids of its rows. */
static int gather_perm(MPI_Comm comm, const tf_dcsr *a, const int64_t *blk,
                       const int64_t *newid, int64_t **perm, int64_t **iperm)
{
    int Q, me;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    const int64_t n = a->m;
    int *cnt = NULL, *dsp = NULL;
    int st = TF_OK;
    if (me == 0) {
        cnt = malloc((size_t)Q * sizeof *cnt);
        dsp = malloc((size_t)Q * sizeof *dsp);
        *perm = malloc((size_t)(n > 0 ? n : 1) * sizeof **perm);
        *iperm = malloc((size_t)(n > 0 ? n : 1) * sizeof **iperm);
        if (!cnt || !dsp || !*perm || !*iperm)
            st = tf_fail(TF_ERR_NOMEM, "rank 0: out of memory for a permutation of %lld rows",
                         (long long)n);
        for (int q = 0; st == TF_OK && q < Q; q++) {
            cnt[q] = (int)(blk[q + 1] - blk[q]);
            dsp[q] = (int)blk[q];
        }
    }
    st = tf_agree(comm, st);
    if (st == TF_OK &&
        MPI_Gatherv(newid, (int)a->nrows, MPI_INT64_T, me == 0 ? *iperm : NULL, cnt, dsp,
                    MPI_INT64_T, 0, comm) != MPI_SUCCESS)
        st = tf_fail(TF_ERR_MPI, "MPI_Gatherv of the new row ids failed");
    if (st == TF_OK && me == 0)
        for (int64_t j = 0; j < n; j++)
            (*perm)[(*iperm)[j]] = j;
    free(cnt);
    free(dsp);
    st = tf_agree(comm, st);
    if (st && me == 0) {
        free(*perm);
        free(*iperm);
        *perm = *iperm = NULL;
    }
    return st;
}

/* The rows and columns of *a (block distribution, consumed) renumbered by
 * newid (this rank's rows' new ids) into the bands off[0..nparts]. */
static int renumber(MPI_Comm comm, tf_dcsr *a, int nparts, const int64_t *off,
                    const int64_t *newid, int64_t **perm, int64_t **iperm, tf_dcsr *ap)
{
    int Q, me;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    int64_t *blk = malloc((size_t)(Q + 1) * sizeof *blk);
    int64_t *tgt = malloc((size_t)(Q + 1) * sizeof *tgt);
    int32_t *newcol = malloc((size_t)(a->loc.nnz ? a->loc.nnz : 1) * sizeof *newcol);
    int st = blk && tgt && newcol ? TF_OK
                                  : tf_fail(TF_ERR_NOMEM, "out of memory renumbering %lld rows",
                                            (long long)a->nrows);
    st = tf_agree(comm, st);
    if (st == TF_OK) {
        tf_dist_block_bounds(a->m, Q, blk);
        for (int r = 0; r <= Q; r++)
            tgt[r] = off[tf_dist_first_part(nparts, Q, r)];
        st = gather_perm(comm, a, blk, newid, perm, iperm);
    }
    if (st == TF_OK)
        st = lookup_cols(comm, a, blk, newid, newcol);
    if (st == TF_OK)
        st = move_rows(comm, a, tgt, newid, newcol, ap);
    free(blk);
    free(tgt);
    free(newcol);
    tf_dcsr_free(a);
    if (st && me == 0) {
        free(*perm);
        free(*iperm);
        *perm = *iperm = NULL;
    }
    return st;
}

int tf_dist_perm_apply(MPI_Comm comm, tf_dcsr *a, int nparts, const int32_t *part,
                       int64_t *off, int64_t **perm, int64_t **iperm, tf_dcsr *ap)
{
    int me;
    MPI_Comm_rank(comm, &me);
    memset(ap, 0, sizeof *ap);
    *perm = *iperm = NULL;
    const int64_t nr = a->nrows;
    int64_t *cnt = calloc((size_t)nparts * 2, sizeof *cnt);
    int64_t *newid = malloc((size_t)(nr ? nr : 1) * sizeof *newid);
    int st = cnt && newid
                 ? TF_OK
                 : tf_fail(TF_ERR_NOMEM, "out of memory renumbering %lld rows", (long long)nr);
    for (int64_t i = 0; st == TF_OK && i < nr; i++)
        if (part[i] < 0 || part[i] >= nparts)
            st = tf_fail(TF_ERR_INTERNAL, "row %lld is in part %d, outside [0, %d)",
                         (long long)(a->row0 + i), part[i], nparts);
    st = tf_agree(comm, st);
    /* The stable counting sort of tf_perm_from_parts over the ranks: a row
     * of part p comes after the part's rows on lower ranks (Exscan) and
     * its earlier rows here. */
    int64_t *before = cnt + nparts;
    if (st == TF_OK) {
        for (int64_t i = 0; i < nr; i++)
            cnt[part[i]]++;
        if (MPI_Exscan(cnt, before, nparts, MPI_INT64_T, MPI_SUM, comm) != MPI_SUCCESS ||
            tf_mpi_allreduce_idle(MPI_IN_PLACE, cnt, nparts, MPI_INT64_T, MPI_SUM, comm) != MPI_SUCCESS)
            st = tf_fail(TF_ERR_MPI, "MPI_Exscan of part sizes failed");
        st = tf_agree(comm, st);
    }
    if (st == TF_OK) {
        if (me == 0)
            memset(before, 0, (size_t)nparts * sizeof *before);
        off[0] = 0;
        for (int p = 0; p < nparts; p++)
            off[p + 1] = off[p] + cnt[p];
        for (int p = 0; p < nparts; p++)
            before[p] += off[p];
        for (int64_t i = 0; i < nr; i++)
            newid[i] = before[part[i]]++;
        if (off[nparts] != a->m)
            st = tf_fail(TF_ERR_INTERNAL, "the parts hold %lld rows of %lld",
                         (long long)off[nparts], (long long)a->m);
        st = tf_agree(comm, st);
    }
    free(cnt);
    if (st == TF_OK)
        st = renumber(comm, a, nparts, off, newid, perm, iperm, ap);
    else
        tf_dcsr_free(a);
    free(newid);
    return st;
}

int tf_dist_perm_given(MPI_Comm comm, tf_dcsr *a, int nparts, const int64_t *perm_in,
                       const int64_t *iperm_in, const int64_t *off_in, int64_t *off,
                       int64_t **perm, int64_t **iperm, tf_dcsr *ap)
{
    int me;
    MPI_Comm_rank(comm, &me);
    memset(ap, 0, sizeof *ap);
    *perm = *iperm = NULL;
    const int64_t nr = a->nrows;
    int64_t *newid = malloc((size_t)(nr ? nr : 1) * sizeof *newid);
    int st = newid ? TF_OK
                   : tf_fail(TF_ERR_NOMEM, "out of memory renumbering %lld rows", (long long)nr);
    /* Every rank holds the same given arrays: rank 0 checks them for all. */
    if (st == TF_OK && me == 0)
        st = tf_perm_check(perm_in, iperm_in, a->m);
    if (st == TF_OK && me == 0 && (off_in[0] != 0 || off_in[nparts] != a->m))
        st = tf_fail(TF_ERR_FORMAT, "the given bands cover rows %lld-%lld of %lld",
                     (long long)off_in[0], (long long)off_in[nparts], (long long)a->m);
    for (int p = 0; st == TF_OK && me == 0 && p < nparts; p++)
        if (off_in[p + 1] < off_in[p])
            st = tf_fail(TF_ERR_FORMAT, "the given band %d ends at row %lld before it starts "
                                        "at %lld", p, (long long)off_in[p + 1],
                         (long long)off_in[p]);
    st = tf_agree(comm, st);
    if (st == TF_OK) {
        memcpy(off, off_in, ((size_t)nparts + 1) * sizeof *off);
        for (int64_t i = 0; i < nr; i++)
            newid[i] = iperm_in[a->row0 + i];
        st = renumber(comm, a, nparts, off, newid, perm, iperm, ap);
    } else {
        tf_dcsr_free(a);
    }
    free(newid);
    return st;
}

int tf_dist_metis_order(MPI_Comm comm, tf_dcsr *a, int nparts, const tf_metis_options *mo,
                        int64_t *off, int64_t **perm, int64_t **iperm, tf_dcsr *ap)
{
    memset(ap, 0, sizeof *ap);
    *perm = *iperm = NULL;
    int32_t *part = malloc((size_t)(a->nrows ? a->nrows : 1) * sizeof *part);
    int st = tf_agree(comm, part ? TF_OK
                                 : tf_fail(TF_ERR_NOMEM, "out of memory for %lld rows' parts",
                                           (long long)a->nrows));
    if (st == TF_OK)
        st = tf_agree(comm, tf_dist_partition_parts(comm, a, nparts, mo, part));
    if (st == TF_OK)
        st = tf_dist_perm_apply(comm, a, nparts, part, off, perm, iperm, ap);
    else
        tf_dcsr_free(a);
    free(part);
    return st;
}
