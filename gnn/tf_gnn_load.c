#include "tf_gnn_load.h"
#include "tf_error.h"
#include "tf_exec.h"
#include "tf_gnn_features.h"
#include "tf_gnn_labels.h"
#include "tf_gnn_rows.h"

#include <stdlib.h>
#include <string.h>

static int load_local(const tf_gnn_inputs *in, tf_gnn_data *d)
{
    int32_t *map = NULL;
    int st = TF_OK;
    if (in->labels || in->split)
        st = tf_gnn_id_map(d->ids, d->nrows, d->n, &map);
    if (!st)
        st = in->features ? tf_gnn_features_read(in->features, d)
                          : tf_gnn_features_random(in->seed, in->random_features, d);
    if (!st)
        st = in->labels ? tf_gnn_labels_read(in->labels, map, d)
                        : tf_gnn_labels_random(in->seed, in->random_classes, d);
    if (!st)
        st = in->split ? tf_gnn_split_read(in->split, map, d) : tf_gnn_split_random(in->seed, d);
    free(map);
    if (!st)
        tf_gnn_row_normalise(&d->x);
    return st;
}

int tf_gnn_load(const tf_handle *h, const tf_gnn_inputs *in, const int64_t *ids,
                tf_gnn_data *d)
{
    memset(d, 0, sizeof *d);
    MPI_Comm comm = tf_get_comm(h);
    int64_t r0;
    tf_get_rows(h, &r0, &d->nrows);
    d->n = tf_get_m(h);
    d->ids = ids;
    int st = load_local(in, d);
    st = tf_agree(comm, tf_agree_note_io(comm, st));
    if (!st) {
        /* Each rank reads its own copy of the files (each node its own, on
         * a cluster without a shared file system): copies that differ in
         * the number of classes or of features give every rank a model of
         * another shape, and the first sum of gradients (MPI_Allreduce of
         * other lengths) would abort the job. */
        int64_t mine[2] = {d->classes, d->x.ncols}, lo[2], hi[2];
        MPI_Allreduce(mine, lo, 2, MPI_INT64_T, MPI_MIN, comm);
        MPI_Allreduce(mine, hi, 2, MPI_INT64_T, MPI_MAX, comm);
        if (lo[0] != hi[0])
            st = tf_fail(TF_ERR_FORMAT, "%s: the ranks' copies give %lld to %lld classes: every "
                         "rank must read the same file", in->labels ? in->labels : "--labels",
                         (long long)lo[0], (long long)hi[0]);
        else if (lo[1] != hi[1])
            st = tf_fail(TF_ERR_FORMAT, "%s: the ranks' copies give %lld to %lld features: every "
                         "rank must read the same file",
                         in->features ? in->features : "--features", (long long)lo[1],
                         (long long)hi[1]);
    }
    if (!st) {
        for (int64_t i = 0; i < d->nrows; i++)
            d->count[d->split[i]]++;
        MPI_Allreduce(MPI_IN_PLACE, d->count, TF_GNN_NSPLITS, MPI_INT64_T, MPI_SUM, comm);
        if (d->count[TF_GNN_TRAIN] == 0)
            st = tf_fail(TF_ERR_ARG, "%s: no node is in the train split",
                         in->split ? in->split : "--random-split");
    }
    if (st)
        tf_gnn_data_free(d);
    return st;
}
