#include "tf_prepare.h"
#include "tf_error.h"
#include "tf_fingerprint.h"
#include "tf_normalize.h"
#include "tf_plan.h"
#include "tf_transpose.h"

uint64_t tf_plan_fingerprint(const tf_csr *a, int normalization)
{
    return tf_fingerprint_rows(a->rowptr, a->col, a->val, 0, a->nrows) +
           tf_fingerprint_salt(tf_norm_name(normalization));
}

int tf_matrix_prepare(tf_csr *a, int normalization, int transpose, tf_plan_options *o)
{
    return tf_matrix_prepare_read(a, normalization, transpose, 0, o);
}

int tf_matrix_prepare_read(tf_csr *a, int normalization, int transpose, int mirrored,
                           tf_plan_options *o)
{
    int st = tf_normalize(a, normalization);
    if (st)
        return st;
    uint64_t forward = transpose ? tf_plan_fingerprint(a, normalization) : 0;
    if (transpose) {
        tf_csr t;
        if ((st = tf_csr_transpose(a, &t)) != TF_OK)
            return st;
        tf_csr_free(a);
        *a = t;
    }
    /* As read from a symmetric file, and after the gcn normalisation, it
     * equals its transpose, which the test would build to find that out. */
    int sym = tf_prepare_symmetric_as_read(mirrored, normalization, transpose);
    if (!sym && (st = tf_csr_is_symmetric(a, &sym)) != TF_OK)
        return st;
    o->normalization = normalization;
    o->transposed = transpose != 0;
    o->transpose_of = forward;
    o->symmetric = sym;
    return TF_OK;
}
