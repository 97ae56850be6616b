#include "tf_balance.h"
#include "tf_partition.h"

static double ratio(double mx, double sum, int n)
{
    double mean = n > 0 ? sum / n : 0.0;
    return mean > 0 ? mx / mean : 1.0;
}

void tf_balance_get(const tf_plan *plan, tf_balance *b)
{
    int P = plan->nranks;
    double tmax = 0, tsum = 0, zmax = 0, zsum = 0, rmax = 0, rsum = 0;
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
    }
    b->time_ratio = ratio(tmax, tsum, P);
    b->nnz_ratio = ratio(zmax, zsum, P);
    b->recv_ratio = ratio(rmax, rsum, P);
    const tf_rank_stats *s = &plan->all_stats[b->slowest];
    b->slowest_nnz = ratio((double)(s->nnz_local + s->nnz_coll + s->nnz_fetch), zsum, P);
    b->slowest_recv = ratio((double)(s->coll_rows_recv + s->fetch_rows), rsum, P);
}

void tf_balance_print(FILE *f, const tf_plan *plan)
{
    tf_balance b;
    tf_balance_get(plan, &b);
    fprintf(f, "balance (max / mean over ranks): predicted time %.2f (slowest rank %d), "
               "nonzeros %.2f, B rows received %.2f",
            b.time_ratio, b.slowest, b.nnz_ratio, b.recv_ratio);
    if (!(b.time_ratio > TF_IMBALANCE_FLAG)) {
        fprintf(f, ": balanced\n");
        return;
    }
    /* The cause: the slowest rank's excess of work or of communication,
     * whichever is larger relative to the mean. */
    int work = b.slowest_nnz >= b.slowest_recv && b.slowest_nnz > 1.1;
    const char *fix;
    if (work && plan->partition == TF_PART_ROWS)
        fix = "try --partition nnz (bands of equal nonzeros)";
    else if (work)
        fix = "its rows are too heavy to balance by whole rows: try fewer ranks";
    else if (plan->partition != TF_PART_METIS && plan->m == plan->n)
        fix = "try --partition metis (a graph partition that cuts the rows received)";
    else
        fix = "the graph is hard to split this finely: try fewer ranks";
    fprintf(f, ": IMBALANCED, rank %d has %.2fx the mean nonzeros and receives %.2fx the mean "
               "B rows; %s\n",
            b.slowest, b.slowest_nnz, b.slowest_recv, fix);
}
