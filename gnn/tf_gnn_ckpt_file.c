#include "tf_gnn_ckpt_file.h"
#include "tf_error.h"
#include "tf_gnn_dense.h"
#include "tf_gnn_h5.h"
#include "tf_gnn_model.h"
#include "tf_gnn_outfile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FORMAT "twoface-gcn checkpoint"
#define VERSION 1

size_t tf_gnn_ckpt_nweights(const tf_gnn_ckpt_id *id)
{
    size_t f = (size_t)id->features, h = (size_t)id->hidden, c = (size_t)id->classes;
    return f * h + (size_t)(id->layers - 2) * h * h + h * c;
}

static int hist_len(int64_t patience) { return patience > 0 ? (int)patience : 1; }

static int write_file(const char *tmp, void *arg)
{
    const tf_gnn_ckpt *c = arg;
    const tf_gnn_ckpt_id *id = &c->id;
    tf_gnn_h5 f;
    int st = tf_gnn_h5_create(&f, tmp);
    if (st)
        return st;
    if (!st) st = tf_gnn_h5_put_str(&f, "format", FORMAT);
    if (!st) st = tf_gnn_h5_put_i64(&f, "version", VERSION);
    if (!st) st = tf_gnn_h5_put_u64(&f, "fingerprint", id->fingerprint);
    if (!st) st = tf_gnn_h5_put_i64(&f, "nodes", id->nodes);
    if (!st) st = tf_gnn_h5_put_i64(&f, "features", id->features);
    if (!st) st = tf_gnn_h5_put_i64(&f, "layers", id->layers);
    if (!st) st = tf_gnn_h5_put_i64(&f, "hidden", id->hidden);
    if (!st) st = tf_gnn_h5_put_i64(&f, "classes", id->classes);
    if (!st) st = tf_gnn_h5_put_u64(&f, "seed", id->seed);
    if (!st) st = tf_gnn_h5_put_f64(&f, "dropout", id->dropout);
    if (!st) st = tf_gnn_h5_put_f64(&f, "lr", id->lr);
    if (!st) st = tf_gnn_h5_put_f64(&f, "weight_decay", id->weight_decay);
    if (!st) st = tf_gnn_h5_put_i64(&f, "patience", id->patience);
    if (!st) st = tf_gnn_h5_put_i64(&f, "epoch", c->epoch);
    if (!st) st = tf_gnn_h5_put_i64(&f, "stopped", c->stopped);
    if (!st) st = tf_gnn_h5_put_i64(&f, "adam_step", c->adam_step);
    if (!st) st = tf_gnn_h5_put_i64(&f, "stop_seen", c->stop_seen);
    if (!st) st = tf_gnn_h5_put_data(&f, "weights", c->w, (int64_t)c->nw, 0);
    if (!st) st = tf_gnn_h5_put_data(&f, "adam_m", c->adam_m, (int64_t)c->nw, 0);
    if (!st) st = tf_gnn_h5_put_data(&f, "adam_v", c->adam_v, (int64_t)c->nw, 0);
    if (!st) st = tf_gnn_h5_put_data(&f, "stop_history", c->stop_hist, hist_len(id->patience), 0);
    int cst = tf_gnn_h5_close(&f);
    return st ? st : cst;
}

int tf_gnn_ckpt_write(const char *path, const tf_gnn_ckpt *c)
{
    int st = tf_gnn_write_atomic(path, write_file, (void *)c);
    return st ? tf_fail_prefix(st, "--checkpoint") : TF_OK;
}

void tf_gnn_ckpt_free(tf_gnn_ckpt *c)
{
    free(c->w);
    free(c->adam_m);
    free(c->adam_v);
    free(c->stop_hist);
    memset(c, 0, sizeof *c);
}

static int in_range(const char *path, const char *name, int64_t v, int64_t lo, int64_t hi)
{
    if (v < lo || v > hi)
        return tf_fail(TF_ERR_FORMAT, "%s: %s = %lld, expected %lld..%lld", path, name,
                       (long long)v, (long long)lo, (long long)hi);
    return TF_OK;
}

