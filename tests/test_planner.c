/* Planner invariants on generated and real matrices at several P, and the
 * cost model on hand-made cases. */
#include "tf_test.h"
#include "tf_analysis.h"
#include "tf_build.h"
#include "tf_classify.h"
#include "tf_cost_model.h"
#include "tf_dense.h"
#include "tf_error.h"
#include "tf_fingerprint.h"
#include "tf_partition.h"
#include "tf_plan_io.h"
#include "tf_planner.h"
#include "tf_radix.h"
#include "tf_reuse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Rebuilds the dense row-block of rank p from its plan part as triplets and
 * compares with A: every nonzero must appear in exactly one part, at its
 * global column, with its value. */
static void check_rank_reconstructs(const tf_csr *a, const tf_plan *plan, int p)
{
    const tf_rank_plan *rp = &plan->parts[p];
    int64_t n = a->ncols;
    ck_assert_int_eq(rp->row_begin, plan->row_off[p]);
    ck_assert_int_eq(rp->nrows, plan->row_off[p + 1] - plan->row_off[p]);
    float *dense = calloc((size_t)(n ? n : 1), sizeof *dense);
    int *hits = calloc((size_t)(n ? n : 1), sizeof *hits);
    /* Map collective buffer rows and fetch slots back to global B rows. */
    int64_t *coll_g = malloc((size_t)(rp->coll_buf_rows + 1) * sizeof *coll_g);
    int64_t *fet_g = malloc((size_t)(rp->fetch_buf_rows + 1) * sizeof *fet_g);
    for (int64_t r = 0; r < rp->n_recv; r++) {
        ck_assert(rp->recv_src[r] != p);
        for (int32_t x = 0; x < rp->recv_rows[r]; x++)
            coll_g[rp->recv_off[r] + x] = plan->brow_off[rp->recv_src[r]] + rp->recv_first[r] + x;
    }
    for (int64_t r = 0; r < rp->n_runs; r++) {
        ck_assert(rp->run_owner[r] != p);
        ck_assert(rp->run_count[r] >= 1);
        ck_assert(rp->run_first[r] + rp->run_count[r] <=
                  plan->brow_off[rp->run_owner[r] + 1] - plan->brow_off[rp->run_owner[r]]);
        for (int32_t x = 0; x < rp->run_count[r]; x++)
            fet_g[rp->run_off[r] + x] = plan->brow_off[rp->run_owner[r]] + rp->run_first[r] + x;
    }
    /* fetch rows touched: a CSC per column, translated to row lists */
    int64_t *fcol_start = rp->fet_ptr;
    for (int64_t li = 0; li < rp->nrows; li++) {
        int64_t i = rp->row_begin + li;
        memset(hits, 0, (size_t)(n ? n : 1) * sizeof *hits);
        for (int64_t e = rp->loc_ptr[li]; e < rp->loc_ptr[li + 1]; e++) {
            int64_t j = rp->brow_begin + rp->loc_idx[e];
            hits[j]++;
            dense[j] = rp->loc_val[e];
        }
        for (int64_t e = rp->coll_ptr[li]; e < rp->coll_ptr[li + 1]; e++) {
            ck_assert(rp->coll_idx[e] >= 0 && rp->coll_idx[e] < rp->coll_buf_rows);
            int64_t j = coll_g[rp->coll_idx[e]];
            hits[j]++;
            dense[j] = rp->coll_val[e];
        }
        for (int64_t c = 0; c < rp->fetch_buf_rows; c++)
            for (int64_t e = fcol_start[c]; e < fcol_start[c + 1]; e++)
                if (rp->fetch_rows[rp->fet_idx[e]] == li) {
                    hits[fet_g[c]]++;
                    dense[fet_g[c]] = rp->fet_val[e];
                }
        int64_t cnt = 0;
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
            ck_assert_int_eq(hits[a->col[k]], 1);
            ck_assert(dense[a->col[k]] == a->val[k]);
            cnt++;
        }
        int64_t total = 0;
        for (int64_t j = 0; j < n; j++)
            total += hits[j];
        ck_assert_int_eq(total, cnt);
    }
    /* CSC rows sorted within each column; fetch_rows ascending. */
    for (int64_t c = 0; c < rp->fetch_buf_rows; c++)
        for (int64_t e = fcol_start[c] + 1; e < fcol_start[c + 1]; e++)
            ck_assert(rp->fet_idx[e] > rp->fet_idx[e - 1]);
    for (int64_t t = 1; t < rp->n_fetch_rows; t++)
        ck_assert(rp->fetch_rows[t] > rp->fetch_rows[t - 1]);
    ck_assert_int_eq(rp->loc_nnz + rp->coll_nnz + rp->fet_nnz,
                     a->rowptr[rp->row_begin + rp->nrows] - a->rowptr[rp->row_begin]);
    free(dense);
    free(hits);
    free(coll_g);
    free(fet_g);
}

/* Each collective stripe's recipients are exactly the ranks that receive it,
 * and every owner's send list matches the receivers' lists. */
static void check_schedules(const tf_plan *plan)
{
    int P = plan->nranks;
    int64_t sends = 0, recvs = 0;
    int32_t *seen = calloc((size_t)plan->stripes.n + 1, sizeof *seen);
    int32_t *touched = calloc((size_t)plan->stripes.n + 1, sizeof *touched);
    for (int p = 0; p < P; p++) {
        const tf_rank_plan *rp = &plan->parts[p];
        recvs += rp->n_recv;
        for (int64_t r = 0; r < rp->n_recv; r++) {
            int q = rp->recv_src[r];
            const tf_rank_plan *rq = &plan->parts[q];
            int found = 0;
            for (int64_t w = 0; w < rq->n_send; w++)
                if (rq->send_dst[w] == p && rq->send_first[w] == rp->recv_first[r] &&
                    rq->send_rows[w] == rp->recv_rows[r])
                    found++;
            ck_assert_int_eq(found, 1);
            int64_t g = plan->brow_off[q] + rp->recv_first[r];
            ck_assert(rp->recv_first[r] >= 0 && g + rp->recv_rows[r] <= plan->brow_off[q + 1]);
            if (plan->coll_rows == TF_COLL_STRIPE) {
                /* An entry is exactly one stripe. */
                int hits = 0;
                for (int64_t s = 0; s < plan->stripes.n; s++)
                    if (plan->stripes.first[s] == g) {
                        hits++;
                        seen[s]++;
                        ck_assert_int_eq(plan->stripes.owner[s], q);
                        ck_assert_int_eq(plan->stripes.rows[s], rp->recv_rows[r]);
                    }
                ck_assert_int_eq(hits, 1);
            } else {
                /* An entry is a run of rows; mark the stripes it touches once
                 * per receiving rank (seen[] holds the last rank + 1). */
                for (int64_t s = 0; s < plan->stripes.n; s++)
                    if (plan->stripes.first[s] < g + rp->recv_rows[r] &&
                        g < plan->stripes.first[s] + plan->stripes.rows[s] && seen[s] != p + 1) {
                        ck_assert_int_eq(plan->stripes.owner[s], q);
                        seen[s] = p + 1;
                        touched[s]++;
                    }
            }
        }
        sends += rp->n_send;
    }
    ck_assert_int_eq(sends, recvs);
    for (int64_t s = 0; s < plan->stripes.n; s++) {
        if (plan->coll_rows == TF_COLL_STRIPE)
            ck_assert_int_eq(seen[s], plan->stripes.recipients[s]);
        else /* runs may span a gap row of a stripe nobody needs */
            ck_assert_int_ge(touched[s], plan->stripes.recipients[s]);
    }
    free(seen);
    free(touched);
}

static void check_plan_rows(const tf_csr *a, int P, int mode, int partition, int width,
                            int coll_rows)
{
    tf_plan_options o;
    tf_plan_options_default(&o);
    o.nranks = P;
    o.mode = mode;
    o.partition = partition;
    o.stripe_width = width;
    o.k = 16;
    o.coll_rows = coll_rows;
    tf_plan plan;
    ck_assert_msg(tf_plan_build(a, &o, &plan) == TF_OK, "%s", tf_error_message());
    ck_assert_int_eq(plan.n_parts, P);
    ck_assert(plan.checksum == tf_fingerprint_rows(a->rowptr, a->col, a->val, 0, a->nrows));
    for (int p = 0; p < P; p++)
        check_rank_reconstructs(a, &plan, p);
    check_schedules(&plan);
    for (int p = 0; p < P; p++) {
        if (mode == TF_MODE_FETCH)
            ck_assert_int_eq(plan.parts[p].coll_nnz + plan.parts[p].n_recv, 0);
        if (mode == TF_MODE_COLLECTIVE)
            ck_assert_int_eq(plan.parts[p].fet_nnz + plan.parts[p].n_runs, 0);
        ck_assert(plan.all_stats[p].t_total >= 0);
        ck_assert(plan.parts[p].stats.fetch_needed <= plan.parts[p].fetch_buf_rows);
        ck_assert(plan.parts[p].stats.remote_distinct >= plan.parts[p].stats.fetch_needed);
        const tf_rank_plan *rp = &plan.parts[p];
        for (int64_t r = 0; r < rp->n_recv; r++) {
            if (coll_rows == TF_COLL_STRIPE)
                ck_assert(rp->recv_rows[r] >= 1 && rp->recv_rows[r] <= width);
            /* Entries of one source never overlap and ascend. */
            if (r > 0 && rp->recv_src[r] == rp->recv_src[r - 1])
                ck_assert(rp->recv_first[r] >= rp->recv_first[r - 1] + rp->recv_rows[r - 1]);
        }
    }
    tf_plan_free(&plan);
}

