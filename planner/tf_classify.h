/* Classification of sparse stripes into collective and fetch.
 *
 * twoface mode: start with every remote stripe collective, then run at most
 * TF_CLASSIFY_ROUNDS rounds. In a round every receiver, on its own, visits its
 * stripes in ascending order of their net cost as a fetch (fetch cost minus
 * the collective work it removes at the receiver *and at the owner*) and
 * converts a stripe when that lowers the larger predicted time of the two
 * ranks it involves (receiver and owner), or lowers total work without
 * raising that maximum; it may also convert a fetch back. The owners'
 * counts are those agreed at the end of the previous round, with the
 * receiver's own changes counted once per recipient of the owner that
 * could make them, and each move as already made by the recipients before
 * it in rank order (all recipients decide at once; docs/cost-model.md).
 * Because the owner's send cost counts every recipient, a dense stripe
 * wanted by many ranks makes its owner the bottleneck and its recipients
 * get converted to fetch; with one recipient it stays collective. The best round's plan is then compared whole with
 * the two pure plans.
 *
 * A receiver's decisions read only its own stripes and per-rank integer
 * counts, so the receivers can be classified by different processes that
 * exchange P rows of counts per round: the result does not depend on how
 * many processes do it. fetch / collective modes force every stripe into
 * one class. */
#ifndef TF_CLASSIFY_H
#define TF_CLASSIFY_H

#include <stdint.h>

#include "tf_analysis.h"
#include "tf_coeffs.h"

/* Most rounds of per-receiver decisions. They end earlier only after a
 * round in which no receiver anywhere moved (a sum over the processes, so
 * all of them stop together, at the same round for every Q). */
#define TF_CLASSIFY_ROUNDS 12

/* Adds up n int64 values in place over the processes classifying a share
 * of the receivers (each holds a range of ascending receivers): op
 * TF_CLASSIFY_SUM is the sum over all of them, TF_CLASSIFY_EXSCAN the sum
 * over the processes of lower receivers (zeros on the first). The first
 * call passes the caller's status, which may be a failure on some
 * processes only (n is then 0): it must return the status agreed by all.
 * Later calls are made with TF_OK, by every process.
 *
 * What TF_CLASSIFY_SUM adds up is count tables: n / (P TF_CLASSIFY_COLS)
 * whole tables of P rows (row p: rank p's counts) of TF_CLASSIFY_COLS
 * columns, then n mod (P TF_CLASSIFY_COLS) plain values. The first
 * TF_CLASSIFY_RECV_COLS columns of row p (the receiver's side) only ever
 * get counts from the process holding receiver p, zeros from every other:
 * a sum may gather them from their holder instead of adding them up. */
#define TF_CLASSIFY_COLS 17
#define TF_CLASSIFY_RECV_COLS 14
enum { TF_CLASSIFY_SUM, TF_CLASSIFY_EXSCAN };
typedef int (*tf_classify_sum_fn)(int64_t *v, int64_t n, int op, int status, void *ctx);

int tf_classify(tf_analysis *an, const tf_coeffs *c, int k, int mode);

/* twoface mode for the receivers [p0, p1), whose stripes this process holds
 * (tf_analysis_run_part); sum adds up the processes' per-rank counts (NULL
 * when [p0, p1) is every receiver). Classes outside [p0, p1) are not set. */
int tf_classify_part(tf_analysis *an, int p0, int p1, const tf_coeffs *c, int k,
                     tf_classify_sum_fn sum, void *ctx);

#endif
