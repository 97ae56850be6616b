#include "tf_explain.h"
#include "tf_balance.h"
#include "tf_cost_model.h"
#include "tf_partition.h"
#include "tf_error.h"
#include "tf_outpath.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

void tf_explain_matrix(FILE *f, const tf_plan *plan)
{
    fprintf(f, "matrix: normalize %s; %s; ", tf_norm_name(plan->normalization),
            plan->symmetric ? "symmetric (this plan also serves the transpose)"
                            : "not symmetric (the transpose needs its own plan: --transpose)");
    if (plan->transposed)
        fprintf(f, "transposed: the backward plan of the plan with fingerprint %016llx",
                (unsigned long long)plan->transpose_of);
    else
        fprintf(f, "not transposed");
    fprintf(f, "; fingerprint %016llx\n", (unsigned long long)plan->checksum);
}

/* What B rows travel as, and what bf16 is predicted to save: the model run
 * again on the same plan with float32's byte terms and no rounding. The
 * model charges the owners' rounding of the rows that travel
 * (tf_cost_round), so where that outweighs the halved bytes - a transfer
 * that is itself a cheap copy, a rank that sends more than it computes -
 * the line says bf16 does not pay. The receivers' widening happens in the
 * kernels' loads, whose coefficients were measured on float32 rows: not
 * charged. */
static void explain_comm(FILE *f, const tf_plan *plan, double worst)
{
    if (plan->comm != TF_PREC_BF16) {
        fprintf(f, "comm: f32 (B rows travel as float32; --comm bf16 halves the bytes)\n");
        return;
    }
    tf_coeffs c32 = plan->coeffs;
    c32.elem_bytes = 4;
    double worst32 = 0, round = 0;
    for (int p = 0; p < plan->nranks; p++) {
        tf_rank_stats s = plan->all_stats[p];
        double r = tf_cost_round(&plan->coeffs, plan->k_planned, &s);
        if (r > round)
            round = r;
        tf_cost_predict(&c32, plan->k_planned, &s);
        if (s.t_total > worst32)
            worst32 = s.t_total;
    }
    double saved = worst32 > 0 ? 1.0 - worst / worst32 : 0.0;
    fprintf(f, "comm: bf16 (B rows travel as bfloat16, 2 bytes per element; each remote product "
               "off by at most 2^-8 relative): predicted %.3f ms vs %.3f ms with f32 for this split "
               "(%.0f%% %s), the owners' rounding of the rows that travel included (at most "
               "%.3f ms on a rank; the receivers' widening is not charged)%s\n",
            1e3 * worst, 1e3 * worst32, 100.0 * fabs(saved), saved >= 0 ? "less" : "more",
            1e3 * round,
            worst >= worst32 ? ": bf16 does not pay here, the rounding costs more than the "
                               "halved bytes save; plan and run with --comm f32"
                             : "");
    /* The model prices the owners' rounding, not the transport the
     * executor picks at run time: with every rank on one node the
     * collective's readers round the rows themselves as they copy them from
     * shared memory (docs/executor.md, "The collective on one node"), so the
     * same rounding runs on other ranks than the model's. */
    int64_t coll_rows = 0;
    for (int p = 0; p < plan->nranks; p++)
        coll_rows += plan->all_stats[p].coll_rows_recv;
    if (coll_rows > 0)
        fprintf(f, "comm: on one node (all ranks in one shared memory) where the collective "
                   "copies, each rank rounds the collective rows it receives as it copies them "
                   "from the owners' float32 B, so that part of the rounding falls on the "
                   "receivers; owners round only the rows others fetch\n");
    /* On one node rows need not travel at all (tf_node_direct.c), which
     * the model, pricing transfers, cannot see. */
    fprintf(f, "comm: on a single node, where the executor reads B in place from the owners' "
               "shared memory (docs/executor.md, \"One node: B read in place\"), nothing "
               "travels and nothing is rounded: B is read as float32 whatever --comm says, at "
               "float32's speed; bf16 pays where rows cross a network\n");
}