static void check_plan(const tf_csr *a, int P, int mode, int partition, int width)
{
    check_plan_rows(a, P, mode, partition, width, TF_COLL_NEEDED);
    if (mode != TF_MODE_FETCH)
        check_plan_rows(a, P, mode, partition, width, TF_COLL_STRIPE);
}

START_TEST(collective_moves_exactly_the_needed_rows)
{
    /* At K >= 17 the collective spans no gaps: each rank receives exactly
     * the distinct remote rows it uses - the sparsity-aware minimum - and
     * never more than the whole-stripe plan. */
    tf_csr a;
    tf_test_random_csr(&a, 300, 300, 2500, 11);
    for (int P = 2; P <= 5; P++) {
        tf_plan_options o;
        tf_plan_options_default(&o);
        o.nranks = P;
        o.mode = TF_MODE_COLLECTIVE;
        o.k = 32;
        o.stripe_width = 8;
        tf_plan needed, stripe;
        ck_assert_int_eq(tf_plan_build(&a, &o, &needed), TF_OK);
        o.coll_rows = TF_COLL_STRIPE;
        ck_assert_int_eq(tf_plan_build(&a, &o, &stripe), TF_OK);
        for (int p = 0; p < P; p++) {
            ck_assert_int_eq(needed.parts[p].coll_buf_rows, needed.parts[p].stats.remote_distinct);
            ck_assert_int_le(needed.parts[p].coll_buf_rows, stripe.parts[p].coll_buf_rows);
            ck_assert_int_le(needed.all_stats[p].coll_rows_sent, stripe.all_stats[p].coll_rows_sent);
        }
        tf_plan_free(&needed);
        tf_plan_free(&stripe);
    }
    tf_csr_free(&a);
}
END_TEST

START_TEST(invariants_random_square)
{
    tf_csr a;
    tf_test_random_csr(&a, 300, 300, 2500, 11);
    int ps[] = {1, 2, 3, 4, 7, 16};
    for (int i = 0; i < 6; i++)
        for (int mode = 0; mode < 3; mode++) {
            check_plan(&a, ps[i], mode, TF_PART_ROWS, 8);
            check_plan(&a, ps[i], mode, TF_PART_NNZ, 5);
        }
    tf_csr_free(&a);
}
END_TEST

START_TEST(invariants_rectangular_and_tiny)
{
    tf_csr a;
    tf_test_random_csr(&a, 50, 173, 600, 3);
    for (int mode = 0; mode < 3; mode++) {
        check_plan(&a, 3, mode, TF_PART_ROWS, 4);
        check_plan(&a, 4, mode, TF_PART_NNZ, 32);
    }
    tf_csr_free(&a);
    tf_test_random_csr(&a, 173, 50, 600, 4);
    for (int mode = 0; mode < 3; mode++)
        check_plan(&a, 4, mode, TF_PART_ROWS, 3);
    tf_csr_free(&a);
    /* more ranks than rows; empty matrix; 1x1 */
    tf_test_random_csr(&a, 3, 3, 6, 5);
    for (int mode = 0; mode < 3; mode++)
        check_plan(&a, 8, mode, TF_PART_ROWS, 1);
    tf_csr_free(&a);
    tf_test_random_csr(&a, 10, 10, 0, 5);
    check_plan(&a, 4, TF_MODE_TWOFACE, TF_PART_NNZ, 2);
    tf_csr_free(&a);
    tf_test_random_csr(&a, 1, 1, 1, 5);
    check_plan(&a, 2, TF_MODE_TWOFACE, TF_PART_ROWS, 1);
    tf_csr_free(&a);
}
END_TEST

START_TEST(invariants_dense_column_and_row)
{
    /* one very dense column and one dense row: every rank wants column 5 */
    tf_coo coo;
    tf_coo_init(&coo, 64, 64, 256);
    for (int i = 0; i < 64; i++) {
        tf_coo_push(&coo, i, 5, 1.0 + i);
        tf_coo_push(&coo, 40, i, 2.0);
        tf_coo_push(&coo, i, (i * 7) % 64, 0.5);
    }
    tf_csr a;
    tf_csr_from_coo(&a, &coo);
    for (int mode = 0; mode < 3; mode++)
        for (int P = 1; P <= 5; P++)
            check_plan(&a, P, mode, TF_PART_ROWS, 4);
    tf_csr_free(&a);
    tf_coo_free(&coo);
}
END_TEST

START_TEST(runs_span_gaps_up_to_g)
{
    /* rank 1 needs rows 0, 2, 3, 10 of rank 0: with G = 1 -> runs {0..3}, {10};
     * with G = 0 -> {0}, {2..3}, {10}. */
    tf_coo coo;
    tf_coo_init(&coo, 32, 32, 16);
    int need[] = {0, 2, 3, 10};
    for (int x = 0; x < 4; x++)
        tf_coo_push(&coo, 20, need[x], 1.0);
    tf_csr a;
    tf_csr_from_coo(&a, &coo);
    for (int g = 0; g <= 1; g++) {
        tf_plan_options o;
        tf_plan_options_default(&o);
        o.nranks = 2;
        o.mode = TF_MODE_FETCH;
        o.gap = g;
        tf_plan plan;
        ck_assert_int_eq(tf_plan_build(&a, &o, &plan), TF_OK);
        const tf_rank_plan *rp = &plan.parts[1];
        ck_assert_int_eq(rp->n_runs, g ? 2 : 3);
        ck_assert_int_eq(rp->run_first[0], 0);
        ck_assert_int_eq(rp->run_count[0], g ? 4 : 1);
        ck_assert_int_eq(rp->stats.fetch_needed, 4);
        ck_assert_int_eq(rp->fetch_buf_rows, g ? 5 : 4);
        ck_assert_int_eq(rp->n_fetch_rows, 1);
        ck_assert_int_eq(rp->fetch_rows[0], 20 - 16);
        tf_plan_free(&plan);
    }
    tf_csr_free(&a);
    tf_coo_free(&coo);
}
END_TEST

START_TEST(gap_follows_the_model)
{
    tf_coeffs c;
    tf_coeffs_default(&c);
    c.alpha_fetch = 4e-6;
    c.beta_fetch = 1e-9;
    /* one row at K = 100 costs 400 bytes * 1 ns = 0.4 us -> 10 rows per request */
    ck_assert_int_eq(tf_cost_gap(&c, 100), 10);
    ck_assert_int_eq(tf_cost_gap(&c, 4000), 0);
    ck_assert_int_eq(tf_cost_gap(&c, 1), TF_MAX_GAP);
}
END_TEST

static tf_coeffs simple_coeffs(void)
{
    tf_coeffs c;
    memset(&c, 0, sizeof c);
    c.alpha_coll = 1e-6;
    c.beta_coll = 1e-9;
    c.alpha_fetch = 1e-6;
    c.beta_fetch = 1e-9;
    c.gamma_local = c.gamma_coll = c.gamma_fetch = 1e-9;
    c.threads = 2;
    return c;
}

/* Plans one matrix and returns the class of the sparse stripe (p, stripe of
 * global B row j). */
static int class_of(const tf_csr *a, int P, int W, const tf_coeffs *c, int k, int p, int64_t j)
{
    int64_t off[64];
    tf_partition_rows(a->nrows, P, off);
    tf_analysis an;
    ck_assert_int_eq(tf_analysis_run(a, P, off, off, W, 0, 0, 0, &an), TF_OK);
    ck_assert_int_eq(tf_classify(&an, c, k, TF_MODE_TWOFACE), TF_OK);
    int q = tf_partition_owner(off, P, j);
    int64_t s = tf_stripe_of(&an, q, j);
    int cls = -1;
    for (int64_t e = an.ss_off[p]; e < an.ss_off[p + 1]; e++)
        if (an.ss_stripe[e] == s)
            cls = an.ss_class[e];
    tf_analysis_free(&an);
    return cls;
}

/* The planner chooses between candidates on lean builds (tf_build.h) and
 * builds the ones kept again in full: the lean build must give the full
 * build's statistics, schedules and runs, bit for bit, in every mode, and
 * no part arrays. */
