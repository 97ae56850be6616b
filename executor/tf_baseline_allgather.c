/* Baseline 1: allgather. Every SpMM gathers the whole of B on every rank
 * with one MPI_Allgatherv (counts in rows of K floats, so any n x K fits the
 * int counts), then multiplies this rank's rows (global columns) against it.
 * Receives (n - nb) * K * 4 bytes from nranks - 1 ranks; holds n x K floats. */
#include "tf_baseline.h"
#include "tf_error.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    float *full;   /* n x K, row-major */
    int *counts;   /* nranks: B rows of each rank */
    int *displs;   /* nranks: first B row of each rank */
    int64_t *rowptr; /* copy of this rank's CSR */
    int32_t *col;
    float *val;
} allgather_state;

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
    if (st == TF_OK && !(s->full = tf_bl_alloc(b, b->n * (int64_t)b->k, sizeof(float),
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
        b->run_bytes = (b->n - b->nb) * (int64_t)b->k * (int64_t)sizeof(float);
        b->run_msgs = b->nranks - 1;
    }
    return tf_exec_agree(b->comm, st);
}

int tf_bl_allgather_run(tf_baseline *b, const float *b_rows, float *c)
{
    allgather_state *s = b->impl;
    float dummy = 0.0f;
    double t0 = MPI_Wtime();
    int err = MPI_Allgatherv(b->nb > 0 ? b_rows : &dummy, (int)b->nb, b->row_type, s->full,
                             s->counts, s->displs, b->row_type, b->comm);
    double t1 = MPI_Wtime();
    if (err != MPI_SUCCESS)
        return tf_mpi_fail(err, "MPI_Allgatherv");
    tf_bl_csr(b->nrows, s->rowptr, s->col, s->val, s->full, b->k, c, 0);
    double t2 = MPI_Wtime();
    b->counters.comm_wait += t1 - t0;
    b->counters.compute += t2 - t1;
    return TF_OK;
}

void tf_bl_allgather_free(tf_baseline *b)
{
    allgather_state *s = b->impl;
    if (!s)
        return;
    free(s->full);
    free(s->counts);
    free(s->displs);
    free(s->rowptr);
    free(s->col);
    free(s->val);
    free(s);
    b->impl = NULL;
}
