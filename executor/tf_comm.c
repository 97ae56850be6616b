/* The precision of what travels (tf_exec_options.comm): its names, the
 * plan's choice, and the choice a context runs with, agreed over the ranks.
 * A rank rounding its rows to bf16 while its receivers read float32 (or the
 * reverse) would compute garbage without any MPI error, so a mismatch must
 * fail at context creation, on every rank. */
#include "tf_exec.h"

#include <stdio.h>

int tf_get_comm_precision(const tf_handle *h)
{
    return h->plan.comm == TF_PREC_BF16 ? TF_COMM_BF16 : TF_COMM_F32;
}

const char *tf_comm_precision_name(int comm)
{
    switch (comm) {
    case TF_COMM_F32: return "f32";
    case TF_COMM_BF16: return "bf16";
    default: return NULL;
    }
}

int tf_comm_resolve(tf_handle *h, int asked, int *comm)
{
    int st = TF_OK;
    *comm = asked == TF_COMM_PLAN ? tf_get_comm_precision(h) : asked;
    if (asked != TF_COMM_PLAN && asked != TF_COMM_F32 && asked != TF_COMM_BF16)
        st = tf_fail(TF_ERR_ARG,
                     "rank %d: tf_exec_options.comm = %d: expected TF_COMM_PLAN (0), "
                     "TF_COMM_F32 (1) or TF_COMM_BF16 (2)",
                     h->rank, asked);
    st = tf_agree(h->comm, st);
    if (st != TF_OK)
        return st;
    int mm[2] = {*comm, -*comm};
    int err = MPI_Allreduce(MPI_IN_PLACE, mm, 2, MPI_INT, MPI_MAX, h->comm);
    if (err != MPI_SUCCESS)
        return tf_agree(h->comm, tf_mpi_fail(err, "MPI_Allreduce (comm precision)"));
    if (mm[0] != -mm[1]) /* the same on every rank: no further agreement needed */
        return tf_fail(TF_ERR_ARG,
                       "the precision of what travels differs over the ranks: some ask f32, "
                       "others bf16 (tf_exec_options.comm, --comm: it must be the same on every "
                       "rank)");
    return TF_OK;
}
