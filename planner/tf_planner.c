#include "tf_planner.h"
#include "tf_analysis.h"
#include "tf_build.h"
#include "tf_classify.h"
#include "tf_cost_model.h"
#include "tf_error.h"
#include "tf_fingerprint.h"
#include "tf_partition.h"
#include "tf_partition_auto.h"
#include "tf_work_bands.h"
#include "tf_partition_metis.h"
#include "tf_plan_perm.h"
#include "tf_prepare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

void tf_plan_options_default(tf_plan_options *o)
{
    memset(o, 0, sizeof *o);
    o->nranks = 0;
    o->k = TF_DEFAULT_K;
    o->stripe_width = TF_DEFAULT_STRIPE_WIDTH;
    /* The library's default stays rows, which tests and tools lay their
     * cases out on; twoface-plan's is auto (docs/partition.md). */
    o->partition = TF_PART_ROWS;
    o->mode = TF_MODE_TWOFACE;
    o->gap = -1;
    o->coll_rows = TF_COLL_NEEDED;
    tf_metis_options_default(&o->metis);
    tf_coeffs_default(&o->coeffs);
}

/* Fixed bands must cover [0, n) in order. */
static int check_bands(const int64_t *off, int P, int64_t n, const char *what)
{
    if (off[0] != 0 || off[P] != n)
        return tf_fail(TF_ERR_ARG, "fixed %s bands run from %lld to %lld, the matrix has %lld",
                       what, (long long)off[0], (long long)off[P], (long long)n);
    for (int p = 0; p < P; p++)
        if (off[p + 1] < off[p])
            return tf_fail(TF_ERR_ARG, "fixed %s bands: band %d ends (%lld) before it starts (%lld)",
                           what, p, (long long)off[p + 1], (long long)off[p]);
    return TF_OK;
}

static int check_options(const tf_csr *a, const tf_plan_options *o)
{
    return tf_plan_check_options(a->nrows, a->ncols, o);
}

int tf_plan_check_options(int64_t m, int64_t n, const tf_plan_options *o)
{
    const struct { int64_t nrows, ncols; } dims = {m, n}, *a = &dims;
    if (o->nranks < 1)
        return tf_fail(TF_ERR_ARG, "number of ranks %d: expected at least 1", o->nranks);
    if (o->nranks > (1 << 20))
        return tf_fail(TF_ERR_ARG, "number of ranks %d: at most %d supported", o->nranks, 1 << 20);
    if (o->k < 1 || o->k > (1 << 20))
        return tf_fail(TF_ERR_ARG, "dense width K = %d: expected 1..%d", o->k, 1 << 20);
    if (o->stripe_width < 1 || o->stripe_width > (1 << 24))
        return tf_fail(TF_ERR_ARG, "stripe width %d: expected 1..%d", o->stripe_width, 1 << 24);
    if (o->gap < -1 || o->gap > (1 << 24))
        return tf_fail(TF_ERR_ARG, "gap %d: expected -1 (model) or 0..%d", o->gap, 1 << 24);
    if (o->coll_rows != TF_COLL_NEEDED && o->coll_rows != TF_COLL_STRIPE)
        return tf_fail(TF_ERR_ARG, "unknown collective rows setting %d", o->coll_rows);
    if (o->mode < TF_MODE_TWOFACE || o->mode > TF_MODE_COLLECTIVE)
        return tf_fail(TF_ERR_ARG, "unknown mode %d", o->mode);
    if (o->partition < TF_PART_ROWS || o->partition > TF_PART_AUTO)
        return tf_fail(TF_ERR_ARG, "unknown partition kind %d", o->partition);
    if (o->partition == TF_PART_METIS && a->nrows != a->ncols)
        return tf_fail(TF_ERR_ARG,
                       "--partition metis renumbers rows and columns alike and needs a square "
                       "matrix; this one is %lld x %lld (use --partition rows or nnz)",
                       (long long)a->nrows, (long long)a->ncols);
    if (a->nrows > TF_MAX_DIM || a->ncols > TF_MAX_DIM)
        return tf_fail(TF_ERR_RANGE, "matrix %lld x %lld exceeds the 32-bit index limit",
                       (long long)a->nrows, (long long)a->ncols);
    if (o->normalization < TF_NORM_NONE || o->normalization > TF_NORM_MEAN)
        return tf_fail(TF_ERR_ARG, "unknown normalisation %d", o->normalization);
    if (o->comm != TF_PREC_F32 && o->comm != TF_PREC_BF16)
        return tf_fail(TF_ERR_ARG, "unknown precision %d of what travels", o->comm);
    if (!o->row_off != !o->brow_off)
        return tf_fail(TF_ERR_ARG, "fixed bands: both row and B-row offsets are needed");
    if (o->row_off && o->partition == TF_PART_AUTO)
        return tf_fail(TF_ERR_ARG, "fixed bands come with the partition that made them (nnz or "
                                   "work), not auto, which chooses bands");
    if (o->row_off) {
        int st = check_bands(o->row_off, o->nranks, a->nrows, "row");
        if (st == TF_OK)
            st = check_bands(o->brow_off, o->nranks, a->ncols, "B-row");
        if (st)
            return st;
    }
    return TF_OK;
}

