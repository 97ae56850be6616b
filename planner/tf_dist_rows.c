#include "tf_dist_rows.h"
#include "tf_agree.h"
#include "tf_agree_carry.h"
#include "tf_dist_comm.h"
#include "tf_error.h"
#include "tf_idle.h"
#include "tf_partition.h"

#include <stdlib.h>
#include <string.h>

void tf_dist_block_bounds(int64_t m, int Q, int64_t *off)
{
    for (int r = 0; r <= Q; r++)
        off[r] = tf_dcsr_block(m, Q, r);
}

int tf_dist_row_bounds(MPI_Comm comm, int status, const tf_dcsr *a, int64_t *off)
{
    int Q, me;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    /* A rank without rows holds row0 = the next band's start (every maker of
     * a tf_dcsr sets it so), so the starts alone give the bands. */
    int st = tf_agree_allgather_i64(comm, status, &a->row0, off, 1);
    if (st)
        return st;
    off[Q] = a->m;
    for (int r = 0; r < Q; r++)
        if (off[r] > off[r + 1] || off[0] != 0)
            return tf_fail(TF_ERR_INTERNAL, "the ranks' bands start at rows %lld (rank %d) and "
                           "%lld (rank %d): not in order from row 0", (long long)off[r], r,
                           (long long)off[r + 1], r + 1);
    if (a->row0 + a->nrows != off[me + 1])
        return tf_fail(TF_ERR_INTERNAL, "rank %d holds rows %lld-%lld, which do not end where "
                       "the next band starts (%lld)", me, (long long)a->row0,
                       (long long)(a->row0 + a->nrows), (long long)off[me + 1]);
    return TF_OK;
}

int tf_dist_to_blocks(MPI_Comm comm, tf_dcsr *a)
{
    int Q;
    MPI_Comm_size(comm, &Q);
    int64_t *off = malloc((size_t)(Q + 1) * 2 * sizeof *off);
    int st = tf_agree(comm, tf_dist_row_bounds(comm, off ? TF_OK : tf_fail(TF_ERR_NOMEM,
                                                   "out of memory for %d ranks", Q), a, off));
    if (st == TF_OK) {
        int64_t *blk = off + Q + 1;
        tf_dist_block_bounds(a->m, Q, blk);
        /* Every rank sees the same bounds: all move, or none. */
        if (memcmp(off, blk, (size_t)(Q + 1) * sizeof *off) != 0) {
            tf_dcsr b;
            st = tf_dist_redistribute(comm, TF_OK, a, blk, &b);
            *a = b;
        }
    }
    if (st)
        tf_dcsr_free(a);
    free(off);
    return st;
}

typedef struct {
    int64_t *send, *recv, *sd, *rd;
} counts4;

static int counts_alloc(counts4 *c, int Q)
{
    c->send = calloc((size_t)Q * 4, sizeof(int64_t));
    if (!c->send)
        return tf_fail(TF_ERR_NOMEM, "out of memory for %d ranks' counts", Q);
    c->recv = c->send + Q;
    c->sd = c->recv + Q;
    c->rd = c->sd + Q;
    return TF_OK;
}

/* Displacements from the counts; returns the total received. */
static int64_t displacements(counts4 *c, int Q)
{
    int64_t s = 0, t = 0;
    for (int q = 0; q < Q; q++) {
        c->sd[q] = s;
        c->rd[q] = t;
        s += c->send[q];
        t += c->recv[q];
    }
    return t;
}

static void scale(const int64_t *in, int64_t *out, int Q, int64_t by)
{
    for (int q = 0; q < Q; q++)
        out[q] = in[q] * by;
}

