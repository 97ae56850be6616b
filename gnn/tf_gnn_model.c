#include "tf_gnn_model.h"
#include "tf_error.h"
#include "tf_exec.h"
#include "tf_gnn_dense.h"
#include "tf_gnn_init.h"
#include "tf_meminfo.h"
#include "tf_node.h"
#include "tf_gnn_rng.h"
#include "tf_kernels.h"

#include <stdlib.h>
#include <math.h>
#include <string.h>

#define NSUMS (2 * TF_GNN_NSPLITS)

/* Every activation and gradient array: SpMM outputs among them are
 * streamed by the kernels (tf_kern_c_mode). */
static float *alloc_rows(int64_t nrows, int k) { return tf_kern_alloc_c(nrows, k); }

/* What every product relies on: C rows = B rows for both plans (a square
 * plan's bands, and a backward plan made with the forward's), and a plan
 * that serves A^T: the forward one when symmetric, else the backward one.
 * Local checks of headers every rank holds alike, except the bands. */
static int check_plans(tf_handle *fwd, tf_handle *bwd)
{
    int64_t r0, nr, b0, nb;
    tf_get_rows(fwd, &r0, &nr);
    tf_get_brows(fwd, &b0, &nb);
    if (tf_get_m(fwd) != tf_get_n(fwd))
        return tf_fail(TF_ERR_ARG, "the plan's matrix is %lld x %lld: a GCN needs the square "
                       "adjacency of a graph", (long long)tf_get_m(fwd), (long long)tf_get_n(fwd));
    if (r0 != b0 || nr != nb)
        return tf_fail(TF_ERR_ARG, "rank %d: the plan's rows of C (%lld..) differ from its rows "
                       "of B (%lld..)", tf_get_rank(fwd), (long long)r0, (long long)b0);
    if (bwd) {
        int st = tf_check_backward(fwd, bwd);
        if (st)
            return st;
        int64_t s0, ns, c0, nc;
        tf_get_rows(bwd, &s0, &ns);
        tf_get_brows(bwd, &c0, &nc);
        if (s0 != r0 || ns != nr || c0 != r0 || nc != nr)
            return tf_fail(TF_ERR_ARG, "rank %d: the backward plan's row bands differ from the "
                           "forward plan's", tf_get_rank(fwd));
    }
    else if (!tf_get_symmetric(fwd))
        return tf_fail(TF_ERR_ARG, "the plan's matrix is not symmetric, so the backward pass "
                       "needs a plan of its transpose (twoface-gcn --backward-plan; twoface-plan "
                       "--transpose --bands-from)");
    return TF_OK;
}

int tf_gnn_model_create(tf_handle *fwd, tf_handle *bwd, const tf_algo_spec *spec,
                        const tf_gnn_data *d, const tf_gnn_hparams *hp, tf_gnn_model *m)
{
    memset(m, 0, sizeof *m);
    m->d = d;
    m->comm = tf_get_comm(fwd);
    m->layers = hp->layers ? hp->layers : 2;
    m->hidden = hp->hidden;
    m->classes = d->classes;
    m->nfeat = d->x.ncols;
    m->ntrain = d->count[TF_GNN_TRAIN];
    m->dropout = hp->dropout;
    m->weight_decay = hp->weight_decay;
    m->seed = hp->seed;
    m->bwd_shared = bwd == NULL;
    int st = TF_OK;
    if (m->layers < 2 || m->layers > TF_GNN_MAX_LAYERS)
        st = tf_fail(TF_ERR_ARG, "%d layers: a GCN here has 2..%d", m->layers, TF_GNN_MAX_LAYERS);
    const int L = st ? 2 : m->layers;
    m->off[0] = 0;
    for (int l = 0; l < L; l++) {
        size_t in = l == 0 ? (size_t)m->nfeat : (size_t)m->hidden;
        size_t out = l == L - 1 ? (size_t)m->classes : (size_t)m->hidden;
        m->off[l + 1] = m->off[l] + in * out;
    }
    m->nw0 = m->off[1];
    m->nw = m->off[L];
    if (!st)
        st = check_plans(fwd, bwd);
    /* The first layer's weights follow the features' width, which a
     * Matrix Market size line declares (2^31 - 1 columns in a file of a
     * hundred bytes): every rank holds five arrays of them (weights,
     * gradient, its sum, Adam's two moments), and initialising the first
     * touches all of it before anything can fail. */
    const int on_node = tf_node_ranks(m->comm);
    if (!st) {
        double need = 5.0 * (double)m->nw * (double)sizeof *m->w * on_node;
        st = tf_mem_check(need >= 0x1p62 ? (int64_t)1 << 62 : (int64_t)need, 0);
        if (st)
            tf_fail_prefix(st, "the model's weights (%lld features, %d classes: %zu weights, "
                           "5 copies on each of %d ranks on this node)", (long long)m->nfeat,
                           m->classes, m->nw, on_node);
    }
    if (!st) {
        m->w = malloc(m->nw * sizeof *m->w);
        m->grad = malloc(m->nw * sizeof *m->grad);
        m->red = malloc((m->nw + NSUMS) * sizeof *m->red);
        int64_t nr = d->nrows;
        int ok = m->w && m->grad && m->red;
        m->h = alloc_rows(nr, m->hidden);
        for (int l = 0; l < L - 1; l++)
            ok = ok && (m->r[l] = alloc_rows(nr, m->hidden));
        m->dt0 = alloc_rows(nr, m->hidden);
        m->z = alloc_rows(nr, m->classes);
        m->dt1 = alloc_rows(nr, m->classes);
        if (!ok || !m->h || !m->dt0 || !m->z || !m->dt1)
            st = tf_fail(TF_ERR_NOMEM, "rank %d: out of memory for the model (%zu weights, %lld "
                         "rows, %d layers)", tf_get_rank(fwd), m->nw, (long long)nr, L);
    }
    st = tf_agree(m->comm, st);
    if (!st)
        st = tf_gnn_spmm_create(spec, fwd, m->hidden, hp->threads, hp->comm, &m->fh);
    if (!st)
        st = tf_gnn_spmm_create(spec, fwd, m->classes, hp->threads, hp->comm, &m->fc);
    if (!st && bwd)
        st = tf_gnn_spmm_create(spec, bwd, m->hidden, hp->threads, hp->comm, &m->bh);
    if (!st && bwd)
        st = tf_gnn_spmm_create(spec, bwd, m->classes, hp->threads, hp->comm, &m->bc);
    if (st) {
        tf_gnn_model_free(m);
        return st;
    }
    for (int l = 0; l < L; l++) {
        int64_t in = l == 0 ? m->nfeat : m->hidden, out = l == L - 1 ? m->classes : m->hidden;
        tf_gnn_glorot(m->seed, l, in, out, m->w + m->off[l]);
    }
    return TF_OK;
}