/* The row bands of o->partition (not metis); *kind gets the kind they are,
 * which auto chooses. */
static int partition_bands(const tf_csr *a, const tf_plan_options *o, int64_t *off, int *kind)
{
    *kind = o->partition;
    if (o->partition == TF_PART_AUTO)
        return tf_partition_auto(a, &o->coeffs, o->k, o->nranks, off, kind, o->auto_ratio);
    if (o->partition == TF_PART_NNZ)
        return tf_partition_nnz(a, o->nranks, off);
    if (o->partition == TF_PART_WORK) {
        tf_work_weights w;
        tf_cost_work_weights(&o->coeffs, o->k, &w);
        return tf_work_bands(a, &w, o->nranks, off);
    }
    return tf_partition_rows(a->nrows, o->nranks, off);
}

static int build_one(const tf_csr *a, const tf_plan_options *o, uint64_t checksum, int lean,
                     tf_plan *out);

/* The twoface plan is the greedy hybrid unless a pure plan is predicted
 * within TF_HYBRID_MARGIN of it (or faster), compared on the built plans,
 * whose counts are exact (the classification's own check counts fetch runs
 * per stripe, the built plan merges runs across stripes). The runner-up
 * (TF_ALT_RATIO) goes into out->alt. */
static int choose_twoface(const tf_csr *a, const tf_plan_options *o, uint64_t checksum,
                          tf_plan *out)
{
    /* cand[0] the greedy result, cand[1] pure fetch, cand[2] pure collective;
     * a greedy result that is already pure stands for its own mode, which
     * then needs no second build. */
    tf_plan cand[3];
    double t[3];
    int have[3] = {0, 0, 0}, lean = 0;
    memset(cand, 0, sizeof cand);
    int st = build_one(a, o, checksum, 0, &cand[0]);
    if (st)
        return st;
    have[0] = 1;
    t[0] = tf_plan_predicted_time(&cand[0]);
    const char *cls = tf_plan_classes(&cand[0]);
    for (int i = 1; i < 3 && st == TF_OK; i++) {
        int mode = i == 1 ? TF_MODE_FETCH : TF_MODE_COLLECTIVE;
        if (!tf_plan_pure_wanted(&cand[0], i, o->no_alternative))
            continue;
        tf_plan_options po = *o;
        po.mode = mode;
        /* A third candidate is built lean (tf_build.h) and in full again
         * only if kept, so that two plans' arrays are held, never three. */
        lean = i == 2 && have[1];
        if ((st = build_one(a, &po, checksum, lean, &cand[i])) == TF_OK) {
            have[i] = 1;
            t[i] = tf_plan_predicted_time(&cand[i]);
        }
    }
    if (st) {
        for (int i = 0; i < 3; i++)
            if (have[i])
                tf_plan_free(&cand[i]);
        return st;
    }
    int chosen, runner, alt_mode;
    tf_plan_choose(t, have, cls, o->no_alternative, &chosen, &runner, &alt_mode);
    for (int i = 0; i < 3; i++)
        if (have[i] && i != chosen && i != runner) {
            tf_plan_free(&cand[i]);
            have[i] = 0;
        }
    if (lean && have[2]) {
        /* cand[2] was built lean and is kept: in full now. */
        tf_plan_options po = *o;
        po.mode = TF_MODE_COLLECTIVE;
        tf_plan_free(&cand[2]);
        if ((st = build_one(a, &po, checksum, 0, &cand[2]))) {
            for (int i = 0; i < 2; i++)
                if (have[i])
                    tf_plan_free(&cand[i]);
            return st;
        }
    }
    *out = cand[chosen];
    out->mode = TF_MODE_TWOFACE; /* what was asked, whatever the classes */
    if (runner >= 0) {
        out->alt = malloc(sizeof *out->alt);
        if (!out->alt) {
            for (int i = 0; i < 3; i++)
                if (have[i])
                    tf_plan_free(&cand[i]);
            memset(out, 0, sizeof *out);
            return tf_fail(TF_ERR_NOMEM, "out of memory for the alternative plan");
        }
        *out->alt = cand[runner];
        out->alt->mode = alt_mode;
    }
    for (int i = 0; i < 3; i++)
        if (have[i] && i != chosen && i != runner)
            tf_plan_free(&cand[i]);
    return TF_OK;
}