void tf_explain_print(FILE *f, const tf_plan *plan)
{
    const double row_bytes = (double)tf_prec_bytes(plan->comm) * plan->k_planned;
    fprintf(f, "plan: %lld x %lld, %lld nonzeros, %d ranks, K = %d, W = %d, G = %d, %s partition, "
               "mode %s, model for %d thread(s)/rank\n",
            (long long)plan->m, (long long)plan->n, (long long)plan->nnz, plan->nranks,
            plan->k_planned, plan->stripe_width, plan->gap,
            tf_partition_name(plan->partition), tf_mode_name(plan->mode), plan->coeffs.threads);
    if (plan->partition == TF_PART_WORK) {
        int64_t num, den;
        int fitted = tf_cost_row_weight(&plan->coeffs, &num, &den);
        fprintf(f, "work partition: a row of C weighs %.4g nonzeros (%s)", (double)num / den,
                fitted ? "gamma_row / gamma_local"
                       : "built-in: the coefficients have no gamma_row");
        tf_work_weights w;
        tf_cost_work_weights(&plan->coeffs, plan->k_planned, &w);
        if (w.window > 0)
            fprintf(f, "; a nonzero whose B row was read within the last %lld nonzeros weighs "
                       "%.4g (gamma_cached / gamma_local)",
                    (long long)w.window, (double)w.hit / w.miss);
        fputc('\n', f);
    }
    tf_explain_matrix(f, plan);
    /* Column names are explained in docs/cost-model.md ("Reading --explain");
     * calibrate/validate.sh reads columns 5, 6 and 10 of the 13. */
    fprintf(f, "per rank and SpMM at K = %d, as the cost model predicts (MiB = 2^20 bytes):\n",
            plan->k_planned);
    fprintf(f, "%6s %10s %10s %10s %12s %13s %11s %12s %12s %14s %13s %10s %9s\n", "rank",
            "nnz_local", "nnz_coll", "nnz_fetch", "stripes_coll", "stripes_fetch", "coll_in_MiB",
            "coll_out_MiB", "fetch_in_MiB", "fetch_requests", "t_loc+coll_ms", "t_fetch_ms",
            "t_rank_ms");
    double tot_coll_in = 0, tot_coll_out = 0, tot_fetch = 0, tot_min = 0, tot_req = 0;
    double tot_ag = 0, worst = 0, worst_min = 0;
    for (int p = 0; p < plan->nranks; p++) {
        const tf_rank_stats *s = &plan->all_stats[p];
        double cin = s->coll_rows_recv * row_bytes, cout = s->coll_rows_sent * row_bytes;
        double fin = s->fetch_rows * row_bytes;
        fprintf(f, "%6d %10lld %10lld %10lld %12lld %13lld %11.3f %12.3f %12.3f %14lld %13.3f %10.3f %9.3f\n",
                p, (long long)s->nnz_local, (long long)s->nnz_coll, (long long)s->nnz_fetch,
                (long long)s->stripes_coll, (long long)s->stripes_fetch, mib(cin), mib(cout),
                mib(fin), (long long)s->fetch_requests, 1e3 * s->t_coll_half,
                1e3 * s->t_fetch_half, 1e3 * s->t_total);
        tot_coll_in += cin;
        tot_coll_out += cout;
        tot_fetch += fin;
        tot_req += (double)s->fetch_requests;
        tot_min += s->remote_distinct * row_bytes;
        double nb = (double)(plan->brow_off[p + 1] - plan->brow_off[p]);
        tot_ag += ((double)plan->n - nb) * row_bytes;
        if (s->t_total > worst)
            worst = s->t_total;
        if (s->remote_distinct * row_bytes > worst_min)
            worst_min = s->remote_distinct * row_bytes;
    }
    fprintf(f, "totals: collective %.2f MiB in, fetch %.2f MiB in (%.0f requests); "
               "received %.2f MiB vs allgather %.2f MiB and sparsity-aware minimum %.2f MiB "
               "(%.2fx the minimum); predicted SpMM time %.3f ms (slowest rank)\n",
            mib(tot_coll_in), mib(tot_fetch), tot_req, mib(tot_coll_in + tot_fetch), mib(tot_ag),
            mib(tot_min), tot_min > 0 ? (tot_coll_in + tot_fetch) / tot_min : 1.0, 1e3 * worst);
    explain_comm(f, plan, worst);
    fprintf(f, "classes: %s", tf_plan_classes(plan));
    if (plan->alt) {
        double alt_worst = tf_plan_predicted_time(plan->alt);
        fprintf(f, "; runner-up carried: %s, predicted %.3f ms (%.2fx), the executor's start-up "
                   "trial picks one\n",
                tf_plan_classes(plan->alt), 1e3 * alt_worst, worst > 0 ? alt_worst / worst : 1.0);
    } else {
        fprintf(f, "; no runner-up carried\n");
    }
    tf_balance_print(f, plan);
}

enum { CELL_EMPTY = 0, CELL_LOCAL = 1, CELL_COLL = 2, CELL_FETCH = 3 };

int tf_explain_svg_bins(const tf_plan *plan)
{
    return plan->n < 800 ? (int)(plan->n ? plan->n : 1) : 800;
}