static int read_header(tf_gnn_h5 *f, const char *path, tf_gnn_ckpt *c)
{
    tf_gnn_ckpt_id *id = &c->id;
    char fmt[64];
    int64_t version;
    int st = tf_gnn_h5_get_str(f, "format", fmt, sizeof fmt);
    if (st || strcmp(fmt, FORMAT) != 0)
        return tf_fail(TF_ERR_FORMAT, "%s: not a twoface-gcn checkpoint", path);
    if ((st = tf_gnn_h5_get_i64(f, "version", &version)))
        return st;
    if (version != VERSION)
        return tf_fail(TF_ERR_FORMAT, "%s: checkpoint version %lld, this program reads %d", path,
                       (long long)version, VERSION);
    if (!st) st = tf_gnn_h5_get_u64(f, "fingerprint", &id->fingerprint);
    if (!st) st = tf_gnn_h5_get_i64(f, "nodes", &id->nodes);
    if (!st) st = tf_gnn_h5_get_i64(f, "features", &id->features);
    if (!st) st = tf_gnn_h5_get_i64(f, "layers", &id->layers);
    if (!st) st = tf_gnn_h5_get_i64(f, "hidden", &id->hidden);
    if (!st) st = tf_gnn_h5_get_i64(f, "classes", &id->classes);
    if (!st) st = tf_gnn_h5_get_u64(f, "seed", &id->seed);
    if (!st) st = tf_gnn_h5_get_f64(f, "dropout", &id->dropout);
    if (!st) st = tf_gnn_h5_get_f64(f, "lr", &id->lr);
    if (!st) st = tf_gnn_h5_get_f64(f, "weight_decay", &id->weight_decay);
    if (!st) st = tf_gnn_h5_get_i64(f, "patience", &id->patience);
    if (!st) st = tf_gnn_h5_get_i64(f, "epoch", &c->epoch);
    if (!st) st = tf_gnn_h5_get_i64(f, "stopped", &c->stopped);
    if (!st) st = tf_gnn_h5_get_i64(f, "adam_step", &c->adam_step);
    if (!st) st = tf_gnn_h5_get_i64(f, "stop_seen", &c->stop_seen);
    if (!st) st = in_range(path, "layers", id->layers, 2, TF_GNN_MAX_LAYERS);
    if (!st) st = in_range(path, "hidden", id->hidden, 1, TF_GNN_MAX_WIDTH);
    if (!st) st = in_range(path, "classes", id->classes, 1, TF_GNN_MAX_CLASSES);
    if (!st) st = in_range(path, "features", id->features, 0, INT32_MAX);
    if (!st) st = in_range(path, "nodes", id->nodes, 0, INT64_MAX);
    if (!st) st = in_range(path, "patience", id->patience, 0, 1000000);
    if (!st) st = in_range(path, "epoch", c->epoch, 0, INT64_MAX);
    if (!st) st = in_range(path, "stopped", c->stopped, 0, 1);
    /* One Adam step per epoch, one validation loss per epoch. */
    if (!st) st = in_range(path, "adam_step", c->adam_step, c->epoch, c->epoch);
    if (!st) st = in_range(path, "stop_seen", c->stop_seen, 0, c->epoch);
    return st;
}

/* Every stored number finite (and Adam's second moment, a mean of squares,
 * not negative): the file has no checksum, and a damaged value would
 * otherwise surface epochs later as a non-finite loss blamed on the
 * features or the learning rate. */
static int check_values(const char *path, const char *name, const double *v, size_t n,
                        int nonneg)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]) || (nonneg && v[i] < 0))
            return tf_fail(TF_ERR_FORMAT,
                           "%s: dataset /%s, element %zu: %g is not %s; the checkpoint is damaged",
                           path, name, i, v[i], nonneg ? "a finite number >= 0" : "finite");
    return TF_OK;
}