static void build_both(const tf_csr *a, int P, int mode, tf_plan *full, tf_plan *lean)
{
    tf_plan_options o;
    tf_plan_options_default(&o);
    o.nranks = P;
    o.mode = mode;
    o.k = 32;
    tf_plan *pl[2] = {full, lean};
    for (int x = 0; x < 2; x++) {
        tf_plan_header_init(pl[x], a->nrows, a->ncols, a->nnz, 0, &o);
        pl[x]->row_off = malloc((size_t)(P + 1) * sizeof *pl[x]->row_off);
        pl[x]->brow_off = malloc((size_t)(P + 1) * sizeof *pl[x]->brow_off);
        ck_assert_int_eq(tf_partition_nnz(a, P, pl[x]->row_off), TF_OK);
        memcpy(pl[x]->brow_off, pl[x]->row_off, (size_t)(P + 1) * sizeof *pl[x]->brow_off);
        tf_analysis an;
        ck_assert_int_eq(tf_analysis_run(a, P, pl[x]->row_off, pl[x]->brow_off, o.stripe_width,
                                         pl[x]->gap, tf_cost_reuse_window(&pl[x]->coeffs, o.k),
                                         tf_cost_fetch_window(&pl[x]->coeffs, o.k),
                                         &an),
                         TF_OK);
        ck_assert_int_eq(tf_classify(&an, &pl[x]->coeffs, o.k, mode), TF_OK);
        ck_assert_int_eq(x ? tf_build_parts_lean(a, &an, pl[x]) : tf_build_parts(a, &an, pl[x]),
                         TF_OK);
        tf_analysis_free(&an);
    }
}

static int same_ints(const void *x, const void *y, int64_t n, size_t es)
{
    return n <= 0 || (x && y && memcmp(x, y, (size_t)n * es) == 0);
}

START_TEST(lean_build_gives_the_full_builds_statistics)
{
    tf_csr a;
    tf_test_random_csr(&a, 300, 300, 4000, 77);
    const int modes[] = {TF_MODE_TWOFACE, TF_MODE_FETCH, TF_MODE_COLLECTIVE};
    for (int mi = 0; mi < 3; mi++) {
        tf_plan full, lean;
        build_both(&a, 5, modes[mi], &full, &lean);
        ck_assert_msg(memcmp(full.all_stats, lean.all_stats, 5 * sizeof *full.all_stats) == 0,
                      "mode %d: all_stats differ", modes[mi]);
        ck_assert(tf_plan_predicted_time(&full) == tf_plan_predicted_time(&lean));
        for (int p = 0; p < 5; p++) {
            const tf_rank_plan *f = &full.parts[p], *l = &lean.parts[p];
            ck_assert(memcmp(&f->stats, &l->stats, sizeof f->stats) == 0);
            ck_assert(f->n_recv == l->n_recv && f->n_send == l->n_send &&
                      f->n_runs == l->n_runs && f->loc_nnz == l->loc_nnz &&
                      f->coll_nnz == l->coll_nnz && f->fet_nnz == l->fet_nnz &&
                      f->fetch_buf_rows == l->fetch_buf_rows);
            ck_assert(same_ints(f->recv_src, l->recv_src, f->n_recv, 4) &&
                      same_ints(f->recv_first, l->recv_first, f->n_recv, 4) &&
                      same_ints(f->recv_rows, l->recv_rows, f->n_recv, 4) &&
                      same_ints(f->recv_off, l->recv_off, f->n_recv, 8) &&
                      same_ints(f->send_dst, l->send_dst, f->n_send, 4) &&
                      same_ints(f->send_first, l->send_first, f->n_send, 4) &&
                      same_ints(f->send_rows, l->send_rows, f->n_send, 4) &&
                      same_ints(f->run_owner, l->run_owner, f->n_runs, 4) &&
                      same_ints(f->run_first, l->run_first, f->n_runs, 4) &&
                      same_ints(f->run_count, l->run_count, f->n_runs, 4) &&
                      same_ints(f->run_off, l->run_off, f->n_runs, 8));
            ck_assert(!l->loc_idx && !l->loc_ptr && !l->coll_idx && !l->fet_idx &&
                      !l->fetch_rows);
        }
        tf_plan_free(&full);
        tf_plan_free(&lean);
    }
    tf_csr_free(&a);
}
END_TEST

/* The remote count's way: (row, position) pairs sorted by row, stably, then
 * tf_reuse_misses_sorted. cols is left sorted. */
static int64_t sorted_count(uint32_t *cols, int64_t n, int64_t window, uint32_t *pos,
                            uint32_t *tk, uint32_t *tv)
{
    for (int64_t e = 0; e < n; e++)
        pos[e] = (uint32_t)e;
    tf_radix_sort_u32(cols, pos, n, tk, tv);
    return tf_reuse_misses_sorted(cols, pos, n, window);
}

/* The definition read literally: a read misses unless the same row was
 * read at most `window` reads before it. */
static int64_t brute_count(const uint32_t *reads, int64_t n, int64_t window)
{
    int64_t miss = 0;
    for (int64_t e = 0; e < n; e++) {
        int hit = 0;
        for (int64_t d = 1; d <= window && d <= e && !hit; d++)
            hit = reads[e - d] == reads[e];
        miss += !hit;
    }
    return miss;
}

/* Reads of rows 1 2 1 3 1 (positions 0..4): row 1 comes back after 2
 * reads each time. */
START_TEST(reuse_counts_rows_read_again_within_the_window)
{
    const uint32_t reads[] = {1, 2, 1, 3, 1};
    const int64_t window[] = {0, 1, 2, 1000}, misses[] = {5, 5, 3, 3};
    /* no cache; row 1 gone after 2 reads; first reads only (twice) */
    uint32_t last[4];
    for (int i = 0; i < 4; i++) {
        uint32_t c[5], v[5], tk[5], tv[5];
        memcpy(c, reads, sizeof c);
        ck_assert_int_eq(sorted_count(c, 5, window[i], v, tk, tv), misses[i]);
        ck_assert_int_eq(tf_reuse_misses_band(reads, 5, window[i], 0, last, 4), misses[i]);
    }
    uint32_t c[1], v[1], tk[1], tv[1];
    ck_assert_int_eq(sorted_count(c, 0, 2, v, tk, tv), 0);
    ck_assert_int_eq(tf_reuse_misses_band(reads, 0, 2, 0, last, 4), 0);
}
END_TEST

/* The analysis counts the local part in one pass and the remote part from
 * its sort: both must give the definition's count on any reads, at any
 * window, with rows offset from 0 (a band starting at base). */
START_TEST(reuse_band_count_is_the_sorting_count)
{
    enum { N = 3000, ROWS = 400 };
    static uint32_t reads[N], c[N], v[N], tk[N], tv[N], last[ROWS];
    const uint32_t base = 1000;
    uint64_t h = 99;
    for (int trial = 0; trial < 20; trial++) {
        /* Mostly a few hot rows, sometimes any row: reuse at every distance. */
        for (int e = 0; e < N; e++) {
            h = h * 6364136223846793005ULL + 1442695040888963407ULL;
            uint32_t r = (uint32_t)(h >> 33);
            reads[e] = base + (trial % 2 ? r % ROWS : (r % 8 ? r % 16 : r % ROWS));
        }
        int64_t n = 1 + trial * (N - 1) / 19;
        const int64_t window[] = {0, 1, 7, 64, 500, 100000};
        for (int w = 0; w < 6; w++) {
            int64_t want = brute_count(reads, n, window[w]);
            memcpy(c, reads, sizeof c);
            ck_assert_int_eq(sorted_count(c, n, window[w], v, tk, tv), want);
            ck_assert_int_eq(tf_reuse_misses_band(reads, n, window[w], base, last, ROWS), want);
        }
    }
}
END_TEST

/* The kernel term: misses at gamma, hits at gamma_cached, and with no cache
 * in the coefficients (files from before the term) every nonzero at gamma. */
START_TEST(csr_cost_charges_misses_and_hits)
{
    tf_coeffs c = simple_coeffs();
    ck_assert_double_eq_tol(tf_cost_csr(&c, 2e-9, 10, 100, 30), 100 * 2e-9 * 10, 1e-18);
    ck_assert_int_eq(tf_cost_reuse_window(&c, 128), 0);
    c.cache_bytes = 1 << 20;
    c.gamma_cached = 0.25e-9;
    ck_assert_int_eq(tf_cost_reuse_window(&c, 128), 2048); /* 1 MiB of 512-byte rows */
    ck_assert_double_eq_tol(tf_cost_csr(&c, 2e-9, 10, 100, 30), (30 * 2e-9 + 70 * 0.25e-9) * 10,
                            1e-18);
    tf_rank_stats s;
    memset(&s, 0, sizeof s);
    s.nnz_local = 100;
    s.nnz_local_miss = 40;
    s.nnz_coll = 50;
    s.nnz_coll_miss = 5;
    tf_cost_predict(&c, 10, &s);
    ck_assert_double_eq_tol(s.t_local, (40 * 1e-9 + 60 * 0.25e-9) * 10, 1e-18);
    ck_assert_double_eq_tol(s.t_coll_comp, (5 * 1e-9 + 45 * 0.25e-9) * 10, 1e-18);
}
END_TEST

/* A fused pass's time goes to the two buckets at the prices the model gave
 * each part of the rank: here a collective nonzero costs 4 local ones, so
 * equal counts give the local part a fifth. Without both parts priced (no
 * stats, a part empty or unpriced) the split is by nonzeros. */
