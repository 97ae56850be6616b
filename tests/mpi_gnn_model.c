/* The GCN trainer's model (gnn/) at any number of ranks (run at 1-4):
 * gradients of the whole model (2, 3 and 4 layers), with dropout, against a serial
 * dense reference written here and against finite differences of the
 * distributed loss; a non-symmetric graph with a backward plan of A^T, and
 * without one (refused); every SpMM algorithm giving the same losses; and
 * the library side of a training loop: contexts of different K on one
 * handle, interleaved, with C written into another context's B.
 *
 * Plans are built in memory for the communicator's size; checks that could
 * differ between ranks are reduced first (CHECK_ALL) so no rank hangs. */
#include "tf_test.h"

#include "tf_error.h"
#include "tf_exec.h"
#include "tf_gnn_dense.h"
#include "tf_gnn_init.h"
#include "tf_gnn_model.h"
#include "tf_gnn_train.h"
#include "tf_gnn_rng.h"
#include "tf_gnn_rows.h"
#include "tf_normalize.h"
#include "tf_planner.h"
#include "tf_prepare.h"
#include "twoface.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_ALL(cond, ...)                                                                  \
    do {                                                                                       \
        int ok_ = (cond) ? 1 : 0, all_ = 0;                                                    \
        char why_[512] = "failed on another rank";                                            \
        if (!ok_)                                                                              \
            snprintf(why_, sizeof why_, __VA_ARGS__);                                          \
        MPI_Allreduce(&ok_, &all_, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);                       \
        ck_assert_msg(all_, "%s", why_);                                                       \
    } while (0)

static int nranks(void)
{
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    return p;
}

static uint64_t mix(uint64_t *h)
{
    *h = tf_gnn_rng_node(*h, 0x51ed);
    return *h;
}

/* A graph on n nodes with about `edges` edges (values 1; symmetric: both
 * directions, else one direction with weights in [0.5, 1.5)). */
static void make_graph(tf_csr *a, int64_t n, int64_t edges, int symmetric, uint64_t seed)
{
    tf_coo coo;
    ck_assert_int_eq(tf_coo_init(&coo, n, n, 2 * edges + 1), TF_OK);
    uint64_t h = seed;
    for (int64_t e = 0; e < edges; e++) {
        int32_t i = (int32_t)(mix(&h) % (uint64_t)n), j = (int32_t)(mix(&h) % (uint64_t)n);
        if (i == j)
            continue;
        double v = symmetric ? 1.0 : 0.5 + (double)(mix(&h) >> 11) * 0x1.0p-53;
        ck_assert_int_eq(tf_coo_push(&coo, i, j, v), TF_OK);
        if (symmetric)
            ck_assert_int_eq(tf_coo_push(&coo, j, i, v), TF_OK);
    }
    ck_assert_int_eq(tf_csr_from_coo(a, &coo), TF_OK);
    tf_coo_free(&coo);
    /* Duplicates were summed: put symmetric graphs back to a 0/1 pattern. */
    if (symmetric)
        for (int64_t e = 0; e < a->nnz; e++)
            a->val[e] = 1.0f;
}

static void copy_csr(const tf_csr *a, tf_csr *b)
{
    ck_assert_int_eq(tf_csr_alloc(b, a->nrows, a->ncols, a->nnz), TF_OK);
    memcpy(b->rowptr, a->rowptr, (size_t)(a->nrows + 1) * sizeof *b->rowptr);
    memcpy(b->col, a->col, (size_t)a->nnz * sizeof *b->col);
    memcpy(b->val, a->val, (size_t)a->nnz * sizeof *b->val);
}

/* A plan of the gcn-normalised a (or of its transpose) for this communicator. */
static int open_plan(const tf_csr *a, int normalization, int transpose, tf_handle **h)
{
    tf_csr c;
    copy_csr(a, &c);
    tf_plan_options o;
    tf_plan_options_default(&o);
    o.nranks = nranks();
    o.k = 16;
    tf_plan plan;
    int st = tf_matrix_prepare(&c, normalization, transpose, &o);
    if (!st)
        st = tf_plan_build(&c, &o, &plan);
    tf_csr_free(&c);
    st = tf_agree(MPI_COMM_WORLD, st);
    if (st)
        return st;
    st = tf_open_plan(&plan, MPI_COMM_WORLD, h);
    tf_plan_free(&plan);
    return st;
}