void tf_gnn_model_free(tf_gnn_model *m)
{
    tf_gnn_spmm_free(&m->bc);
    tf_gnn_spmm_free(&m->bh);
    tf_gnn_spmm_free(&m->fc);
    tf_gnn_spmm_free(&m->fh);
    free(m->w);
    free(m->grad);
    free(m->red);
    free(m->h);
    for (int l = 0; l < TF_GNN_MAX_LAYERS; l++)
        free(m->r[l]);
    free(m->dt0);
    free(m->z);
    free(m->dt1);
    memset(m, 0, sizeof *m);
}

double tf_gnn_model_spmm_seconds(const tf_gnn_model *m)
{
    return m->fh.seconds + m->fc.seconds + m->bh.seconds + m->bc.seconds;
}

/* Z from the current weights; dropout with the masks of `epoch` if train. */
static int forward(tf_gnn_model *m, int64_t epoch, int train)
{
    const tf_gnn_data *d = m->d;
    const int hd = m->hidden, L = m->layers;
    tf_gnn_drop in = {tf_gnn_rng_key(m->seed, (uint64_t)epoch, TF_GNN_RNG_DROP_INPUT),
                      train ? m->dropout : 0};
    tf_gnn_xw(&d->x, d->ids, &in, m->w, hd, tf_gnn_spmm_b(&m->fh));
    int st = tf_gnn_spmm_run(&m->fh, m->h);
    for (int l = 1; l < L && !st; l++) {
        tf_gnn_drop hid = {tf_gnn_rng_key(m->seed, (uint64_t)epoch, tf_gnn_rng_hidden_stream(l)),
                           train ? m->dropout : 0};
        float *r = m->r[l - 1];
        tf_gnn_relu_drop(m->h, d->nrows, hd, d->ids, &hid, r);
        if (l < L - 1) {
            tf_gnn_hw(r, d->nrows, hd, m->w + m->off[l], hd, tf_gnn_spmm_b(&m->fh));
            st = tf_gnn_spmm_run(&m->fh, m->h);
        } else {
            tf_gnn_hw(r, d->nrows, hd, m->w + m->off[l], m->classes, tf_gnn_spmm_b(&m->fc));
            st = tf_gnn_spmm_run(&m->fc, m->z);
        }
    }
    return st;
}

static double sum_sq(const double *w, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += w[i] * w[i];
    return s;
}

static int allreduce(tf_gnn_model *m, double *buf, int n)
{
    double t0 = MPI_Wtime();
    int rc = MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_SUM, m->comm);
    m->t_allreduce += MPI_Wtime() - t0;
    return rc == MPI_SUCCESS ? TF_OK : tf_fail(TF_ERR_MPI, "MPI_Allreduce of the gradients failed");
}

