/* The strategies twoface-exec compares, behind one interface (tf_algo.h). */
#include "tf_algo.h"
#include "tf_agree.h"
#include "tf_baseline.h"
#include "tf_bl_input.h"
#include "tf_engine.h"
#include "tf_error.h"
#include "tf_kernels.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tf_algo {
    tf_algo_spec spec;
    int plan_index;
    tf_handle *h;
    int k;
    int threads;
    tf_ctx *ctx;     /* twoface, fetch, collective */
    tf_baseline *bl; /* allgather, shift, p2p */
    float *b;        /* baselines: this rank's B rows */
    int64_t nb;
    int64_t calls;   /* baselines: runs since the last reset */
    int comm;        /* TF_COMM_F32 or TF_COMM_BF16, as run */
};

static const char *const kind_names[] = {"twoface",   "fetch", "collective",
                                         "allgather", "shift", "p2p"};
#define N_KINDS ((int)(sizeof kind_names / sizeof kind_names[0]))

static int parse_kind(const char *s, size_t len, int *kind)
{
    for (int i = 0; i < N_KINDS; i++)
        if (strlen(kind_names[i]) == len && strncmp(s, kind_names[i], len) == 0) {
            *kind = i;
            return TF_OK;
        }
    return tf_fail(TF_ERR_ARG,
                   "--algo: unknown algorithm '%.*s' (known: twoface, fetch, collective, "
                   "allgather, shift, p2p)",
                   (int)len, s);
}

/* "1,2,4": distinct positive divisors of nranks. */
static int parse_reps(const char *s, int nranks, int *reps, int *nreps)
{
    *nreps = 0;
    const char *p = s;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char item[32];
        if (len == 0 || len >= sizeof item)
            return tf_fail(TF_ERR_ARG, "--replication: expected a list of integers like 1,2,4, "
                                       "got '%s'",
                           s);
        memcpy(item, p, len);
        item[len] = '\0';
        char *end;
        long v = strtol(item, &end, 10);
        if (*end || v < 1 || v > 1 << 20)
            return tf_fail(TF_ERR_ARG, "--replication: '%s' is not a positive integer", item);
        if (nranks % v != 0)
            return tf_fail(TF_ERR_ARG, "--replication %ld does not divide %d ranks", v, nranks);
        for (int i = 0; i < *nreps; i++)
            if (reps[i] == (int)v)
                return tf_fail(TF_ERR_ARG, "--replication: %ld given twice", v);
        if (*nreps >= TF_ALGO_MAX)
            return tf_fail(TF_ERR_ARG, "--replication: too many values");
        reps[(*nreps)++] = (int)v;
        if (!e)
            break;
        p = e + 1;
    }
    return TF_OK;
}

int tf_algo_parse(const char *list, const char *replications, int nranks, tf_algo_spec **specs,
                  int *n)
{
    *specs = NULL;
    *n = 0;
    int reps[TF_ALGO_MAX], nreps = 0;
    if (replications) {
        int st = parse_reps(replications, nranks, reps, &nreps);
        if (st)
            return st;
    } else {
        for (int c = 1; c <= TF_ALGO_SHIFT_DEFAULT_MAX_C && c <= nranks; c++)
            if (nranks % c == 0)
                reps[nreps++] = c;
    }
    tf_algo_spec *out = calloc(TF_ALGO_MAX, sizeof *out);
    if (!out)
        return tf_fail(TF_ERR_NOMEM, "out of memory");
    int cnt = 0, has_shift = 0;
    const char *p = list;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 0) {
            free(out);
            return tf_fail(TF_ERR_ARG, "--algo: empty item in '%s'", list);
        }
        int kind = 0;
        int st = parse_kind(p, len, &kind);
        if (st) {
            free(out);
            return st;
        }
        int nc = kind == TF_ALGO_SHIFT ? nreps : 1;
        has_shift |= kind == TF_ALGO_SHIFT;
        for (int x = 0; x < nc; x++) {
            tf_algo_spec s;
            memset(&s, 0, sizeof s);
            s.kind = kind;
            s.replication = kind == TF_ALGO_SHIFT ? reps[x] : 1;
            if (kind == TF_ALGO_SHIFT)
                snprintf(s.name, sizeof s.name, "shift(c=%d)", s.replication);
            else
                snprintf(s.name, sizeof s.name, "%s", kind_names[kind]);
            for (int i = 0; i < cnt; i++)
                if (strcmp(out[i].name, s.name) == 0) {
                    free(out);
                    return tf_fail(TF_ERR_ARG, "--algo: %s given twice", s.name);
                }
            if (cnt >= TF_ALGO_MAX) {
                free(out);
                return tf_fail(TF_ERR_ARG, "--algo: more than %d entries", TF_ALGO_MAX);
            }
            out[cnt++] = s;
        }
        if (!e)
            break;
        p = e + 1;
    }
    if (replications && !has_shift) {
        free(out);
        return tf_fail(TF_ERR_ARG, "--replication applies to shift only, and --algo has no "
                                   "shift");
    }
    *specs = out;
    *n = cnt;
    return TF_OK;
}