void tf_plan_choose(const double t[3], const int have[3], const char *greedy_classes,
                    int no_alternative, int *chosen_out, int *runner_out, int *alt_mode)
{
    const int greedy_pure = strcmp(greedy_classes, "hybrid") != 0;
    /* The chosen plan: the best pure plan (fetch wins ties) unless the
     * greedy hybrid is more than the margin faster than it. */
    int is_fetch[3] = {strcmp(greedy_classes, "fetch") == 0, 1, 0};
    int best_pure = -1;
    if (greedy_pure)
        best_pure = 0;
    for (int i = 1; i < 3; i++)
        if (have[i] && (best_pure < 0 || t[i] < t[best_pure] ||
                        (t[i] == t[best_pure] && is_fetch[i])))
            best_pure = i;
    int chosen = best_pure;
    if (!greedy_pure && (best_pure < 0 || t[0] < (1.0 - TF_HYBRID_MARGIN) * t[best_pure]))
        chosen = 0;
    /* The runner-up: the best pure plan beside a hybrid, the other pure plan
     * beside a pure one. */
    int runner = -1;
    for (int i = 0; i < 3; i++) {
        if (!have[i] || i == chosen || (chosen != 0 && i == 0 && !greedy_pure))
            continue;
        if (runner < 0 || t[i] < t[runner])
            runner = i;
    }
    if (runner >= 0 && (no_alternative || !(t[runner] <= TF_ALT_RATIO * t[chosen])))
        runner = -1;
    *chosen_out = chosen;
    *runner_out = runner;
    /* A greedy result that is already pure is the plan of its mode. */
    int alt_fetch = runner == 0 ? is_fetch[0] : runner == 1;
    *alt_mode = runner == 0 && !greedy_pure ? TF_MODE_TWOFACE
                : alt_fetch                 ? TF_MODE_FETCH
                                            : TF_MODE_COLLECTIVE;
}

double tf_plan_fetch_floor(const tf_plan *coll)
{
    const tf_coeffs *c = &coll->coeffs;
    for (int i = 0; i < TF_NCOEFFS; i++) {
        double v = tf_coeffs_get(c, i);
        if (!isfinite(v) || v < 0)
            return 0;
    }
    if (!coll->all_stats)
        return 0;
    /* Per rank, of tf_cost_predict's terms for the fetch plan: its local
     * part is coll's (t_local); every remote nonzero is fetched (nnz_fetch =
     * coll's nnz_coll), at no less than the cheaper CSC rate; fetch_requests
     * >= fetch_peers_recv; the handshakes are alpha_sync (fetch_peers_recv +
     * fetch_peers_sent), with coll's peers: the same stripes, fetched. Where
     * coll received exactly the rows it needs (needed rows, no gap spanned:
     * K > 16), the fetch gets at least those; a one-thread rank hides at
     * most overlap_fetch of their bytes. Two groups take the larger of the
     * halves. */
    const double gf = c->gamma_fetch_cached > 0 && c->gamma_fetch_cached < c->gamma_fetch
                          ? c->gamma_fetch_cached
                          : c->gamma_fetch;
    const int exact_rows =
        coll->coll_rows == TF_COLL_NEEDED && tf_cost_coll_gap(coll->k_planned) == 0;
    const double shown = c->threads >= 2 ? 1.0 : 1.0 - fmin(c->overlap_fetch, 1.0);
    double floor = 0;
    for (int r = 0; r < coll->nranks; r++) {
        const tf_rank_stats *s = &coll->all_stats[r];
        double fetch = c->alpha_fetch * (double)s->coll_peers_recv +
                       gf * (double)s->nnz_coll * coll->k_planned;
        if (exact_rows)
            fetch += shown * tf_cost_fetch_bytes(c, coll->k_planned, s->coll_rows_recv);
        double t = (c->threads >= 2 ? fmax(s->t_local, fetch) : s->t_local + fetch) +
                   c->alpha_sync * (double)(s->coll_peers_recv + s->coll_peers_sent);
        floor = t > floor ? t : floor;
    }
    return floor;
}

int tf_plan_fetch_may_count(const tf_plan *coll, int no_alternative)
{
    double floor = tf_plan_fetch_floor(coll);
    double keep = (no_alternative ? 1.0 : TF_ALT_RATIO) * tf_plan_predicted_time(coll);
    /* The margin covers the rounding of the two sums' different orders. */
    return !(floor > keep * (1.0 + 1e-6));
}

