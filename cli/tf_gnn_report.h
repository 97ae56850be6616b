/* twoface-gcn's output: per epoch and a summary, as text or as one JSON
 * object per line (--json). Printed by the caller's rank 0. */
#ifndef TF_GNN_REPORT_H
#define TF_GNN_REPORT_H

#include "tf_gnn_train.h"

#include <stdio.h>

typedef struct {
    FILE *out;
    int json;
    int64_t every; /* print epochs e with e % every == 0 (and the first); 0 = none */
    const char *algo;
    int ranks;
    int show_algo; /* text: prefix epoch lines with the algorithm (several trained side by side) */
    /* Files written by the run (NULL: none): named in the summary. */
    const char *checkpoint, *model, *predictions;
    const char *comm; /* what B rows travel as: "f32" or "bf16" */
} tf_gnn_report;

/* A tf_gnn_epoch_fn: arg is a tf_gnn_report. */
void tf_gnn_report_epoch(const tf_gnn_epoch *e, void *arg);
void tf_gnn_report_summary(const tf_gnn_report *r, const tf_gnn_result *res);

#endif