START_TEST(fused_pass_split_at_model_prices)
{
    tf_rank_stats s;
    memset(&s, 0, sizeof s);
    s.nnz_local = 1000;
    s.t_local = 1e-3;   /* 1 us per local nonzero */
    s.nnz_coll = 100;
    s.t_coll_comp = 4e-4; /* 4 us per collective nonzero */
    ck_assert_double_eq_tol(tf_stats_fused_local_share(&s, 50, 50), 0.2, 1e-12);
    ck_assert_double_eq_tol(tf_stats_fused_local_share(&s, 80, 5), 80.0 / 100.0, 1e-12);
    ck_assert_double_eq_tol(tf_stats_fused_local_share(&s, 0, 7), 0.0, 1e-12);
    ck_assert_double_eq_tol(tf_stats_fused_local_share(&s, 0, 0), 1.0, 1e-12);
    ck_assert_double_eq_tol(tf_stats_fused_local_share(NULL, 30, 10), 0.75, 1e-12);
    s.t_coll_comp = 0;
    ck_assert_double_eq_tol(tf_stats_fused_local_share(&s, 30, 10), 0.75, 1e-12);
    s.t_coll_comp = 4e-4;
    s.nnz_local = 0;
    ck_assert_double_eq_tol(tf_stats_fused_local_share(&s, 30, 10), 0.75, 1e-12);
}
END_TEST

/* The classification prices an owner under a change of what it sends by
 * repricing only the sending terms of its prediction: bitwise the full
 * prediction of the changed counts, whatever the counts, thread model,
 * precision and overlap. */
START_TEST(sends_repriced_as_the_full_prediction)
{
    uint64_t x = 12345;
    for (int trial = 0; trial < 400; trial++) {
        tf_coeffs c = simple_coeffs();
        c.beta_coll_max = 0.5e-9;
        c.alpha_sync = 2e-6;
        c.gamma_row = 0.3e-9;
        c.gamma_cached = 0.25e-9;
        c.gamma_fetch_cached = 0.4e-9;
        c.cache_bytes = trial % 3 ? 1 << 20 : 0;
        c.threads = 1 + trial % 2;
        c.overlap_fetch = trial % 5 ? 0.7 : 0;
        c.elem_bytes = trial % 4 == 1 ? 2 : 4;
        int64_t v[20];
        for (int i = 0; i < 20; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            v[i] = (int64_t)(x >> 40) % 5000;
        }
        tf_rank_stats a;
        memset(&a, 0, sizeof a);
        a.nnz_local = v[0];
        a.nnz_local_miss = v[1] % (v[0] + 1);
        a.nnz_coll = v[2];
        a.nnz_coll_miss = v[3] % (v[2] + 1);
        a.rows_local = v[4];
        a.rows_coll = v[5];
        a.nnz_fetch = v[6];
        a.nnz_fetch_miss = v[7] % (v[6] + 1);
        a.coll_rows_recv = v[8];
        a.coll_rows_sent = v[9];
        a.coll_peers_recv = v[10] % 64;
        a.coll_peers_sent = v[11] % 64;
        a.fetch_rows = v[12];
        a.fetch_requests = v[13];
        a.fetch_peers_recv = v[14] % 64;
        a.fetch_peers_sent = v[15] % 64;
        const int k = 1 + (int)(v[16] % 300);
        tf_cost_predict(&c, k, &a);
        tf_rank_stats b = a, full = a;
        b.coll_rows_sent = full.coll_rows_sent = v[17];
        b.coll_peers_sent = full.coll_peers_sent = v[18] % 64;
        b.fetch_peers_sent = full.fetch_peers_sent = v[19] % 64;
        tf_cost_predict_sends(&c, k, &b);
        tf_cost_predict(&c, k, &full);
        ck_assert_mem_eq(&b, &full, sizeof b);
    }
}
END_TEST

/* The analysis counts misses per rank: rank 1 reads rank 0's row 3 from
 * twenty rows, rank 0 reads its own rows 0..15 once each and row 2 again
 * right away. */
/* The cost per row of C: the local kernel pays it on every row of the rank,
 * the collective one on the rows it adds into; none without the
 * coefficient (plans and files from before it). */
START_TEST(csr_cost_charges_rows_of_c)
{
    tf_coeffs c = simple_coeffs();
    c.threads = 1; /* the parts add up */
    tf_rank_stats s;
    memset(&s, 0, sizeof s);
    s.nnz_local = s.nnz_local_miss = 100;
    s.nnz_coll = s.nnz_coll_miss = 50;
    s.rows_local = 60;
    s.rows_coll = 20;
    tf_cost_predict(&c, 10, &s);
    ck_assert_double_eq_tol(s.t_local, 100 * c.gamma_local * 10, 1e-18);
    ck_assert_double_eq_tol(s.t_coll_comp, 50 * c.gamma_coll * 10, 1e-18);
    c.gamma_row = 3e-9;
    ck_assert_double_eq_tol(tf_cost_rows(&c, 10, 7), 7 * 3e-9 * 10, 1e-18);
    tf_cost_predict(&c, 10, &s);
    ck_assert_double_eq_tol(s.t_local, (100 * c.gamma_local + 60 * 3e-9) * 10, 1e-18);
    ck_assert_double_eq_tol(s.t_coll_comp, (50 * c.gamma_coll + 20 * 3e-9) * 10, 1e-18);
    ck_assert_double_eq_tol(s.t_total, s.t_local + s.t_coll_comm + s.t_coll_comp, 1e-15);
    /* The collective part's rows: of 40 rows with 2 remote nonzeros each,
     * a quarter of those nonzeros collective leaves 1 - 0.75^2 of the rows
     * a collective pass; all of them when every one is collective. */
    ck_assert_int_eq(tf_coll_rows_share(0, 40, 80), 0);
    ck_assert_int_eq(tf_coll_rows_share(20, 40, 80), 18); /* 17.5 */
    ck_assert_int_eq(tf_coll_rows_share(40, 40, 40), 40);
    ck_assert_int_eq(tf_coll_rows_share(20, 40, 40), 20); /* one per row: linear */
    ck_assert_int_eq(tf_coll_rows_share(80, 40, 80), 40);
    ck_assert_int_eq(tf_coll_rows_share(0, 0, 0), 0);
}
END_TEST

START_TEST(analysis_counts_reuse_per_rank)
{
    tf_coo coo;
    tf_coo_init(&coo, 64, 64, 64);
    for (int i = 0; i < 16; i++)
        tf_coo_push(&coo, i, i, 1.0);
    tf_coo_push(&coo, 3, 2, 1.0); /* row 3 reads 2 (read by row 2 just before) and 3 */
    for (int i = 32; i < 52; i++)
        tf_coo_push(&coo, i, 3, 1.0);
    tf_csr a;
    tf_csr_from_coo(&a, &coo);
    int64_t off[3];
    tf_partition_rows(64, 2, off);
    tf_analysis an;
    ck_assert_int_eq(tf_analysis_run(&a, 2, off, off, 8, 0, 100, 0, &an), TF_OK);
    ck_assert_int_eq(an.nnz_local[0], 17);
    ck_assert_int_eq(an.local_miss[0], 16);
    ck_assert_int_eq(an.remote_nnz[1], 20);
    ck_assert_int_eq(an.remote_miss[1], 1);
    ck_assert_int_eq(tf_coll_miss_of(&an, 1, 20), 1);
    ck_assert_int_eq(tf_coll_miss_of(&an, 0, 7), 7); /* no remote reads: all miss */
    /* Rows with a remote nonzero: rank 1's rows 32..51; none of rank 0's. */
    ck_assert_int_eq(an.remote_rows[0], 0);
    ck_assert_int_eq(an.remote_rows[1], 20);
    ck_assert_int_eq(tf_coll_rows_share_of(&an, 1, 20), 20);
    tf_analysis_free(&an);
    /* Window 0: no cache, every read a miss. */
    ck_assert_int_eq(tf_analysis_run(&a, 2, off, off, 8, 0, 0, 0, &an), TF_OK);
    ck_assert_int_eq(an.local_miss[0], 17);
    ck_assert_int_eq(an.remote_miss[1], 20);
    tf_analysis_free(&an);
    tf_csr_free(&a);
    tf_coo_free(&coo);
}
END_TEST

/* The fetch kernel walks its nonzeros column by column: four of rank 1's
 * rows each read rank 0's rows 0..9, so in column order a row of C comes
 * back every 4 nonzeros (B rows, in row order, every 10). Rows 8 apart
 * are not streamed; rows 32..35 are (each within 4 rows of the previous
 * one in its column), so only the first of each column can miss. */
