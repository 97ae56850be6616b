/* What a plan file says about itself, for docs/scale.md: one JSON line per
 * plan, for the plan and for its runner-up (when carried), from the header's
 * statistics and stripe table alone (no parts are read).
 *
 *   classes        hybrid / fetch / collective / local
 *   coll_share     collective share of the remote sparse stripes
 *   rows_max/mean  B rows a rank receives per SpMM (collective rows + fetched
 *                  rows, gap rows included), max and mean over ranks
 *   min_max/mean   the sparsity-aware minimum: distinct remote rows needed
 *   recip_*        collective recipients per dense stripe, over the stripes
 *                  that have any
 *   want_*         ranks wanting a dense stripe (recipients + fetchers), over
 *                  the stripes anybody wants: what the published method's
 *                  multicast would have had as recipients
 *   sent_max       B rows a rank sends by the collective per SpMM (once per
 *                  recipient), max over ranks: what its send datatype gathers
 *   pred_ms        the model's SpMM time (slowest rank)
 *
 * usage: plan_stats PLAN.h5 ...   (exit 1 with a one-line error on a bad file) */
#include "tf_error.h"
#include "tf_plan.h"
#include "tf_plan_io.h"

#include <stdio.h>

static void print_one(const char *path, const char *which, const tf_plan *p)
{
    double rows_max = 0, rows_sum = 0, min_max = 0, min_sum = 0, sc = 0, sf = 0, sent_max = 0;
    for (int r = 0; r < p->nranks; r++) {
        const tf_rank_stats *s = &p->all_stats[r];
        double rows = (double)(s->coll_rows_recv + s->fetch_rows);
        rows_sum += rows;
        rows_max = rows > rows_max ? rows : rows_max;
        min_sum += (double)s->remote_distinct;
        min_max = (double)s->remote_distinct > min_max ? (double)s->remote_distinct : min_max;
        if ((double)s->coll_rows_sent > sent_max)
            sent_max = (double)s->coll_rows_sent;
        sc += (double)s->stripes_coll;
        sf += (double)s->stripes_fetch;
    }
    double rc_sum = 0, rc_max = 0, w_sum = 0, w_max = 0;
    int64_t rc_n = 0, w_n = 0;
    for (int64_t i = 0; i < p->stripes.n; i++) {
        double rc = p->stripes.recipients[i], w = rc + p->stripes.fetchers[i];
        if (rc > 0) {
            rc_sum += rc;
            rc_max = rc > rc_max ? rc : rc_max;
            rc_n++;
        }
        if (w > 0) {
            w_sum += w;
            w_max = w > w_max ? w : w_max;
            w_n++;
        }
    }
    const double P = p->nranks > 0 ? p->nranks : 1;
    printf("{\"plan\": \"%s\", \"which\": \"%s\", \"ranks\": %d, \"k_planned\": %d, "
           "\"classes\": \"%s\", \"coll_share\": %.4f, \"rows_max\": %.0f, \"rows_mean\": %.1f, "
           "\"min_max\": %.0f, \"min_mean\": %.1f, \"recip_mean\": %.2f, \"recip_max\": %.0f, "
           "\"want_mean\": %.2f, \"want_max\": %.0f, \"sent_max\": %.0f, \"pred_ms\": %.4f}\n",
           path, which, p->nranks, p->k_planned, tf_plan_classes(p),
           sc + sf > 0 ? sc / (sc + sf) : 0.0, rows_max, rows_sum / P, min_max, min_sum / P,
           rc_n ? rc_sum / (double)rc_n : 0.0, rc_max, w_n ? w_sum / (double)w_n : 0.0, w_max,
           sent_max, 1e3 * tf_plan_predicted_time(p));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: plan_stats PLAN.h5 ...\n");
        return 2;
    }
    for (int a = 1; a < argc; a++) {
        tf_plan p;
        if (tf_plan_read(argv[a], TF_PLAN_READ_HEADER, &p) != TF_OK) {
            fprintf(stderr, "plan_stats: %s\n", tf_error_message());
            return 1;
        }
        print_one(argv[a], "planned", &p);
        if (p.alt)
            print_one(argv[a], "alternative", p.alt);
        tf_plan_free(&p);
    }
    return 0;
}
