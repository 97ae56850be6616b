/* The baselines' volume model (tf_baseline_predict, tf_baseline.h). */
#include "tf_baseline.h"
#include "tf_bl_common.h"
#include "tf_error.h"

/* ---- Volume model ------------------------------------------------------- */

int tf_baseline_predict(int algo, int nranks, int rank, const int64_t *row_off,
                        const int64_t *brow_off, int replication, int k,
                        int64_t *bytes_received, int64_t *messages)
{
    if (nranks < 1 || rank < 0 || rank >= nranks || !row_off || !brow_off || k < 1 ||
        !bytes_received || !messages)
        return tf_fail(TF_ERR_ARG, "baseline volume: bad arguments (rank %d of %d, k %d)", rank,
                       nranks, k);
    const int64_t kb = (int64_t)k * (int64_t)sizeof(float);
    const int64_t nb = brow_off[rank + 1] - brow_off[rank];
    if (algo == TF_BASE_ALLGATHER) {
        *bytes_received = (brow_off[nranks] - nb) * kb;
        *messages = nranks - 1;
        return TF_OK;
    }
    if (algo == TF_BASE_SHIFT) {
        int c = replication == 0 ? 1 : replication;
        int st = tf_bl_check_replication(c, nranks);
        if (st != TF_OK)
            return st;
        int q = nranks / c, t = rank / c, l = rank % c;
        int64_t rows = 0;
        for (int s = 1; s < q; s++) {
            int p = ((t + s) % q) * c + l;
            rows += brow_off[p + 1] - brow_off[p];
        }
        int64_t nrows = row_off[rank + 1] - row_off[rank];
        /* Reduce-scatter: this rank's C rows, one partial from each of the
         * other c - 1 layers. */
        rows += (int64_t)(c - 1) * nrows;
        *bytes_received = rows * kb;
        *messages = (q - 1) + (c - 1);
        return TF_OK;
    }
    if (algo == TF_BASE_P2P)
        return tf_fail(TF_ERR_ARG,
                       "baseline volume: p2p depends on the sparsity pattern; create it and read "
                       "its counters");
    return tf_fail(TF_ERR_ARG, "baseline %d: unknown algorithm", algo);
}
