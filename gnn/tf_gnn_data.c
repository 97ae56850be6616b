#include "tf_gnn_data.h"

#include <stdlib.h>
#include <string.h>

void tf_gnn_data_free(tf_gnn_data *d)
{
    tf_csr_free(&d->x);
    free(d->label);
    free(d->split);
    memset(d, 0, sizeof *d);
}

void tf_gnn_row_normalise(tf_csr *x)
{
    for (int64_t i = 0; i < x->nrows; i++) {
        double s = 0;
        for (int64_t e = x->rowptr[i]; e < x->rowptr[i + 1]; e++)
            s += x->val[e];
        if (s == 0)
            continue;
        for (int64_t e = x->rowptr[i]; e < x->rowptr[i + 1]; e++)
            x->val[e] = (float)(x->val[e] / s);
    }
}