START_TEST(analysis_counts_fetch_row_reuse)
{
    static const struct {
        int step;
        int64_t window, fetch_window, remote_miss, fetch_miss;
    } want[] = {
        {8, 100, 100, 10, 4}, /* both fit: first reads only */
        {8, 4, 4, 40, 4},     /* C rows within 4, B rows not */
        {8, 4, 3, 40, 40},
        {8, 100, 0, 10, 40}, /* not counted: every fetched nonzero misses */
        {1, 100, 100, 10, 1}, /* streamed: the first row, once */
        {1, 100, 3, 10, 10},  /* the first row of each column */
    };
    for (size_t x = 0; x < sizeof want / sizeof want[0]; x++) {
        tf_coo coo;
        tf_coo_init(&coo, 64, 64, 64);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 10; j++)
                tf_coo_push(&coo, 32 + i * want[x].step, j, 1.0);
        tf_csr a;
        tf_csr_from_coo(&a, &coo);
        int64_t off[3];
        tf_partition_rows(64, 2, off);
        tf_analysis an;
        ck_assert_int_eq(tf_analysis_run(&a, 2, off, off, 8, 0, want[x].window,
                                         want[x].fetch_window, &an),
                         TF_OK);
        ck_assert_int_eq(an.remote_nnz[1], 40);
        ck_assert_int_eq(an.remote_miss[1], want[x].remote_miss);
        ck_assert_msg(an.fetch_miss[1] == want[x].fetch_miss, "case %zu: %lld misses, want %lld",
                      x, (long long)an.fetch_miss[1], (long long)want[x].fetch_miss);
        ck_assert_int_eq(tf_fetch_miss_of(&an, 1, 20), (want[x].fetch_miss + 1) / 2);
        /* The stripes see the same columns however the misses were counted. */
        ck_assert_int_eq(an.remote_distinct[1], 10);
        ck_assert_int_eq(an.ss_off[2] - an.ss_off[1], 2);
        tf_analysis_free(&an);
        tf_csr_free(&a);
        tf_coo_free(&coo);
    }
}
END_TEST

/* The count itself, against a brute-force reading of its definition on a
 * generated stream. */
START_TEST(csc_misses_match_their_definition)
{
    enum { N = 3000, ROWS = 300 };
    static uint32_t cols[N], rows[N], last[ROWS];
    uint64_t h = 12345;
    int64_t e = 0;
    for (uint32_t j = 0; e < N; j++) {
        h = tf_mix64(h + j);
        int deg = 1 + (int)(h % 12);
        uint32_t r = (uint32_t)(h >> 20) % 50;
        for (int d = 0; d < deg && e < N && r < ROWS; d++, e++) {
            cols[e] = j;
            rows[e] = r;
            h = tf_mix64(h);
            r += 1 + (uint32_t)(h % 9); /* steps of 1-9 rows: some streamed */
        }
    }
    const int64_t n = e;
    for (int64_t window = 1; window <= 2000; window *= 7) {
        int64_t want = 0;
        for (int64_t x = 0; x < n; x++) {
            int streamed = x > 0 && cols[x] == cols[x - 1] && rows[x] > rows[x - 1] &&
                           rows[x] - rows[x - 1] <= TF_REUSE_STREAM_ROWS;
            int reused = 0;
            for (int64_t y = x - 1; y >= 0 && x - y <= window; y--)
                if (rows[y] == rows[x]) {
                    reused = 1;
                    break;
                }
            want += !streamed && !reused;
        }
        ck_assert_int_eq(tf_reuse_csc_misses(cols, rows, n, window, TF_REUSE_STREAM_ROWS, last,
                                             ROWS),
                         want);
    }
    ck_assert_int_eq(tf_reuse_csc_misses(cols, rows, n, 0, 4, last, ROWS), n);
}
END_TEST

/* The fetch kernel: misses at gamma_fetch, hits at gamma_fetch_cached (and
 * all at gamma_fetch without that rate or a cache); with one thread per
 * rank, overlap_fetch of the fetched bytes travel while the rank computes
 * (its local part and the fetched runs), the per-request part stays. */
START_TEST(fetch_cost_charges_row_misses_and_hides_transfer)
{
    tf_coeffs c = simple_coeffs();
    c.threads = 1;
    ck_assert_double_eq_tol(tf_cost_csc(&c, 10, 100, 30), 100 * c.gamma_fetch * 10, 1e-18);
    c.gamma_fetch_cached = 0.5e-9;
    ck_assert_double_eq_tol(tf_cost_csc(&c, 10, 100, 30), 100 * c.gamma_fetch * 10, 1e-18);
    ck_assert_int_eq(tf_cost_fetch_window(&c, 128), 0);
    c.cache_bytes = 1 << 20;
    ck_assert_int_eq(tf_cost_fetch_window(&c, 128), 2048);
    ck_assert_double_eq_tol(tf_cost_csc(&c, 10, 100, 30),
                            (30 * c.gamma_fetch + 70 * 0.5e-9) * 10, 1e-18);
    tf_rank_stats s;
    memset(&s, 0, sizeof s);
    s.nnz_local = s.nnz_local_miss = 1000;
    s.nnz_fetch = 100;
    s.nnz_fetch_miss = 30;
    s.fetch_rows = 50;
    s.fetch_requests = 5;
    tf_cost_predict(&c, 10, &s);
    ck_assert_double_eq_tol(s.t_fetch_comp, (30 * c.gamma_fetch + 70 * 0.5e-9) * 10, 1e-18);
    double sum = s.t_local + s.t_fetch_comm + s.t_fetch_comp + s.t_sync;
    ck_assert_double_eq_tol(s.t_total, sum, 1e-15);
    ck_assert_double_eq(tf_cost_fetch_hidden_of(&c, 10, &s), 0);
    /* Half the bytes' time: 50 rows of 10 floats at 1 ns per byte, 2 us,
     * less than the 10.3 us of compute. */
    c.overlap_fetch = 0.5;
    tf_cost_predict(&c, 10, &s);
    const double bytes = 50 * 10 * 4 * c.beta_fetch;
    ck_assert_double_eq_tol(tf_cost_fetch_hidden_of(&c, 10, &s), 0.5 * bytes, 1e-18);
    ck_assert_double_eq_tol(s.t_total, sum - 0.5 * bytes, 1e-15);
    /* Never more than the compute, however long the transfer. */
    ck_assert_double_eq_tol(tf_cost_fetch_hidden(&c, 1e-6, 1.0), 0.5e-6, 1e-18);
    c.overlap_fetch = 1;
    ck_assert_double_eq_tol(tf_cost_fetch_hidden(&c, 1.0, 2e-6), 2e-6, 1e-18);
    /* With a fetch group of its own the transfer is that group's. */
    c.threads = 2;
    ck_assert_double_eq(tf_cost_fetch_hidden(&c, 1e-3, 1e-3), 0);
}
END_TEST

START_TEST(cost_model_dense_stripe_stays_collective_sparse_goes_fetch)
{
    /* 2 ranks, 64 rows each, W = 32. Rank 1 wants all 32 rows of rank 0's
     * first stripe (dense: each row used, many nonzeros) and one row of its
     * second stripe. At K = 64 and alpha >> beta*bytes, the full stripe as 32
     * single-row fetches costs 32 requests... but coalesced it is one run; so
     * make the dense stripe scattered: rows 0,2,4,...: 16 runs at G = 0. */
    tf_coo coo;
    tf_coo_init(&coo, 128, 128, 256);
    for (int j = 0; j < 32; j += 2)
        for (int i = 64; i < 72; i++)
            tf_coo_push(&coo, i, j, 1.0);
    tf_coo_push(&coo, 100, 40, 1.0);
    for (int i = 0; i < 128; i++)
        tf_coo_push(&coo, i, i, 1.0); /* local work on both ranks */
    tf_csr a;
    tf_csr_from_coo(&a, &coo);
    tf_coeffs c = simple_coeffs();
    c.alpha_fetch = 20e-6; /* requests are expensive */
    ck_assert_int_eq(class_of(&a, 2, 32, &c, 64, 1, 0), TF_CLASS_COLL);
    ck_assert_int_eq(class_of(&a, 2, 32, &c, 64, 1, 40), TF_CLASS_FETCH);
    /* With cheap requests the scattered stripe also becomes a fetch. */
    c.alpha_fetch = 1e-9;
    ck_assert_int_eq(class_of(&a, 2, 32, &c, 64, 1, 0), TF_CLASS_FETCH);
    tf_csr_free(&a);
    tf_coo_free(&coo);
}
END_TEST

START_TEST(cost_model_handshake_keeps_a_lone_fetch_collective)
{
    /* Rank 1 needs one row of rank 0's second stripe: as a fetch it is one
     * cheap request, but it makes rank 0 and rank 1 fetch peers, and each
     * SpMM then pays the READY/DONE handshake on both. Free handshakes: a
     * fetch. Handshakes dearer than moving the stripe: collective. */
    tf_coo coo;
    tf_coo_init(&coo, 128, 128, 256);
    tf_coo_push(&coo, 100, 40, 1.0);
    for (int i = 0; i < 128; i++)
        tf_coo_push(&coo, i, i, 1.0);
    tf_csr a;
    tf_csr_from_coo(&a, &coo);
    tf_coeffs c = simple_coeffs();
    ck_assert_int_eq(class_of(&a, 2, 32, &c, 64, 1, 40), TF_CLASS_FETCH);
    c.alpha_sync = 1e-3;
    ck_assert_int_eq(class_of(&a, 2, 32, &c, 64, 1, 40), TF_CLASS_COLL);
    tf_csr_free(&a);
    tf_coo_free(&coo);
}
END_TEST