void tf_explain_svg_row(const tf_plan *plan, const tf_rank_plan *rp, double *row)
{
    int64_t n = plan->n;
    int bins = tf_explain_svg_bins(plan);
#define BIN(j) ((int)((j) * bins / (n ? n : 1)))
    {
        for (int64_t e = 0; e < rp->loc_nnz; e++)
            row[BIN(rp->brow_begin + rp->loc_idx[e]) * 4 + CELL_LOCAL] += 1;
        for (int64_t e = 0; e < rp->coll_nnz; e++) {
            int64_t b = rp->coll_idx[e];
            int64_t lo = 0, hi = rp->n_recv - 1;
            while (lo < hi) {
                int64_t mid = (lo + hi + 1) / 2;
                if (rp->recv_off[mid] <= b)
                    lo = mid;
                else
                    hi = mid - 1;
            }
            int64_t g = plan->brow_off[rp->recv_src[lo]] + rp->recv_first[lo] + (b - rp->recv_off[lo]);
            row[BIN(g) * 4 + CELL_COLL] += 1;
        }
        for (int64_t r = 0; r < rp->n_runs; r++)
            for (int64_t x = 0; x < rp->run_count[r]; x++) {
                int64_t slot = rp->run_off[r] + x;
                int64_t g = plan->brow_off[rp->run_owner[r]] + rp->run_first[r] + x;
                row[BIN(g) * 4 + CELL_FETCH] += (double)(rp->fet_ptr[slot + 1] - rp->fet_ptr[slot]);
            }
    }
#undef BIN
}

int tf_explain_svg(const char *path, const tf_plan *plan)
{
    if (plan->n_parts != plan->nranks)
        return tf_fail(TF_ERR_ARG, "%s: the picture needs every rank's part", path);
    /* Columns are binned so the picture stays readable and small whatever n
     * is; a bin shows the class holding most nonzeros in it. */
    int P = plan->nranks, bins = tf_explain_svg_bins(plan);
    double *acc = calloc((size_t)P * bins * 4, sizeof *acc);
    if (!acc)
        return tf_fail(TF_ERR_NOMEM, "%s: out of memory for the picture", path);
    for (int p = 0; p < P; p++)
        tf_explain_svg_row(plan, &plan->parts[p], acc + (size_t)p * bins * 4);
    int st = tf_explain_svg_draw(path, plan, acc);
    free(acc);
    return st;
}

int tf_explain_svg_draw(const char *path, const tf_plan *plan, const double *acc)
{
    int P = plan->nranks, bins = tf_explain_svg_bins(plan);
    tf_outpath out;
    int st = tf_outpath_open(&out, path);
    FILE *f = st == TF_OK ? tf_outpath_stream(&out) : NULL;
    if (!f) {
        if (st == TF_OK) {
            st = TF_ERR_IO;
            tf_outpath_abort(&out);
        }
        return st;
    }
    /* Empty cells are not drawn: the white background shows B rows that never
     * move to that rank. */
    const char *colour[4] = {"#ffffff", "#7f7f7f", "#d95f02", "#1b9e77"};
    int cw = bins < 200 ? 4 : 1, ch = P <= 16 ? 24 : (P <= 64 ? 8 : 3);
    int label_every = ch >= 14 ? 1 : (14 + ch - 1) / ch;
    int left = 70, top = 40, width = left + bins * cw + 20, height = top + P * ch + 60;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n", width, height);
    fprintf(f, "<title>twoface plan: %lld x %lld, %d ranks, W=%d, mode %s</title>\n",
            (long long)plan->m, (long long)plan->n, P, plan->stripe_width, tf_mode_name(plan->mode));
    /* An opaque background, and cells without outline: converters that draw
     * rects with a default stroke (ImageMagick's own SVG renderer) or flatten
     * transparency to black otherwise turn 1-px cells into black stripes. */
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\" "
               "stroke=\"none\"/>\n", width, height);
    fprintf(f, "<text x=\"%d\" y=\"20\">rows of A by rank (down) x columns of A = rows of B (across); "
               "%lld x %lld, %d ranks, K=%d</text>\n", left, (long long)plan->m, (long long)plan->n,
            P, plan->k_planned);
    for (int p = 0; p < P; p++) {
        /* 12-px labels: on thin rows only every label_every-th rank. */
        if (ch >= 8 && p % label_every == 0)
            fprintf(f, "<text x=\"4\" y=\"%d\">rank %d</text>\n", top + p * ch + ch / 2 + 4, p);
        const double *row = acc + (size_t)p * bins * 4;
        for (int b = 0; b < bins; b++) {
            int best = CELL_EMPTY;
            double bv = 0;
            for (int c = 1; c < 4; c++)
                if (row[b * 4 + c] > bv) {
                    bv = row[b * 4 + c];
                    best = c;
                }
            if (best == CELL_EMPTY)
                continue;
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
                       "stroke=\"none\"/>\n",
                    left + b * cw, top + p * ch, cw, ch - (ch > 4), colour[best]);
        }
    }
    int ly = top + P * ch + 25;
    const char *label[4] = {"never moves", "local", "collective", "fetch"};
    const int order[4] = {CELL_LOCAL, CELL_COLL, CELL_FETCH, CELL_EMPTY};
    for (int i = 0; i < 4; i++) {
        int c = order[i];
        /* The white swatch needs an outline to be seen; the others have none. */
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\" stroke=\"%s\"/>",
                left + i * 120, ly, colour[c], c == CELL_EMPTY ? "#7f7f7f" : "none");
        fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", left + i * 120 + 20, ly + 12, label[c]);
    }
    fprintf(f, "</svg>\n");
    return tf_outpath_commit(&out);
}
