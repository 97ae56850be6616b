/* Baseline 2: 1.5D dense shifting with replication factor c.
 *
 * Grid: the P ranks form q = P/c teams of c consecutive ranks; rank r is
 * (team t = r / c, layer l = r % c). Team t jointly owns the C rows
 * R_t = [row_off[t c], row_off[t c + c]), the union of its members' bands.
 * Layer l's sub-blocks are the B bands of the ranks (t', l), t' = 0..q-1.
 * Ring l is the q ranks (t, l), t = 0..q-1 (ring communicator rank t).
 *
 * SpMM on rank (t, l): at step s = 0..q-1 it holds the sub-block of rank
 * ((t + s) mod q, l) and adds A[R_t, columns of that sub-block] x sub-block
 * into its partial C_t^(l) (|R_t| x K). Before multiplying it posts
 * MPI_Isend of the current block to ring rank t-1 and MPI_Irecv of the next
 * block from ring rank t+1 (two buffers alternate; step 0 sends straight
 * from the caller's B rows); it waits after the multiply. Finally the c
 * partials of a team are summed by MPI_Reduce_scatter on the team
 * communicator, each member receiving its own rows. For c = 1 the partial is
 * C itself and there is no reduction.
 *
 * Setup redistributes A within each team: every nonzero (i, j) of a member's
 * rows goes, as a (row in R_t, global column, value) triplet, to the member
 * whose layer owns column j's B band (MPI_Alltoallv on the team
 * communicator). The receiver sorts its triplets by ring step (stable, so
 * rows stay ascending) into one doubly compressed CSR per step (only the
 * non-empty rows), with sub-block-local columns.
 *
 * With bf16 (tf_baseline_input.bf16) the blocks travel as bfloat16: step 0
 * multiplies the rank's own float32 rows and sends their bf16 rounding
 * (made once per SpMM), later steps multiply the received bf16 blocks,
 * widened in the kernels' loads. The C partials of c > 1 stay float32. */
#include "tf_bl_variants.h"
#include "tf_agree.h"
#include "tf_bf16.h"
#include "tf_error.h"
#include "tf_partition.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t row; /* row in R_t */
    int32_t col; /* global column */
    float val;
} triplet;

typedef struct {
    int q, t, l;
    MPI_Comm team; /* c ranks of team t, rank l */
    MPI_Comm ring; /* q ranks of layer l, rank t */
    int prev, next; /* ring neighbours: t-1 (we send to), t+1 (we receive from) */
    int64_t team_rows; /* |R_t| */
    int64_t my_off;    /* first row of this rank's band within R_t */

    /* Per step s: the non-empty rows srow[s]..srow[s+1] of rows/ptr. */
    int64_t *srow;  /* q + 1 */
    int32_t *rows;  /* row in R_t */
    int64_t *ptr;   /* total rows + 1, absolute offsets into col/val */
    int32_t *col;   /* sub-block-local column */
    float *val;
    int *blk_rows;  /* q: rows of the sub-block held at step s */

    void *buf[2];   /* max sub-block rows x K elements of es bytes each */
    uint16_t *own16; /* bf16: this rank's rows rounded, sent at step 0 */
    float *partial; /* |R_t| x K (c > 1), else NULL */
    int *rs_counts; /* c: K x rows of each team member (reduce-scatter) */
} shift_state;

static int make_triplet_type(MPI_Datatype *t)
{
    int bl[2] = {2, 1};
    MPI_Aint disp[2] = {offsetof(triplet, row), offsetof(triplet, val)};
    MPI_Datatype types[2] = {MPI_INT32_T, MPI_FLOAT};
    MPI_Datatype tmp;
    int err = MPI_Type_create_struct(2, bl, disp, types, &tmp);
    if (err != MPI_SUCCESS)
        return tf_mpi_fail(err, "MPI_Type_create_struct");
    err = MPI_Type_create_resized(tmp, 0, (MPI_Aint)sizeof(triplet), t);
    MPI_Type_free(&tmp);
    if (err == MPI_SUCCESS)
        err = MPI_Type_commit(t);
    if (err != MPI_SUCCESS)
        return tf_mpi_fail(err, "MPI_Type_commit");
    return TF_OK;
}

