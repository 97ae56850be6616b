/* twoface-gcn: full-graph GCN training on libtwoface.
 * Options: tf_gnn_cli.c; training: tf_gnn_train.c; output: tf_gnn_report.c.
 * Every step that can fail on some rank agrees on the outcome over the
 * communicator, then rank 0 prints one line and every rank exits 1. */
#include "tf_cli.h"
#include "tf_error.h"
#include "tf_exec.h"
#include "tf_gnn_ckpt.h"
#include "tf_gnn_cli.h"
#include "tf_gnn_load.h"
#include "tf_gnn_model.h"
#include "tf_gnn_report.h"
#include "tf_gnn_rows.h"
#include "tf_gnn_save.h"
#include "tf_gnn_train.h"
#include "twoface.h"

#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "twoface-gcn"

static int g_rank;

static int fail(const char *msg)
{
    if (g_rank == 0) {
        fprintf(stderr, PROG ": %s\n", msg);
        fflush(stderr);
    }
    return 1;
}

/* The reader's messages start with the path; the agreement over ranks
 * ("plan is for 3 ranks, ...") does not: name it then. */
static int name_plan(int st, const char *opt, const char *path)
{
    if (strncmp(tf_error_message(), path, strlen(path)) == 0)
        return opt[0] ? tf_fail_prefix(st, "%.*s", (int)strlen(opt) - 1, opt) : st;
    return tf_fail_prefix(st, "%s%s", opt, path);
}

static int open_plans(const tf_gnn_cli *c, tf_handle **fwd, tf_handle **bwd)
{
    *fwd = *bwd = NULL;
    int st = tf_open(c->plan, MPI_COMM_WORLD, fwd);
    if (st)
        return name_plan(st, "", c->plan);
    if (c->backward_plan && (st = tf_open(c->backward_plan, MPI_COMM_WORLD, bwd)))
        return name_plan(st, "--backward-plan ", c->backward_plan);
    return TF_OK;
}

#define MAX_ALGOS 8

/* --algo A[,B...]: one spec per item; --replication goes to shift. */
static int parse_algos(const tf_gnn_cli *c, const tf_handle *h, tf_algo_spec *spec, int *n)
{
    char list[256];
    if (snprintf(list, sizeof list, "%s", c->algo) >= (int)sizeof list)
        return tf_fail(TF_ERR_ARG, "--algo: list too long");
    *n = 0;
    for (char *save, *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        if (*n == MAX_ALGOS)
            return tf_fail(TF_ERR_ARG, "--algo: at most %d algorithms", MAX_ALGOS);
        int st = tf_gnn_algo_parse(p, strcmp(p, "shift") == 0 ? c->replication : NULL, h,
                                   &spec[*n]);
        if (st)
            return st;
        for (int i = 0; i < *n; i++)
            if (strcmp(spec[i].name, spec[*n].name) == 0)
                return tf_fail(TF_ERR_ARG, "--algo: %s given twice", p);
        (*n)++;
    }
    if (*n == 0)
        return tf_fail(TF_ERR_ARG, "--algo: empty list");
    if (c->replication && !strstr(c->algo, "shift"))
        return tf_fail(TF_ERR_ARG, "--replication applies to --algo shift only");
    return TF_OK;
}

typedef struct {
    tf_gnn_model m[MAX_ALGOS];
    tf_gnn_trainer t[MAX_ALGOS];
    tf_gnn_report rep[MAX_ALGOS];
    int n, ninit;
    uint64_t fingerprint; /* the forward plan's: checkpoints and models name their graph */
    const char *normalization;
} side_by_side;

/* The files of one run: a list of algorithms trains side by side for
 * timing, and its models are not kept. */
static int check_outputs(const tf_gnn_cli *c, int nalgo)
{
    if (nalgo > 1 && (c->checkpoint || c->resume || c->save_model || c->predictions))
        return tf_fail(TF_ERR_ARG, "--checkpoint, --resume, --save-model and --predictions "
                       "need a single --algo ('%s' names %d)", c->algo, nalgo);
    return TF_OK;
}

/* Collective: the trainers, and the state of --resume. *agreed: as in
 * train_all. */
