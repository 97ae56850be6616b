#include "tf_exec_ids.h"
#include "tf_dense.h"
#include "tf_dense_h5.h"
#include "tf_exec.h"

#include <stdlib.h>
#include <string.h>

void tf_exec_fill_b(const tf_handle *h, uint64_t seed, int64_t k, float *b)
{
    int64_t b0, nb;
    tf_get_brows(h, &b0, &nb);
    if (!tf_get_permuted(h)) {
        tf_dense_fill(b, seed, b0, nb, k);
        return;
    }
    const int64_t *ids = tf_get_brow_ids(h);
    for (int64_t i = 0; i < nb; i++)
        tf_dense_fill(b + i * k, seed, ids[i], 1, k);
}

int tf_exec_read_b(const tf_handle *h, const char *path, int64_t k, float *b)
{
    int64_t b0, nb;
    tf_get_brows(h, &b0, &nb);
    if (!tf_get_permuted(h))
        return tf_agree(h->comm, tf_dense_h5_read_rows(path, "/B", b0, nb, k, b));
    int64_t o0, on;
    tf_even_rows(h, TF_BROWS, &o0, &on);
    float *share = malloc((size_t)(on > 0 ? on : 1) * (size_t)k * sizeof *share);
    int st = share ? tf_dense_h5_read_rows(path, "/B", o0, on, k, share)
                   : tf_fail(TF_ERR_NOMEM, "rank %d: out of memory for B", h->rank);
    st = tf_agree(h->comm, st);
    if (st == TF_OK)
        st = tf_scatter_rows(h, TF_BROWS, (size_t)k * sizeof *b, o0, on, share, b);
    free(share);
    return st;
}

int tf_exec_write_c(const tf_handle *h, const char *path, int64_t k, const float *c)
{
    int64_t r0, nr, m = tf_get_m(h);
    tf_get_rows(h, &r0, &nr);
    if (!tf_get_permuted(h))
        return tf_dense_h5_write_dist(h->comm, path, "/C", m, k, r0, nr, c);
    int64_t o0, on;
    tf_even_rows(h, TF_ROWS, &o0, &on);
    float *share = malloc((size_t)(on > 0 ? on : 1) * (size_t)k * sizeof *share);
    int st = tf_agree(h->comm, share ? TF_OK
                                     : tf_fail(TF_ERR_NOMEM, "rank %d: out of memory for C",
                                               h->rank));
    if (st == TF_OK)
        st = tf_gather_rows(h, TF_ROWS, (size_t)k * sizeof *c, c, o0, on, share);
    if (st == TF_OK)
        st = tf_dense_h5_write_dist(h->comm, path, "/C", m, k, o0, on, share);
    free(share);
    return st;
}

int tf_exec_rows_original(const tf_handle *h, tf_csr *copy, const tf_csr **rows)
{
    memset(copy, 0, sizeof *copy);
    const tf_csr *own = tf_handle_rows(h);
    *rows = own;
    if (!tf_get_permuted(h))
        return TF_OK;
    int st = tf_csr_alloc(copy, own->nrows, own->ncols, own->nnz);
    if (st)
        return st;
    /* Columns need not ascend here: the reference SpMM and --check's list
     * of needed B rows take them in any order. */
    memcpy(copy->rowptr, own->rowptr, ((size_t)own->nrows + 1) * sizeof *copy->rowptr);
    for (int64_t e = 0; e < own->nnz; e++) {
        copy->col[e] = (int32_t)h->plan.perm[own->col[e]];
        copy->val[e] = own->val[e];
    }
    *rows = copy;
    return TF_OK;
}