/* ---- Data: the same global inputs on every rank, each keeps its rows ----- */

typedef struct {
    int64_t n, nfeat;
    int classes;
    tf_csr x;        /* n x nfeat, all nodes */
    int32_t *label;  /* n */
    int8_t *split;   /* n */
} global_data;

static void make_inputs(global_data *g, int64_t n, int64_t nfeat, int classes, uint64_t seed)
{
    g->n = n;
    g->nfeat = nfeat;
    g->classes = classes;
    tf_test_random_csr(&g->x, n, nfeat, n * nfeat / 2 + 1, seed);
    g->label = malloc((size_t)n * sizeof *g->label);
    g->split = malloc((size_t)n * sizeof *g->split);
    ck_assert(g->label && g->split);
    for (int64_t i = 0; i < n; i++) {
        g->label[i] = (int32_t)((i * 7 + 3) % classes);
        int r = (int)(i % 5);
        g->split[i] = r == 0 || r == 3 ? TF_GNN_TRAIN : r == 1 ? TF_GNN_VAL
                      : r == 2         ? TF_GNN_TEST
                                       : TF_GNN_NONE;
    }
}

static void free_inputs(global_data *g)
{
    tf_csr_free(&g->x);
    free(g->label);
    free(g->split);
}

static void local_data(const global_data *g, const int64_t *ids, int64_t nrows, tf_gnn_data *d)
{
    memset(d, 0, sizeof *d);
    d->n = g->n;
    d->nrows = nrows;
    d->ids = ids;
    d->classes = g->classes;
    int64_t nnz = 0;
    for (int64_t i = 0; i < nrows; i++)
        nnz += g->x.rowptr[ids[i] + 1] - g->x.rowptr[ids[i]];
    ck_assert_int_eq(tf_csr_alloc(&d->x, nrows, g->nfeat, nnz), TF_OK);
    d->label = malloc((size_t)(nrows + 1) * sizeof *d->label);
    d->split = malloc((size_t)(nrows + 1) * sizeof *d->split);
    int64_t e = 0;
    for (int64_t i = 0; i < nrows; i++) {
        for (int64_t q = g->x.rowptr[ids[i]]; q < g->x.rowptr[ids[i] + 1]; q++) {
            d->x.col[e] = g->x.col[q];
            d->x.val[e++] = g->x.val[q];
        }
        d->x.rowptr[i + 1] = e;
        d->label[i] = g->label[ids[i]];
        d->split[i] = g->split[ids[i]];
    }
    for (int64_t i = 0; i < g->n; i++)
        d->count[g->split[i]]++;
}

/* ---- The serial reference: dense, double, written from the maths -------- */

typedef struct {
    double loss;
    double *grad; /* W0 then W1, like the model */
} reference;

static double *dzeros(int64_t n)
{
    double *p = calloc((size_t)(n > 0 ? n : 1), sizeof *p);
    ck_assert_ptr_nonnull(p);
    return p;
}

static double *dense_a(const tf_csr *ahat, int64_t n)
{
    double *A = dzeros(n * n);
    for (int64_t i = 0; i < n; i++)
        for (int64_t e = ahat->rowptr[i]; e < ahat->rowptr[i + 1]; e++)
            A[i * n + ahat->col[e]] = ahat->val[e];
    return A;
}

/* out (n x k) = A (n x n) . in (n x k), or A^T . in. */
static void dense_spmm(const double *A, int64_t n, int transpose, const double *in, int k,
                       double *out)
{
    memset(out, 0, (size_t)(n * k) * sizeof *out);
    for (int64_t i = 0; i < n; i++)
        for (int j = 0; j < k; j++)
            for (int64_t q = 0; q < n; q++)
                out[i * k + j] += (transpose ? A[q * n + i] : A[i * n + q]) * in[q * k + j];
}

/* The L-layer model (tf_gnn_model.h) in dense double: widths F, hid, ..,
 * hid, C; hidden layer l's mask from stream tf_gnn_rng_hidden_stream(l). */