static int start_all(const tf_gnn_cli *c, side_by_side *s, int *agreed)
{
    tf_gnn_train_opts to = {c->epochs, c->lr, c->patience};
    int st = TF_OK;
    *agreed = 1;
    for (; s->ninit < s->n && !st; s->ninit++)
        st = tf_gnn_trainer_init(&s->t[s->ninit], &s->m[s->ninit], &to);
    st = tf_agree(s->m[0].comm, st);
    if (!st && c->resume && !(st = tf_gnn_ckpt_resume(&s->t[0], s->fingerprint, c->resume))) {
        *agreed = 0; /* SpMMs and an Allreduce */
        st = tf_gnn_model_eval(s->t[0].m, &s->t[0].r.eval);
        *agreed = !st;
    }
    return st;
}

/* Trains the same model on every algorithm, interleaved epoch by epoch, so
 * that their times share the machine's state; checkpoints the single model
 * every c->checkpoint_every epochs and when it ends. *agreed: the failure
 * (if any) was agreed by every rank (a file), else it happened on some
 * ranks only (an SpMM or an Allreduce) and the others cannot know. */
static int train_all(const tf_gnn_cli *c, side_by_side *s, int *agreed)
{
    int st = TF_OK;
    *agreed = 0;
    for (int left = s->n; !st && left > 0;) {
        left = 0;
        for (int k = 0; k < s->n && !st; k++) {
            if (s->t[k].done)
                continue;
            tf_gnn_epoch ep;
            st = tf_gnn_trainer_epoch(&s->t[k], &ep);
            if (!st)
                tf_gnn_report_epoch(&ep, &s->rep[k]);
            /* The loss is summed over ranks: all stop here alike. */
            else if (!isfinite(ep.train_loss))
                *agreed = 1;
            left += !s->t[k].done;
            if (!st && c->checkpoint && (ep.epoch % c->checkpoint_every == 0 || s->t[k].done)) {
                *agreed = 1;
                st = tf_gnn_ckpt_save(&s->t[k], s->fingerprint, c->checkpoint);
                if (!st)
                    *agreed = 0;
            }
        }
    }
    if (st)
        return st;
    *agreed = 1;
    /* A resumed run with nothing left to do still leaves its files. */
    if (c->checkpoint && s->t[0].start == s->t[0].r.epochs)
        st = tf_gnn_ckpt_save(&s->t[0], s->fingerprint, c->checkpoint);
    if (!st && c->save_model)
        st = tf_gnn_save_model(&s->t[0], s->fingerprint, s->normalization, c->save_model);
    if (!st && c->predictions) {
        tf_gnn_eval e;
        *agreed = 0; /* SpMMs and an Allreduce */
        if (!(st = tf_gnn_model_eval(&s->m[0], &e))) {
            *agreed = 1;
            st = tf_gnn_save_predictions(&s->m[0], c->predictions);
        }
    }
    for (int k = 0; k < s->n && !st; k++) {
        tf_gnn_result res;
        *agreed = 0;
        st = tf_gnn_trainer_finish(&s->t[k], &res);
        if (!st) {
            s->rep[k].checkpoint = c->checkpoint;
            s->rep[k].model = c->save_model;
            s->rep[k].predictions = c->predictions;
            tf_gnn_report_summary(&s->rep[k], &res);
        }
    }
    return st;
}

