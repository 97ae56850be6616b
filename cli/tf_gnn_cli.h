/* twoface-gcn's command line (getopt_long), parsed into a struct; no I/O
 * beyond the usage text. The same on every rank. */
#ifndef TF_GNN_CLI_H
#define TF_GNN_CLI_H

#include <stdint.h>
#include <stdio.h>

typedef struct {
    const char *plan, *backward_plan;
    const char *features, *labels, *split;
    int64_t random_features;
    int random_classes, random_split;
    int hidden, layers;
    int64_t epochs;
    double lr, weight_decay, dropout;
    int patience;
    uint64_t seed;
    const char *algo, *replication;
    int64_t every; /* print every N epochs; 0 = only the summary */
    int threads;
    int comm; /* TF_COMM_*: --comm (default 0, the plans' choice) */
    int json;
    const char *checkpoint; /* written every checkpoint_every epochs and at the end */
    int64_t checkpoint_every;
    const char *resume;
    const char *save_model, *predictions;
} tf_gnn_cli;

void tf_gnn_cli_usage(FILE *f);
/* 0: parsed; -1: --help; else a tf_status with the message recorded. */
int tf_gnn_cli_parse(int argc, char **argv, tf_gnn_cli *c);

#endif
