/* Helpers shared by the calibration's measurements: agreement on failures,
 * timestamps and sample times, fit reports. */
#include "tf_calibrate.h"
#include "tf_error.h"
#include "tf_exec.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int tf_cal_agree(MPI_Comm comm, int status)
{
    /* The calibrator runs the executor, so it uses the executor's agreement:
     * one rule for which rank's message every rank reports. */
    return tf_agree(comm, status);
}

double tf_cal_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void tf_cal_abort(MPI_Comm comm, const char *fmt, ...)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "twoface-calibrate: rank %d: ", rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    MPI_Abort(comm, 1);
}

int tf_cal_one_node(MPI_Comm comm)
{
    MPI_Comm local;
    int n = 0, p = 0;
    MPI_Comm_size(comm, &p);
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) != MPI_SUCCESS)
        tf_cal_abort(comm, "MPI_Comm_split_type failed");
    MPI_Comm_size(local, &n);
    MPI_Comm_free(&local);
    int mine = n == p, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
    return all;
}

void tf_cal_sample_times(MPI_Comm comm, int one_node, double *start, double *end, int n)
{
    if (one_node) {
        MPI_Allreduce(MPI_IN_PLACE, start, n, MPI_DOUBLE, MPI_MIN, comm);
        MPI_Allreduce(MPI_IN_PLACE, end, n, MPI_DOUBLE, MPI_MAX, comm);
        for (int i = 0; i < n; i++)
            start[i] = end[i] - start[i];
    } else {
        for (int i = 0; i < n; i++)
            start[i] = end[i] - start[i];
        MPI_Allreduce(MPI_IN_PLACE, start, n, MPI_DOUBLE, MPI_MAX, comm);
    }
}

void tf_cal_print_fit(FILE *f, const char *what, const tf_fit *fit, const char *const *names,
                      const char *const *units)
{
    if (!f)
        return;
    fprintf(f, "  fit %s (%d points):", what, fit->n);
    for (int j = 0; j < fit->np; j++)
        fprintf(f, " %s = %.4g %s%s", names[j], fit->coef[j], units[j],
                j + 1 < fit->np ? "," : "");
    fprintf(f, "; RMS relative error %.1f%%, max %.1f%%\n", 100.0 * fit->rms_rel,
            100.0 * fit->max_rel);
    for (int j = 0; j < fit->np; j++)
        if (fit->clamped[j])
            fprintf(f, "  note: %s came out %.3g (negative) unconstrained: held at 0, the others "
                       "refitted; the data do not resolve it on this machine\n",
                    names[j], fit->raw[j]);
}

int tf_cal_reps(const tf_cal_config *cfg, int quick_default, int full_default)
{
    if (cfg->reps > 0)
        return cfg->reps;
    return cfg->quick ? quick_default : full_default;
}