int tf_algo_check_plans(tf_handle *const *plans, const char *const *names, int nplans)
{
    if (nplans < 1)
        return tf_fail(TF_ERR_ARG, "no plan file given");
    const tf_plan *p0 = tf_handle_plan(plans[0]);
    for (int i = 1; i < nplans; i++) {
        const tf_plan *pi = tf_handle_plan(plans[i]);
        if (pi->m != p0->m || pi->n != p0->n || pi->nnz != p0->nnz ||
            pi->checksum != p0->checksum)
            return tf_fail(TF_ERR_ARG, "%s and %s were made from different matrices", names[0],
                           names[i]);
        if (pi->nranks != p0->nranks ||
            memcmp(pi->row_off, p0->row_off, (size_t)(p0->nranks + 1) * sizeof *p0->row_off) ||
            memcmp(pi->brow_off, p0->brow_off, (size_t)(p0->nranks + 1) * sizeof *p0->brow_off))
            return tf_fail(TF_ERR_ARG,
                           "%s and %s have different partitions (row_off differs: plan both "
                           "with the same --partition)",
                           names[0], names[i]);
        if ((pi->perm == NULL) != (p0->perm == NULL) ||
            (pi->perm && memcmp(pi->perm, p0->perm, (size_t)p0->n * sizeof *p0->perm)))
            return tf_fail(TF_ERR_ARG,
                           "%s and %s number the rows differently (permutation differs: plan "
                           "one with --bands-from the other)",
                           names[0], names[i]);
        for (int j = 0; j < i; j++)
            if (tf_handle_plan(plans[j])->mode == pi->mode)
                return tf_fail(TF_ERR_ARG,
                               "%s and %s were both made with --mode %s: give one plan per mode",
                               names[j], names[i], tf_mode_name(pi->mode));
    }
    return TF_OK;
}

int tf_algo_pick_plan(const tf_algo_spec *spec, tf_handle *const *plans, int nplans, int *index)
{
    *index = -1;
    if (spec->kind >= TF_ALGO_ALLGATHER) {
        *index = 0;
        return TF_OK;
    }
    for (int i = 0; i < nplans; i++)
        if (tf_handle_plan(plans[i])->mode == spec->kind) {
            *index = i;
            return TF_OK;
        }
    return tf_fail(TF_ERR_ARG, "--algo %s needs a plan made with --mode %s",
                   kind_names[spec->kind], kind_names[spec->kind]);
}

