/* twoface-gcn: full-graph two-layer GCN training on libtwoface.
 * Options: tf_gnn_cli.c; training: tf_gnn_train.c; output: tf_gnn_report.c.
 * Every step that can fail on some rank agrees on the outcome over the
 * communicator, then rank 0 prints one line and every rank exits 1. */
#include "tf_error.h"
#include "tf_exec.h"
#include "tf_gnn_cli.h"
#include "tf_gnn_load.h"
#include "tf_gnn_model.h"
#include "tf_gnn_report.h"
#include "tf_gnn_rows.h"
#include "tf_gnn_train.h"
#include "twoface.h"

#include <mpi.h>
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

static int open_plans(const tf_gnn_cli *c, tf_handle **fwd, tf_handle **bwd)
{
    *fwd = *bwd = NULL;
    int st = tf_open(c->plan, MPI_COMM_WORLD, fwd);
    if (st)
        return st;
    if (c->backward_plan && (st = tf_open(c->backward_plan, MPI_COMM_WORLD, bwd)))
        return tf_fail_prefix(st, "--backward-plan: ");
    return TF_OK;
}

static int run(const tf_gnn_cli *c, int nranks)
{
    tf_handle *fwd, *bwd;
    int64_t *ids = NULL, nrows;
    tf_gnn_data d;
    tf_gnn_model m;
    memset(&d, 0, sizeof d);
    memset(&m, 0, sizeof m);
    int st = open_plans(c, &fwd, &bwd);
    tf_algo_spec spec;
    if (!st)
        st = tf_exec_agree(tf_get_comm(fwd), tf_gnn_algo_parse(c->algo, c->replication, fwd,
                                                               &spec));
    if (!st)
        st = tf_exec_agree(tf_get_comm(fwd), tf_gnn_row_ids(fwd, &ids, &nrows));
    tf_gnn_inputs in = {c->features, c->labels, c->split, c->random_features, c->random_classes,
                        c->random_split, c->seed};
    if (!st)
        st = tf_gnn_load(fwd, &in, ids, &d);
    tf_gnn_hparams hp = {c->hidden, c->dropout, c->weight_decay, c->seed, c->threads};
    if (!st)
        st = tf_gnn_model_create(fwd, bwd, &spec, &d, &hp, &m);
    if (st) {
        fail(tf_error_message());
        tf_gnn_data_free(&d);
        free(ids);
        tf_close(bwd);
        tf_close(fwd);
        return 1;
    }
    if (g_rank == 0 && !c->json && strcmp(tf_get_normalization(fwd), "none") == 0)
        fprintf(stderr, PROG ": note: %s holds the matrix as given, not normalised "
                        "(twoface-plan --normalize gcn)\n", c->plan);
    tf_gnn_report rep = {g_rank == 0 ? stdout : NULL, c->json, c->every, spec.name, nranks};
    tf_gnn_train_opts to = {c->epochs, c->lr, c->patience};
    tf_gnn_result res;
    st = tf_gnn_train(&m, &to, tf_gnn_report_epoch, &rep, &res);
    if (st) { /* an SpMM or Allreduce failed: the other ranks cannot know */
        fprintf(stderr, PROG ": rank %d: %s\n", g_rank, tf_error_message());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    tf_gnn_report_summary(&rep, &res);
    tf_gnn_model_free(&m);
    tf_gnn_data_free(&d);
    free(ids);
    tf_close(bwd);
    tf_close(fwd);
    return 0;
}

int main(int argc, char **argv)
{
    int provided, nranks;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    tf_gnn_cli c;
    int st = tf_gnn_cli_parse(argc, argv, &c), rc;
    if (st == -1) {
        if (g_rank == 0)
            tf_gnn_cli_usage(stdout);
        rc = 0;
    } else if (st) {
        rc = fail(tf_error_message());
    } else
        rc = run(&c, nranks);
    MPI_Finalize();
    return rc;
}