START_TEST(whole_plan_check_finds_what_one_stripe_at_a_time_misses)
{
    /* Rank 1 needs one row from each of rank 0's 16 stripes (W = 8). Each
     * stripe is ~0.8 us cheaper for rank 1 as a fetch (one 256-byte row
     * instead of eight), but the first fetch from rank 0 brings a 5 us
     * handshake, so the greedy pass rejects every conversion on its own.
     * All 16 together save ~13 us on rank 1 and ~33 us of sends on rank 0:
     * the whole-plan check must pick the all-fetch plan. */
    tf_coo coo;
    tf_coo_init(&coo, 256, 256, 512);
    for (int s = 0; s < 16; s++)
        tf_coo_push(&coo, 128 + s, s * 8, 1.0);
    for (int i = 0; i < 256; i++)
        tf_coo_push(&coo, i, i, 1.0);
    tf_csr a;
    tf_csr_from_coo(&a, &coo);
    tf_coeffs c = simple_coeffs();
    c.threads = 1;
    c.alpha_sync = 5e-6;
    for (int s = 0; s < 16; s++)
        ck_assert_int_eq(class_of(&a, 2, 8, &c, 64, 1, s * 8), TF_CLASS_FETCH);
    /* A handshake dearer than everything fetching saves: all collective. */
    c.alpha_sync = 50e-6;
    ck_assert_int_eq(class_of(&a, 2, 8, &c, 64, 1, 0), TF_CLASS_COLL);
    tf_csr_free(&a);
    tf_coo_free(&coo);
}
END_TEST

static int plan_mixes(const tf_plan *p)
{
    int coll = 0, fetch = 0;
    for (int r = 0; r < p->nranks; r++) {
        coll |= p->parts[r].n_recv > 0;
        fetch |= p->parts[r].n_runs > 0;
    }
    return coll && fetch;
}

static double plan_time(const tf_plan *p)
{
    double w = 0;
    for (int r = 0; r < p->nranks; r++)
        w = p->all_stats[r].t_total > w ? p->all_stats[r].t_total : w;
    return w;
}

/* Lone random entries (a row or two of a 32-row stripe: cheap as fetches)
 * and a hub (B rows 0..191 wanted by every rank: cheap as a collective when
 * a fetched row costs 4x a multicast one). */
static void hub_matrix(tf_csr *a)
{
    tf_csr r;
    tf_test_random_csr(&r, 800, 800, 500, 9);
    tf_coo coo;
    tf_coo_init(&coo, 800, 800, 1400);
    for (int64_t i = 0; i < 800; i++) {
        for (int64_t e = r.rowptr[i]; e < r.rowptr[i + 1]; e++)
            if (r.col[e] >= 192)
                tf_coo_push(&coo, (int32_t)i, r.col[e], r.val[e]);
        tf_coo_push(&coo, (int32_t)i, (int32_t)(i % 192), 1.0);
    }
    tf_csr_from_coo(a, &coo);
    tf_coo_free(&coo);
    tf_csr_free(&r);
}

/* Sweep point i of 24: coefficients from fetched rows 4x dearer than
 * multicast ones to far cheaper, both collective kinds. */
static void hub_sweep_options(tf_plan_options *o, int P, int i)
{
    tf_plan_options_default(o);
    o->nranks = P;
    o->k = 32;
    o->stripe_width = 32;
    o->gap = 2;
    o->coll_rows = i % 2 ? TF_COLL_STRIPE : TF_COLL_NEEDED;
    o->coeffs.alpha_coll = 1e-6;
    o->coeffs.beta_coll = 0.4e-9;
    o->coeffs.alpha_fetch = 0.1e-6 * pow(2.0, (i / 2) % 4);
    o->coeffs.beta_fetch = 1.6e-9 * pow(0.5, i / 8);
    o->coeffs.alpha_sync = 0;
}

START_TEST(hybrid_kept_only_with_a_margin_over_pure_plans)
{
    /* Over a sweep of coefficients: a twoface plan that mixes is predicted
     * more than TF_HYBRID_MARGIN faster than both pure plans; and the sweep
     * has both outcomes, including greedy hybrids the margin replaced. */
    /* Two faces: lone random entries (a row or two of a 32-row stripe:
     * cheap as fetches) and a hub (B rows 0..191 wanted by every rank:
     * cheap as a collective when a fetched row costs 4x a multicast one),
     * under coefficients from that ratio to far cheaper fetches, both
     * collective kinds. */
    tf_csr a;
    hub_matrix(&a);
    int mixed = 0, replaced = 0;
    for (int P = 2; P <= 4; P++)
        for (int i = 0; i < 24; i++) {
            tf_plan_options o;
            hub_sweep_options(&o, P, i);
            tf_plan tw, greedy, pf, pc;
            ck_assert_int_eq(tf_plan_build(&a, &o, &tw), TF_OK);
            o.no_pure_check = 1;
            ck_assert_int_eq(tf_plan_build(&a, &o, &greedy), TF_OK);
            o.mode = TF_MODE_FETCH;
            ck_assert_int_eq(tf_plan_build(&a, &o, &pf), TF_OK);
            o.mode = TF_MODE_COLLECTIVE;
            ck_assert_int_eq(tf_plan_build(&a, &o, &pc), TF_OK);
            double best_pure = fmin(plan_time(&pf), plan_time(&pc));
            ck_assert_int_eq(tw.mode, TF_MODE_TWOFACE);
            if (plan_mixes(&tw)) {
                mixed++;
                ck_assert(plan_time(&tw) < (1.0 - TF_HYBRID_MARGIN) * best_pure);
            } else {
                ck_assert(plan_time(&tw) <= best_pure * (1 + 1e-12));
                if (plan_mixes(&greedy))
                    replaced++;
            }
            tf_plan_free(&tw);
            tf_plan_free(&greedy);
            tf_plan_free(&pf);
            tf_plan_free(&pc);
        }
    ck_assert_int_gt(mixed, 0);
    ck_assert_int_gt(replaced, 0);
    tf_csr_free(&a);
}
END_TEST

START_TEST(runner_up_carried_when_the_model_is_unsure)
{
    /* Over the same sweep: the runner-up is the best pure plan beside a
     * hybrid and the other pure plan beside a pure one, carried exactly when
     * predicted within TF_ALT_RATIO; it describes the same matrix and
     * partition with other classes; --no-alternative drops it and changes
     * nothing else. */
    tf_csr a;
    hub_matrix(&a);
    int carried = 0, beside_hybrid = 0;
    for (int P = 1; P <= 4; P++)
        for (int i = 0; i < 24; i++) {
            tf_plan_options o;
            hub_sweep_options(&o, P, i);
            tf_plan tw, plain, pf, pc;
            ck_assert_int_eq(tf_plan_build(&a, &o, &tw), TF_OK);
            o.no_alternative = 1;
            ck_assert_int_eq(tf_plan_build(&a, &o, &plain), TF_OK);
            ck_assert_ptr_null(plain.alt);
            ck_assert_double_eq(plan_time(&plain), plan_time(&tw));
            ck_assert_str_eq(tf_plan_classes(&plain), tf_plan_classes(&tw));
            o.mode = TF_MODE_FETCH;
            ck_assert_int_eq(tf_plan_build(&a, &o, &pf), TF_OK);
            ck_assert_ptr_null(pf.alt); /* an asked-for mode has none */
            o.mode = TF_MODE_COLLECTIVE;
            ck_assert_int_eq(tf_plan_build(&a, &o, &pc), TF_OK);
            const char *cls = tf_plan_classes(&tw);
            double runner;
            const char *runner_cls;
            if (strcmp(cls, "hybrid") == 0) {
                int f = plan_time(&pf) <= plan_time(&pc);
                runner = f ? plan_time(&pf) : plan_time(&pc);
                runner_cls = f ? "fetch" : "collective";
            } else if (strcmp(cls, "fetch") == 0) {
                runner = plan_time(&pc);
                runner_cls = "collective";
            } else if (strcmp(cls, "collective") == 0) {
                runner = plan_time(&pf);
                runner_cls = "fetch";
            } else {
                runner = INFINITY; /* P = 1: nothing remote */
                runner_cls = "";
            }
            if (runner <= TF_ALT_RATIO * plan_time(&tw)) {
                ck_assert_msg(tw.alt != NULL, "P %d point %d: %s plan, runner-up %s at %.3gx: not carried",
                              P, i, cls, runner_cls, runner / plan_time(&tw));
                ck_assert_int_eq(tf_plan_check_alt(&tw, tw.alt), TF_OK);
                ck_assert_str_eq(tf_plan_classes(tw.alt), runner_cls);
                ck_assert_double_eq(plan_time(tw.alt), runner);
                ck_assert_int_eq(tw.alt->mode, strcmp(runner_cls, "fetch") == 0
                                                   ? TF_MODE_FETCH
                                                   : TF_MODE_COLLECTIVE);
                carried++;
                beside_hybrid += strcmp(cls, "hybrid") == 0;
            } else {
                ck_assert_ptr_null(tw.alt);
            }
            tf_plan_free(&tw);
            tf_plan_free(&plain);
            tf_plan_free(&pf);
            tf_plan_free(&pc);
        }
    ck_assert_int_gt(carried, 0);
    ck_assert_int_gt(beside_hybrid, 0);
    ck_assert_int_lt(carried, 4 * 24 - 24); /* not at P = 1, not everywhere */
    tf_csr_free(&a);
}
END_TEST