int tf_algo_create(const tf_algo_spec *spec, tf_handle *const *plans, int nplans, int k,
                   const tf_exec_options *opt, tf_algo **out)
{
    *out = NULL;
    int idx;
    int st = tf_algo_pick_plan(spec, plans, nplans, &idx);
    if (st)
        return st; /* the same on every rank: the headers are */
    tf_handle *h = plans[idx];
    tf_algo *a = calloc(1, sizeof *a);
    st = a ? TF_OK : tf_fail(TF_ERR_NOMEM, "out of memory");
    st = tf_agree(tf_get_comm(h), st);
    if (st) {
        free(a);
        return st;
    }
    a->spec = *spec;
    a->plan_index = idx;
    a->h = h;
    a->k = k;
    /* The spec's precision, when it names one, over the options'. */
    tf_exec_options o;
    if (opt)
        o = *opt;
    else
        tf_exec_options_default(&o);
    if (spec->comm != TF_COMM_PLAN)
        o.comm = spec->comm;
    opt = &o;
    if (spec->kind <= TF_ALGO_COLLECTIVE) {
        st = tf_context_create(h, k, opt, &a->ctx); /* agrees */
        if (st) {
            free(a);
            return st;
        }
        a->threads = tf_ctx_threads(a->ctx);
        a->comm = tf_ctx_comm_precision(a->ctx);
        *out = a;
        return TF_OK;
    }
    /* The baselines move B in the precision twoface would (the plan's
     * choice unless opt says otherwise), so that comparisons stay fair. */
    st = tf_comm_resolve(h, opt->comm, &a->comm); /* agrees */
    if (st) {
        free(a);
        return st;
    }
    a->threads = opt->threads > 0 ? opt->threads : tf_default_threads(h);
    const tf_plan *pl = tf_handle_plan(h);
    a->nb = pl->brow_off[tf_get_rank(h) + 1] - pl->brow_off[tf_get_rank(h)];
    a->b = tf_kern_alloc_rows(a->nb, k, sizeof *a->b); /* touched, rows on lines as twoface's */
    st = a->b ? TF_OK
              : tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate B (%lld x %d)", tf_get_rank(h),
                        (long long)a->nb, k);
    st = tf_agree(tf_get_comm(h), st);
    if (st) {
        free(a->b);
        free(a);
        return st;
    }
    tf_baseline_input in;
    tf_bl_input_of(h, k, spec->replication, a->comm == TF_COMM_BF16, &in);
    int algo = spec->kind == TF_ALGO_ALLGATHER ? TF_BASE_ALLGATHER
               : spec->kind == TF_ALGO_SHIFT   ? TF_BASE_SHIFT
                                               : TF_BASE_P2P;
    omp_set_num_threads(a->threads);
    st = tf_baseline_create(algo, &in, &a->bl); /* agrees */
    if (st) {
        free(a->b);
        free(a);
        return st;
    }
    *out = a;
    return TF_OK;
}

float *tf_algo_b(tf_algo *a)
{
    if (a->ctx)
        return tf_b_rows(a->ctx, NULL, NULL);
    return a->b;
}

int tf_algo_run(tf_algo *a, float *c)
{
    if (a->ctx)
        return tf_spmm(a->ctx, c);
    omp_set_num_threads(a->threads);
    a->calls++;
    return tf_baseline_run(a->bl, a->b, c);
}

void tf_algo_stats_get(const tf_algo *a, tf_algo_stats *s)
{
    memset(s, 0, sizeof *s);
    if (a->ctx) {
        tf_timing t;
        tf_timing_get(a->ctx, &t);
        s->detail = t;
        s->calls = t.calls;
        s->comm = t.coll_wait + t.fetch_wait + t.sync;
        s->compute = t.local_comp + t.coll_comp + t.fetch_comp + t.merge + t.pack;
        s->bytes = t.bytes_coll + t.bytes_fetch;
        s->msgs = t.msgs_coll + t.msgs_fetch;
        return;
    }
    const tf_baseline_counters *ct = tf_baseline_counters_get(a->bl);
    s->calls = a->calls;
    s->comm = ct->comm_wait;
    s->compute = ct->compute;
    s->bytes = ct->bytes_received;
    s->msgs = ct->messages;
}

void tf_algo_reset(tf_algo *a)
{
    if (a->ctx)
        tf_timing_reset(a->ctx);
    else {
        tf_baseline_counters_reset(a->bl);
        a->calls = 0;
    }
}

const tf_algo_spec *tf_algo_spec_of(const tf_algo *a) { return &a->spec; }
int tf_algo_plan_index(const tf_algo *a) { return a->plan_index; }
int tf_algo_threads(const tf_algo *a) { return a->threads; }
int tf_algo_threads_fetch(const tf_algo *a) { return a->ctx ? tf_ctx_threads_fetch(a->ctx) : 0; }
int tf_algo_selection(const tf_algo *a, tf_selection *s)
{
    if (!a->ctx)
        return 0;
    tf_selection_get(a->ctx, s);
    return 1;
}

int tf_algo_free(tf_algo *a)
{
    if (!a)
        return TF_OK;
    if (a->ctx)
        tf_context_free(a->ctx);
    if (a->bl)
        tf_baseline_free(a->bl);
    free(a->b);
    free(a);
    return TF_OK;
}

int tf_algo_comm(const tf_algo *a) { return a->comm; }
const char *tf_algo_coll_transport(const tf_algo *a)
{
    return a->ctx ? tf_ctx_coll_transport(a->ctx) : NULL;
}