int tf_gnn_ckpt_read(const char *path, tf_gnn_ckpt *c)
{
    memset(c, 0, sizeof *c);
    tf_gnn_h5 f;
    int st = tf_gnn_h5_open(&f, path);
    if (st)
        return tf_fail_prefix(st, "--resume");
    st = read_header(&f, path, c);
    if (!st) {
        /* Sizes first: a damaged shape must not ask for terabytes. */
        c->nw = tf_gnn_ckpt_nweights(&c->id);
        int64_t len = tf_gnn_h5_data_len(&f, "weights");
        if (len < 0)
            st = TF_ERR_FORMAT;
        else if ((uint64_t)len != c->nw)
            st = tf_fail(TF_ERR_FORMAT, "%s: %lld weights, but the model's shape has %zu", path,
                         (long long)len, c->nw);
    }
    if (!st) {
        size_t nh = (size_t)hist_len(c->id.patience);
        c->w = malloc(c->nw * sizeof *c->w);
        c->adam_m = malloc(c->nw * sizeof *c->adam_m);
        c->adam_v = malloc(c->nw * sizeof *c->adam_v);
        c->stop_hist = malloc(nh * sizeof *c->stop_hist);
        if (!c->w || !c->adam_m || !c->adam_v || !c->stop_hist)
            st = tf_fail(TF_ERR_NOMEM, "%s: out of memory for %zu weights", path, c->nw);
        if (!st) st = tf_gnn_h5_get_data(&f, "weights", c->w, (int64_t)c->nw);
        if (!st) st = tf_gnn_h5_get_data(&f, "adam_m", c->adam_m, (int64_t)c->nw);
        if (!st) st = tf_gnn_h5_get_data(&f, "adam_v", c->adam_v, (int64_t)c->nw);
        if (!st) st = tf_gnn_h5_get_data(&f, "stop_history", c->stop_hist, (int64_t)nh);
        if (!st) st = check_values(path, "weights", c->w, c->nw, 0);
        if (!st) st = check_values(path, "adam_m", c->adam_m, c->nw, 0);
        if (!st) st = check_values(path, "adam_v", c->adam_v, c->nw, 1);
        if (!st) st = check_values(path, "stop_history", c->stop_hist, nh, 0);
    }
    tf_gnn_h5_close(&f);
    if (st) {
        tf_gnn_ckpt_free(c);
        return tf_fail_prefix(st, "--resume");
    }
    return TF_OK;
}

int tf_gnn_ckpt_match(const char *path, const tf_gnn_ckpt_id *s, const tf_gnn_ckpt_id *n)
{
    const char *pre = "--resume";
    if (s->fingerprint != n->fingerprint || s->nodes != n->nodes)
        return tf_fail(TF_ERR_ARG, "%s %s: the checkpoint is of another graph (%lld nodes, "
                       "fingerprint %016llx; this plan: %lld nodes, %016llx)", pre, path,
                       (long long)s->nodes, (unsigned long long)s->fingerprint,
                       (long long)n->nodes, (unsigned long long)n->fingerprint);
    if (s->features != n->features)
        return tf_fail(TF_ERR_ARG, "%s %s: the checkpoint has %lld input features, these "
                       "features have %lld", pre, path, (long long)s->features,
                       (long long)n->features);
    if (s->layers != n->layers || s->hidden != n->hidden || s->classes != n->classes)
        return tf_fail(TF_ERR_ARG, "%s %s: the checkpoint's model is --layers %lld --hidden %lld "
                       "with %lld classes, this run's --layers %lld --hidden %lld with %lld", pre,
                       path, (long long)s->layers, (long long)s->hidden, (long long)s->classes,
                       (long long)n->layers, (long long)n->hidden, (long long)n->classes);
    if (s->seed != n->seed || s->dropout != n->dropout || s->lr != n->lr ||
        s->weight_decay != n->weight_decay || s->patience != n->patience)
        return tf_fail(TF_ERR_ARG, "%s %s: the checkpoint was trained with --seed %llu --dropout "
                       "%g --lr %g --weight-decay %g --patience %lld; give the same", pre, path,
                       (unsigned long long)s->seed, s->dropout, s->lr, s->weight_decay,
                       (long long)s->patience);
    return TF_OK;
}
