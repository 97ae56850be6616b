/* The start-up trial between the planner's choice and its runner-up
 * (twoface.h, tf_selection; docs/executor.md "Start-up trial").
 *
 * Why at run time: the cost model ranks the two within its own error (the
 * per-graph prediction error reached +160% on skewed graphs on the
 * development machine, and fetch and collective plans often run within 20%
 * of each other), while a few real SpMMs rank them on the machine, the
 * transport and the K actually in use. Both plans compute the same C, so
 * the trial's only cost is the slower plan's excess on a few calls. */
#include "tf_exec.h"
#include "tf_median.h"

#include <stdlib.h>
#include <string.h>

/* ABBA order: call i runs the runner-up when i % 4 is 1 or 2, so that a
 * drift in the machine's speed during the trial (caches warming, a
 * neighbour's load fading) falls on both plans alike. */
static int runs_alt(int i) { return i % 4 == 1 || i % 4 == 2; }

int tf_select_step(tf_ctx *ctx, float *c)
{
    const int n = 2 * ctx->sel.calls;
    int i = ctx->sel.calls_made - TF_SELECT_COLD_CALLS;
    if (i < 0) {
        /* The first call of each plan pays for what no later call does
         * (connections set up lazily over TCP, first touches inside MPI):
         * 10x a warm call over TCP. Timed, it made the planned plan, which
         * runs first, lose 5 of 5 trials it should have won (bench run of
         * 17:05): it is run, not timed. */
        ctx->sel.calls_made++;
        return tf_spmm_run(i == -TF_SELECT_COLD_CALLS ? ctx : ctx->alt, c);
    }
    double t0 = MPI_Wtime();
    int st = tf_spmm_run(runs_alt(i) ? ctx->alt : ctx, c);
    ctx->trial_t[i] = MPI_Wtime() - t0;
    ctx->sel.calls_made++;
    if (st != TF_OK || i + 1 < n)
        return st;
    /* An SpMM ends when its slowest rank does. Every rank then holds the same
     * numbers and reaches the same decision. */
    int err = MPI_Allreduce(MPI_IN_PLACE, ctx->trial_t, n, MPI_DOUBLE, MPI_MAX, ctx->h->comm);
    if (err != MPI_SUCCESS)
        return tf_mpi_fail(err, "MPI_Allreduce (start-up trial times)");
    double *mine = ctx->trial_t + n, *other = ctx->trial_t + n + ctx->sel.calls;
    int a = 0, b = 0;
    for (int x = 0; x < n; x++) {
        if (runs_alt(x))
            other[b++] = ctx->trial_t[x];
        else
            mine[a++] = ctx->trial_t[x];
    }
    ctx->sel.median[0] = tf_median(mine, a);
    ctx->sel.median[1] = tf_median(other, b);
    return tf_select_finish(ctx, ctx->sel.median[1] < ctx->sel.median[0]);
}

int tf_select_finish(tf_ctx *ctx, int which)
{
    if (!ctx || !ctx->alt)
        return tf_fail(TF_ERR_ARG, "tf_select_finish: no start-up trial is running");
    tf_ctx *loser = ctx->alt;
    ctx->alt = NULL;
    if (which) {
        /* The caller's pointer must hold the winner: swap the structures
         * (nothing points into one), then hand over the window, which the
         * first context allocated, and the trial's bookkeeping. */
        tf_ctx tmp = *ctx;
        *ctx = *loser;
        *loser = tmp;
        ctx->owns_win = 1;
        ctx->locked = loser->locked;
        loser->owns_win = 0;
        loser->locked = 0;
        ctx->sel = loser->sel;
        ctx->trial_t = loser->trial_t;
        loser->trial_t = NULL;
    }
    ctx->sel.decided = 1;
    ctx->sel.chose_alternative = which != 0;
    free(ctx->trial_t);
    ctx->trial_t = NULL;
    tf_ctx_destroy(loser); /* collective: the same call on every rank */
    return TF_OK;
}