/* Redistribution of A within the team and the per-step DCSRs. Agrees. */
static int redistribute(tf_baseline *b, shift_state *s, const tf_baseline_input *in)
{
    const int c = b->c, q = s->q, t = s->t, l = s->l;
    const int64_t *bo = in->brow_off;
    const int64_t nnz = in->rowptr[in->nrows];
    int st = TF_OK;
    int *scount = NULL, *sdispl = NULL, *rcount = NULL, *rdispl = NULL;
    triplet *sbuf = NULL, *rbuf = NULL;
    MPI_Datatype ttype = MPI_DATATYPE_NULL;
    int64_t *cnt_nz = NULL, *cnt_rows = NULL, *cur_nz = NULL, *cur_row = NULL;
    int32_t *last = NULL;

    if (nnz > INT_MAX)
        st = tf_fail(TF_ERR_RANGE, "rank %d: shift: %lld nonzeros exceed an MPI count",
                     b->rank, (long long)nnz);
    if (st == TF_OK && (!(scount = calloc((size_t)c, sizeof *scount)) ||
                        !(sdispl = calloc((size_t)c, sizeof *sdispl)) ||
                        !(rcount = calloc((size_t)c, sizeof *rcount)) ||
                        !(rdispl = calloc((size_t)c, sizeof *rdispl)) ||
                        !(sbuf = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *sbuf))))
        st = tf_fail(TF_ERR_NOMEM, "rank %d: shift: cannot allocate the redistribution",
                     b->rank);
    if (st == TF_OK)
        st = make_triplet_type(&ttype);
    if (st == TF_OK) {
        /* Count, then place, the triplets for each team member (layer). */
        for (int64_t e = 0; e < nnz; e++)
            scount[tf_partition_owner(bo, b->nranks, in->col[e]) % c]++;
        for (int d = 1; d < c; d++)
            sdispl[d] = sdispl[d - 1] + scount[d - 1];
        int *cur = rcount; /* scratch until the count exchange */
        memcpy(cur, sdispl, (size_t)c * sizeof *cur);
        for (int64_t i = 0; i < in->nrows; i++)
            for (int64_t e = in->rowptr[i]; e < in->rowptr[i + 1]; e++) {
                int d = tf_partition_owner(bo, b->nranks, in->col[e]) % c;
                triplet *x = &sbuf[cur[d]++];
                x->row = (int32_t)(s->my_off + i);
                x->col = in->col[e];
                x->val = in->val[e];
            }
    }
    st = tf_agree(b->comm, st);
    if (st != TF_OK)
        goto done;

    int64_t nrecv = 0;
    void *got = NULL;
    st = tf_bl_exchange(b, s->team, sbuf, scount, sdispl, rcount, rdispl, ttype, sizeof *rbuf,
                        &got, &nrecv, "shift", "nonzeros");
    rbuf = got;
    free(sbuf);
    sbuf = NULL;
    if (st != TF_OK)
        goto done;

    /* Bucket by ring step. The received triplets are sorted by row (members
     * in team order own ascending row bands) and by column within a row, so
     * a stable counting sort keeps every step's rows and columns ascending. */
    if (st == TF_OK && (!(cnt_nz = calloc((size_t)q + 1, sizeof *cnt_nz)) ||
                        !(cnt_rows = calloc((size_t)q + 1, sizeof *cnt_rows)) ||
                        !(cur_nz = calloc((size_t)q, sizeof *cur_nz)) ||
                        !(cur_row = calloc((size_t)q, sizeof *cur_row)) ||
                        !(last = malloc((size_t)q * sizeof *last))))
        st = tf_fail(TF_ERR_NOMEM, "rank %d: shift: cannot allocate the step counts", b->rank);
    if (st == TF_OK) {
        for (int x = 0; x < q; x++)
            last[x] = -1;
        for (int64_t e = 0; e < nrecv; e++) {
            int p = tf_partition_owner(bo, b->nranks, rbuf[e].col);
            if (p % c != l) {
                st = tf_fail(TF_ERR_INTERNAL, "rank %d: shift: column %d is not in layer %d",
                             b->rank, (int)rbuf[e].col, l);
                break;
            }
            int x = ((p / c) - t + q) % q;
            cnt_nz[x + 1]++;
            if (last[x] != rbuf[e].row) {
                last[x] = rbuf[e].row;
                cnt_rows[x + 1]++;
            }
        }
    }
    if (st == TF_OK) {
        for (int x = 0; x < q; x++) {
            cnt_nz[x + 1] += cnt_nz[x];
            cnt_rows[x + 1] += cnt_rows[x];
        }
        int64_t nr = cnt_rows[q];
        if (!(s->srow = tf_bl_alloc(b, q + 1, sizeof(int64_t), "shift step offsets")) ||
            !(s->rows = tf_bl_alloc(b, nr, sizeof(int32_t), "shift rows")) ||
            !(s->ptr = tf_bl_alloc(b, nr + 1, sizeof(int64_t), "shift row pointers")) ||
            !(s->col = tf_bl_alloc(b, nrecv, sizeof(int32_t), "shift columns")) ||
            !(s->val = tf_bl_alloc(b, nrecv, sizeof(float), "shift values")))
            st = TF_ERR_NOMEM;
    }
    if (st == TF_OK) {
        memcpy(s->srow, cnt_rows, (size_t)(q + 1) * sizeof(int64_t));
        for (int x = 0; x < q; x++) {
            last[x] = -1;
            cur_nz[x] = cnt_nz[x];
            cur_row[x] = cnt_rows[x];
        }
        for (int64_t e = 0; e < nrecv; e++) {
            int p = tf_partition_owner(bo, b->nranks, rbuf[e].col);
            int x = ((p / c) - t + q) % q;
            int64_t z = cur_nz[x]++;
            if (last[x] != rbuf[e].row) {
                last[x] = rbuf[e].row;
                int64_t j = cur_row[x]++;
                s->rows[j] = rbuf[e].row;
                s->ptr[j] = z;
            }
            s->col[z] = (int32_t)(rbuf[e].col - bo[p]);
            s->val[z] = rbuf[e].val;
        }
        s->ptr[cnt_rows[q]] = nrecv;
    }
    st = tf_agree(b->comm, st);

