#include "tf_gnn_save.h"
#include "tf_error.h"
#include "tf_exec.h"
#include "tf_gnn_h5.h"
#include "tf_gnn_outfile.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const tf_gnn_trainer *t;
    uint64_t fingerprint;
    const char *normalization;
} model_file;

static int write_model(const char *tmp, void *arg)
{
    const model_file *mf = arg;
    const tf_gnn_model *m = mf->t->m;
    tf_gnn_h5 f;
    int st = tf_gnn_h5_create(&f, tmp);
    if (st)
        return st;
    if (!st) st = tf_gnn_h5_put_str(&f, "format", "twoface-gcn model");
    if (!st) st = tf_gnn_h5_put_str(&f, "model", "GCN (Kipf & Welling 2017), ReLU, no bias");
    if (!st) st = tf_gnn_h5_put_str(&f, "normalization", mf->normalization);
    if (!st) st = tf_gnn_h5_put_u64(&f, "fingerprint", mf->fingerprint);
    if (!st) st = tf_gnn_h5_put_i64(&f, "nodes", m->d->n);
    if (!st) st = tf_gnn_h5_put_i64(&f, "features", m->nfeat);
    if (!st) st = tf_gnn_h5_put_i64(&f, "layers", m->layers);
    if (!st) st = tf_gnn_h5_put_i64(&f, "hidden", m->hidden);
    if (!st) st = tf_gnn_h5_put_i64(&f, "classes", m->classes);
    if (!st) st = tf_gnn_h5_put_f64(&f, "dropout", m->dropout);
    if (!st) st = tf_gnn_h5_put_f64(&f, "lr", mf->t->o.lr);
    if (!st) st = tf_gnn_h5_put_f64(&f, "weight_decay", m->weight_decay);
    if (!st) st = tf_gnn_h5_put_i64(&f, "patience", mf->t->o.patience);
    if (!st) st = tf_gnn_h5_put_u64(&f, "seed", m->seed);
    if (!st) st = tf_gnn_h5_put_i64(&f, "epochs", mf->t->r.epochs);
    for (int l = 0; l < m->layers && !st; l++) {
        char name[16];
        snprintf(name, sizeof name, "W%d", l);
        int64_t rows = l == 0 ? m->nfeat : m->hidden;
        int64_t cols = l == m->layers - 1 ? m->classes : m->hidden;
        st = tf_gnn_h5_put_data(&f, name, m->w + m->off[l], rows, cols);
    }
    int cst = tf_gnn_h5_close(&f);
    return st ? st : cst;
}

int tf_gnn_save_model(const tf_gnn_trainer *t, uint64_t fingerprint, const char *normalization,
                      const char *path)
{
    int rank, st = TF_OK;
    MPI_Comm_rank(t->m->comm, &rank);
    if (rank == 0) {
        model_file mf = {t, fingerprint, normalization};
        if ((st = tf_gnn_write_atomic(path, write_model, &mf)))
            st = tf_fail_prefix(st, "--save-model");
    }
    /* The weights are the same on every rank: rank 0 alone writes them. */
    return tf_agree_root(t->m->comm, st);
}

/* ---- Predictions --------------------------------------------------------- */

typedef struct {
    int64_t n;
    const int32_t *cls; /* n, by original id */
    const int8_t *split;
} pred_file;

static int write_preds(const char *tmp, void *arg)
{
    static const char *const word[TF_GNN_NSPLITS] = {"none", "train", "val", "test"};
    const pred_file *p = arg;
    FILE *f = fopen(tmp, "w");
    if (!f)
        return tf_fail(TF_ERR_IO, "%s: cannot open for writing", tmp);
    for (int64_t i = 0; i < p->n; i++)
        fprintf(f, "%d %s\n", p->cls[i], word[p->split[i]]);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return tf_fail(TF_ERR_IO, "%s: write failed (disk full?)", tmp);
    return TF_OK;
}

static int argmax(const float *z, int classes)
{
    int best = 0;
    for (int c = 1; c < classes; c++)
        if (z[c] > z[best])
            best = c;
    return best;
}

int tf_gnn_save_predictions(tf_gnn_model *m, const char *path)
{
    const tf_gnn_data *d = m->d;
    int rank, P, st = TF_OK;
    MPI_Comm_rank(m->comm, &rank);
    MPI_Comm_size(m->comm, &P);
    /* (id, class, split) of every local node, gathered on rank 0. */
    int64_t *mine = malloc((size_t)(3 * d->nrows + 1) * sizeof *mine);
    int *counts = rank == 0 ? calloc((size_t)P, sizeof *counts) : NULL;
    int *displs = rank == 0 ? calloc((size_t)P, sizeof *displs) : NULL;
    int64_t *all = rank == 0 ? malloc((size_t)(3 * d->n + 1) * sizeof *all) : NULL;
    int32_t *cls = rank == 0 ? malloc((size_t)(d->n + 1) * sizeof *cls) : NULL;
    int8_t *split = rank == 0 ? malloc((size_t)(d->n + 1) * sizeof *split) : NULL;
    if (!mine || (rank == 0 && (!counts || !displs || !all || !cls || !split)))
        st = tf_fail(TF_ERR_NOMEM, "rank %d: out of memory for the predictions", rank);
    if (!st && 3 * d->n > INT32_MAX)
        st = tf_fail(TF_ERR_RANGE, "--predictions: %lld nodes are too many to gather",
                     (long long)d->n);
    st = tf_agree(m->comm, st);
    if (!st) {
        for (int64_t i = 0; i < d->nrows; i++) {
            mine[3 * i] = d->ids[i];
            mine[3 * i + 1] = argmax(m->z + i * m->classes, m->classes);
            mine[3 * i + 2] = d->split[i];
        }
        int cnt = (int)(3 * d->nrows);
        MPI_Gather(&cnt, 1, MPI_INT, counts, 1, MPI_INT, 0, m->comm);
        if (rank == 0)
            for (int r = 1; r < P; r++)
                displs[r] = displs[r - 1] + counts[r - 1];
        MPI_Gatherv(mine, cnt, MPI_INT64_T, all, counts, displs, MPI_INT64_T, 0, m->comm);
    }
    if (!st && rank == 0) {
        /* Every node exactly once: the plan's rows are a permutation of the ids. */
        for (int64_t i = 0; i < d->n; i++)
            split[i] = -1;
        for (int64_t q = 0; q < d->n && !st; q++) {
            int64_t id = all[3 * q];
            if (id < 0 || id >= d->n || split[id] != -1)
                st = tf_fail(TF_ERR_INTERNAL, "--predictions: node id %lld twice or out of range",
                             (long long)id);
            else {
                cls[id] = (int32_t)all[3 * q + 1];
                split[id] = (int8_t)all[3 * q + 2];
            }
        }
        pred_file pf = {d->n, cls, split};
        if (!st && (st = tf_gnn_write_atomic(path, write_preds, &pf)))
            st = tf_fail_prefix(st, "--predictions");
    }
    free(mine);
    free(counts);
    free(displs);
    free(all);
    free(cls);
    free(split);
    /* The other ranks' part (their buffer, the gather) was agreed on
     * above; the check and the file are rank 0's. */
    return tf_agree_root(m->comm, st);
}