static void reference_grad(const tf_csr *ahat, const global_data *g, const double *w, int hid,
                           int L, double p, double wd, uint64_t seed, int64_t epoch,
                           reference *r)
{
    const int64_t n = g->n, F = g->nfeat;
    const int C = g->classes;
    int width[TF_GNN_MAX_LAYERS + 1];
    size_t off[TF_GNN_MAX_LAYERS + 1] = {0};
    for (int l = 0; l <= L; l++)
        width[l] = l == 0 ? (int)F : l == L ? C : hid;
    for (int l = 0; l < L; l++)
        off[l + 1] = off[l] + (size_t)width[l] * (size_t)width[l + 1];
    double *A = dense_a(ahat, n);
    /* in[l]: the input of layer l (dropped X, then R_1 ..); pre[l]: H_l; mask[l]: M_l. */
    double *in[TF_GNN_MAX_LAYERS], *pre[TF_GNN_MAX_LAYERS] = {0}, *mask[TF_GNN_MAX_LAYERS] = {0};
    in[0] = dzeros(n * F);
    tf_gnn_drop din = {tf_gnn_rng_key(seed, (uint64_t)epoch, TF_GNN_RNG_DROP_INPUT), p};
    for (int64_t i = 0; i < n; i++)
        for (int64_t e = g->x.rowptr[i]; e < g->x.rowptr[i + 1]; e++)
            in[0][i * F + g->x.col[e]] = g->x.val[e] *
                tf_gnn_drop_factor(&din, tf_gnn_rng_node(din.key, (uint64_t)i), g->x.col[e]);
    double *Z = dzeros(n * C), *G = dzeros(n * C);
    for (int l = 0; l < L; l++) {
        const int a = width[l], b = width[l + 1];
        double *T = dzeros(n * b), *Hl = dzeros(n * b);
        for (int64_t i = 0; i < n; i++)
            for (int j = 0; j < b; j++)
                for (int q = 0; q < a; q++)
                    T[i * b + j] += in[l][i * a + q] * w[off[l] + (size_t)q * b + j];
        dense_spmm(A, n, 0, T, b, Hl);
        free(T);
        if (l == L - 1) {
            memcpy(Z, Hl, (size_t)(n * C) * sizeof *Z);
            free(Hl);
            break;
        }
        tf_gnn_drop dh = {tf_gnn_rng_key(seed, (uint64_t)epoch, tf_gnn_rng_hidden_stream(l + 1)),
                          p};
        pre[l + 1] = Hl;
        mask[l + 1] = dzeros(n * hid);
        in[l + 1] = dzeros(n * hid);
        for (int64_t i = 0; i < n; i++)
            for (int j = 0; j < hid; j++) {
                double mk = tf_gnn_drop_factor(&dh, tf_gnn_rng_node(dh.key, (uint64_t)i), j);
                mask[l + 1][i * hid + j] = mk;
                in[l + 1][i * hid + j] = (Hl[i * hid + j] > 0 ? Hl[i * hid + j] : 0) * mk;
            }
    }
    double ntrain = 0, loss = 0;
    for (int64_t i = 0; i < n; i++)
        ntrain += g->split[i] == TF_GNN_TRAIN;
    for (int64_t i = 0; i < n; i++) {
        if (g->split[i] != TF_GNN_TRAIN)
            continue;
        double mx = Z[i * C], s = 0;
        for (int c = 1; c < C; c++)
            mx = Z[i * C + c] > mx ? Z[i * C + c] : mx;
        for (int c = 0; c < C; c++)
            s += exp(Z[i * C + c] - mx);
        loss += mx + log(s) - Z[i * C + g->label[i]];
        for (int c = 0; c < C; c++)
            G[i * C + c] = (exp(Z[i * C + c] - mx) / s - (c == g->label[i])) / ntrain;
    }
    double sq = 0;
    for (size_t q = 0; q < off[1]; q++)
        sq += w[q] * w[q];
    r->loss = loss / ntrain + 0.5 * wd * sq;
    r->grad = dzeros((int64_t)off[L]);
    double *D = dzeros(n * C); /* dT_l = A^T . dH_{l+1} */
    dense_spmm(A, n, 1, G, C, D);
    for (int l = L - 1; l >= 0; l--) {
        const int a = width[l], b = width[l + 1];
        for (int q = 0; q < a; q++)
            for (int j = 0; j < b; j++)
                for (int64_t i = 0; i < n; i++)
                    r->grad[off[l] + (size_t)q * b + j] += in[l][i * a + q] * D[i * b + j];
        if (l == 0)
            break;
        double *DH = dzeros(n * a), *Dn = dzeros(n * a);
        for (int64_t i = 0; i < n; i++)
            for (int q = 0; q < a; q++) {
                double dr = 0;
                for (int j = 0; j < b; j++)
                    dr += D[i * b + j] * w[off[l] + (size_t)q * b + j];
                DH[i * a + q] = pre[l][i * a + q] > 0 ? dr * mask[l][i * a + q] : 0;
            }
        dense_spmm(A, n, 1, DH, a, Dn);
        free(DH);
        free(D);
        D = Dn;
    }
    for (size_t q = 0; q < off[1]; q++)
        r->grad[q] += wd * w[q];
    free(D), free(A), free(Z), free(G);
    for (int l = 0; l < L; l++)
        free(in[l]), free(pre[l]), free(mask[l]);
}