int tf_plan_pure_wanted(const tf_plan *greedy, int i, int no_alternative)
{
    const char *cls = tf_plan_classes(greedy);
    /* A plan with nothing remote, or whose greedy result is this pure mode,
     * has nothing to compare. */
    if (strcmp(cls, "local") == 0 ||
        strcmp(cls, tf_mode_name(i == 1 ? TF_MODE_FETCH : TF_MODE_COLLECTIVE)) == 0)
        return 0;
    /* Nor one that cannot be kept. */
    return i != 1 || strcmp(cls, "collective") != 0 ||
           tf_plan_fetch_may_count(greedy, no_alternative);
}

static int build_bands(const tf_csr *a, const tf_plan_options *o, tf_plan *out)
{
    /* Every candidate plan carries the same checksum: hashed once. */
    uint64_t checksum = tf_plan_fingerprint(a, o->normalization);
    const int twoface = o->mode == TF_MODE_TWOFACE && !o->no_pure_check;
    if (o->row_off)
        return twoface ? choose_twoface(a, o, checksum, out) : build_one(a, o, checksum, 0, out);
    /* The bands once for every candidate: work and auto bands count the
     * reuse of every B row of the matrix. */
    memset(out, 0, sizeof *out);
    int st = check_options(a, o);
    if (st)
        return st;
    const int P = o->nranks;
    int64_t *off = malloc((size_t)(P + 1) * 2 * sizeof *off);
    if (!off)
        return tf_fail(TF_ERR_NOMEM, "out of memory for %d ranks", P);
    tf_plan_options po = *o;
    double t0 = omp_get_wtime();
    st = partition_bands(a, o, off, &po.partition);
    /* Square: B rows follow C rows, so the output of one SpMM can be the
     * input of the next with no redistribution. Rectangular: B rows by count. */
    if (st == TF_OK) {
        if (a->nrows == a->ncols)
            memcpy(off + P + 1, off, (size_t)(P + 1) * sizeof *off);
        else
            st = tf_partition_rows(a->ncols, P, off + P + 1);
    }
    if (o->timing)
        o->timing[0] += omp_get_wtime() - t0;
    if (st == TF_OK) {
        po.row_off = off;
        po.brow_off = off + P + 1;
        st = twoface ? choose_twoface(a, &po, checksum, out) : build_one(a, &po, checksum, 0, out);
    }
    free(off);
    return st;
}

/* --partition metis: the METIS order once (not once per candidate plan),
 * or the one given with the bands (--bands-from a METIS plan), then an
 * ordinary plan of P A P^T on its bands, which carries the permutation and
 * the fingerprint of A in the original ids (tf_plan_perm.h). The partition
 * phase's time covers METIS, the renumbering and the permuted copy. */
static int build_metis(const tf_csr *a, const tf_plan_options *o, tf_plan *out)
{
    memset(out, 0, sizeof *out);
    int st = check_options(a, o);
    if (st)
        return st;
    int P = o->nranks;
    int64_t n = a->nrows;
    if (!o->perm != !o->iperm || !o->perm != !o->row_off)
        return tf_fail(TF_ERR_ARG, "a metis plan on fixed bands needs the permutation they were "
                                   "made with, and a given permutation needs its bands");
    int64_t *off = malloc((size_t)(P + 1) * sizeof *off);
    int64_t *perm = NULL, *iperm = NULL;
    tf_csr ap;
    memset(&ap, 0, sizeof ap);
    if (!off)
        return tf_fail(TF_ERR_NOMEM, "out of memory for %d ranks", P);
    double t0 = omp_get_wtime();
    if (o->perm) {
        perm = malloc((size_t)(n > 0 ? n : 1) * sizeof *perm);
        iperm = malloc((size_t)(n > 0 ? n : 1) * sizeof *iperm);
        st = perm && iperm ? tf_perm_check(o->perm, o->iperm, n)
                           : tf_fail(TF_ERR_NOMEM, "out of memory for a permutation");
        if (st == TF_OK) {
            memcpy(perm, o->perm, (size_t)n * sizeof *perm);
            memcpy(iperm, o->iperm, (size_t)n * sizeof *iperm);
            memcpy(off, o->row_off, (size_t)(P + 1) * sizeof *off);
            st = tf_csr_permute(a, perm, iperm, &ap);
        }
    } else {
        st = tf_metis_order(a, P, &o->metis, &perm, &iperm, off, &ap, NULL);
    }
    double t_order = omp_get_wtime() - t0;
    if (st == TF_OK) {
        tf_plan_options po = *o;
        po.row_off = off;
        po.brow_off = o->perm ? o->brow_off : off;
        po.perm = po.iperm = NULL;
        st = build_bands(&ap, &po, out);
    }
    tf_csr_free(&ap);
    free(off);
    if (st) {
        free(perm);
        free(iperm);
        return st;
    }
    out->perm = perm;
    out->iperm = iperm;
    out->checksum = tf_plan_fingerprint(a, o->normalization);
    if (out->alt)
        out->alt->checksum = out->checksum;
    if (o->timing)
        o->timing[0] += t_order;
    return TF_OK;
}