static void pack_sums(const tf_gnn_sums *s, double *out)
{
    memcpy(out, s->loss, sizeof s->loss);
    memcpy(out + TF_GNN_NSPLITS, s->correct, sizeof s->correct);
}

static double train_loss(const tf_gnn_model *m, double loss_sum)
{
    return loss_sum / (double)m->ntrain + 0.5 * m->weight_decay * sum_sq(m->w, m->nw0);
}

/* dh = (dt . W_l^T) * [R_l > 0] / (1 - p): back through layer l's product,
 * its ReLU and its dropout mask (R_l > 0 exactly where both let it through). */
static void back_through_relu(const tf_gnn_model *m, const float *dt, int width, int l, float *dh)
{
    const int64_t nrows = m->d->nrows;
    const float *r = m->r[l - 1];
    tf_gnn_gwt(dt, nrows, width, m->w + m->off[l], m->hidden, dh);
    const double scale = 1.0 / (1.0 - m->dropout);
    for (int64_t i = 0; i < nrows * m->hidden; i++)
        dh[i] = r[i] > 0 ? (float)(dh[i] * scale) : 0.0f;
}

int tf_gnn_model_grad(tf_gnn_model *m, int64_t epoch, double *loss)
{
    const tf_gnn_data *d = m->d;
    const int L = m->layers, hd = m->hidden;
    int st = forward(m, epoch, 1);
    if (st)
        return st;
    tf_gnn_spmm *bh = m->bwd_shared ? &m->fh : &m->bh, *bc = m->bwd_shared ? &m->fc : &m->bc;
    tf_gnn_sums s;
    tf_gnn_xent(m->z, d, m->ntrain, &s, tf_gnn_spmm_b(bc));
    if ((st = tf_gnn_spmm_run(bc, m->dt1)))
        return st;
    double *g = m->red;
    memset(g, 0, m->nw * sizeof *g);
    tf_gnn_htg(m->r[L - 2], d->nrows, hd, m->dt1, m->classes, g + m->off[L - 1]);
    back_through_relu(m, m->dt1, m->classes, L - 1, tf_gnn_spmm_b(bh));
    for (int l = L - 2; l >= 1; l--) {
        if ((st = tf_gnn_spmm_run(bh, m->dt0)))
            return st;
        tf_gnn_htg(m->r[l - 1], d->nrows, hd, m->dt0, hd, g + m->off[l]);
        back_through_relu(m, m->dt0, hd, l, tf_gnn_spmm_b(bh));
    }
    if ((st = tf_gnn_spmm_run(bh, m->dt0)))
        return st;
    tf_gnn_drop in = {tf_gnn_rng_key(m->seed, (uint64_t)epoch, TF_GNN_RNG_DROP_INPUT), m->dropout};
    tf_gnn_xtg(&d->x, d->ids, &in, m->dt0, hd, g);
    pack_sums(&s, g + m->nw);
    if ((st = allreduce(m, g, (int)(m->nw + NSUMS))))
        return st;
    for (size_t i = 0; i < m->nw; i++)
        m->grad[i] = g[i] + (i < m->nw0 ? m->weight_decay * m->w[i] : 0);
    *loss = train_loss(m, g[m->nw + TF_GNN_TRAIN]);
    return TF_OK;
}

/* The forward pass and the loss/accuracy sums over every split, summed over
 * ranks into buf (NSUMS entries). */
static int forward_sums(tf_gnn_model *m, int64_t epoch, int train, double *buf)
{
    int st = forward(m, epoch, train);
    if (st)
        return st;
    tf_gnn_sums s;
    tf_gnn_xent(m->z, m->d, m->ntrain, &s, NULL);
    pack_sums(&s, buf);
    return allreduce(m, buf, NSUMS);
}

int tf_gnn_model_loss(tf_gnn_model *m, int64_t epoch, double *loss)
{
    double buf[NSUMS];
    int st = forward_sums(m, epoch, 1, buf);
    if (st)
        return st;
    *loss = train_loss(m, buf[TF_GNN_TRAIN]);
    return TF_OK;
}

int tf_gnn_model_eval(tf_gnn_model *m, tf_gnn_eval *e)
{
    double buf[NSUMS];
    int st = forward_sums(m, 0, 0, buf);
    if (st)
        return st;
    double wd = 0.5 * m->weight_decay * sum_sq(m->w, m->nw0);
    for (int sp = 0; sp < TF_GNN_NSPLITS; sp++) {
        double cnt = (double)m->d->count[sp];
        /* An empty split has no loss or accuracy: NaN, never a fake 0 (and
         * early stopping on a NaN validation loss never fires). */
        e->loss[sp] = cnt > 0 ? buf[sp] / cnt + wd : NAN;
        e->acc[sp] = cnt > 0 ? buf[TF_GNN_NSPLITS + sp] / cnt : NAN;
    }
    return TF_OK;
}
