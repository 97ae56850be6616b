#include "tf_bands_from.h"
#include "tf_error.h"
#include "tf_prepare.h"

int tf_bands_from(const tf_plan *fwd, const char *fwd_path, const char *matrix_path,
                  const tf_csr *a, tf_plan_options *o)
{
    return tf_bands_from_dims(fwd, fwd_path, matrix_path, a->nrows, a->ncols,
                              o->transposed ? 0 : tf_plan_fingerprint(a, o->normalization), o);
}

int tf_bands_from_dims(const tf_plan *fwd, const char *fwd_path, const char *matrix_path,
                       int64_t nrows, int64_t ncols, uint64_t fingerprint, tf_plan_options *o)
{
    if (fwd->nranks != o->nranks)
        return tf_fail(TF_ERR_ARG, "--bands-from %s: a plan for %d ranks, not %d", fwd_path,
                       fwd->nranks, o->nranks);
    if (fwd->normalization != o->normalization)
        return tf_fail(TF_ERR_ARG,
                       "--bands-from %s: a plan normalised '%s', but %s is planned with "
                       "--normalize %s",
                       fwd_path, tf_norm_name(fwd->normalization), matrix_path,
                       tf_norm_name(o->normalization));
    /* The forward plan's matrix is Â: a itself, or the transpose of a. */
    int64_t m = o->transposed ? ncols : nrows, n = o->transposed ? nrows : ncols;
    uint64_t want = o->transposed ? o->transpose_of : fingerprint;
    if (fwd->m != m || fwd->n != n || fwd->checksum != want)
        return tf_fail(TF_ERR_ARG,
                       "--bands-from %s: a plan of another matrix than %s (%lld x %lld, "
                       "fingerprint %016llx; %s gives %lld x %lld, %016llx)",
                       fwd_path, matrix_path, (long long)fwd->m, (long long)fwd->n,
                       (unsigned long long)fwd->checksum, matrix_path, (long long)m,
                       (long long)n, (unsigned long long)want);
    o->partition = fwd->partition; /* how the bands were made */
    /* A METIS plan's bands are bands of its renumbering: the same one
     * (square, so rows and B rows alike) applies to the transpose. */
    o->perm = fwd->perm;
    o->iperm = fwd->iperm;
    o->row_off = o->transposed ? fwd->brow_off : fwd->row_off;
    o->brow_off = o->transposed ? fwd->row_off : fwd->brow_off;
    return TF_OK;
}