/* ---- Set-up of one case ---------------------------------------------------- */

typedef struct {
    tf_csr a, ahat;
    tf_handle *fwd, *bwd;
    global_data g;
    int64_t *ids, nrows;
    tf_gnn_data d;
    tf_gnn_model m;
} gcase;

/* What the cases' SpMMs move B rows as (tf_gnn_hparams.comm). */
static int g_comm = TF_COMM_PLAN;

static int case_open(gcase *c, int64_t n, int64_t edges, int symmetric, int with_bwd,
                     const char *algo, int hidden, double dropout, int layers)
{
    memset(c, 0, sizeof *c);
    make_graph(&c->a, n, edges, symmetric, 11 + (uint64_t)n);
    copy_csr(&c->a, &c->ahat);
    ck_assert_int_eq(tf_normalize(&c->ahat, TF_NORM_GCN), TF_OK);
    ck_assert_int_eq(open_plan(&c->a, TF_NORM_GCN, 0, &c->fwd), TF_OK);
    if (with_bwd)
        ck_assert_int_eq(open_plan(&c->a, TF_NORM_GCN, 1, &c->bwd), TF_OK);
    make_inputs(&c->g, n, 9, 3, 5 + (uint64_t)n);
    ck_assert_int_eq(tf_gnn_row_ids(c->fwd, &c->ids, &c->nrows), TF_OK);
    local_data(&c->g, c->ids, c->nrows, &c->d);
    tf_algo_spec spec;
    ck_assert_int_eq(tf_gnn_algo_parse(algo, NULL, c->fwd, &spec), TF_OK);
    tf_gnn_hparams hp = {hidden, dropout, 5e-4, 42, 1, layers, g_comm};
    return tf_gnn_model_create(c->fwd, c->bwd, &spec, &c->d, &hp, &c->m);
}

static void case_close(gcase *c)
{
    tf_gnn_model_free(&c->m);
    tf_gnn_data_free(&c->d);
    free(c->ids);
    free_inputs(&c->g);
    tf_close(c->bwd);
    tf_close(c->fwd);
    tf_csr_free(&c->a);
    tf_csr_free(&c->ahat);
}

/* max |model - reference| / max |reference| over the whole gradient. */
static double grad_error(const gcase *c, int64_t epoch)
{
    reference r;
    reference_grad(&c->ahat, &c->g, c->m.w, c->m.hidden, c->m.layers, c->m.dropout,
                   c->m.weight_decay, c->m.seed, epoch, &r);
    double num = 0, den = 0;
    for (size_t i = 0; i < c->m.nw; i++) {
        double e = fabs(c->m.grad[i] - r.grad[i]);
        num = e > num ? e : num;
        den = fabs(r.grad[i]) > den ? fabs(r.grad[i]) : den;
    }
    free(r.grad);
    return num / den;
}

static void check_against_reference(int64_t n, int64_t edges, int symmetric, const char *algo,
                                    int layers)
{
    gcase c;
    ck_assert_int_eq(case_open(&c, n, edges, symmetric, !symmetric, algo, 5, 0.5, layers),
                     TF_OK);
    for (int64_t epoch = 0; epoch < 3; epoch++) {
        double loss;
        ck_assert_int_eq(tf_gnn_model_grad(&c.m, epoch, &loss), TF_OK);
        reference r;
        reference_grad(&c.ahat, &c.g, c.m.w, c.m.hidden, c.m.layers, c.m.dropout,
                       c.m.weight_decay, c.m.seed, epoch, &r);
        free(r.grad);
        double ge = grad_error(&c, epoch);
        CHECK_ALL(ge < 1e-4 && fabs(loss - r.loss) < 1e-5 * fabs(r.loss),
                  "%s L=%d n=%lld sym=%d epoch %lld: gradient error %.3g, loss %.9g vs "
                  "reference %.9g", algo, layers, (long long)n, symmetric, (long long)epoch, ge, loss, r.loss);
        /* Move the weights so the next epoch checks another point. */
        for (size_t i = 0; i < c.m.nw; i++)
            c.m.w[i] -= 0.5 * c.m.grad[i];
    }
    case_close(&c);
}

