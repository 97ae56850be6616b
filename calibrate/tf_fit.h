/* Small linear least-squares fits for twoface-calibrate: y ~ X c with 1 to
 * TF_FIT_MAXP parameters, solved by Householder QR on column-scaled data
 * (the columns of a calibration fit differ by ten orders of magnitude -
 * messages vs bytes - which the normal equations would square into an
 * ill-conditioned system).
 *
 * Relative fits minimise sum ((y_i - x_i.c) / y_i)^2: the measurements span
 * microseconds to milliseconds, and an absolute fit would let the largest
 * points decide alone. Coefficients are times, so none may be negative: when
 * the unconstrained solution has a negative coefficient, the fit is redone
 * with that coefficient held at zero (exact non-negative least squares for
 * these few parameters, by trying every subset) and `clamped` says so. */
#ifndef TF_FIT_H
#define TF_FIT_H

#define TF_FIT_MAXP 4

typedef struct {
    int np;                        /* parameters */
    int n;                         /* points */
    double coef[TF_FIT_MAXP];      /* fitted, all >= 0 */
    double raw[TF_FIT_MAXP];       /* unconstrained solution (may be negative) */
    int clamped[TF_FIT_MAXP];      /* 1 when coef[j] was held at 0 */
    double rms_rel;                /* RMS of (pred - y) / y over the points */
    double max_rel;                /* largest |pred - y| / y */
} tf_fit;

/* x: n rows of p values (row-major), y: n values. relative: weights 1/y
 * (every y must then be > 0). Fails with TF_ERR_ARG (message via
 * tf_error_message) on too few points, non-finite input, a parameter with
 * no support in the data, or collinear columns; *out is then zeroed. */
int tf_fit_linear(int n, int p, const double *x, const double *y, int relative, tf_fit *out);

/* x.c for one row of p values. */
double tf_fit_eval(int p, const double *coef, const double *xrow);

/* RMS and largest relative residual (pred - y) / y of coefficients c on the
 * data; points with y <= 0 are an error (TF_ERR_ARG). */
int tf_fit_residuals(int n, int p, const double *x, const double *y, const double *coef,
                     double *rms_rel, double *max_rel);

#endif
