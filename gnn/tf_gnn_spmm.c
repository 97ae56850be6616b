#include "tf_gnn_spmm.h"
#include "tf_error.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

int tf_gnn_algo_parse(const char *algo, const char *replication, const tf_handle *h,
                      tf_algo_spec *spec)
{
    const char *list = strcmp(algo, "twoface") == 0 ? tf_get_mode_name(h) : algo;
    int is_shift = strcmp(algo, "shift") == 0;
    if (replication && !is_shift)
        return tf_fail(TF_ERR_ARG, "--replication applies to --algo shift only");
    tf_algo_spec *specs = NULL;
    int n = 0;
    int st = tf_algo_parse(list, is_shift ? (replication ? replication : "1") : NULL,
                           tf_get_nranks(h), &specs, &n);
    if (!st && n != 1)
        st = tf_fail(TF_ERR_ARG, "--algo takes one algorithm (and --replication one factor), "
                                 "got '%s'", algo);
    if (!st) {
        *spec = specs[0];
        if (strcmp(algo, "twoface") == 0)
            strcpy(spec->name, "twoface");
    }
    free(specs);
    return st;
}

int tf_gnn_spmm_create(const tf_algo_spec *spec, tf_handle *h, int k, int threads, int comm,
                       tf_gnn_spmm *op)
{
    memset(op, 0, sizeof *op);
    op->k = k;
    tf_exec_options o;
    tf_exec_options_default(&o);
    o.threads = threads;
    o.comm = comm;
    tf_handle *plans[1] = {h};
    return tf_algo_create(spec, plans, 1, k, &o, &op->a);
}

float *tf_gnn_spmm_b(tf_gnn_spmm *op) { return tf_algo_b(op->a); }

int tf_gnn_spmm_run(tf_gnn_spmm *op, float *c)
{
    double t0 = MPI_Wtime();
    int st = tf_algo_run(op->a, c);
    op->seconds += MPI_Wtime() - t0;
    op->calls++;
    return st;
}

void tf_gnn_spmm_free(tf_gnn_spmm *op)
{
    tf_algo_free(op->a);
    op->a = NULL;
}
