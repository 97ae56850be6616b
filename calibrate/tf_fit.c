#include "tf_fit.h"
#include "tf_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Columns whose scaled QR pivot falls below this are taken as linearly
 * dependent on the others: the data cannot tell the parameters apart. */
#define RANK_TOL 1e-9

double tf_fit_eval(int p, const double *coef, const double *xrow)
{
    double s = 0.0;
    for (int j = 0; j < p; j++)
        s += coef[j] * xrow[j];
    return s;
}

int tf_fit_residuals(int n, int p, const double *x, const double *y, const double *coef,
                     double *rms_rel, double *max_rel)
{
    if (n < 1)
        return tf_fail(TF_ERR_ARG, "residuals of an empty data set");
    double ss = 0.0, mx = 0.0;
    for (int i = 0; i < n; i++) {
        if (!(y[i] > 0.0) || !isfinite(y[i]))
            return tf_fail(TF_ERR_ARG, "point %d: relative residual needs y > 0, got %g", i, y[i]);
        double r = (tf_fit_eval(p, coef, x + (size_t)i * p) - y[i]) / y[i];
        ss += r * r;
        if (fabs(r) > mx)
            mx = fabs(r);
    }
    *rms_rel = sqrt(ss / n);
    *max_rel = mx;
    return TF_OK;
}

/* Least squares on the columns of a (n x p, row-major, already weighted and
 * scaled) selected by mask; b is the weighted right-hand side. Writes the
 * solution (zeros outside the mask) and the residual sum of squares.
 * Returns 0, or -1 when the selected columns are rank deficient. */
static int solve_subset(int n, int p, const double *a, const double *b, unsigned mask,
                        double *sol, double *rss)
{
    int cols[TF_FIT_MAXP], q = 0;
    for (int j = 0; j < p; j++)
        if (mask & (1u << j))
            cols[q++] = j;
    double *m = malloc((size_t)n * (size_t)(q + 1) * sizeof *m);
    if (!m)
        return -2;
    /* Copy into n x (q+1): the selected columns and the right-hand side. */
    for (int i = 0; i < n; i++) {
        for (int c = 0; c < q; c++)
            m[(size_t)i * (q + 1) + c] = a[(size_t)i * p + cols[c]];
        m[(size_t)i * (q + 1) + q] = b[i];
    }
    const int w = q + 1;
    double rdiag[TF_FIT_MAXP];
    for (int j = 0; j < q; j++) {
        double norm = 0.0;
        for (int i = j; i < n; i++)
            norm += m[(size_t)i * w + j] * m[(size_t)i * w + j];
        norm = sqrt(norm);
        if (norm <= RANK_TOL) {
            free(m);
            return -1;
        }
        double alpha = m[(size_t)j * w + j] > 0 ? -norm : norm;
        /* Householder vector v = x - alpha e1 stored in place of column j. */
        m[(size_t)j * w + j] -= alpha;
        double vv = 0.0;
        for (int i = j; i < n; i++)
            vv += m[(size_t)i * w + j] * m[(size_t)i * w + j];
        for (int l = j + 1; l < w; l++) {
            double s = 0.0;
            for (int i = j; i < n; i++)
                s += m[(size_t)i * w + j] * m[(size_t)i * w + l];
            s = 2.0 * s / vv;
            for (int i = j; i < n; i++)
                m[(size_t)i * w + l] -= s * m[(size_t)i * w + j];
        }
        rdiag[j] = alpha;
    }
    /* Back substitution on R (upper triangle above the diagonal, rdiag). */
    double c[TF_FIT_MAXP];
    for (int j = q - 1; j >= 0; j--) {
        double s = m[(size_t)j * w + q];
        for (int l = j + 1; l < q; l++)
            s -= m[(size_t)j * w + l] * c[l];
        c[j] = s / rdiag[j];
    }
    double r = 0.0;
    for (int i = q; i < n; i++)
        r += m[(size_t)i * w + q] * m[(size_t)i * w + q];
    free(m);
    for (int j = 0; j < p; j++)
        sol[j] = 0.0;
    for (int c2 = 0; c2 < q; c2++)
        sol[cols[c2]] = c[c2];
    *rss = r;
    return 0;
}

