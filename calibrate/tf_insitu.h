/* In-situ correction of the cost-model coefficients (tf_measure_insitu.c). */
#ifndef TF_INSITU_H
#define TF_INSITU_H

#include <mpi.h>
#include <stdio.h>
#include "tf_coeffs.h"
#include "tf_plan.h"

/* Collective. Runs the executor on a synthetic graph with a pure-collective
 * and a pure-fetch plan at width k (iters SpMMs each after 2 warm-ups) and
 * scales the coefficients of the local kernel, of the collective half, of
 * the fetch transfer and of the READY/DONE handshake (alpha_sync) by
 * measured / predicted. scale[] receives the factors in that order
 * (scale[3] the handshake's) and in scale[4] the fetch kernel's measured /
 * predicted, which is reported but not applied (tf_measure_insitu.c says
 * why). log may be NULL (ranks other than 0). */
int tf_measure_insitu(MPI_Comm comm, int k, int iters, tf_coeffs *c, FILE *log, double scale[5]);

/* A synthetic plan's rank time as the in-situ handshake reads it: the model
 * under c with no handshake (alpha_sync 0) and the fetch kernel at
 * kernel_scale times its fit, the rate it measured on the synthetic graph.
 * The handshake is what the measured SpMM takes beyond this, so neither the
 * handshake already charged nor that kernel's error lands in it. */
double tf_insitu_plain_time(const tf_coeffs *c, int k, tf_rank_stats st, double kernel_scale);

#endif
