#include "tf_dist_classify.h"
#include "tf_agree.h"
#include "tf_classify.h"
#include "tf_error.h"
#include "tf_idle.h"

#include <stdlib.h>
#include <string.h>

enum { OWNER_COLS = TF_CLASSIFY_COLS - TF_CLASSIFY_RECV_COLS, MAX_TABLES = 2, MAX_EXTRA = 1 };

/* Tables of fewer bytes are added up whole: one collective's latency then
 * costs more than the bytes it saves. On the simulated cluster of
 * docs/scale.md an all-reduce of 4 kB took 12 us at 16 ranks, the sum of
 * the owners' columns and the gathering 14 us; of 8.7 kB at 64 ranks, 50
 * against 23 us. */
#define GATHER_FROM_BYTES 8192

void tf_dist_classify_init(tf_dist_classify_ctx *x, MPI_Comm comm, int P, const int *first_part)
{
    int Q;
    MPI_Comm_size(comm, &Q);
    memset(x, 0, sizeof *x);
    x->comm = comm;
    x->P = P;
    x->first_part = first_part;
    for (int r = 0; r < Q; r++)
        if (first_part[r + 1] - first_part[r] > x->block)
            x->block = first_part[r + 1] - first_part[r];
    /* The owners' sums, then this rank's rows, then every rank's: for the
     * largest sum the classification makes (two tables and one value). */
    size_t rows = (size_t)MAX_TABLES * (size_t)x->block * TF_CLASSIFY_RECV_COLS;
    size_t n = (size_t)MAX_TABLES * (size_t)P * OWNER_COLS + MAX_EXTRA + rows * ((size_t)Q + 1);
    x->scratch = malloc(n * sizeof *x->scratch);
    x->status = x->scratch ? TF_OK
                           : tf_fail(TF_ERR_NOMEM, "out of memory for %d ranks' classification "
                                                   "counts", P);
}

void tf_dist_classify_free(tf_dist_classify_ctx *x)
{
    free(x->scratch);
    x->scratch = NULL;
}

/* The sum of whole count tables (tf_classify.h): the owners' columns and
 * the plain values added up, the receivers' columns gathered. */
static int sum_tables(tf_dist_classify_ctx *x, int64_t *v, int64_t ntab, int64_t nextra)
{
    int Q, me;
    MPI_Comm_size(x->comm, &Q);
    MPI_Comm_rank(x->comm, &me);
    const int64_t R = (int64_t)x->P * TF_CLASSIFY_COLS, C = TF_CLASSIFY_COLS;
    const int RC = TF_CLASSIFY_RECV_COLS;
    int64_t *own = x->scratch;
    int64_t *mine = own + (int64_t)MAX_TABLES * x->P * OWNER_COLS + MAX_EXTRA;
    int64_t block = ntab * x->block * RC;
    int64_t *all = mine + block;
    int64_t k = 0;
    for (int64_t t = 0; t < ntab; t++)
        for (int64_t p = 0; p < x->P; p++)
            for (int64_t c = RC; c < C; c++)
                own[k++] = v[t * R + p * C + c];
    for (int64_t e = 0; e < nextra; e++)
        own[k++] = v[ntab * R + e];
    if (tf_mpi_allreduce_idle(MPI_IN_PLACE, own, (int)k, MPI_INT64_T, MPI_SUM, x->comm) !=
        MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "MPI_Allreduce of classification counts failed");
    int64_t w = 0;
    for (int64_t t = 0; t < ntab; t++)
        for (int64_t p = x->first_part[me]; p < x->first_part[me + 1]; p++)
            for (int64_t c = 0; c < RC; c++)
                mine[w++] = v[t * R + p * C + c];
    memset(mine + w, 0, (size_t)(block - w) * sizeof *mine);
    if (MPI_Allgather(mine, (int)block, MPI_INT64_T, all, (int)block, MPI_INT64_T, x->comm) !=
        MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "MPI_Allgather of classification counts failed");
    for (int r = 0; r < Q; r++) {
        const int64_t *g = all + (int64_t)r * block;
        for (int64_t t = 0; t < ntab; t++)
            for (int64_t p = x->first_part[r]; p < x->first_part[r + 1]; p++)
                for (int64_t c = 0; c < RC; c++)
                    v[t * R + p * C + c] = *g++;
    }
    k = 0;
    for (int64_t t = 0; t < ntab; t++)
        for (int64_t p = 0; p < x->P; p++)
            for (int64_t c = RC; c < C; c++)
                v[t * R + p * C + c] = own[k++];
    for (int64_t e = 0; e < nextra; e++)
        v[ntab * R + e] = own[k++];
    return TF_OK;
}

int tf_dist_classify_sum(int64_t *v, int64_t n, int op, int status, void *ctx)
{
    tf_dist_classify_ctx *x = ctx;
    int me;
    MPI_Comm_rank(x->comm, &me);
    /* Only the first call can carry a failure of one rank (tf_classify.h):
     * it agrees first, on the scratch's allocation too. */
    if (x->calls++ == 0)
        status = tf_agree(x->comm, status ? status : x->status);
    if (status || n == 0)
        return status;
    const int64_t R = (int64_t)x->P * TF_CLASSIFY_COLS;
    if (op == TF_CLASSIFY_SUM && n / R >= 1 && n / R <= MAX_TABLES && n % R <= MAX_EXTRA &&
        n * (int64_t)sizeof *v >= GATHER_FROM_BYTES)
        return sum_tables(x, v, n / R, n % R);
    /* Anything else is added up whole: correct for any n, only slower. */
    int rc = op == TF_CLASSIFY_SUM
                 ? tf_mpi_allreduce_idle(MPI_IN_PLACE, v, (int)n, MPI_INT64_T, MPI_SUM, x->comm)
                 : MPI_Exscan(MPI_IN_PLACE, v, (int)n, MPI_INT64_T, MPI_SUM, x->comm);
    if (rc != MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "MPI_%s of classification counts failed",
                       op == TF_CLASSIFY_SUM ? "Allreduce" : "Exscan");
    if (op == TF_CLASSIFY_EXSCAN && me == 0)
        memset(v, 0, (size_t)n * sizeof *v); /* MPI leaves rank 0's undefined */
    return TF_OK;
}
