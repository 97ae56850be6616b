/* Classification of sparse stripes into collective and fetch.
 *
 * twoface mode: start with every remote stripe collective, then visit the
 * stripes in ascending order of their net cost as a fetch (fetch cost minus
 * the collective work it removes at the receiver *and at the owner*), and
 * convert a stripe when that lowers the larger predicted time of the two
 * ranks it involves (receiver and owner), or lowers total work without
 * raising that maximum. Because the owner's send cost counts every recipient,
 * a dense stripe wanted by many ranks makes its owner the bottleneck and its
 * recipients get converted to fetch; with one recipient it stays collective.
 * fetch / collective modes force every stripe into one class. */
#ifndef TF_CLASSIFY_H
#define TF_CLASSIFY_H

#include "tf_analysis.h"
#include "tf_coeffs.h"

int tf_classify(tf_analysis *an, const tf_coeffs *c, int k, int mode);

#endif
