/* librsb (Recursive Sparse Blocks) as a peer of the kernels benchmark:
 * rsb_spmm with row-major B and C, once on the matrix as built from the CSR
 * ("untuned") and once after rsb_tune_spmm re-blocked it for the given K
 * with the thread count held fixed ("tuned"). */
#include "kernels_peers.h"

#include <rsb.h>
#include <rsb-config.h>
#include <stdlib.h>

struct kp_rsb {
    struct rsb_mtx_t *mtx;
    int m, n;
};

int kp_rsb_init(void) { return rsb_lib_init(RSB_NULL_INIT_OPTIONS) != RSB_ERR_NO_ERROR; }

void kp_rsb_exit(void) { rsb_lib_exit(RSB_NULL_EXIT_OPTIONS); }

const char *kp_rsb_version(void) { return RSB_PACKAGE_VERSION; }

kp_rsb *kp_rsb_new(int m, int n, int nnz, const int *rowptr, const int *col, const float *val,
                   int threads)
{
    rsb_int_t nt = threads;
    if (rsb_lib_set_opt(RSB_IO_WANT_EXECUTING_THREADS, &nt) != RSB_ERR_NO_ERROR)
        return NULL;
    kp_rsb *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    rsb_err_t err = RSB_ERR_NO_ERROR;
    r->mtx = rsb_mtx_alloc_from_csr_const(val, rowptr, col, nnz, RSB_NUMERICAL_TYPE_FLOAT, m, n,
                                          1, 1, RSB_FLAG_NOFLAGS, &err);
    if (!r->mtx || err != RSB_ERR_NO_ERROR) {
        free(r);
        return NULL;
    }
    r->m = m;
    r->n = n;
    return r;
}

int kp_rsb_spmm(kp_rsb *r, const float *b, int k, float *c)
{
    const float alpha = 1.0f, beta = 0.0f;
    return rsb_spmm(RSB_TRANSPOSITION_N, &alpha, r->mtx, k, RSB_FLAG_WANT_ROW_MAJOR_ORDER, b, k,
                    &beta, c, k) != RSB_ERR_NO_ERROR;
}

int kp_rsb_tune(kp_rsb *r, const float *b, int k, float *c, double *tune_s)
{
    const float alpha = 1.0f, beta = 0.0f;
    rsb_real_t sf = 0;
    rsb_int_t tn = 0; /* 0: keep the thread count, tune the blocking only */
    rsb_time_t t = rsb_time();
    /* 3 rounds of at most 0.1 s per candidate, as librsb's own example. */
    rsb_err_t err = rsb_tune_spmm(&r->mtx, &sf, &tn, 3, 0.1, RSB_TRANSPOSITION_N, &alpha, NULL, k,
                                  RSB_FLAG_WANT_ROW_MAJOR_ORDER, b, k, &beta, c, k);
    if (tune_s)
        *tune_s = rsb_time() - t;
    return err != RSB_ERR_NO_ERROR;
}

void kp_rsb_free(kp_rsb *r)
{
    if (r)
        rsb_mtx_free(r->mtx);
    free(r);
}
