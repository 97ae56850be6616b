#include "tf_gnn_rows.h"
#include "tf_error.h"

#include <stdlib.h>
#include <string.h>

int tf_gnn_row_ids(const tf_handle *h, int64_t **ids, int64_t *nrows)
{
    int64_t r0, nr, b0, nb;
    tf_get_rows(h, &r0, &nr);
    tf_get_brows(h, &b0, &nb);
    *nrows = nr;
    *ids = malloc((size_t)(nr > 0 ? nr : 1) * sizeof **ids);
    if (!*ids)
        return tf_fail(TF_ERR_NOMEM, "rank %d: out of memory for %lld row ids", tf_get_rank(h),
                       (long long)nr);
    /* A layer's output rows are the next layer's B rows: both must be the
     * same nodes, in the same order, whatever numbering the plan uses. */
    const int64_t *rid = tf_get_row_ids(h), *bid = tf_get_brow_ids(h);
    if (nr != nb || (nr > 0 && memcmp(rid, bid, (size_t)nr * sizeof *rid) != 0)) {
        free(*ids);
        *ids = NULL;
        return tf_fail(TF_ERR_ARG,
                       "rank %d: the plan's rows of C are not its rows of B (a GCN layer needs "
                       "a square plan whose row and B-row bands and ids agree)",
                       tf_get_rank(h));
    }
    if (nr > 0)
        memcpy(*ids, rid, (size_t)nr * sizeof **ids);
    return TF_OK;
}

int tf_gnn_id_map(const int64_t *ids, int64_t nrows, int64_t n, int32_t **map)
{
    *map = malloc((size_t)(n > 0 ? n : 1) * sizeof **map);
    if (!*map)
        return tf_fail(TF_ERR_NOMEM, "out of memory for a map of %lld nodes", (long long)n);
    for (int64_t i = 0; i < n; i++)
        (*map)[i] = -1;
    for (int64_t i = 0; i < nrows; i++) {
        if (ids[i] < 0 || ids[i] >= n) {
            free(*map);
            *map = NULL;
            return tf_fail(TF_ERR_INTERNAL, "row id %lld outside 0..%lld", (long long)ids[i],
                           (long long)n - 1);
        }
        (*map)[ids[i]] = (int32_t)i;
    }
    return TF_OK;
}