done:
    if (ttype != MPI_DATATYPE_NULL)
        MPI_Type_free(&ttype);
    free(scount);
    free(sdispl);
    free(rcount);
    free(rdispl);
    free(sbuf);
    free(rbuf);
    free(cnt_nz);
    free(cnt_rows);
    free(cur_nz);
    free(cur_row);
    free(last);
    return st;
}

int tf_bl_shift_create(tf_baseline *b, const tf_baseline_input *in)
{
    const int c = b->c;
    int st = TF_OK;
    shift_state *s = calloc(1, sizeof *s);
    b->impl = s;
    if (!s)
        st = tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate the shift state", b->rank);
    else {
        s->team = MPI_COMM_NULL;
        s->ring = MPI_COMM_NULL;
        s->q = b->nranks / c;
        s->t = b->rank / c;
        s->l = b->rank % c;
        s->prev = (s->t - 1 + s->q) % s->q;
        s->next = (s->t + 1) % s->q;
        s->team_rows = in->row_off[s->t * c + c] - in->row_off[s->t * c];
        s->my_off = in->row_off[b->rank] - in->row_off[s->t * c];
    }
    st = tf_agree(b->comm, st);
    if (st != TF_OK)
        return st;

    /* Communicators: both splits are collective over b->comm. */
    int err = MPI_Comm_split(b->comm, s->t, s->l, &s->team);
    if (err != MPI_SUCCESS) {
        s->team = MPI_COMM_NULL;
        st = tf_mpi_fail(err, "MPI_Comm_split (team)");
    }
    err = MPI_Comm_split(b->comm, s->l, s->t, &s->ring);
    if (err != MPI_SUCCESS) {
        s->ring = MPI_COMM_NULL;
        if (st == TF_OK)
            st = tf_mpi_fail(err, "MPI_Comm_split (ring)");
    }
    st = tf_agree(b->comm, st);
    if (st != TF_OK)
        return st;

    /* Buffers. */
    int64_t maxblk = 0;
    if (!(s->blk_rows = tf_bl_alloc(b, s->q, sizeof(int), "shift block sizes")))
        st = TF_ERR_NOMEM;
    for (int x = 0; st == TF_OK && x < s->q; x++) {
        int p = ((s->t + x) % s->q) * c + s->l;
        int64_t r = in->brow_off[p + 1] - in->brow_off[p];
        s->blk_rows[x] = (int)r;
        if (x > 0 && r > maxblk) /* step 0 uses the caller's rows */
            maxblk = r;
    }
    if (st == TF_OK && s->q > 1)
        for (int x = 0; x < 2 && st == TF_OK; x++)
            if (!(s->buf[x] = tf_bl_alloc(b, maxblk * (int64_t)b->k, b->es,
                                           "shift block buffer")))
                st = TF_ERR_NOMEM;
    if (st == TF_OK && c > 1) {
        if (!(s->partial = tf_bl_alloc(b, s->team_rows * (int64_t)b->k, sizeof(float),
                                        "shift partial C")) ||
            !(s->rs_counts = tf_bl_alloc(b, c, sizeof(int), "reduce-scatter counts")))
            st = TF_ERR_NOMEM;
        for (int x = 0; st == TF_OK && x < c; x++) {
            int p = s->t * c + x;
            int64_t cnt = (in->row_off[p + 1] - in->row_off[p]) * (int64_t)b->k;
            if (cnt > INT_MAX)
                st = tf_fail(TF_ERR_RANGE,
                             "shift: %lld rows x K %d of rank %d exceed an MPI count in "
                             "MPI_Reduce_scatter",
                             (long long)(in->row_off[p + 1] - in->row_off[p]), b->k, p);
            else
                s->rs_counts[x] = (int)cnt;
        }
    }
    if (st == TF_OK) {
        int64_t bytes = 0, msgs = 0;
        st = tf_baseline_predict(TF_BASE_SHIFT, b->nranks, b->rank, in->row_off, in->brow_off,
                                 c, b->k, &bytes, &msgs);
        if (b->bf16) { /* the B blocks at 2 bytes, the C partials still at 4 */
            int64_t brows = 0;
            for (int x = 1; x < s->q; x++)
                brows += s->blk_rows[x];
            bytes -= brows * (int64_t)b->k * 2;
            if (!(s->own16 = tf_bl_alloc(b, b->nb * (int64_t)b->k, sizeof(uint16_t),
                                         "shift: bf16 copy of own rows")))
                st = TF_ERR_NOMEM;
        }
        b->run_bytes = bytes;
        b->run_msgs = msgs;
    }
    st = tf_agree(b->comm, st);
    if (st != TF_OK)
        return st;
    return redistribute(b, s, in);
}

