/* Baselines: argument checks, agreement and dispatch to the algorithms
 * (tf_baseline_allgather.c, tf_baseline_shift.c, tf_baseline_p2p.c), which
 * share tf_bl_common.c; the volume model is tf_bl_volume.c. */
#include "tf_baseline.h"
#include "tf_agree.h"
#include "tf_bl_common.h"
#include "tf_meminfo.h"
#include "tf_node.h"
#include "tf_bl_variants.h"
#include "tf_csr.h"
#include "tf_dense.h"
#include "tf_error.h"

#include <stdlib.h>
#include <string.h>

/* ---- Names -------------------------------------------------------------- */

const char *tf_baseline_name(int algo)
{
    switch (algo) {
    case TF_BASE_ALLGATHER: return "allgather";
    case TF_BASE_SHIFT: return "shift";
    case TF_BASE_P2P: return "p2p";
    default: return "?";
    }
}

int tf_baseline_parse(const char *s, int *algo)
{
    if (!s || !algo)
        return tf_fail(TF_ERR_ARG, "baseline: no name given");
    for (int a = TF_BASE_ALLGATHER; a <= TF_BASE_P2P; a++)
        if (strcmp(s, tf_baseline_name(a)) == 0) {
            *algo = a;
            return TF_OK;
        }
    return tf_fail(TF_ERR_ARG, "baseline '%s': expected 'allgather', 'shift' or 'p2p'", s);
}

/* ---- Create / run / free ------------------------------------------------ */

static int check_offsets(const int64_t *off, int nranks, int64_t total, const char *name)
{
    if (!off)
        return tf_fail(TF_ERR_ARG, "baseline: %s is NULL", name);
    if (off[0] != 0 || off[nranks] != total)
        return tf_fail(TF_ERR_ARG, "baseline: %s must run from 0 to %lld (got %lld .. %lld)",
                       name, (long long)total, (long long)off[0], (long long)off[nranks]);
    for (int p = 0; p < nranks; p++)
        if (off[p + 1] < off[p])
            return tf_fail(TF_ERR_ARG, "baseline: %s decreases at rank %d", name, p);
    return TF_OK;
}

/* Local checks of everything the algorithms rely on. */
static int check_input(int algo, const tf_baseline_input *in)
{
    int size, rank;
    MPI_Comm_size(in->comm, &size);
    MPI_Comm_rank(in->comm, &rank);
    if (in->nranks != size || in->rank != rank)
        return tf_fail(TF_ERR_ARG, "baseline: input says rank %d of %d, communicator rank %d of %d",
                       in->rank, in->nranks, rank, size);
    if (algo < TF_BASE_ALLGATHER || algo > TF_BASE_P2P)
        return tf_fail(TF_ERR_ARG, "baseline %d: unknown algorithm", algo);
    if (in->k < 1)
        return tf_fail(TF_ERR_ARG, "baseline: dense width k = %d, must be at least 1", in->k);
    if (algo == TF_BASE_SHIFT) {
        int st = tf_bl_check_replication(in->replication == 0 ? 1 : in->replication, size);
        if (st != TF_OK)
            return st;
    }
    if (in->m < 0 || in->n < 0 || in->m > TF_MAX_DIM || in->n > TF_MAX_DIM)
        return tf_fail(TF_ERR_ARG, "baseline: matrix size %lld x %lld out of range",
                       (long long)in->m, (long long)in->n);
    int st = check_offsets(in->row_off, size, in->m, "row_off");
    if (st == TF_OK)
        st = check_offsets(in->brow_off, size, in->n, "brow_off");
    if (st != TF_OK)
        return st;
    if (in->nrows != in->row_off[rank + 1] - in->row_off[rank])
        return tf_fail(TF_ERR_ARG, "rank %d: nrows %lld, but row_off gives %lld rows", rank,
                       (long long)in->nrows,
                       (long long)(in->row_off[rank + 1] - in->row_off[rank]));
    if (!in->rowptr)
        return tf_fail(TF_ERR_ARG, "rank %d: rowptr is NULL", rank);
    if (in->rowptr[0] != 0)
        return tf_fail(TF_ERR_ARG, "rank %d: rowptr[0] = %lld, must be 0", rank,
                       (long long)in->rowptr[0]);
    int64_t nnz = in->rowptr[in->nrows];
    if (nnz > 0 && (!in->col || !in->val))
        return tf_fail(TF_ERR_ARG, "rank %d: col or val is NULL", rank);
    for (int64_t i = 0; i < in->nrows; i++) {
        if (in->rowptr[i + 1] < in->rowptr[i])
            return tf_fail(TF_ERR_ARG, "rank %d: rowptr decreases at local row %lld", rank,
                           (long long)i);
        for (int64_t e = in->rowptr[i]; e < in->rowptr[i + 1]; e++) {
            int32_t j = in->col[e];
            if (j < 0 || j >= in->n)
                return tf_fail(TF_ERR_ARG, "rank %d: row %lld has column %d outside 0..%lld",
                               rank, (long long)(in->row_off[rank] + i), (int)j,
                               (long long)in->n - 1);
            if (e > in->rowptr[i] && in->col[e - 1] >= j)
                return tf_fail(TF_ERR_ARG,
                               "rank %d: row %lld: columns not strictly ascending (%d then %d)",
                               rank, (long long)(in->row_off[rank] + i), (int)in->col[e - 1],
                               (int)j);
        }
    }
    return TF_OK;
}

