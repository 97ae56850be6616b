/* tf_check_backward: can one plan serve the backward products of another
 * (dH = A^T dZ, docs/normalization.md)? Compares the two headers only, which
 * every rank holds alike, so the answer needs no communication. */
#include "tf_exec.h"

#include <string.h>

/* First rank whose band differs, or -1. */
static int band_diff(const int64_t *x, const int64_t *y, int P)
{
    for (int p = 0; p <= P; p++)
        if (x[p] != y[p])
            return p == P ? P - 1 : p;
    return -1;
}

static int band_fail(int p, const char *what, const int64_t *bwd, const char *fwd_what,
                     const int64_t *fwd)
{
    return tf_fail(TF_ERR_ARG,
                   "backward plan: rank %d's %s [%lld, %lld) differ from its %s [%lld, %lld) in "
                   "the forward plan (plan it with --bands-from)",
                   p, what, (long long)bwd[p], (long long)bwd[p + 1], fwd_what, (long long)fwd[p],
                   (long long)fwd[p + 1]);
}

int tf_check_backward(const tf_handle *fwd, const tf_handle *bwd)
{
    if (!fwd || !bwd)
        return tf_fail(TF_ERR_ARG, "tf_check_backward: NULL handle");
    const tf_plan *f = &fwd->plan, *b = &bwd->plan;
    if (b->normalization != f->normalization)
        return tf_fail(TF_ERR_ARG,
                       "backward plan: normalised '%s', the forward plan '%s': not the same matrix",
                       tf_norm_name(b->normalization), tf_norm_name(f->normalization));
    if (b->m != f->n || b->n != f->m)
        return tf_fail(TF_ERR_ARG,
                       "backward plan: matrix %lld x %lld, the transpose of the forward plan's "
                       "is %lld x %lld",
                       (long long)b->m, (long long)b->n, (long long)f->n, (long long)f->m);
    if (b->transposed) {
        if (b->transpose_of != f->checksum)
            return tf_fail(TF_ERR_ARG,
                           "backward plan: the transpose of another matrix (made from "
                           "fingerprint %016llx, the forward plan's is %016llx)",
                           (unsigned long long)b->transpose_of, (unsigned long long)f->checksum);
    } else if (!f->symmetric) {
        return tf_fail(TF_ERR_ARG,
                       "backward plan: not made by twoface-plan --transpose, and the forward "
                       "plan's matrix is not symmetric");
    } else if (b->checksum != f->checksum) {
        return tf_fail(TF_ERR_ARG,
                       "backward plan: not of the forward plan's (symmetric) matrix "
                       "(fingerprint %016llx, the forward plan's %016llx)",
                       (unsigned long long)b->checksum, (unsigned long long)f->checksum);
    }
    if (b->nranks != f->nranks)
        return tf_fail(TF_ERR_ARG, "backward plan: for %d ranks, the forward plan for %d",
                       b->nranks, f->nranks);
    int p = band_diff(b->row_off, f->brow_off, f->nranks);
    if (p >= 0)
        return band_fail(p, "rows", b->row_off, "B rows", f->brow_off);
    p = band_diff(b->brow_off, f->row_off, f->nranks);
    if (p >= 0)
        return band_fail(p, "B rows", b->brow_off, "rows", f->row_off);
    return TF_OK;
}
