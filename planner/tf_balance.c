#include "tf_balance.h"
#include "tf_cost_model.h"
#include "tf_partition.h"

static double ratio(double mx, double sum, int n)
{
    double mean = n > 0 ? sum / n : 0.0;
    return mean > 0 ? mx / mean : 1.0;
}

void tf_balance_get(const tf_plan *plan, tf_balance *b)
{
    int P = plan->nranks;
    double tmax = 0, tsum = 0, zmax = 0, zsum = 0, rmax = 0, rsum = 0, mmax = 0, msum = 0;
    b->slowest = 0;
    for (int p = 0; p < P; p++) {
        const tf_rank_stats *s = &plan->all_stats[p];
        double z = (double)(s->nnz_local + s->nnz_coll + s->nnz_fetch);
        double r = (double)(s->coll_rows_recv + s->fetch_rows);
        if (s->t_total > tmax) {
            tmax = s->t_total;
            b->slowest = p;
        }
        tsum += s->t_total;
        zmax = z > zmax ? z : zmax;
        zsum += z;
        rmax = r > rmax ? r : rmax;
        rsum += r;
        double m = (double)(plan->row_off[p + 1] - plan->row_off[p]);
        mmax = m > mmax ? m : mmax;
        msum += m;
    }
    b->time_ratio = ratio(tmax, tsum, P);
    b->nnz_ratio = ratio(zmax, zsum, P);
    b->recv_ratio = ratio(rmax, rsum, P);
    b->rows_ratio = ratio(mmax, msum, P);
    const tf_rank_stats *s = &plan->all_stats[b->slowest];
    b->slowest_nnz = ratio((double)(s->nnz_local + s->nnz_coll + s->nnz_fetch), zsum, P);
    b->slowest_recv = ratio((double)(s->coll_rows_recv + s->fetch_rows), rsum, P);
    b->slowest_rows = ratio(
        (double)(plan->row_off[b->slowest + 1] - plan->row_off[b->slowest]), msum, P);
}

void tf_balance_print(FILE *f, const tf_plan *plan)
{
    tf_balance b;
    tf_balance_get(plan, &b);
    fprintf(f, "balance (max / mean over ranks): predicted time %.2f (slowest rank %d), "
               "nonzeros %.2f, rows %.2f, B rows received %.2f",
            b.time_ratio, b.slowest, b.nnz_ratio, b.rows_ratio, b.recv_ratio);
    if (!(b.time_ratio > TF_IMBALANCE_FLAG)) {
        fprintf(f, ": balanced\n");
        return;
    }
    /* The cause: the slowest rank's excess of nonzeros, of rows of C (each
     * a load, store and loop of the kernel whatever its nonzeros) or of
     * communication, whichever is largest relative to the mean. */
    const char *fix;
    const char *what = "nonzeros";
    double x = b.slowest_nnz;
    if (b.slowest_rows > x) {
        what = "rows";
        x = b.slowest_rows;
    }
    /* Whether --partition work weighs the reuse of B rows with these
     * coefficients (docs/partition.md). */
    tf_work_weights w;
    tf_cost_work_weights(&plan->coeffs, plan->k_planned, &w);
    const int reuse = w.window > 0;
    const char *work_fix =
        reuse ? "try --partition work (bands of equal kernel work: rows, nonzeros, and "
                "nonzeros whose B row comes from cache weighing less)"
              : "try --partition work (bands of equal nonzeros plus a cost per row)";
    if (x >= b.slowest_recv && x > 1.1) {
        if (plan->partition == TF_PART_ROWS && x == b.slowest_nnz)
            fix = "try --partition nnz (bands of equal nonzeros)";
        else if ((plan->partition == TF_PART_NNZ || plan->partition == TF_PART_ROWS) &&
                 x == b.slowest_rows)
            fix = work_fix;
        else if (plan->partition == TF_PART_WORK)
            /* The bands already weigh what the model charges the kernels
             * (with the reuse term, the B rows from cache as well); what
             * is left is rows too heavy to split. */
            fix = reuse ? "the bands already weigh rows, nonzeros and the B rows from cache "
                          "(rows are too heavy to split): try fewer ranks"
                        : "the bands already weigh rows and nonzeros (the ranks differ in B "
                          "rows from cache, or rows are too heavy): try fewer ranks";
        else
            fix = "its rows are too heavy to balance by whole rows: try fewer ranks";
    } else if (reuse && b.slowest_recv <= 1.1 &&
               (plan->partition == TF_PART_NNZ || plan->partition == TF_PART_ROWS)) {
        /* Neither more nonzeros, rows nor rows received: the slowest rank
         * reads more of its B rows from memory than the others. */
        what = "B rows read from memory";
        fix = work_fix;
    } else {
        what = "B rows received";
        fix = plan->partition != TF_PART_METIS && plan->m == plan->n
                  ? "try --partition metis (a graph partition that cuts the rows received)"
                  : "the graph is hard to split this finely: try fewer ranks";
    }
    fprintf(f, ": IMBALANCED, rank %d has %.2fx the mean nonzeros and %.2fx the mean rows and "
               "receives %.2fx the mean B rows (the excess: %s); %s\n",
            b.slowest, b.slowest_nnz, b.slowest_rows, b.slowest_recv, what, fix);
}