/* Hash of what every rank must pass identically. */
static uint64_t input_hash(int algo, const tf_baseline_input *in)
{
    uint64_t h = tf_mix64(0x7466626173656c69ULL ^ (uint64_t)algo);
    int c = algo == TF_BASE_SHIFT ? (in->replication == 0 ? 1 : in->replication) : 1;
    h = tf_mix64(h ^ (uint64_t)in->k);
    h = tf_mix64(h ^ (uint64_t)c);
    h = tf_mix64(h ^ (uint64_t)(in->bf16 != 0));
    h = tf_mix64(h ^ (uint64_t)in->m);
    h = tf_mix64(h ^ (uint64_t)in->n);
    for (int p = 0; p <= in->nranks; p++) {
        h = tf_mix64(h ^ (uint64_t)in->row_off[p]);
        h = tf_mix64(h ^ (uint64_t)in->brow_off[p]);
    }
    return h;
}

static void free_local(tf_baseline *b)
{
    if (!b)
        return;
    switch (b->algo) {
    case TF_BASE_ALLGATHER: tf_bl_allgather_free(b); break;
    case TF_BASE_SHIFT: tf_bl_shift_free(b); break;
    case TF_BASE_P2P: tf_bl_p2p_free(b); break;
    default: break;
    }
    if (b->row_type != MPI_DATATYPE_NULL)
        MPI_Type_free(&b->row_type);
    if (b->comm != MPI_COMM_NULL)
        MPI_Comm_free(&b->comm);
    free(b);
}