int tf_dist_redistribute(MPI_Comm comm, int status, tf_dcsr *in, const int64_t *off,
                         tf_dcsr *out)
{
    int Q, me;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    memset(out, 0, sizeof *out);
    counts4 rows = {0}, nz = {0};
    int64_t *b = NULL;
    int64_t *len_s = NULL, *len_r = NULL;
    int st = status;
    if (st == TF_OK)
        st = counts_alloc(&rows, Q);
    if (st == TF_OK)
        st = counts_alloc(&nz, Q);
    if (st == TF_OK && !(b = malloc((size_t)Q * 4 * sizeof *b)))
        st = tf_fail(TF_ERR_NOMEM, "out of memory for %d ranks' counts", Q);
    /* Collectives follow: every rank goes on, or none; the agreement
     * rides on the exchange of the counts. */
    const int64_t r0 = in->row0, r1 = in->row0 + in->nrows;
    const int64_t *rp = in->loc.rowptr;
    for (int q = 0; st == TF_OK && q < Q; q++) {
        int64_t a = off[q] > r0 ? off[q] : r0, z = off[q + 1] < r1 ? off[q + 1] : r1;
        if (a > r1) /* a band after this rank's rows: none of them, and no read past rp */
            a = r1;
        if (z < a)
            z = a;
        rows.send[q] = z - a;
        nz.send[q] = in->nrows ? rp[z - r0] - rp[a - r0] : 0;
    }
    /* Rows and nonzeros in one all-to-all of pairs: at scale each
     * all-to-all costs about P - 1 latencies, whatever it carries. */
    for (int q = 0; st == TF_OK && q < Q; q++) {
        b[2 * q] = rows.send[q];
        b[2 * q + 1] = nz.send[q];
    }
    if ((st = tf_agree_alltoall_i64(comm, st, b, b ? b + 2 * Q : NULL, 2)))
        goto done;
    for (int q = 0; q < Q; q++) {
        rows.recv[q] = b[2 * Q + 2 * q];
        nz.recv[q] = b[2 * Q + 2 * q + 1];
    }
    int64_t rtot = displacements(&rows, Q), ztot = displacements(&nz, Q);
    int64_t mine = off[me + 1] - off[me];
    if (rtot != mine)
        st = tf_fail(TF_ERR_INTERNAL, "rank %d: received %lld rows for a band of %lld", me,
                     (long long)rtot, (long long)mine);
    /* Row lengths, then columns and values: whole rows keep their order.
     * Everything this rank receives is allocated before the first transfer,
     * and the ranks agree on it: the band's CSR is the largest allocation
     * of a rank, and a rank that could not make it must not leave the others
     * waiting for its rows. */
    if (st == TF_OK) {
        len_s = malloc((size_t)(in->nrows ? in->nrows : 1) * sizeof *len_s);
        len_r = malloc((size_t)(rtot ? rtot : 1) * sizeof *len_r);
        if (!len_s || !len_r)
            st = tf_fail(TF_ERR_NOMEM, "out of memory moving %lld rows", (long long)in->nrows);
    }
    if (st == TF_OK)
        st = tf_csr_alloc(&out->loc, rtot, in->n, ztot);
    if ((st = tf_agree(comm, st)))
        goto done;
    for (int64_t i = 0; i < in->nrows; i++)
        len_s[i] = rp[i + 1] - rp[i];
    int64_t *s8 = b, *r8 = b + Q, *sdb = b + 2 * Q, *rdb = b + 3 * Q;
    scale(rows.send, s8, Q, 8);
    scale(rows.recv, r8, Q, 8);
    scale(rows.sd, sdb, Q, 8);
    scale(rows.rd, rdb, Q, 8);
    if ((st = tf_dist_alltoallv(comm, len_s, s8, sdb, len_r, r8, rdb)))
        goto done;
    free(len_s);
    len_s = NULL;
    for (int64_t i = 0; i < rtot; i++)
        out->loc.rowptr[i + 1] = out->loc.rowptr[i] + len_r[i];
    scale(nz.send, s8, Q, 4);
    scale(nz.recv, r8, Q, 4);
    scale(nz.sd, sdb, Q, 4);
    scale(nz.rd, rdb, Q, 4);
    /* The local columns start at rp[0] = 0, so displacements are offsets
     * into col/val directly: band q's first row's pointer. */
    for (int q = 0; q < Q; q++) {
        int64_t a = off[q] > r0 ? off[q] : r0;
        sdb[q] = in->nrows && a <= r1 ? rp[(a < r1 ? a : r1) - r0] * 4 : 0;
    }
    if ((st = tf_dist_alltoallv(comm, in->loc.col, s8, sdb, out->loc.col, r8, rdb)) ||
        (st = tf_dist_alltoallv(comm, in->loc.val, s8, sdb, out->loc.val, r8, rdb)))
        goto done;
    out->m = in->m;
    out->n = in->n;
    out->nnz_total = in->nnz_total;
    out->row0 = off[me];
    out->nrows = rtot;
    out->loc.nnz = ztot;
done:
    st = tf_agree(comm, st);
    free(len_s);
    free(len_r);
    free(b);
    free(rows.send);
    free(nz.send);
    if (st)
        tf_dcsr_free(out);
    tf_dcsr_free(in);
    return st;
}

typedef struct {
    int32_t row, col; /* in the transpose */
    float val;
} triple;