START_TEST(gradient_matches_reference_symmetric)
{
    check_against_reference(40, 90, 1, "twoface", 2);
    check_against_reference(3, 2, 1, "twoface", 2); /* ranks without rows at P = 4 */
}
END_TEST

START_TEST(gradient_matches_reference_nonsymmetric)
{
    check_against_reference(37, 120, 0, "twoface", 2);
    check_against_reference(37, 120, 0, "p2p", 2);
}
END_TEST

/* L = 3 and 4: the extra hidden layers' products, masks and weight gradients. */
START_TEST(gradient_matches_reference_deeper)
{
    check_against_reference(40, 90, 1, "twoface", 3);
    check_against_reference(37, 120, 0, "twoface", 3);
    check_against_reference(37, 120, 0, "p2p", 4);
    check_against_reference(3, 2, 1, "twoface", 3);
}
END_TEST

/* Central differences of the distributed loss (same dropout masks) against
 * the distributed gradient, norm-wise over every weight. A difference taken
 * across the ReLU's kink measures nothing, so the graph (33 nodes) is one
 * where no hidden pre-activation lies within h of zero for these weights
 * (29 nodes has such an entry); the dense reference above checks the
 * gradient exactly on other graphs. */
static void finite_differences(int symmetric, int layers)
{
    gcase c;
    ck_assert_int_eq(case_open(&c, 33, 80, symmetric, !symmetric, "twoface", 4, 0.5, layers),
                     TF_OK);
    const int64_t epoch = 2;
    double loss;
    ck_assert_int_eq(tf_gnn_model_grad(&c.m, epoch, &loss), TF_OK);
    const double h = 1e-3;
    double num = 0, den = 0;
    for (size_t i = 0; i < c.m.nw; i++) {
        double w = c.m.w[i], lp, lm;
        c.m.w[i] = w + h;
        ck_assert_int_eq(tf_gnn_model_loss(&c.m, epoch, &lp), TF_OK);
        c.m.w[i] = w - h;
        ck_assert_int_eq(tf_gnn_model_loss(&c.m, epoch, &lm), TF_OK);
        c.m.w[i] = w;
        double fd = (lp - lm) / (2 * h);
        num += (fd - c.m.grad[i]) * (fd - c.m.grad[i]);
        den += c.m.grad[i] * c.m.grad[i];
    }
    double rel = sqrt(num / den);
    CHECK_ALL(rel < 1e-2 && den > 0, "finite differences: relative error %.3g (sym=%d, L=%d)",
              rel, symmetric, layers);
    case_close(&c);
}

START_TEST(finite_differences_symmetric) { finite_differences(1, 2); }
END_TEST

START_TEST(finite_differences_nonsymmetric) { finite_differences(0, 2); }
END_TEST

START_TEST(finite_differences_three_layers) { finite_differences(1, 3); }
END_TEST

START_TEST(nonsymmetric_without_backward_plan_fails)
{
    gcase c;
    int st = case_open(&c, 37, 120, 0, 0, "twoface", 5, 0.5, 2);
    CHECK_ALL(st == TF_ERR_ARG && strstr(tf_error_message(), "not symmetric"),
              "status %d, message '%s'", st, tf_error_message());
    case_close(&c);
}
END_TEST

START_TEST(algorithms_give_the_same_losses)
{
    const char *algos[] = {"twoface", "allgather", "shift", "p2p"};
    double first[4] = {0};
    for (int a = 0; a < 4; a++) {
        gcase c;
        ck_assert_int_eq(case_open(&c, 50, 150, 1, 0, algos[a], 6, 0.3, 3), TF_OK);
        double loss = 0;
        for (int64_t e = 0; e < 4; e++) {
            ck_assert_int_eq(tf_gnn_model_grad(&c.m, e, &loss), TF_OK);
            for (size_t i = 0; i < c.m.nw; i++)
                c.m.w[i] -= 0.1 * c.m.grad[i];
        }
        first[a] = loss;
        CHECK_ALL(fabs(loss - first[0]) <= 1e-6 * fabs(first[0]), "%s: loss %.9g, twoface %.9g",
                  algos[a], loss, first[0]);
        case_close(&c);
    }
}
END_TEST