int tf_baseline_create(int algo, const tf_baseline_input *in, tf_baseline **out)
{
    if (out)
        *out = NULL;
    if (!in || !out)
        return tf_fail(TF_ERR_ARG, "baseline: NULL input or output");
    if (in->comm == MPI_COMM_NULL)
        return tf_fail(TF_ERR_ARG, "baseline: communicator is MPI_COMM_NULL");

    int st = check_input(algo, in);
    tf_baseline *b = NULL;
    if (st == TF_OK) {
        b = calloc(1, sizeof *b);
        if (!b)
            st = tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate the baseline", in->rank);
    }
    st = tf_agree(in->comm, st);
    if (st != TF_OK) {
        free(b);
        return st;
    }

    /* What the node has left, read by every rank before any of them
     * allocates: the collectives below keep a fast rank's blocks out of a
     * slow rank's reading. */
    int64_t avail = -1;
    st = tf_agree(in->comm, tf_mem_available(&avail));
    if (st != TF_OK) {
        free(b);
        return st;
    }

    /* Every rank must pass the same algorithm, k, replication and partitions,
     * or the collectives below would not match. */
    uint64_t h = input_hash(algo, in), hmin = 0, hmax = 0;
    int e1 = MPI_Allreduce(&h, &hmin, 1, MPI_UINT64_T, MPI_MIN, in->comm);
    int e2 = MPI_Allreduce(&h, &hmax, 1, MPI_UINT64_T, MPI_MAX, in->comm);
    if (e1 != MPI_SUCCESS || e2 != MPI_SUCCESS)
        st = tf_fail(TF_ERR_MPI, "baseline: MPI_Allreduce failed");
    else if (hmin != hmax)
        st = tf_fail(TF_ERR_ARG, "baseline: ranks disagree on the algorithm, k, replication, "
                                 "matrix size, partitions or precision of what travels");
    st = tf_agree(in->comm, st);
    if (st != TF_OK) {
        free(b);
        return st;
    }

    b->algo = 0; /* set once the algorithm state can be freed */
    b->comm = MPI_COMM_NULL;
    b->row_type = MPI_DATATYPE_NULL;
    b->nranks = in->nranks;
    b->rank = in->rank;
    b->k = in->k;
    b->bf16 = in->bf16 != 0;
    b->es = b->bf16 ? sizeof(uint16_t) : sizeof(float);
    b->c = algo == TF_BASE_SHIFT ? (in->replication == 0 ? 1 : in->replication) : 1;
    b->m = in->m;
    b->n = in->n;
    b->nrows = in->nrows;
    b->row_begin = in->row_off[in->rank];
    b->nb = in->brow_off[in->rank + 1] - in->brow_off[in->rank];
    b->brow_begin = in->brow_off[in->rank];

    b->mem_budget = -1;
    b->node_ranks = 1;
    int err = MPI_Comm_dup(in->comm, &b->comm);
    if (err != MPI_SUCCESS) {
        b->comm = MPI_COMM_NULL;
        st = tf_mpi_fail(err, "MPI_Comm_dup");
    } else {
        b->node_ranks = tf_node_ranks(b->comm);
        if (avail >= 0)
            b->mem_budget = avail / b->node_ranks;
    }
    if (st == TF_OK) {
        err = MPI_Type_contiguous(b->k, b->bf16 ? MPI_UINT16_T : MPI_FLOAT, &b->row_type);
        if (err == MPI_SUCCESS)
            err = MPI_Type_commit(&b->row_type);
        if (err != MPI_SUCCESS)
            st = tf_mpi_fail(err, "MPI_Type_contiguous");
    }
    st = tf_agree(in->comm, st);
    if (st == TF_OK) {
        b->algo = algo;
        /* Each create agrees on its outcome before returning. */
        switch (algo) {
        case TF_BASE_ALLGATHER: st = tf_bl_allgather_create(b, in); break;
        case TF_BASE_SHIFT: st = tf_bl_shift_create(b, in); break;
        default: st = tf_bl_p2p_create(b, in); break;
        }
    }
    if (st != TF_OK) {
        free_local(b);
        return st;
    }
    *out = b;
    return TF_OK;
}

int tf_baseline_run(tf_baseline *b, const float *b_rows, float *c)
{
    if (!b)
        return tf_fail(TF_ERR_ARG, "baseline: NULL handle");
    int st;
    switch (b->algo) {
    case TF_BASE_ALLGATHER: st = tf_bl_allgather_run(b, b_rows, c); break;
    case TF_BASE_SHIFT: st = tf_bl_shift_run(b, b_rows, c); break;
    default: st = tf_bl_p2p_run(b, b_rows, c); break;
    }
    if (st == TF_OK) {
        b->counters.bytes_received += b->run_bytes;
        b->counters.messages += b->run_msgs;
    }
    return st;
}

const tf_baseline_counters *tf_baseline_counters_get(const tf_baseline *b)
{
    return b ? &b->counters : NULL;
}

void tf_baseline_counters_reset(tf_baseline *b)
{
    if (b)
        memset(&b->counters, 0, sizeof b->counters);
}

int64_t tf_baseline_memory(const tf_baseline *b) { return b ? b->mem_bytes : 0; }

int tf_baseline_algo_of(const tf_baseline *b) { return b ? b->algo : 0; }

int tf_baseline_replication(const tf_baseline *b) { return b ? b->c : 0; }

int tf_baseline_free(tf_baseline *b)
{
    free_local(b);
    return TF_OK;
}
