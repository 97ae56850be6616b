/* twoface-exec's memory preflight: tf_exec_mem.h. */
#include "tf_exec_mem.h"

#include "tf_agree.h"
#include "tf_engine.h"
#include "tf_error.h"
#include "tf_meminfo.h"

#include <stdint.h>
#include <string.h>

#define MIB(x) ((long long)((x) >> 20))

int64_t tf_exec_mem_estimate(const tf_algo_spec *spec, tf_handle *const *plans, int nplans,
                             int k)
{
    int idx = 0;
    if (tf_algo_pick_plan(spec, plans, nplans, &idx))
        return 0;
    const tf_plan *pl = tf_handle_plan(plans[idx]);
    const int P = pl->nranks, p = tf_get_rank(plans[idx]);
    const int64_t row = (int64_t)k * (int64_t)sizeof(float);
    const int64_t nrows = pl->row_off[p + 1] - pl->row_off[p];
    const int64_t nb = pl->brow_off[p + 1] - pl->brow_off[p];
    const tf_rank_stats *s = &pl->all_stats[p];
    /* twoface-exec's C for this strategy, and the strategy's B. */
    int64_t rows = nrows + nb;
    switch (spec->kind) {
    case TF_ALGO_ALLGATHER: rows += pl->n; break; /* the whole of B */
    case TF_ALGO_SHIFT: {
        /* Two buffers of the largest sub-block of the ring, and for c > 1
         * the team's C partial. */
        const int c = spec->replication > 0 ? spec->replication : 1;
        int64_t maxb = 0;
        for (int r = 0; r < P; r++)
            if (pl->brow_off[r + 1] - pl->brow_off[r] > maxb)
                maxb = pl->brow_off[r + 1] - pl->brow_off[r];
        rows += 2 * maxb;
        if (c > 1) {
            const int t = p / c;
            rows += pl->row_off[(t + 1) * c] - pl->row_off[t * c];
        }
        break;
    }
    case TF_ALGO_P2P: rows += 2 * s->remote_distinct; break; /* received, and about as many sent */
    default: rows += s->coll_rows_recv + s->fetch_rows; break; /* twoface's buffers */
    }
    return rows * row;
}

int tf_exec_mem_check(MPI_Comm comm, const tf_algo_spec *specs, int nalg,
                      tf_handle *const *plans, int nplans, int k)
{
    int64_t avail = -1;
    int st = tf_agree(comm, tf_mem_available(&avail));
    if (st || nplans < 1)
        return st;
    const tf_plan *pl = tf_handle_plan(plans[0]);
    const int p = tf_get_rank(plans[0]);
    /* The generated B of the round. */
    int64_t need = (pl->brow_off[p + 1] - pl->brow_off[p]) * (int64_t)k * (int64_t)sizeof(float);
    for (int x = 0; x < nalg; x++)
        need += tf_exec_mem_estimate(&specs[x], plans, nplans, k);
    /* The node's ranks together against what the node has: bands differ,
     * and an equal share refused runs whose busiest rank needed more than
     * a quarter of the node while the four together fitted. */
    MPI_Comm node = MPI_COMM_NULL;
    int err = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    if (err != MPI_SUCCESS || node == MPI_COMM_NULL)
        return tf_agree(comm, TF_OK); /* no node to add up over: no check */
    int node_ranks = 1;
    MPI_Comm_size(node, &node_ranks);
    int64_t v[2] = {need, avail < 0 ? INT64_MAX : avail}, sum = 0, least = 0;
    MPI_Allreduce(&v[0], &sum, 1, MPI_INT64_T, MPI_SUM, node);
    MPI_Allreduce(&v[1], &least, 1, MPI_INT64_T, MPI_MIN, node);
    MPI_Comm_free(&node);
    if (avail >= 0 && sum > least)
        st = tf_fail(TF_ERR_NOMEM,
                     "the %d strateg%s about %lld MiB on this node (%d rank%s), more "
                     "than the %lld MiB it has available; run fewer at once (--algo) or a "
                     "smaller K (TWOFACE_MEM_AVAILABLE_MIB sets the node's figure)",
                     nalg, nalg == 1 ? "y needs" : "ies need", MIB(sum), node_ranks,
                     node_ranks == 1 ? "" : "s", MIB(least));
    return tf_agree(comm, st);
}