int tf_plan_build(const tf_csr *a, const tf_plan_options *o, tf_plan *out)
{
    if (o->partition == TF_PART_METIS)
        return build_metis(a, o, out);
    if (o->perm)
        return tf_fail(TF_ERR_ARG, "a permutation is given, but the partition is %s, not metis",
                       tf_partition_name(o->partition));
    return build_bands(a, o, out);
}

void tf_plan_header_init(tf_plan *out, int64_t m, int64_t n, int64_t nnz, uint64_t checksum,
                         const tf_plan_options *o)
{
    memset(out, 0, sizeof *out);
    out->m = m;
    out->n = n;
    out->nnz = nnz;
    out->checksum = checksum;
    out->normalization = o->normalization;
    out->symmetric = o->symmetric;
    out->transposed = o->transposed;
    out->transpose_of = o->transposed ? o->transpose_of : 0;
    out->nranks = o->nranks;
    out->k_planned = o->k;
    out->stripe_width = o->stripe_width;
    out->partition = o->partition;
    out->mode = o->mode;
    out->coll_rows = o->coll_rows;
    out->comm = o->comm;
    out->coeffs = o->coeffs;
    out->coeffs.elem_bytes = tf_prec_bytes(o->comm);
    out->gap = o->gap >= 0 ? o->gap : tf_cost_gap(&out->coeffs, o->k);
    snprintf(out->generated_by, sizeof out->generated_by, "twoface-plan %d.%d",
             TF_PLAN_VERSION_MAJOR, TF_PLAN_VERSION_MINOR);
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(out->creation_date, sizeof out->creation_date, "%Y-%m-%dT%H:%M:%SZ", &tmv);
}

static int build_one(const tf_csr *a, const tf_plan_options *o, uint64_t checksum, int lean,
                     tf_plan *out)
{
    memset(out, 0, sizeof *out);
    int st = check_options(a, o);
    if (st)
        return st;
    int P = o->nranks;
    tf_plan_header_init(out, a->nrows, a->ncols, a->nnz, checksum, o);
    out->row_off = malloc((size_t)(P + 1) * sizeof *out->row_off);
    out->brow_off = malloc((size_t)(P + 1) * sizeof *out->brow_off);
    if (!out->row_off || !out->brow_off) {
        tf_plan_free(out);
        return tf_fail(TF_ERR_NOMEM, "out of memory for %d ranks", P);
    }
    /* The bands are cut once for every candidate (build_bands). */
    if (!o->row_off) {
        tf_plan_free(out);
        return tf_fail(TF_ERR_INTERNAL, "a candidate plan without its bands");
    }
    double t0 = omp_get_wtime();
    memcpy(out->row_off, o->row_off, (size_t)(P + 1) * sizeof *out->row_off);
    memcpy(out->brow_off, o->brow_off, (size_t)(P + 1) * sizeof *out->brow_off);
    double t1 = omp_get_wtime();
    tf_analysis an;
    st = tf_analysis_run(a, P, out->row_off, out->brow_off, o->stripe_width, out->gap,
                         tf_cost_reuse_window(&out->coeffs, o->k),
                         tf_cost_fetch_window(&out->coeffs, o->k), &an);
    double t2 = omp_get_wtime();
    if (!st) {
        an.coll_needed = o->coll_rows == TF_COLL_NEEDED;
        st = tf_classify(&an, &out->coeffs, o->k, o->mode);
    }
    double t3 = omp_get_wtime();
    if (!st)
        st = lean ? tf_build_parts_lean(a, &an, out) : tf_build_parts(a, &an, out);
    double t4 = omp_get_wtime();
    /* Added up: a twoface plan's candidates each count. */
    if (o->timing) {
        o->timing[0] += t1 - t0;
        o->timing[1] += t2 - t1;
        o->timing[2] += t3 - t2;
        o->timing[3] += t4 - t3;
    }
    tf_analysis_free(&an);
    if (st)
        tf_plan_free(out);
    return st;
}