int tf_bl_shift_run(tf_baseline *b, const float *b_rows, float *c)
{
    shift_state *s = b->impl;
    const int64_t k = b->k;
    const int q = s->q;
    float dummy = 0.0f;
    double t_wait = 0.0, t_comp = 0.0;
    float *out = b->c > 1 ? s->partial : c;
    int64_t out_rows = b->c > 1 ? s->team_rows : b->nrows;

    double t0 = MPI_Wtime();
    if (out_rows > 0)
        memset(out, 0, (size_t)(out_rows * k) * sizeof(float));
    t_comp += MPI_Wtime() - t0;

    /* cur: the block multiplied at this step; send: the same block as it
     * travels (bf16: the own rows' rounding at step 0, then what arrived). */
    const void *cur = b->nb > 0 ? b_rows : &dummy, *send = cur;
    if (b->bf16 && b->nb > 0) {
        double tr = MPI_Wtime();
        tf_bf16_pack(b_rows, s->own16, b->nb * k);
        send = s->own16;
        t_comp += MPI_Wtime() - tr;
    }
    for (int x = 0; x < q; x++) {
        MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        void *nxt = s->buf[x % 2];
        if (x + 1 < q) {
            int err = MPI_Irecv(nxt, s->blk_rows[x + 1], b->row_type, s->next, x, s->ring,
                                &req[0]);
            if (err == MPI_SUCCESS)
                err = MPI_Isend(send, s->blk_rows[x], b->row_type, s->prev, x, s->ring, &req[1]);
            if (err != MPI_SUCCESS)
                return tf_mpi_fail(err, "shift: MPI_Isend/MPI_Irecv");
        }
        double ta = MPI_Wtime();
        int64_t r0 = s->srow[x], r1 = s->srow[x + 1];
        if (b->bf16 && x > 0)
            tf_bl_dcsr_add_bf16(r1 - r0, s->rows + r0, s->ptr + r0, s->col, s->val, cur, k, out);
        else
            tf_bl_dcsr_add(r1 - r0, s->rows + r0, s->ptr + r0, s->col, s->val, cur, k, out);
        double tb = MPI_Wtime();
        t_comp += tb - ta;
        if (x + 1 < q) {
            int err = MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
            if (err != MPI_SUCCESS)
                return tf_mpi_fail(err, "shift: MPI_Waitall");
            cur = send = nxt;
        }
        t_wait += MPI_Wtime() - tb;
    }
    if (b->c > 1) {
        double ta = MPI_Wtime();
        int err = MPI_Reduce_scatter(s->partial, b->nrows > 0 ? c : (float *)&dummy,
                                     s->rs_counts, MPI_FLOAT, MPI_SUM, s->team);
        if (err != MPI_SUCCESS)
            return tf_mpi_fail(err, "shift: MPI_Reduce_scatter");
        t_wait += MPI_Wtime() - ta;
    }
    b->counters.comm_wait += t_wait;
    b->counters.compute += t_comp;
    return TF_OK;
}

void tf_bl_shift_free(tf_baseline *b)
{
    shift_state *s = b->impl;
    if (!s)
        return;
    if (s->team != MPI_COMM_NULL)
        MPI_Comm_free(&s->team);
    if (s->ring != MPI_COMM_NULL)
        MPI_Comm_free(&s->ring);
    free(s->srow);
    free(s->rows);
    free(s->ptr);
    free(s->col);
    free(s->val);
    free(s->blk_rows);
    free(s->buf[0]);
    free(s->buf[1]);
    free(s->own16);
    free(s->partial);
    free(s->rs_counts);
    free(s);
    b->impl = NULL;
}