int tf_fit_linear(int n, int p, const double *x, const double *y, int relative, tf_fit *out)
{
    memset(out, 0, sizeof *out);
    if (p < 1 || p > TF_FIT_MAXP)
        return tf_fail(TF_ERR_ARG, "fit: %d parameters, supported 1..%d", p, TF_FIT_MAXP);
    if (n < p)
        return tf_fail(TF_ERR_ARG, "fit: %d point(s) for %d parameter(s): too few", n, p);
    for (int i = 0; i < n; i++) {
        if (!isfinite(y[i]) || (relative && !(y[i] > 0.0)))
            return tf_fail(TF_ERR_ARG, "fit: point %d has y = %g (%s)", i, y[i],
                           relative ? "a relative fit needs y > 0" : "not finite");
        for (int j = 0; j < p; j++)
            if (!isfinite(x[(size_t)i * p + j]))
                return tf_fail(TF_ERR_ARG, "fit: point %d has a non-finite x", i);
    }
    double *a = malloc((size_t)n * (size_t)p * sizeof *a);
    double *b = malloc((size_t)n * sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return tf_fail(TF_ERR_NOMEM, "fit: out of memory for %d points", n);
    }
    double scale[TF_FIT_MAXP];
    for (int i = 0; i < n; i++) {
        double wt = relative ? 1.0 / y[i] : 1.0;
        for (int j = 0; j < p; j++)
            a[(size_t)i * p + j] = wt * x[(size_t)i * p + j];
        b[i] = wt * y[i];
    }
    /* Unit-norm columns: the rank test and the pivots then mean the same
     * thing whatever the units of each parameter. */
    for (int j = 0; j < p; j++) {
        double s = 0.0;
        for (int i = 0; i < n; i++)
            s += a[(size_t)i * p + j] * a[(size_t)i * p + j];
        s = sqrt(s);
        if (s == 0.0) {
            free(a);
            free(b);
            return tf_fail(TF_ERR_ARG, "fit: parameter %d is zero at every point: not determined", j);
        }
        scale[j] = s;
        for (int i = 0; i < n; i++)
            a[(size_t)i * p + j] /= s;
    }
    unsigned all = (1u << p) - 1;
    double sol[TF_FIT_MAXP], rss;
    int rc = solve_subset(n, p, a, b, all, sol, &rss);
    if (rc != 0) {
        free(a);
        free(b);
        return rc == -2 ? tf_fail(TF_ERR_NOMEM, "fit: out of memory")
                        : tf_fail(TF_ERR_ARG, "fit: the data cannot separate the %d parameters "
                                              "(collinear columns: singular system)", p);
    }
    for (int j = 0; j < p; j++)
        out->raw[j] = sol[j] / scale[j];
    int negative = 0;
    for (int j = 0; j < p; j++)
        if (sol[j] < 0.0)
            negative = 1;
    if (negative) {
        /* Best non-negative solution over all subsets of free parameters;
         * the empty subset (all zero) always exists as a fallback. */
        double best_rss = 0.0, best[TF_FIT_MAXP] = {0};
        for (int i = 0; i < n; i++)
            best_rss += b[i] * b[i];
        for (unsigned mask = 1; mask < all; mask++) {
            double s2[TF_FIT_MAXP], r2;
            if (solve_subset(n, p, a, b, mask, s2, &r2) != 0)
                continue;
            int ok = 1;
            for (int j = 0; j < p; j++)
                if (s2[j] < 0.0)
                    ok = 0;
            if (ok && r2 < best_rss) {
                best_rss = r2;
                memcpy(best, s2, sizeof best);
            }
        }
        memcpy(sol, best, sizeof best);
        /* Zero marks a held coefficient: the one that went negative, and
         * any other the best subset also dropped. */
        for (int j = 0; j < p; j++)
            out->clamped[j] = sol[j] == 0.0;
    }
    free(a);
    free(b);
    out->np = p;
    out->n = n;
    for (int j = 0; j < p; j++)
        out->coef[j] = sol[j] / scale[j];
    if (relative) {
        if (tf_fit_residuals(n, p, x, y, out->coef, &out->rms_rel, &out->max_rel) != TF_OK)
            return TF_ERR_ARG;
    } else {
        /* Relative residuals need y > 0; report them where they exist. */
        double ss = 0.0, mx = 0.0;
        int cnt = 0;
        for (int i = 0; i < n; i++) {
            if (!(y[i] > 0.0))
                continue;
            double r = (tf_fit_eval(p, out->coef, x + (size_t)i * p) - y[i]) / y[i];
            ss += r * r;
            mx = fabs(r) > mx ? fabs(r) : mx;
            cnt++;
        }
        out->rms_rel = cnt ? sqrt(ss / cnt) : 0.0;
        out->max_rel = mx;
    }
    return TF_OK;
}
