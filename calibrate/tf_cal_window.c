/* The one-sided window the fetch measurements read from: B rows of K floats
 * in MPI_Win_allocate memory, filled, and one passive-target epoch
 * (MPI_Win_lock_all with MPI_MODE_NOCHECK) for the whole measurement, as
 * the executor's fetch half holds it (executor/tf_fetch.c). */
#include "tf_calibrate.h"
#include "tf_dense.h"
#include "tf_error.h"

#include <string.h>

int tf_cal_window_open(const tf_cal_config *cfg, int k, int64_t rows, uint64_t seed,
                       const char *what, tf_cal_window *w)
{
    memset(w, 0, sizeof *w);
    w->row = MPI_DATATYPE_NULL;
    w->win = MPI_WIN_NULL;
    int st = TF_OK;
    if (MPI_Type_contiguous(k, MPI_FLOAT, &w->row) != MPI_SUCCESS ||
        MPI_Type_commit(&w->row) != MPI_SUCCESS)
        st = tf_fail(TF_ERR_MPI, "%s: MPI_Type_contiguous failed", what);
    st = tf_cal_agree(cfg->comm, st);
    if (st == TF_OK) {
        MPI_Aint bytes = (MPI_Aint)rows * k * (MPI_Aint)sizeof(float);
        if (MPI_Win_allocate(bytes, (int)sizeof(float), MPI_INFO_NULL, cfg->comm, &w->base,
                             &w->win) != MPI_SUCCESS) {
            w->win = MPI_WIN_NULL;
            st = tf_fail(TF_ERR_MPI, "%s: MPI_Win_allocate failed", what);
        } else {
            tf_dense_fill(w->base, seed, 0, rows, k);
        }
        st = tf_cal_agree(cfg->comm, st);
    }
    if (st == TF_OK) {
        if (MPI_Win_lock_all(MPI_MODE_NOCHECK, w->win) != MPI_SUCCESS)
            st = tf_fail(TF_ERR_MPI, "%s: MPI_Win_lock_all failed", what);
        else
            w->locked = 1;
        st = tf_cal_agree(cfg->comm, st);
    }
    if (st)
        tf_cal_window_close(w);
    return st;
}

void tf_cal_window_close(tf_cal_window *w)
{
    if (w->locked)
        MPI_Win_unlock_all(w->win);
    w->locked = 0;
    if (w->win != MPI_WIN_NULL)
        MPI_Win_free(&w->win);
    if (w->row != MPI_DATATYPE_NULL)
        MPI_Type_free(&w->row);
    w->base = NULL;
}
