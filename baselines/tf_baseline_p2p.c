/* Baseline 3: the sparsity-aware two-sided exchange (what PETSc's MatMatMult
 * with a distributed AIJ matrix and a dense matrix does through its VecScatter).
 *
 * Setup: this rank lists the distinct B rows outside its own band that its
 * nonzeros touch (sorted, so grouped by owner), sends each owner its list
 * (MPI_Alltoall of counts + MPI_Alltoallv of row indices) and builds one
 * distributed-graph communicator whose sources are the owners it needs rows
 * from and whose destinations are the ranks that need rows from it (or the
 * MPI_Ialltoallv fallback, tf_exchange.h). Its CSR
 * is split into a local part (columns in its own band, band-local indices)
 * and a remote part (only the rows with remote nonzeros; columns remapped to
 * positions in the packed receive buffer, which holds the needed rows in
 * ascending global order).
 *
 * SpMM: pack the requested rows for every destination (memcpy of K floats
 * per row), start MPI_Ineighbor_alltoallv (one message per pair, counts in
 * rows of K floats), multiply the local part while it flies, wait, add the
 * remote part. Receives distinct-remote-rows x K x 4 bytes in one message
 * per source. With bf16 (tf_baseline_input.bf16) the packing rounds the
 * rows to bfloat16 instead of copying them, half the bytes travel, and the
 * remote part widens them in its loads. */