START_TEST(fetch_floor_bounds_the_fetch_plan)
{
    /* The floor from an all-collective plan's statistics never exceeds the
     * built all-fetch plan's predicted time, over matrices, rank counts and
     * coefficients of both rank-time forms (one thread, with hidden fetch
     * bytes; two groups); where it rules the fetch candidate out, the choice
     * with that candidate built keeps the collective plan and no runner-up.
     * The sweep has both outcomes. */
    tf_csr mats[3];
    tf_test_random_csr(&mats[0], 300, 300, 4000, 77);
    tf_test_random_csr(&mats[1], 500, 500, 1500, 5);
    hub_matrix(&mats[2]);
    int skipped = 0, kept = 0;
    const int Ps[] = {2, 3, 5, 9};
    for (int m = 0; m < 3; m++)
        for (int pi = 0; pi < 4; pi++)
            for (int i = 0; i < 8; i++) {
                const int P = Ps[pi];
                tf_plan_options o;
                hub_sweep_options(&o, P, i);
                o.coeffs.alpha_sync = (i % 4) * 2e-6;
                o.coeffs.threads = i < 4 ? 1 : 2;
                o.coeffs.overlap_fetch = i < 4 ? 0.5 * (i % 3) : 0;
                o.coeffs.gamma_fetch = 1e-9;
                if (i % 2) {
                    /* Rows of B and C reused from cache, cheaper. */
                    o.coeffs.cache_bytes = 16384;
                    o.coeffs.gamma_cached = 0.2e-9;
                    o.coeffs.gamma_fetch_cached = 0.3e-9;
                    o.coeffs.gamma_row = 0.1e-9;
                }
                tf_plan pc, pf;
                o.mode = TF_MODE_COLLECTIVE;
                ck_assert_int_eq(tf_plan_build(&mats[m], &o, &pc), TF_OK);
                o.mode = TF_MODE_FETCH;
                ck_assert_int_eq(tf_plan_build(&mats[m], &o, &pf), TF_OK);
                double floor = tf_plan_fetch_floor(&pc), tf = plan_time(&pf);
                ck_assert_msg(floor <= tf * (1 + 1e-12),
                              "matrix %d P %d point %d: floor %.6g above the fetch plan's %.6g", m,
                              P, i, floor, tf);
                ck_assert(floor > 0);
                for (int na = 0; na < 2; na++) {
                    double t[3] = {plan_time(&pc), tf, 0};
                    int have[3] = {1, 1, 0}, chosen, runner, alt_mode;
                    tf_plan_choose(t, have, "collective", na, &chosen, &runner, &alt_mode);
                    if (!tf_plan_fetch_may_count(&pc, na)) {
                        ck_assert_int_eq(chosen, 0);
                        ck_assert_int_eq(runner, -1);
                        skipped++;
                    } else {
                        kept++;
                    }
                }
                tf_plan_free(&pc);
                tf_plan_free(&pf);
            }
    ck_assert_int_gt(skipped, 0);
    ck_assert_int_gt(kept, 0);
    for (int m = 0; m < 3; m++)
        tf_csr_free(&mats[m]);
}
END_TEST

static double predicted_spmm(const tf_csr *a, int P, int mode, const tf_coeffs *c, int64_t *peers)
{
    tf_plan_options o;
    tf_plan_options_default(&o);
    o.nranks = P;
    o.k = 64;
    o.stripe_width = 8;
    o.mode = mode;
    o.coeffs = *c;
    tf_plan plan;
    ck_assert_int_eq(tf_plan_build(a, &o, &plan), TF_OK);
    double worst = 0;
    int64_t recv = 0, sent = 0;
    for (int p = 0; p < P; p++) {
        const tf_rank_stats *s = &plan.all_stats[p];
        worst = s->t_total > worst ? s->t_total : worst;
        recv += s->fetch_peers_recv;
        sent += s->fetch_peers_sent;
        ck_assert_double_eq_tol(s->t_sync,
                                c->alpha_sync * (double)(s->fetch_peers_recv + s->fetch_peers_sent),
                                1e-15);
        ck_assert(s->fetch_peers_recv <= P - 1 && s->fetch_peers_sent <= P - 1);
        ck_assert((s->fetch_requests > 0) == (s->fetch_peers_recv > 0));
    }
    ck_assert_int_eq(recv, sent); /* every pair counted on both sides */
    *peers = recv;
    tf_plan_free(&plan);
    return worst;
}

START_TEST(twoface_plan_never_predicted_slower_than_a_pure_plan)
{
    /* The greedy pass works stripe by stripe; the planner then compares its
     * result with the pure plans, so the hybrid's predicted time is at most
     * theirs whatever the coefficients. */
    tf_csr a;
    tf_test_random_csr(&a, 400, 400, 4000, 5);
    tf_coeffs base = simple_coeffs();
    const double syncs[4] = {0, 1e-6, 1e-4, 1e-2};
    const double fetch_scale[3] = {0.01, 1, 100};
    for (int P = 2; P <= 5; P++)
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 3; j++) {
                tf_coeffs c = base;
                c.alpha_sync = syncs[i];
                c.alpha_fetch *= fetch_scale[j];
                c.beta_fetch *= fetch_scale[j];
                int64_t pt, pf, pc;
                double tt = predicted_spmm(&a, P, TF_MODE_TWOFACE, &c, &pt);
                double tf = predicted_spmm(&a, P, TF_MODE_FETCH, &c, &pf);
                double tc = predicted_spmm(&a, P, TF_MODE_COLLECTIVE, &c, &pc);
                ck_assert_msg(tt <= tf * (1 + 1e-9) && tt <= tc * (1 + 1e-9),
                              "P = %d sync %g fetch x%g: twoface %g, fetch %g, collective %g", P,
                              syncs[i], fetch_scale[j], tt, tf, tc);
                ck_assert_int_eq(pc, 0);
                ck_assert_int_eq(pf, (int64_t)P * (P - 1)); /* dense enough: all pairs */
            }
    tf_csr_free(&a);
}
END_TEST

START_TEST(cost_model_recipient_count_decides)
{
    /* P ranks of 32 rows, W = 32: every rank's first row-block is one stripe.
     * Every other rank r wants rows 0,2,4,...,30 of rank 0's stripe (16 runs at
     * G = 0). As a fetch that is 16 requests; as a collective it is one
     * message - cheap for one recipient. But rank 0 must send the stripe once
     * per recipient: with many recipients rank 0 becomes the bottleneck and
     * the planner converts some recipients to fetch. */
    tf_coeffs c = simple_coeffs();
    c.alpha_fetch = 5e-6; /* 16 requests: 80 us, vs 65 us per copy of the stripe */
    c.beta_coll = 4e-9;
    for (int P = 2; P <= 16; P += 14) {
        int n = 32 * P;
        tf_coo coo;
        tf_coo_init(&coo, n, n, 1024);
        for (int r = 1; r < P; r++)
            for (int j = 0; j < 32; j += 2)
                tf_coo_push(&coo, 32 * r, j, 1.0);
        for (int i = 0; i < n; i++)
            tf_coo_push(&coo, i, i, 1.0);
        tf_csr a;
        tf_csr_from_coo(&a, &coo);
        int nfetch = 0;
        for (int r = 1; r < P; r++)
            nfetch += class_of(&a, P, 32, &c, 128, r, 0) == TF_CLASS_FETCH;
        if (P == 2)
            ck_assert_int_eq(nfetch, 0); /* one recipient: collective */
        else
            ck_assert_msg(nfetch > 0 && nfetch < P - 1, "%d of %d fetch", nfetch, P - 1);
        tf_csr_free(&a);
        tf_coo_free(&coo);
    }
}
END_TEST