/* A NaN in one rank's features (any cause would do: the check is on the
 * loss) stops training on every rank with the same status and line, instead
 * of training on NaN. Epoch 2: the first forward pass's ReLU maps NaN to 0,
 * but its gradient carries the NaN into every weight. */
START_TEST(non_finite_loss_stops_every_rank)
{
    gcase c;
    /* No dropout: it could drop the NaN for an epoch or more. */
    ck_assert_int_eq(case_open(&c, 37, 120, 1, 0, "twoface", 5, 0.0, 2), TF_OK);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == size - 1 && c.d.x.nnz > 0)
        c.d.x.val[0] = NAN;
    tf_gnn_train_opts o = {5, 0.01, 10};
    tf_gnn_result r;
    int st = tf_gnn_train(&c.m, &o, NULL, NULL, &r);
    CHECK_ALL(st == TF_ERR_RANGE &&
                  strstr(tf_error_message(), "epoch 2: the training loss is not finite (nan)"),
              "status %d, message '%s'", st, tf_error_message());
    case_close(&c);
}
END_TEST

/* --comm bf16: the forward and backward products move bf16 rows (all four
 * SpMMs), the loss and gradient stay near the float64 reference (each
 * remote product off by at most 2^-8 relative), exact at one rank where
 * nothing travels; twoface and p2p, a non-symmetric graph (backward plan). */
START_TEST(bf16_training_stays_near_the_reference)
{
    const char *algos[] = {"twoface", "p2p"};
    for (int x = 0; x < 2; x++) {
        g_comm = TF_COMM_BF16;
        gcase c;
        int st = case_open(&c, 37, 120, 0, 1, algos[x], 5, 0.5, 2);
        g_comm = TF_COMM_PLAN;
        ck_assert_int_eq(st, TF_OK);
        ck_assert_int_eq(tf_algo_comm(c.m.fh.a), TF_COMM_BF16);
        ck_assert_int_eq(tf_algo_comm(c.m.fc.a), TF_COMM_BF16);
        ck_assert_int_eq(tf_algo_comm(c.m.bh.a), TF_COMM_BF16);
        ck_assert_int_eq(tf_algo_comm(c.m.bc.a), TF_COMM_BF16);
        for (int64_t epoch = 0; epoch < 3; epoch++) {
            double loss;
            ck_assert_int_eq(tf_gnn_model_grad(&c.m, epoch, &loss), TF_OK);
            reference r;
            reference_grad(&c.ahat, &c.g, c.m.w, c.m.hidden, c.m.layers, c.m.dropout, c.m.weight_decay,
                           c.m.seed, epoch, &r);
            free(r.grad);
            double ge = grad_error(&c, epoch);
            double tol = nranks() == 1 ? 1e-4 : 2e-2;
            CHECK_ALL(ge < tol && fabs(loss - r.loss) < tol * fabs(r.loss),
                      "%s epoch %lld: gradient error %.3g, loss %.9g vs reference %.9g",
                      algos[x], (long long)epoch, ge, loss, r.loss);
            for (size_t i = 0; i < c.m.nw; i++)
                c.m.w[i] -= 0.5 * c.m.grad[i];
        }
        case_close(&c);
    }
}
END_TEST

/* ---- The library side: contexts of different K on one handle ------------- */

static float bval(int64_t row, int j, int salt)
{
    return (float)((row * 13 + j * 7 + salt) % 11) - 5;
}