#include "tf_bl_variants.h"
#include "tf_agree.h"
#include "tf_bf16.h"
#include "tf_error.h"
#include "tf_exchange.h"
#include "tf_partition.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    tf_xchg xchg;
    int n_src, n_dst;
    int *src, *dst;             /* neighbour ranks */
    int *rcounts, *rdispls;     /* per source, in rows */
    int *scounts, *sdispls;     /* per destination, in rows */
    int64_t n_recv, n_send;     /* rows received / sent per SpMM */
    int32_t *send_idx;          /* n_send band-local B rows to pack, by destination */
    void *sendbuf, *recvbuf;    /* n_send x K, n_recv x K elements of es bytes */

    int64_t *lptr;  /* local part: nrows + 1 */
    int32_t *lcol;  /* band-local columns */
    float *lval;
    int64_t r_nr;   /* remote part: rows with remote nonzeros */
    int32_t *rrows; /* r_nr local rows */
    int64_t *rptr;  /* r_nr + 1 */
    int32_t *rcol;  /* positions in recvbuf */
    float *rval;
} p2p_state;

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Position of j in the sorted array u[0..n) (present by construction). */
static int64_t find_i32(const int32_t *u, int64_t n, int32_t j)
{
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (u[mid] < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The exchange over the neighbours: a distributed-graph communicator, or
 * the MPI_Ialltoallv fallback (tf_exchange.h). Collective, agrees. */
static int build_graph(tf_baseline *b, p2p_state *s)
{
    int mode = TF_XCHG_NEIGHBOR;
    int st = tf_agree(b->comm, tf_xchg_mode(&mode));
    if (st == TF_OK)
        st = tf_xchg_create(&s->xchg, b->comm, mode, s->n_src, s->src, s->n_dst, s->dst);
    if (st == TF_OK)
        st = tf_xchg_prepare_v(&s->xchg, s->scounts, s->sdispls, s->rcounts, s->rdispls);
    return st;
}

int tf_bl_p2p_create(tf_baseline *b, const tf_baseline_input *in)
{
    const int P = b->nranks;
    const int64_t nrows = in->nrows, nnz = in->rowptr[nrows];
    const int64_t blo = b->brow_begin, bhi = b->brow_begin + b->nb;
    int st = TF_OK;
    int32_t *need = NULL; /* distinct remote rows, ascending */
    int64_t n_need = 0;
    int *need_cnt = NULL, *need_dsp = NULL, *give_cnt = NULL, *give_dsp = NULL;
    int32_t *give = NULL;

    p2p_state *s = calloc(1, sizeof *s);
    b->impl = s;
    if (!s)
        st = tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate the p2p state", b->rank);
    else
        tf_xchg_init(&s->xchg);

    /* The distinct remote rows, and the counts of both parts. */
    int64_t nnz_remote = 0;
    if (st == TF_OK) {
        for (int64_t e = 0; e < nnz; e++)
            nnz_remote += in->col[e] < blo || in->col[e] >= bhi;
        need = malloc((size_t)(nnz_remote > 0 ? nnz_remote : 1) * sizeof *need);
        need_cnt = calloc((size_t)P, sizeof *need_cnt);
        need_dsp = calloc((size_t)P, sizeof *need_dsp);
        give_cnt = calloc((size_t)P, sizeof *give_cnt);
        give_dsp = calloc((size_t)P, sizeof *give_dsp);
        if (!need || !need_cnt || !need_dsp || !give_cnt || !give_dsp)
            st = tf_fail(TF_ERR_NOMEM, "rank %d: p2p: cannot allocate the request lists",
                         b->rank);
    }
    if (st == TF_OK) {
        for (int64_t e = 0; e < nnz; e++)
            if (in->col[e] < blo || in->col[e] >= bhi)
                need[n_need++] = in->col[e];
        qsort(need, (size_t)n_need, sizeof *need, cmp_i32);
        int64_t u = 0;
        for (int64_t x = 0; x < n_need; x++)
            if (u == 0 || need[u - 1] != need[x])
                need[u++] = need[x];
        n_need = u;
        for (int64_t x = 0; x < n_need; x++)
            need_cnt[tf_partition_owner(in->brow_off, P, need[x])]++;
        for (int p = 1; p < P; p++)
            need_dsp[p] = need_dsp[p - 1] + need_cnt[p - 1];
    }
    st = tf_agree(b->comm, st);
    if (st != TF_OK)
        goto done;

    /* Tell every owner how many rows we need from it, then which. */
    int64_t n_give = 0;
    void *got = NULL;
    st = tf_bl_exchange(b, b->comm, need, need_cnt, need_dsp, give_cnt, give_dsp, MPI_INT32_T,
                        sizeof *give, &got, &n_give, "p2p", "row requests");
    give = got;
    if (st != TF_OK)
        goto done;

    /* Neighbours, counts and the pack list. */
    if (st == TF_OK) {
        for (int p = 0; p < P; p++) {
            s->n_src += need_cnt[p] > 0;
            s->n_dst += give_cnt[p] > 0;
        }
        s->n_recv = n_need;
        s->n_send = n_give;
        if (!(s->src = tf_bl_alloc(b, s->n_src, sizeof(int), "p2p sources")) ||
            !(s->rcounts = tf_bl_alloc(b, s->n_src, sizeof(int), "p2p receive counts")) ||
            !(s->rdispls = tf_bl_alloc(b, s->n_src, sizeof(int), "p2p receive displacements")) ||
            !(s->dst = tf_bl_alloc(b, s->n_dst, sizeof(int), "p2p destinations")) ||
            !(s->scounts = tf_bl_alloc(b, s->n_dst, sizeof(int), "p2p send counts")) ||
            !(s->sdispls = tf_bl_alloc(b, s->n_dst, sizeof(int), "p2p send displacements")) ||
            !(s->send_idx = tf_bl_alloc(b, n_give, sizeof(int32_t), "p2p send rows")) ||
            !(s->sendbuf = tf_bl_alloc(b, n_give * (int64_t)b->k, b->es,
                                       "p2p send buffer")) ||
            !(s->recvbuf = tf_bl_alloc(b, n_need * (int64_t)b->k, b->es,
                                       "p2p receive buffer")))
            st = TF_ERR_NOMEM;
    }
    if (st == TF_OK) {
        int a = 0, d = 0;
        for (int p = 0; p < P; p++) {
            if (need_cnt[p] > 0) {
                s->src[a] = p;
                s->rcounts[a] = need_cnt[p];
                s->rdispls[a] = need_dsp[p];
                a++;
            }
            if (give_cnt[p] > 0) {
                s->dst[d] = p;
                s->scounts[d] = give_cnt[p];
                s->sdispls[d] = give_dsp[p];
                d++;
            }
        }
        for (int64_t x = 0; x < n_give; x++) {
            if (give[x] < blo || give[x] >= bhi) {
                st = tf_fail(TF_ERR_INTERNAL, "rank %d: p2p: asked for B row %d outside its band",
                             b->rank, (int)give[x]);
                break;
            }
            s->send_idx[x] = (int32_t)(give[x] - blo);
        }
    }

    /* Split the CSR into the local and the remote part. */
    if (st == TF_OK) {
        int64_t r_nr = 0;
        for (int64_t i = 0; i < nrows; i++)
            for (int64_t e = in->rowptr[i]; e < in->rowptr[i + 1]; e++)
                if (in->col[e] < blo || in->col[e] >= bhi) {
                    r_nr++;
                    break;
                }
        s->r_nr = r_nr;
        if (!(s->lptr = tf_bl_alloc(b, nrows + 1, sizeof(int64_t), "p2p local row pointers")) ||
            !(s->lcol = tf_bl_alloc(b, nnz - nnz_remote, sizeof(int32_t), "p2p local columns")) ||
            !(s->lval = tf_bl_alloc(b, nnz - nnz_remote, sizeof(float), "p2p local values")) ||
            !(s->rrows = tf_bl_alloc(b, r_nr, sizeof(int32_t), "p2p remote rows")) ||
            !(s->rptr = tf_bl_alloc(b, r_nr + 1, sizeof(int64_t), "p2p remote row pointers")) ||
            !(s->rcol = tf_bl_alloc(b, nnz_remote, sizeof(int32_t), "p2p remote columns")) ||
            !(s->rval = tf_bl_alloc(b, nnz_remote, sizeof(float), "p2p remote values")))
            st = TF_ERR_NOMEM;
    }
    if (st == TF_OK) {
        int64_t zl = 0, zr = 0, jr = 0;
        for (int64_t i = 0; i < nrows; i++) {
            int64_t start_r = zr;
            for (int64_t e = in->rowptr[i]; e < in->rowptr[i + 1]; e++) {
                int32_t j = in->col[e];
                if (j >= blo && j < bhi) {
                    s->lcol[zl] = (int32_t)(j - blo);
                    s->lval[zl++] = in->val[e];
                } else {
                    s->rcol[zr] = (int32_t)find_i32(need, n_need, j);
                    s->rval[zr++] = in->val[e];
                }
            }
            s->lptr[i + 1] = zl;
            if (zr > start_r) {
                s->rrows[jr] = (int32_t)i;
                s->rptr[jr++] = start_r;
            }
        }
        s->rptr[jr] = zr;
        b->run_bytes = n_need * (int64_t)b->k * (int64_t)b->es;
        b->run_msgs = s->n_src;
    }
    st = tf_agree(b->comm, st);
    if (st != TF_OK)
        goto done;
    st = tf_agree(b->comm, build_graph(b, s));

done:
    free(need);
    free(need_cnt);
    free(need_dsp);
    free(give_cnt);
    free(give_dsp);
    free(give);
    return st;
}

int tf_bl_p2p_run(tf_baseline *b, const float *b_rows, float *c)
{
    p2p_state *s = b->impl;
    const int64_t k = b->k;
    const size_t row_bytes = (size_t)k * sizeof(float);
    double t0 = MPI_Wtime();
    const int64_t n_send = s->n_send;
    const int32_t *restrict idx = s->send_idx;
    if (b->bf16) {
        uint16_t *restrict sh = s->sendbuf;
#pragma omp parallel for schedule(static) if (n_send * k > (1 << 16))
        for (int64_t x = 0; x < n_send; x++)
            tf_bf16_pack(b_rows + (int64_t)idx[x] * k, sh + x * k, k);
    } else {
        float *restrict sb = s->sendbuf;
#pragma omp parallel for schedule(static) if (n_send * k > (1 << 16))
        for (int64_t x = 0; x < n_send; x++)
            memcpy(sb + x * k, b_rows + (int64_t)idx[x] * k, row_bytes);
    }
    double t1 = MPI_Wtime();

    MPI_Request req;
    int st = tf_xchg_start_v(&s->xchg, s->sendbuf, s->scounts, s->sdispls, s->recvbuf,
                             s->rcounts, s->rdispls, b->row_type, &req);
    if (st != TF_OK)
        return st;
    double t2 = MPI_Wtime();
    tf_bl_csr(b->nrows, s->lptr, s->lcol, s->lval, b_rows, k, c, 0);
    double t3 = MPI_Wtime();
    int err = MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (err != MPI_SUCCESS)
        return tf_mpi_fail(err, "p2p: MPI_Wait");
    double t4 = MPI_Wtime();
    if (b->bf16)
        tf_bl_dcsr_add_bf16(s->r_nr, s->rrows, s->rptr, s->rcol, s->rval, s->recvbuf, k, c);
    else
        tf_bl_dcsr_add(s->r_nr, s->rrows, s->rptr, s->rcol, s->rval, s->recvbuf, k, c);
    double t5 = MPI_Wtime();
    b->counters.compute += (t1 - t0) + (t3 - t2) + (t5 - t4);
    b->counters.comm_wait += (t2 - t1) + (t4 - t3);
    return TF_OK;
}

void tf_bl_p2p_free(tf_baseline *b)
{
    p2p_state *s = b->impl;
    if (!s)
        return;
    tf_xchg_free(&s->xchg);
    free(s->src);
    free(s->dst);
    free(s->rcounts);
    free(s->rdispls);
    free(s->scounts);
    free(s->sdispls);
    free(s->send_idx);
    free(s->sendbuf);
    free(s->recvbuf);
    free(s->lptr);
    free(s->lcol);
    free(s->lval);
    free(s->rrows);
    free(s->rptr);
    free(s->rcol);
    free(s->rval);
    free(s);
    b->impl = NULL;
}