int tf_dist_transpose(MPI_Comm comm, const tf_dcsr *in, tf_dcsr *out)
{
    int st = tf_agree(comm, tf_dist_transpose_carried(comm, in, out));
    if (st)
        tf_dcsr_free(out);
    return st;
}

int tf_dist_transpose_carried(MPI_Comm comm, const tf_dcsr *in, tf_dcsr *out)
{
    int Q, me;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    memset(out, 0, sizeof *out);
    int64_t *off = malloc((size_t)(Q + 1) * sizeof *off);
    counts4 c = {0};
    triple *sb = NULL, *rb = NULL;
    int64_t *pos = NULL;
    int st = off ? counts_alloc(&c, Q) : tf_fail(TF_ERR_NOMEM, "out of memory for %d ranks", Q);
    /* Collectives follow: every rank goes on, or none. The agreements
     * ride on the gathering of the bands and the exchange of the counts. */
    /* A square matrix's transpose comes in the bands of the matrix, so
     * that its rows and the matrix's are the same indices on every rank
     * (the symmetry test and the degrees rely on it). */
    if (in->m == in->n)
        st = tf_dist_row_bounds(comm, st, in, off);
    else if (st == TF_OK)
        tf_dist_block_bounds(in->n, Q, off);
    const tf_csr *a = &in->loc;
    for (int64_t e = 0; st == TF_OK && e < a->nnz; e++)
        c.send[tf_partition_owner(off, Q, a->col[e])]++;
    int64_t stot, rtot;
    if ((st = tf_dist_counts_agree(comm, st, c.send, c.recv, c.sd, c.rd, &stot, &rtot)))
        goto done;
    sb = malloc((size_t)(stot ? stot : 1) * sizeof *sb);
    rb = malloc((size_t)(rtot ? rtot : 1) * sizeof *rb);
    pos = malloc((size_t)Q * sizeof *pos);
    if (!sb || !rb || !pos)
        st = tf_fail(TF_ERR_NOMEM, "out of memory transposing %lld nonzeros", (long long)a->nnz);
    /* The buffers are sized by this rank's nonzeros: agree before the
     * exchange, so that a rank short of memory leaves nobody waiting. After
     * it, only the final agreement is collective. */
    if ((st = tf_agree(comm, st)))
        goto done;
    memcpy(pos, c.sd, (size_t)Q * sizeof *pos);
    for (int64_t i = 0; i < in->nrows; i++)
        for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++) {
            int q = tf_partition_owner(off, Q, a->col[e]);
            sb[pos[q]++] = (triple){a->col[e], (int32_t)(in->row0 + i), a->val[e]};
        }
    for (int q = 0; q < Q; q++) {
        c.send[q] *= (int64_t)sizeof(triple);
        c.recv[q] *= (int64_t)sizeof(triple);
        c.sd[q] *= (int64_t)sizeof(triple);
        c.rd[q] *= (int64_t)sizeof(triple);
    }
    if ((st = tf_dist_alltoallv(comm, sb, c.send, c.sd, rb, c.recv, c.rd)))
        goto done;
    free(sb);
    sb = NULL;
    int64_t nr = off[me + 1] - off[me];
    if ((st = tf_csr_alloc(&out->loc, nr, in->m, rtot)))
        goto done;
    /* Stable counting sort by row: arrivals are in source-rank order and
     * each source sent its rows ascending, so columns come out ascending. */
    for (int64_t t = 0; t < rtot; t++)
        out->loc.rowptr[rb[t].row - off[me] + 1]++;
    for (int64_t i = 0; i < nr; i++)
        out->loc.rowptr[i + 1] += out->loc.rowptr[i];
    int64_t *next = malloc((size_t)(nr ? nr : 1) * sizeof *next);
    if (!next) {
        st = tf_fail(TF_ERR_NOMEM, "out of memory transposing %lld rows", (long long)nr);
        goto done;
    }
    memcpy(next, out->loc.rowptr, (size_t)nr * sizeof *next);
    for (int64_t t = 0; t < rtot; t++) {
        int64_t w = next[rb[t].row - off[me]]++;
        out->loc.col[w] = rb[t].col;
        out->loc.val[w] = rb[t].val;
    }
    free(next);
    out->m = in->n;
    out->n = in->m;
    out->nnz_total = in->nnz_total;
    out->row0 = off[me];
    out->nrows = nr;
    out->loc.nnz = rtot;
done:
    free(off);
    free(c.send);
    free(sb);
    free(rb);
    free(pos);
    if (st)
        tf_dcsr_free(out);
    return st;
}
