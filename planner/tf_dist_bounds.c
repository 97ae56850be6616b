#include "tf_dist_bounds.h"
#include "tf_error.h"
#include "tf_idle.h"
#include "tf_dcsr.h"
#include "tf_row_exchange.h"

/* Bins of whole rows: the block distribution of m rows over B "ranks"
 * (B <= 64 Q fits an int). */
static int64_t bin_start(int64_t m, int64_t B, int64_t b)
{
    return tf_dcsr_block(m, (int)B, (int)b);
}

static int64_t bin_of(int64_t m, int64_t B, int64_t i) { return tf_row_owner(m, (int)B, i); }

/* w[0..B) = the weight of each of B bins of the m rows (entries over every
 * rank, plus rows). Collective. */
static int bin_weights(MPI_Comm comm, int64_t m, int64_t B, const int32_t *row, int64_t n,
                       int64_t *w)
{
    for (int64_t b = 0; b < B; b++)
        w[b] = 0;
    for (int64_t e = 0; e < n; e++)
        w[bin_of(m, B, row[e])]++;
    if (tf_mpi_allreduce_idle(MPI_IN_PLACE, w, (int)B, MPI_INT64_T, MPI_SUM, comm) !=
        MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "summing the rows' entries over the ranks failed");
    for (int64_t b = 0; b < B; b++)
        w[b] += bin_start(m, B, b + 1) - bin_start(m, B, b);
    return TF_OK;
}

int tf_dist_balanced_bounds(MPI_Comm comm, int64_t m, const int32_t *row, int64_t n,
                            int64_t *w, int64_t *off)
{
    int Q;
    MPI_Comm_size(comm, &Q);
    for (int r = 0; r <= Q; r++)
        off[r] = bin_start(m > 0 ? m : 0, Q, r);
    if (m <= 0 || Q == 1) /* every rank sees the same m and Q: none reduces */
        return TF_OK;
    /* The blocks first, in Q bins: where no block is much above its share
     * (a road network, a graph in random order), they stay, and the finer
     * count, 64 times the reduction, is not made. Nor where the excess is
     * a few thousand entries: a 64th of pubmed is 1.5 times its share by
     * 900, and the two reductions cost its read more than the balance
     * saves. */
    const int64_t B1 = m < Q ? m : Q;
    int st = bin_weights(comm, m, B1, row, n, w);
    if (st)
        return st;
    int64_t total = 0, most = 0;
    for (int64_t b = 0; b < B1; b++) {
        total += w[b];
        most = w[b] > most ? w[b] : most;
    }
    if ((double)most <= 1.5 * (double)total / Q || most - total / Q < TF_DIST_BOUNDS_EXCESS)
        return TF_OK;
    /* Equal row blocks are a row per bin below 64 rows a rank. */
    const int64_t B = (int64_t)Q * TF_DIST_BOUNDS_BINS < m ? (int64_t)Q * TF_DIST_BOUNDS_BINS : m;
    if ((st = bin_weights(comm, m, B, row, n, w)))
        return st;
    /* Rank r starts at the first bin boundary with at least r/Q of the
     * weight before it. */
    int64_t b = 0, before = 0;
    for (int r = 1; r < Q; r++) {
        int64_t want = (int64_t)((__int128)total * r / Q);
        while (b < B && before < want)
            before += w[b++];
        off[r] = bin_start(m, B, b);
    }
    return TF_OK;
}
