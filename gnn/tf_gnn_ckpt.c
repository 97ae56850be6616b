#include "tf_gnn_ckpt.h"
#include "tf_error.h"
#include "tf_dense.h"
#include "tf_exec.h"

#include <mpi.h>
#include <string.h>

void tf_gnn_ckpt_id_of(const tf_gnn_trainer *t, uint64_t fingerprint, tf_gnn_ckpt_id *id)
{
    const tf_gnn_model *m = t->m;
    memset(id, 0, sizeof *id);
    id->fingerprint = fingerprint;
    id->nodes = m->d->n;
    id->features = m->nfeat;
    id->layers = m->layers;
    id->hidden = m->hidden;
    id->classes = m->classes;
    id->seed = m->seed;
    id->dropout = m->dropout;
    id->lr = t->o.lr;
    id->weight_decay = m->weight_decay;
    id->patience = t->o.patience;
}

int tf_gnn_ckpt_save(const tf_gnn_trainer *t, uint64_t fingerprint, const char *path)
{
    int rank, st = TF_OK;
    MPI_Comm_rank(t->m->comm, &rank);
    if (rank == 0) {
        tf_gnn_ckpt c;
        memset(&c, 0, sizeof c);
        tf_gnn_ckpt_id_of(t, fingerprint, &c.id);
        c.epoch = t->r.epochs;
        c.stopped = t->r.stopped;
        c.adam_step = t->adam.t;
        c.stop_seen = t->stop.n;
        c.nw = t->m->nw;
        c.w = t->m->w;
        c.adam_m = t->adam.m;
        c.adam_v = t->adam.v;
        c.stop_hist = t->stop.hist;
        st = tf_gnn_ckpt_write(path, &c);
    }
    /* The state is the same on every rank: rank 0 alone writes it. */
    return tf_agree_root(t->m->comm, st);
}

/* A hash of everything a checkpoint restores, to compare the ranks' reads. */
static uint64_t state_hash(const tf_gnn_ckpt *c)
{
    uint64_t h = tf_mix64((uint64_t)c->epoch) ^ tf_mix64((uint64_t)c->stopped + 1) ^
                 tf_mix64((uint64_t)c->adam_step + 2) ^ tf_mix64((uint64_t)c->stop_seen + 3);
    const double *arrays[4] = {c->w, c->adam_m, c->adam_v, c->stop_hist};
    size_t lens[4] = {c->nw, c->nw, c->nw, (size_t)(c->id.patience > 0 ? c->id.patience : 1)};
    for (int a = 0; a < 4; a++)
        for (size_t i = 0; arrays[a] && i < lens[a]; i++) {
            uint64_t w;
            memcpy(&w, &arrays[a][i], sizeof w);
            h = tf_mix64(h ^ w);
        }
    return h;
}

int tf_gnn_ckpt_resume(tf_gnn_trainer *t, uint64_t fingerprint, const char *path)
{
    tf_gnn_ckpt c;
    tf_gnn_ckpt_id now;
    tf_gnn_ckpt_id_of(t, fingerprint, &now);
    int st = tf_gnn_ckpt_read(path, &c);
    if (!st)
        st = tf_gnn_ckpt_match(path, &c.id, &now);
    if (!st && c.nw != t->m->nw)
        st = tf_fail(TF_ERR_INTERNAL, "--resume %s: %zu weights, the model has %zu", path, c.nw,
                     t->m->nw);
    if (!st) {
        memcpy(t->m->w, c.w, c.nw * sizeof *c.w);
        memcpy(t->adam.m, c.adam_m, c.nw * sizeof *c.adam_m);
        memcpy(t->adam.v, c.adam_v, c.nw * sizeof *c.adam_v);
        t->adam.t = c.adam_step;
        int nh = t->stop.patience > 0 ? t->stop.patience : 1;
        memcpy(t->stop.hist, c.stop_hist, (size_t)nh * sizeof *c.stop_hist);
        t->stop.n = (int)c.stop_seen;
    }
    /* Every rank reads the file: one may not see it, and where each node
     * has its own copy one may read an older checkpoint, whose epoch
     * differs from the others' (the ranks would then wait for each other
     * in different epochs). */
    st = tf_agree(t->m->comm, tf_agree_note_io(t->m->comm, st));
    if (!st) {
        int rank;
        MPI_Comm_rank(t->m->comm, &rank);
        uint64_t mine = state_hash(&c), first = mine;
        MPI_Bcast(&first, 1, MPI_UINT64_T, 0, t->m->comm);
        if (mine != first)
            st = tf_fail(TF_ERR_FORMAT, "--resume %s: rank %d reads another checkpoint than "
                         "rank 0 (epoch %lld here): every rank must read the same file", path,
                         rank, (long long)c.epoch);
        st = tf_agree(t->m->comm, st);
    }
    if (!st)
        st = tf_gnn_trainer_resume(t, c.epoch, (int)c.stopped);
    tf_gnn_ckpt_free(&c);
    return st;
}
