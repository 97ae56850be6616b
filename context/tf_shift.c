#include "tf_shift.h"
#include "tf_agree.h"
#include "tf_bl_input.h"
#include "tf_cost_model.h"
#include "tf_error.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

int tf_shift_setting(tf_handle *h, int *c)
{
    const char *s = getenv("TWOFACE_SHIFT");
    int st = TF_OK;
    *c = 0;
    if (s && *s && strcmp(s, "auto") != 0) {
        if (strcmp(s, "never") == 0) {
            *c = -1;
        } else {
            char *end = NULL;
            errno = 0;
            long v = strtol(s, &end, 10);
            if (errno || end == s || *end || v < 1 || v > h->nranks || h->nranks % v != 0)
                st = tf_fail(TF_ERR_ARG,
                             "TWOFACE_SHIFT=%s: expected auto, never or a replication c that "
                             "divides the plan's %d ranks",
                             s, h->nranks);
            else
                *c = (int)v;
        }
    }
    st = tf_agree(h->comm, st);
    if (st)
        return st;
    /* Ranks that disagree would create different objects and hang. */
    return tf_agree_same(h->comm, tf_agree_mix(0, (uint64_t)(int64_t)*c), TF_ERR_ARG,
                         "TWOFACE_SHIFT differs between ranks (%s on rank %d)",
                         s && *s ? s : "auto", h->rank);
}

void tf_shift_predict(const tf_handle *h, int *c_best, double *t_best)
{
    const tf_plan *pl = &h->plan;
    *c_best = 1;
    *t_best = INFINITY;
    for (int c = 1; c <= TF_SHIFT_MAX_C && c <= pl->nranks; c++) {
        if (pl->nranks % c != 0)
            continue;
        double worst = 0.0;
        for (int p = 0; p < pl->nranks; p++) {
            int64_t bytes = 0, msgs = 0;
            if (tf_baseline_predict(TF_BASE_SHIFT, pl->nranks, p, pl->row_off, pl->brow_off, c,
                                    pl->k_planned, &bytes, &msgs) != TF_OK) {
                worst = INFINITY;
                break;
            }
            double t = tf_cost_shift(&pl->coeffs, &pl->all_stats[p], bytes, msgs);
            worst = t > worst ? t : worst;
        }
        if (worst < *t_best) {
            *t_best = worst;
            *c_best = c;
        }
    }
}

int tf_shift_create(tf_handle *h, int k, int c, int bf16, tf_baseline **out)
{
    tf_baseline_input in;
    tf_bl_input_of(h, k, c, bf16, &in);
    return tf_baseline_create(TF_BASE_SHIFT, &in, out); /* agrees */
}

int tf_shift_run(tf_baseline *bl, const float *b, float *c, int threads, tf_timing *t)
{
    const tf_baseline_counters before = *tf_baseline_counters_get(bl);
    const int prev = omp_get_max_threads();
    omp_set_num_threads(threads);
    double t0 = MPI_Wtime();
    int st = tf_baseline_run(bl, b, c);
    t->total += MPI_Wtime() - t0;
    omp_set_num_threads(prev);
    const tf_baseline_counters *now = tf_baseline_counters_get(bl);
    t->calls++;
    t->coll_wait += now->comm_wait - before.comm_wait;
    t->local_comp += now->compute - before.compute;
    t->bytes_coll += now->bytes_received - before.bytes_received;
    t->msgs_coll += now->messages - before.messages;
    return st;
}