START_TEST(cost_prediction_terms)
{
    tf_coeffs c = simple_coeffs();
    tf_rank_stats s;
    memset(&s, 0, sizeof s);
    s.nnz_local = 1000;
    s.coll_rows_recv = 10;
    s.coll_rows_sent = 30;
    s.coll_peers_recv = 1;
    s.coll_peers_sent = 3;
    s.nnz_coll = 100;
    s.fetch_requests = 5;
    s.fetch_rows = 7;
    s.nnz_fetch = 20;
    tf_cost_predict(&c, 10, &s);
    ck_assert_double_eq_tol(s.t_local, 1e-5, 1e-15);
    ck_assert_double_eq_tol(s.t_coll_comm, 4e-6 + 40 * 40e-9, 1e-15);
    ck_assert_double_eq_tol(s.t_fetch_comm, 5e-6 + 7 * 40e-9, 1e-15);
    ck_assert_double_eq_tol(s.t_total, fmax(s.t_coll_half, s.t_fetch_half), 1e-18);
    c.threads = 1;
    tf_cost_predict(&c, 10, &s);
    ck_assert_double_eq_tol(s.t_total, s.t_local + s.t_coll_comm + s.t_coll_comp +
                                           s.t_fetch_comm + s.t_fetch_comp, 1e-18);
    /* A full-duplex link: the busier direction (30 rows sent) is charged on
     * top, 30 rows x 40 bytes x 2 ns; the received 10 rows are not. */
    c.beta_coll_max = 2e-9;
    tf_cost_predict(&c, 10, &s);
    ck_assert_double_eq_tol(s.t_coll_comm, 4e-6 + 40 * 40e-9 + 30 * 40 * 2e-9, 1e-15);
    s.coll_rows_recv = 50;
    tf_cost_predict(&c, 10, &s);
    ck_assert_double_eq_tol(s.t_coll_comm, 4e-6 + 80 * 40e-9 + 50 * 40 * 2e-9, 1e-15);
}
END_TEST

/* Dense shifting priced from a plan's statistics: the three compute
 * terms, a message at each end of the ring, bytes on both sides plus the
 * busier one, and bf16 halving the bytes. */
START_TEST(shift_cost_terms)
{
    tf_coeffs c = simple_coeffs();
    c.beta_coll_max = 2e-9;
    tf_rank_stats s;
    memset(&s, 0, sizeof s);
    s.t_local = 1e-3;
    s.t_coll_comp = 2e-4;
    s.t_fetch_comp = 3e-5;
    s.t_coll_comm = 7.0; /* the plan's own transfers are not shifting's */
    const double comp = 1e-3 + 2e-4 + 3e-5;
    ck_assert_double_eq_tol(tf_cost_shift(&c, &s, 0, 0), comp, 1e-15);
    const double per_byte = 2 * c.beta_coll + c.beta_coll_max;
    ck_assert_double_eq_tol(tf_cost_shift(&c, &s, 1000, 3),
                            comp + 2 * 3 * c.alpha_coll + 1000 * per_byte, 1e-15);
    c.elem_bytes = 2;
    ck_assert_double_eq_tol(tf_cost_shift(&c, &s, 1000, 3),
                            comp + 2 * 3 * c.alpha_coll + 500 * per_byte, 1e-15);
}
END_TEST

START_TEST(duplex_term_relieves_a_sending_owner)
{
    /* The recipient test's stripe, priced by a network where only the busier
     * direction of a link costs (beta_coll = 0): rank 0 receives nothing
     * and sends the stripe to every other rank, so with beta_coll_max it is
     * the bottleneck and the planner converts some recipients to fetch;
     * without the term the collective costs bytes nothing and all stay. */
    tf_coeffs c = simple_coeffs();
    c.alpha_fetch = 5e-6;
    c.beta_coll = 0;
    const int P = 16, n = 32 * P;
    tf_coo coo;
    tf_coo_init(&coo, n, n, 1024);
    for (int r = 1; r < P; r++)
        for (int j = 0; j < 32; j += 2)
            tf_coo_push(&coo, 32 * r, j, 1.0);
    for (int i = 0; i < n; i++)
        tf_coo_push(&coo, i, i, 1.0);
    tf_csr a;
    tf_csr_from_coo(&a, &coo);
    for (int duplex = 0; duplex < 2; duplex++) {
        c.beta_coll_max = duplex ? 2e-9 : 0; /* 16 KiB per copy: 33 us */
        int nfetch = 0;
        for (int r = 1; r < P; r++)
            nfetch += class_of(&a, P, 32, &c, 128, r, 0) == TF_CLASS_FETCH;
        if (duplex)
            ck_assert_msg(nfetch > 0 && nfetch < P - 1, "%d of %d fetch", nfetch, P - 1);
        else
            ck_assert_int_eq(nfetch, 0);
    }
    tf_csr_free(&a);
    tf_coo_free(&coo);
}
END_TEST

START_TEST(radix_sort_sorts)
{
    uint32_t k[1000], p[1000], tk[1000], tp[1000];
    uint64_t h = 1;
    for (int i = 0; i < 1000; i++) {
        h = h * 6364136223846793005ULL + 1442695040888963407ULL;
        k[i] = (uint32_t)(h >> 33);
        p[i] = (uint32_t)i;
    }
    k[5] = 0xFFFFFFFFu;
    uint32_t orig[1000];
    memcpy(orig, k, sizeof k);
    tf_radix_sort_u32(k, p, 1000, tk, tp);
    for (int i = 1; i < 1000; i++)
        ck_assert(k[i - 1] <= k[i]);
    for (int i = 0; i < 1000; i++)
        ck_assert(orig[p[i]] == k[i]);
}
END_TEST

START_TEST(bad_options_rejected)
{
    tf_csr a;
    tf_test_random_csr(&a, 10, 10, 20, 1);
    tf_plan_options o;
    tf_plan_options_default(&o);
    tf_plan plan;
    o.nranks = 0;
    ck_assert_int_eq(tf_plan_build(&a, &o, &plan), TF_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(tf_error_message(), "ranks"));
    o.nranks = 2;
    o.k = 0;
    ck_assert_int_eq(tf_plan_build(&a, &o, &plan), TF_ERR_ARG);
    o.k = 8;
    o.stripe_width = 0;
    ck_assert_int_eq(tf_plan_build(&a, &o, &plan), TF_ERR_ARG);
    tf_csr_free(&a);
}
END_TEST

/* A 0 x 0 matrix under --partition metis: its plan (empty permutation
 * included) must load back at every P, not fail its own summary checksum. */
START_TEST(empty_matrix_metis_plan_round_trips)
{
    tf_csr a;
    ck_assert_int_eq(tf_csr_alloc(&a, 0, 0, 0), TF_OK);
    char path[600];
    snprintf(path, sizeof path, "%s/tftest_%d_empty_metis.h5",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    for (int P = 1; P <= 4; P++) {
        tf_plan_options o;
        tf_plan_options_default(&o);
        o.nranks = P;
        o.partition = TF_PART_METIS;
        tf_plan plan, back;
        ck_assert_msg(tf_plan_build(&a, &o, &plan) == TF_OK, "%s", tf_error_message());
        ck_assert_msg(tf_plan_write(path, &plan, 3) == TF_OK, "%s", tf_error_message());
        ck_assert_msg(tf_plan_read(path, TF_PLAN_READ_ALL, &back) == TF_OK, "P=%d: %s", P,
                      tf_error_message());
        ck_assert_int_eq(back.nranks, P);
        ck_assert_int_eq(back.partition, TF_PART_METIS);
        tf_plan_free(&back);
        tf_plan_free(&plan);
    }
    unlink(path);
    tf_csr_free(&a);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("planner");
    TCase *tc = tcase_create("planner");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, invariants_random_square);
    tcase_add_test(tc, invariants_rectangular_and_tiny);
    tcase_add_test(tc, invariants_dense_column_and_row);
    tcase_add_test(tc, runs_span_gaps_up_to_g);
    tcase_add_test(tc, gap_follows_the_model);
    tcase_add_test(tc, cost_model_dense_stripe_stays_collective_sparse_goes_fetch);
    tcase_add_test(tc, cost_model_recipient_count_decides);
    tcase_add_test(tc, cost_model_handshake_keeps_a_lone_fetch_collective);
    tcase_add_test(tc, twoface_plan_never_predicted_slower_than_a_pure_plan);
    tcase_add_test(tc, whole_plan_check_finds_what_one_stripe_at_a_time_misses);
    tcase_add_test(tc, collective_moves_exactly_the_needed_rows);
    tcase_add_test(tc, hybrid_kept_only_with_a_margin_over_pure_plans);
    tcase_add_test(tc, runner_up_carried_when_the_model_is_unsure);
    tcase_add_test(tc, fetch_floor_bounds_the_fetch_plan);
    tcase_add_test(tc, cost_prediction_terms);
    tcase_add_test(tc, shift_cost_terms);
    tcase_add_test(tc, duplex_term_relieves_a_sending_owner);
    tcase_add_test(tc, radix_sort_sorts);
    tcase_add_test(tc, lean_build_gives_the_full_builds_statistics);
    tcase_add_test(tc, reuse_counts_rows_read_again_within_the_window);
    tcase_add_test(tc, reuse_band_count_is_the_sorting_count);
    tcase_add_test(tc, csr_cost_charges_misses_and_hits);
    tcase_add_test(tc, fused_pass_split_at_model_prices);
    tcase_add_test(tc, csr_cost_charges_rows_of_c);
    tcase_add_test(tc, sends_repriced_as_the_full_prediction);
    tcase_add_test(tc, analysis_counts_reuse_per_rank);
    tcase_add_test(tc, analysis_counts_fetch_row_reuse);
    tcase_add_test(tc, csc_misses_match_their_definition);
    tcase_add_test(tc, fetch_cost_charges_row_misses_and_hides_transfer);
    tcase_add_test(tc, bad_options_rejected);
    tcase_add_test(tc, empty_matrix_metis_plan_round_trips);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tf_test_run_serial(suite()); }
