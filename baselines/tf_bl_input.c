#include "tf_bl_input.h"
#include "tf_engine.h"

#include <string.h>

void tf_bl_input_of(tf_handle *h, int k, int replication, int bf16, tf_baseline_input *in)
{
    const tf_csr *rows = tf_handle_rows(h);
    const tf_plan *pl = tf_handle_plan(h);
    memset(in, 0, sizeof *in);
    in->comm = tf_get_comm(h);
    in->nranks = tf_get_nranks(h);
    in->rank = tf_get_rank(h);
    in->m = pl->m;
    in->n = pl->n;
    in->row_off = pl->row_off;
    in->brow_off = pl->brow_off;
    in->nrows = rows->nrows;
    in->rowptr = rows->rowptr;
    in->col = rows->col;
    in->val = rows->val;
    in->k = k;
    in->replication = replication;
    in->bf16 = bf16;
}