START_TEST(contexts_of_different_k_on_one_handle)
{
    tf_csr a;
    tf_test_random_csr(&a, 61, 61, 400, 9);
    tf_handle *h;
    ck_assert_int_eq(open_plan(&a, TF_NORM_NONE, 0, &h), TF_OK);
    tf_ctx *c16, *c7, *d16;
    ck_assert_int_eq(tf_context_create(h, 16, NULL, &c16), TF_OK);
    ck_assert_int_eq(tf_context_create(h, 7, NULL, &c7), TF_OK);
    ck_assert_int_eq(tf_context_create(h, 16, NULL, &d16), TF_OK);
    int64_t r0, nr, b0, nb;
    tf_get_rows(h, &r0, &nr);
    float *c16out = malloc((size_t)(nr + 1) * 16 * sizeof(float));
    float *c7out = malloc((size_t)(nr + 1) * 7 * sizeof(float));
    double worst = 0;
    for (int round = 0; round < 3; round++) {
        float *b = tf_b_rows(c16, &b0, &nb);
        for (int64_t i = 0; i < nb; i++)
            for (int j = 0; j < 16; j++)
                b[i * 16 + j] = bval(b0 + i, j, round);
        b = tf_b_rows(c7, &b0, &nb);
        for (int64_t i = 0; i < nb; i++)
            for (int j = 0; j < 7; j++)
                b[i * 7 + j] = bval(b0 + i, j, 100 + round);
        /* C of the K = 16 product straight into the other K = 16 context's B:
         * then d16 computes A.(A.B). */
        ck_assert_int_eq(tf_spmm(c16, tf_b_rows(d16, NULL, NULL)), TF_OK);
        ck_assert_int_eq(tf_spmm(c7, c7out), TF_OK);
        ck_assert_int_eq(tf_spmm(d16, c16out), TF_OK);
        /* Reference: whole products in double. */
        double *ab = dzeros(a.nrows * 16);
        for (int64_t i = 0; i < a.nrows; i++)
            for (int64_t e = a.rowptr[i]; e < a.rowptr[i + 1]; e++)
                for (int j = 0; j < 16; j++)
                    ab[i * 16 + j] += a.val[e] * bval(a.col[e], j, round);
        for (int64_t i = 0; i < nr; i++) {
            int64_t g = r0 + i;
            for (int j = 0; j < 16; j++) {
                double aab = 0;
                for (int64_t e = a.rowptr[g]; e < a.rowptr[g + 1]; e++)
                    aab += a.val[e] * (float)ab[a.col[e] * 16 + j];
                double err = fabs(aab - c16out[i * 16 + j]) / (1 + fabs(aab));
                worst = err > worst ? err : worst;
            }
            for (int j = 0; j < 7; j++) {
                double ref = 0;
                for (int64_t e = a.rowptr[g]; e < a.rowptr[g + 1]; e++)
                    ref += a.val[e] * bval(a.col[e], j, 100 + round);
                double err = fabs(ref - c7out[i * 7 + j]) / (1 + fabs(ref));
                worst = err > worst ? err : worst;
            }
        }
        free(ab);
    }
    CHECK_ALL(worst < 1e-4, "max scaled error %.3g", worst);
    CHECK_ALL(MPI_Comm_size(tf_get_comm(h), &(int){0}) == MPI_SUCCESS, "tf_get_comm");
    int sz = 0, cmp = 0;
    MPI_Comm_size(tf_get_comm(h), &sz);
    MPI_Comm_compare(tf_get_comm(h), MPI_COMM_WORLD, &cmp);
    CHECK_ALL(sz == nranks() && cmp == MPI_CONGRUENT, "tf_get_comm: size %d, compare %d", sz, cmp);
    free(c16out);
    free(c7out);
    tf_context_free(d16);
    tf_context_free(c7);
    tf_context_free(c16);
    tf_close(h);
    tf_csr_free(&a);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("mpi_gnn_model");
    TCase *tc = tcase_create("gnn");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, contexts_of_different_k_on_one_handle);
    tcase_add_test(tc, gradient_matches_reference_symmetric);
    tcase_add_test(tc, gradient_matches_reference_nonsymmetric);
    tcase_add_test(tc, finite_differences_symmetric);
    tcase_add_test(tc, finite_differences_nonsymmetric);
    tcase_add_test(tc, gradient_matches_reference_deeper);
    tcase_add_test(tc, finite_differences_three_layers);
    tcase_add_test(tc, nonsymmetric_without_backward_plan_fails);
    tcase_add_test(tc, algorithms_give_the_same_losses);
    tcase_add_test(tc, non_finite_loss_stops_every_rank);
    tcase_add_test(tc, bf16_training_stays_near_the_reference);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv) { return tf_test_run_mpi(&argc, &argv, make_suite); }