static int run(const tf_gnn_cli *c, int nranks)
{
    tf_handle *fwd, *bwd;
    int64_t *ids = NULL, nrows;
    tf_gnn_data d;
    static side_by_side s; /* models are large structs; one per process */
    memset(&d, 0, sizeof d);
    memset(&s, 0, sizeof s);
    tf_algo_spec spec[MAX_ALGOS];
    int nalgo = 0, made = 0, started = 1;
    int st = open_plans(c, &fwd, &bwd);
    if (!st)
        st = tf_agree(tf_get_comm(fwd), parse_algos(c, fwd, spec, &nalgo));
    if (!st)
        st = check_outputs(c, nalgo); /* the same on every rank */
    if (!st)
        st = tf_agree(tf_get_comm(fwd), tf_gnn_row_ids(fwd, &ids, &nrows));
    tf_gnn_inputs in = {c->features, c->labels, c->split, c->random_features, c->random_classes,
                        c->random_split, c->seed};
    if (!st)
        st = tf_gnn_load(fwd, &in, ids, &d);
    tf_gnn_hparams hp = {c->hidden, c->dropout, c->weight_decay, c->seed, c->threads, c->layers,
                         c->comm};
    for (; !st && made < nalgo; made++) {
        st = tf_gnn_model_create(fwd, bwd, &spec[made], &d, &hp, &s.m[made]);
        s.rep[made] = (tf_gnn_report){g_rank == 0 ? stdout : NULL, c->json, c->every,
                                      spec[made].name, nranks, nalgo > 1, NULL, NULL, NULL, NULL};
        if (!st)
            s.rep[made].comm = tf_comm_precision_name(tf_algo_comm(s.m[made].fh.a));
    }
    s.n = made;
    if (!st) {
        s.fingerprint = tf_get_fingerprint(fwd);
        s.normalization = tf_get_normalization(fwd);
        st = start_all(c, &s, &started);
    }
    if (st && !started) { /* an SpMM or Allreduce failed: other ranks cannot know */
        fprintf(stderr, PROG ": rank %d: %s\n", g_rank, tf_error_message());
        MPI_Abort(MPI_COMM_WORLD, 1);
    } else if (st) {
        fail(tf_error_message());
    } else {
        if (g_rank == 0 && !c->json && strcmp(tf_get_normalization(fwd), "none") == 0)
            fprintf(stderr, PROG ": note: %s holds the matrix as given, not normalised "
                            "(twoface-plan --normalize gcn)\n", c->plan);
        if (g_rank == 0 && d.count[TF_GNN_VAL] == 0 && c->patience > 0)
            fprintf(stderr, PROG ": note: no validation nodes: early stopping is off\n");
        int agreed;
        if ((st = train_all(c, &s, &agreed))) {
            if (agreed) {
                fail(tf_error_message());
            } else { /* an SpMM or Allreduce failed: other ranks cannot know */
                fprintf(stderr, PROG ": rank %d: %s\n", g_rank, tf_error_message());
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    }
    for (int k = 0; k < s.ninit; k++)
        tf_gnn_trainer_free(&s.t[k]);
    for (int k = 0; k < s.n; k++)
        tf_gnn_model_free(&s.m[k]);
    tf_gnn_data_free(&d);
    free(ids);
    tf_close(bwd);
    tf_close(fwd);
    return st ? 1 : 0;
}

/* The options that shape the training, the same on every rank: with others
 * the ranks would train other models, or stop at other epochs and wait in
 * different calls. The files may differ per rank (each node its own
 * copies), and so may the threads. */
static int same_options(const tf_gnn_cli *c)
{
    uint64_t h = tf_agree_mix_str(tf_agree_mix_str(0, c->algo), c->replication);
    h = tf_agree_mix_double(tf_agree_mix_double(h, c->lr), c->weight_decay);
    h = tf_agree_mix_double(h, c->dropout);
    const int64_t v[] = {c->backward_plan != NULL, c->features != NULL, c->labels != NULL,
                         c->split != NULL, c->random_features, c->random_classes,
                         c->random_split, c->hidden, c->layers, c->epochs, c->patience,
                         (int64_t)c->seed, c->every, c->comm, c->json, c->checkpoint != NULL,
                         c->checkpoint_every, c->resume != NULL, c->save_model != NULL,
                         c->predictions != NULL};
    return tf_agree_same(MPI_COMM_WORLD, tf_agree_mix_ints(h, v, sizeof v / sizeof v[0]),
                         TF_ERR_ARG,
                         "rank %d was given other options than rank 0 (the inputs given, --hidden, "
                         "--layers, --epochs, --lr, --weight-decay, --dropout, --patience, "
                         "--seed, --algo, --replication, --every, --comm, --json, "
                         "--checkpoint, --checkpoint-every, --resume, --save-model, "
                         "--predictions): every rank must get the same",
                         g_rank);
}

int main(int argc, char **argv)
{
    int provided, nranks;
    /* As twoface-exec: ask only for what the run can use. With one OpenMP
     * thread the executor never calls MPI from two threads, and FUNNELED
     * lets transports that refuse THREAD_MULTIPLE (osc pt2pt, the emulated
     * network of bench/run) train instead of failing at the B window. */
    MPI_Init_thread(&argc, &argv,
                    omp_get_max_threads() > 1 ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED,
                    &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    tf_gnn_cli c;
    int st = tf_gnn_cli_parse(argc, argv, &c), rc;
    /* The checks of the output folders, named pipes and OMP_NUM_THREADS look
     * at this rank's node and environment: the ranks agree, so that none
     * goes on alone into the collective opening of the plans. */
    if (st != -1)
        st = tf_agree(MPI_COMM_WORLD, st);
    if (st == TF_OK)
        st = same_options(&c);
    if (st == -1) {
        if (g_rank == 0)
            tf_gnn_cli_usage(stdout);
        rc = 0;
    } else if (st) {
        rc = fail(tf_error_message());
    } else
        rc = run(&c, nranks);
    MPI_Finalize();
    return tf_cli_exit_status("twoface-gcn", rc);
}
