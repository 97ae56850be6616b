/* Load balance of a plan, for --explain: how far the slowest rank is from
 * the mean (predicted time, nonzeros, rows of C, B rows received) and, when the plan
 * is imbalanced, what its main cause is and which option would fix it.
 * Needs only the header, row_off and all_stats. */
#ifndef TF_BALANCE_H
#define TF_BALANCE_H

#include <stdio.h>
#include "tf_plan.h"

/* Max over mean of the predicted time per rank beyond which --explain calls
 * a plan imbalanced: the slowest rank then idles the others for a fifth of
 * an SpMM or more. */
#define TF_IMBALANCE_FLAG 1.2

typedef struct {
    double time_ratio;  /* max / mean of t_total */
    double nnz_ratio;   /* max / mean of the rank's nonzeros */
    double recv_ratio;  /* max / mean of B rows received (collective + fetch) */
    double rows_ratio;  /* max / mean of the rank's rows of C */
    int slowest;        /* rank with the largest t_total */
    double slowest_nnz; /* its nonzeros over the mean */
    double slowest_recv; /* its B rows received over the mean */
    double slowest_rows; /* its rows of C over the mean */
} tf_balance;

void tf_balance_get(const tf_plan *plan, tf_balance *b);

/* One line: "balance: ..." and, when time_ratio > TF_IMBALANCE_FLAG,
 * "IMBALANCED" with the cause and the option to try. */
void tf_balance_print(FILE *f, const tf_plan *plan);

#endif
