/* Baseline 1: allgather. Every SpMM gathers the whole of B on every rank
 * with one MPI_Allgatherv (counts in rows of K floats, so any n x K fits the
 * int counts), then multiplies this rank's rows (global columns) against it.
 * Receives (n - nb) * K * 4 bytes from nranks - 1 ranks; holds n x K floats.
 *
 * With bf16 (tf_baseline_input.bf16) each rank rounds its rows to bfloat16
 * once per SpMM and the gathered copy is bf16 (half the bytes); its rows of
 * A are split at create into the part on its own B rows, multiplied with
 * the float32 rows as twoface's local part is, and the rest, multiplied
 * with the gathered bf16 rows widened in the kernels' loads. */
#include "tf_bl_variants.h"
#include "tf_agree.h"
#include "tf_bf16.h"
#include "tf_error.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    void *full;    /* n x K elements of es bytes, row-major */
    uint16_t *own16; /* bf16: this rank's nb x K rows rounded */
    /* bf16: the rows of A split into own columns (band-local) and the rest
     * (global); float32 uses rowptr/col/val whole. */
    int64_t *lptr, *rptr;
    int32_t *lcol, *rcol;
    float *lval, *rval;
    int *counts;   /* nranks: B rows of each rank */
    int *displs;   /* nranks: first B row of each rank */
    int64_t *rowptr; /* copy of this rank's CSR */
    int32_t *col;
    float *val;
} allgather_state;

/* bf16: the own-column and remote parts of the rows (from s->rowptr...). */
static int split_own(tf_baseline *b, allgather_state *s, int64_t nnz)
{
    if (!(s->own16 = tf_bl_alloc(b, b->nb * (int64_t)b->k, sizeof(uint16_t), "bf16 own rows")) ||
        !(s->lptr = tf_bl_alloc(b, b->nrows + 1, sizeof(int64_t), "own-column rowptr")) ||
        !(s->rptr = tf_bl_alloc(b, b->nrows + 1, sizeof(int64_t), "remote rowptr")) ||
        !(s->lcol = tf_bl_alloc(b, nnz, sizeof(int32_t), "own columns")) ||
        !(s->rcol = tf_bl_alloc(b, nnz, sizeof(int32_t), "remote columns")) ||
        !(s->lval = tf_bl_alloc(b, nnz, sizeof(float), "own values")) ||
        !(s->rval = tf_bl_alloc(b, nnz, sizeof(float), "remote values")))
        return TF_ERR_NOMEM;
    const int64_t lo = b->brow_begin, hi = b->brow_begin + b->nb;
    int64_t nl = 0, nr = 0;
    for (int64_t i = 0; i < b->nrows; i++) {
        for (int64_t e = s->rowptr[i]; e < s->rowptr[i + 1]; e++) {
            int64_t j = s->col[e];
            if (j >= lo && j < hi) {
                s->lcol[nl] = (int32_t)(j - lo);
                s->lval[nl++] = s->val[e];
            } else {
                s->rcol[nr] = (int32_t)j;
                s->rval[nr++] = s->val[e];
            }
        }
        s->lptr[i + 1] = nl;
        s->rptr[i + 1] = nr;
    }
    return TF_OK;
}

int tf_bl_allgather_create(tf_baseline *b, const tf_baseline_input *in)
{
    int st = TF_OK;
    allgather_state *s = calloc(1, sizeof *s);
    if (!s)
        st = tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate the allgather state", b->rank);
    b->impl = s;
    int64_t nnz = in->rowptr[in->nrows];
    if (st == TF_OK) {
        int64_t nk = b->n * (int64_t)b->k;
        if (b->k != 0 && nk / b->k != b->n)
            st = tf_fail(TF_ERR_RANGE, "allgather: n x K = %lld x %d does not fit",
                         (long long)b->n, b->k);
    }
    if (st == TF_OK && !(s->full = tf_bl_alloc(b, b->n * (int64_t)b->k, b->es,
                                                "allgather: full copy of B")))
        st = TF_ERR_NOMEM;
    if (st == TF_OK && (!(s->counts = tf_bl_alloc(b, b->nranks, sizeof(int), "allgather counts")) ||
                        !(s->displs = tf_bl_alloc(b, b->nranks, sizeof(int), "allgather displs")) ||
                        !(s->rowptr = tf_bl_alloc(b, b->nrows + 1, sizeof(int64_t), "rowptr")) ||
                        !(s->col = tf_bl_alloc(b, nnz, sizeof(int32_t), "columns")) ||
                        !(s->val = tf_bl_alloc(b, nnz, sizeof(float), "values"))))
        st = TF_ERR_NOMEM;
    if (st == TF_OK) {
        /* Rows and row offsets are at most TF_MAX_DIM = INT32_MAX (checked). */
        for (int p = 0; p < b->nranks; p++) {
            s->counts[p] = (int)(in->brow_off[p + 1] - in->brow_off[p]);
            s->displs[p] = (int)in->brow_off[p];
        }
        memcpy(s->rowptr, in->rowptr, (size_t)(b->nrows + 1) * sizeof(int64_t));
        if (nnz > 0) {
            memcpy(s->col, in->col, (size_t)nnz * sizeof(int32_t));
            memcpy(s->val, in->val, (size_t)nnz * sizeof(float));
        }
        b->run_bytes = (b->n - b->nb) * (int64_t)b->k * (int64_t)b->es;
        b->run_msgs = b->nranks - 1;
    }
    if (st == TF_OK && b->bf16)
        st = split_own(b, s, nnz);
    return tf_agree(b->comm, st);
}

int tf_bl_allgather_run(tf_baseline *b, const float *b_rows, float *c)
{
    allgather_state *s = b->impl;
    float dummy = 0.0f;
    double tp = MPI_Wtime();
    const void *send = b->nb > 0 ? (const void *)b_rows : &dummy;
    if (b->bf16 && b->nb > 0) {
        tf_bf16_pack(b_rows, s->own16, b->nb * (int64_t)b->k);
        send = s->own16;
    }
    double t0 = MPI_Wtime();
    int err = MPI_Allgatherv(send, (int)b->nb, b->row_type, s->full, s->counts, s->displs,
                             b->row_type, b->comm);
    double t1 = MPI_Wtime();
    if (err != MPI_SUCCESS)
        return tf_mpi_fail(err, "MPI_Allgatherv");
    if (b->bf16) {
        tf_bl_csr(b->nrows, s->lptr, s->lcol, s->lval, b_rows, b->k, c, 0);
        tf_bl_csr_bf16(b->nrows, s->rptr, s->rcol, s->rval, s->full, b->k, c, 1);
    } else {
        tf_bl_csr(b->nrows, s->rowptr, s->col, s->val, s->full, b->k, c, 0);
    }
    double t2 = MPI_Wtime();
    b->counters.comm_wait += t1 - t0;
    b->counters.compute += (t2 - t1) + (t0 - tp);
    return TF_OK;
}

void tf_bl_allgather_free(tf_baseline *b)
{
    allgather_state *s = b->impl;
    if (!s)
        return;
    free(s->full);
    free(s->own16);
    free(s->lptr);
    free(s->rptr);
    free(s->lcol);
    free(s->rcol);
    free(s->lval);
    free(s->rval);
    free(s->counts);
    free(s->displs);
    free(s->rowptr);
    free(s->col);
    free(s->val);
    free(s);
    b->impl = NULL;
}
