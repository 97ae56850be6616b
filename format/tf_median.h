/* The median of a set of times: the executor's start-up trial, twoface-exec's
 * report and the calibration all summarise noisy repetitions with it. */
#ifndef TF_MEDIAN_H
#define TF_MEDIAN_H

/* Median of v[0..n) (sorts v in place, so v[0] and v[n-1] are then the
 * minimum and maximum); 0 for n <= 0. */
double tf_median(double *v, int n);

#endif
