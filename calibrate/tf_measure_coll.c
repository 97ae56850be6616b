/* alpha_coll and beta_coll: the collective half's exchange, done the way the
 * executor's zero-copy form does it (executor/tf_collective.c,
 * TWOFACE_COLL_PACK=never): one MPI_Ineighbor_alltoallw over a
 * distributed-graph communicator, each block sent from B's memory allocated
 * with MPI_Win_allocate through a hindexed datatype of W-row stripes
 * (adjacent stripes do not merge here, so the datatype engine does the
 * gathering it does for a real plan), received as contiguous rows. The
 * executor packs by default; the in-situ step (tf_measure_insitu.c) scales
 * both coefficients by the collective half's measured / predicted time,
 * which carries that copy.
 *
 * Two families of patterns, d = 1 .. P-1:
 *  - ring(d): every rank sends R rows to each of the next d ranks and
 *    receives R rows from each of the previous d: per rank 2d peers and
 *    2dR rows, the symmetric case;
 *  - fan-out(d): rank 0 sends the *same* R rows to d recipients, the case
 *    the model's R_out term is for (an owner with d recipients pays d
 *    copies); the busiest rank is the owner with d peers and dR rows.
 * A point is described by the busiest rank's (peers, bytes): that rank
 * decides the exchange's time, which is what is measured (max over ranks).
 *
 * First all points are fitted with three terms, the third being beta_coll_max
 * on the busier direction, max(bytes in, bytes out): on a full-duplex
 * network link sending and receiving proceed at once, so a ring rank (in =
 * out) pays for half its bytes and a fan-out owner (out only) for all of
 * them - twice what alpha_coll + beta_coll * (in + out) fitted on rings
 * gives it (SimGrid's cluster: 87 us per added 1 MiB recipient against
 * 45 us). Where the data do not support that term (its fit comes out
 * negative and is held at 0), the coefficients are fitted on the ring
 * points only, as before the term existed: in an SpMM every rank that takes
 * part both sends and receives, which is the ring case, and over TCP the two
 * sides differ by an order of magnitude the other way (a receiver must be
 * scheduled to drain its sockets), where a two-term mixture fitted neither.
 * The fan-out points are then an out-of-sample check of the owner term:
 * their error is printed. */
#include "tf_calibrate.h"
#include "tf_error.h"
#include "tf_exchange.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NET_K 128    /* floats per row: only bytes matter, this sets the row size */
#define STRIPE_W 32  /* rows per block of the send datatypes */

enum { PAT_RING = 0, PAT_FANOUT = 1 };

typedef struct {
    int pattern, d, rows;
    tf_xchg x; /* borrows the pattern's communicator */
    int nsrc, ndst;
    int *scount, *rcount;
    MPI_Aint *sdispl, *rdispl;
    MPI_Datatype *stype, *rtype;
    double peers, bytes; /* busiest rank, per exchange */
} coll_point;

static void point_free(coll_point *pt, MPI_Datatype row)
{
    if (pt->stype)
        for (int j = 0; j < pt->ndst; j++)
            if (pt->stype[j] != MPI_DATATYPE_NULL && pt->stype[j] != row)
                MPI_Type_free(&pt->stype[j]);
    tf_xchg_free(&pt->x);
    free(pt->scount);
    free(pt->rcount);
    free(pt->sdispl);
    free(pt->rdispl);
    free(pt->stype);
    free(pt->rtype);
}

/* Neighbours of `rank` in pattern (pat, d). */
static void neighbours(int pat, int d, int rank, int P, int *nsrc, int *src, int *ndst, int *dst)
{
    *nsrc = *ndst = 0;
    if (pat == PAT_RING) {
        for (int j = 1; j <= d; j++) {
            dst[(*ndst)++] = (rank + j) % P;
            src[(*nsrc)++] = (rank - j + P) % P;
        }
    } else if (rank == 0) {
        for (int j = 1; j <= d; j++)
            dst[(*ndst)++] = j;
    } else if (rank <= d) {
        src[(*nsrc)++] = 0;
    }
}

/* Send block of `rows` rows in window slot `slot`: stripes of STRIPE_W rows
 * one stripe apart; slots are 2*rmax rows long. */
static int make_point(coll_point *pt, int nsrc, int ndst, int rows, int rmax, int pat,
                      MPI_Datatype row)
{
    const MPI_Aint rowbytes = (MPI_Aint)NET_K * (MPI_Aint)sizeof(float);
    size_t as = (size_t)nsrc + 1, ad = (size_t)ndst + 1;
    pt->nsrc = nsrc;
    pt->ndst = ndst;
    pt->scount = calloc(ad, sizeof(int));
    pt->sdispl = calloc(ad, sizeof(MPI_Aint));
    pt->stype = calloc(ad, sizeof(MPI_Datatype));
    pt->rcount = calloc(as, sizeof(int));
    pt->rdispl = calloc(as, sizeof(MPI_Aint));
    pt->rtype = calloc(as, sizeof(MPI_Datatype));
    if (!pt->scount || !pt->sdispl || !pt->stype || !pt->rcount || !pt->rdispl || !pt->rtype)
        return tf_fail(TF_ERR_NOMEM, "collective measurement: out of memory");
    for (int j = 0; j < ndst; j++)
        pt->stype[j] = MPI_DATATYPE_NULL;
    for (int i = 0; i < nsrc; i++) {
        pt->rcount[i] = rows;
        pt->rdispl[i] = (MPI_Aint)i * rows * rowbytes;
        pt->rtype[i] = row;
    }
    int nb = (rows + STRIPE_W - 1) / STRIPE_W;
    int *blen = malloc((size_t)nb * sizeof *blen);
    MPI_Aint *bdisp = malloc((size_t)nb * sizeof *bdisp);
    if (!blen || !bdisp) {
        free(blen);
        free(bdisp);
        return tf_fail(TF_ERR_NOMEM, "collective measurement: out of memory");
    }
    int st = TF_OK;
    for (int j = 0; j < ndst && st == TF_OK; j++) {
        /* The fan-out owner multicasts one stripe set; ring senders send
         * different rows to each neighbour. */
        int64_t slot = pat == PAT_FANOUT ? 0 : j;
        MPI_Aint base = (MPI_Aint)(slot * 2 * rmax) * rowbytes;
        if (nb == 1) {
            pt->stype[j] = row;
            pt->scount[j] = rows;
            pt->sdispl[j] = base;
            continue;
        }
        for (int b = 0; b < nb; b++) {
            blen[b] = rows - b * STRIPE_W < STRIPE_W ? rows - b * STRIPE_W : STRIPE_W;
            bdisp[b] = base + (MPI_Aint)b * 2 * STRIPE_W * rowbytes;
        }
        MPI_Datatype t;
        int err = MPI_Type_create_hindexed(nb, blen, bdisp, row, &t);
        if (err == MPI_SUCCESS)
            err = MPI_Type_commit(&t);
        if (err != MPI_SUCCESS) {
            st = tf_fail(TF_ERR_MPI, "collective measurement: MPI_Type_create_hindexed failed");
            break;
        }
        pt->stype[j] = t;
        pt->scount[j] = 1;
        pt->sdispl[j] = 0;
    }
    free(blen);
    free(bdisp);
    return st;
}

int tf_measure_coll(const tf_cal_config *cfg, tf_fit *fit)
{
    const int P = cfg->nranks, rank = cfg->rank;
    /* Up to 2 MiB per message: a collective stripe set of a real plan is
     * hundreds of 32-row stripes per peer. The largest sizes are dropped
     * when the window (2 slots of the largest block per peer) would pass
     * 64 MiB per rank, as it would at many ranks. */
    static const int sizes_quick[] = {1, 16, 256, 2048};
    static const int sizes_full[] = {1, 4, 16, 64, 256, 1024, 4096};
    const int *sizes = cfg->quick ? sizes_quick : sizes_full;
    int nsizes = cfg->quick ? 4 : 7;
    while (nsizes > 2 && (double)(P - 1) * 2.0 * sizes[nsizes - 1] * NET_K * sizeof(float) >
                             64.0 * 1024 * 1024)
        nsizes--;
    const int reps = tf_cal_reps(cfg, 40, 300);
    const int rmax = sizes[nsizes - 1];
    const int npat = 2 * (P - 1);
    const int npts = npat * nsizes;
    const MPI_Aint rowbytes = (MPI_Aint)NET_K * (MPI_Aint)sizeof(float);

    MPI_Datatype row = MPI_DATATYPE_NULL;
    MPI_Win win = MPI_WIN_NULL;
    float *wbuf = NULL, *rbuf = NULL;
    double *t = NULL, *te = NULL, *x = NULL, *y = NULL;
    tf_xchg *graphs = calloc((size_t)npat, sizeof *graphs);
    coll_point *pts = calloc((size_t)npts, sizeof *pts);
    int *src = malloc((size_t)P * sizeof *src), *dst = malloc((size_t)P * sizeof *dst);
    int st = TF_OK;
    if (!graphs || !pts || !src || !dst)
        st = tf_fail(TF_ERR_NOMEM, "collective measurement: out of memory");
    for (int g = 0; g < npat && graphs; g++)
        tf_xchg_init(&graphs[g]);
    for (int i = 0; i < npts && pts; i++)
        tf_xchg_init(&pts[i].x);
    if (st == TF_OK && (MPI_Type_contiguous(NET_K, MPI_FLOAT, &row) != MPI_SUCCESS ||
                        MPI_Type_commit(&row) != MPI_SUCCESS))
        st = tf_fail(TF_ERR_MPI, "collective measurement: MPI_Type_contiguous failed");
    st = tf_cal_agree(cfg->comm, st);

    /* B lives in window memory in the executor; the sm one-sided component
     * maps such memory shared, which may change how the btl copies from it. */
    MPI_Aint wbytes = (MPI_Aint)(P - 1) * 2 * rmax * rowbytes;
    if (st == TF_OK) {
        int err = MPI_Win_allocate(wbytes, (int)sizeof(float), MPI_INFO_NULL, cfg->comm, &wbuf,
                                   &win);
        if (err != MPI_SUCCESS) {
            win = MPI_WIN_NULL;
            st = tf_fail(TF_ERR_MPI, "collective measurement: MPI_Win_allocate of %lld bytes failed",
                         (long long)wbytes);
        }
        st = tf_cal_agree(cfg->comm, st);
    }
    if (st == TF_OK) {
        rbuf = malloc((size_t)(P - 1) * (size_t)rmax * (size_t)rowbytes);
        t = calloc((size_t)reps * npts, sizeof *t);
        te = calloc((size_t)reps * npts, sizeof *te);
        x = malloc((size_t)npts * 3 * sizeof *x);
        y = malloc((size_t)npts * sizeof *y);
        if (!rbuf || !t || !te || !x || !y)
            st = tf_fail(TF_ERR_NOMEM, "collective measurement: out of memory");
        else {
            /* Touch once: first-touch faults are not part of an exchange. */
            memset(wbuf, 1, (size_t)wbytes);
            memset(rbuf, 0, (size_t)(P - 1) * (size_t)rmax * (size_t)rowbytes);
        }
        st = tf_cal_agree(cfg->comm, st);
    }
    /* One communicator per (pattern, d), shared by its sizes. */
    for (int g = 0; g < npat && st == TF_OK; g++) {
        int pat = g < P - 1 ? PAT_RING : PAT_FANOUT, d = g % (P - 1) + 1, ns, nd;
        neighbours(pat, d, rank, P, &ns, src, &nd, dst);
        int mode = TF_XCHG_NEIGHBOR;
        st = tf_cal_agree(cfg->comm, tf_xchg_mode(&mode));
        if (st == TF_OK) /* agrees */
            st = tf_xchg_create(&graphs[g], cfg->comm, mode, ns, src, nd, dst);
        for (int s = 0; s < nsizes && st == TF_OK; s++) {
            coll_point *pt = &pts[g * nsizes + s];
            pt->pattern = pat;
            pt->d = d;
            pt->rows = sizes[s];
            st = make_point(pt, ns, nd, sizes[s], rmax, pat, row);
            if (st == TF_OK)
                st = tf_xchg_borrow(&pt->x, &graphs[g]);
            if (st == TF_OK)
                st = tf_xchg_prepare_w(&pt->x, pt->scount, pt->sdispl, pt->stype, pt->rcount,
                                       pt->rdispl, pt->rtype);
            double blk = (double)sizes[s] * (double)rowbytes;
            pt->peers = pat == PAT_RING ? 2.0 * d : d;
            pt->bytes = pt->peers * blk;
        }
        st = tf_cal_agree(cfg->comm, st);
    }

    /* Interleaved sweep; repetition -1 warms up (connections, caches). */
    for (int r = -1; r < reps && st == TF_OK; r++) {
        for (int i = 0; i < npts; i++) {
            coll_point *pt = &pts[i];
            MPI_Request req;
            MPI_Barrier(cfg->comm);
            double t0 = tf_cal_now();
            if (tf_xchg_start_w(&pt->x, wbuf, pt->scount, pt->sdispl, pt->stype, rbuf,
                                pt->rcount, pt->rdispl, pt->rtype, &req) != TF_OK)
                tf_cal_abort(cfg->comm, "%s", tf_error_message());
            if (MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                tf_cal_abort(cfg->comm, "collective measurement: MPI_Wait failed");
            double t1 = tf_cal_now();
            if (r >= 0) {
                t[(size_t)r * npts + i] = t0;
                te[(size_t)r * npts + i] = t1;
            }
        }
    }

    if (st == TF_OK) {
        tf_cal_sample_times(cfg->comm, cfg->one_node, t, te, reps * npts);
        double *col = malloc((size_t)reps * sizeof *col);
        if (!col)
            st = tf_fail(TF_ERR_NOMEM, "collective measurement: out of memory");
        for (int i = 0; i < npts && col; i++) {
            for (int r = 0; r < reps; r++)
                col[r] = t[(size_t)r * npts + i];
            y[i] = tf_median(col, reps);
            x[3 * i] = pts[i].peers;
            x[3 * i + 1] = pts[i].bytes;
            /* ring: half in, half out; fan-out: all out */
            x[3 * i + 2] = pts[i].pattern == PAT_RING ? pts[i].bytes / 2 : pts[i].bytes;
        }
        free(col);
        int duplex = 0;
        if (st == TF_OK) {
            tf_fit f3;
            duplex = tf_fit_linear(npts, 3, x, y, 1, &f3) == TF_OK && !f3.clamped[2] &&
                     f3.coef[2] > 0;
            if (duplex) {
                *fit = f3;
            } else {
                /* The ring points (they come first) with two terms. */
                double *x2 = malloc((size_t)npts * 2 * sizeof *x2);
                if (!x2)
                    st = tf_fail(TF_ERR_NOMEM, "collective measurement: out of memory");
                for (int i = 0; x2 && i < npts; i++) {
                    x2[2 * i] = x[3 * i];
                    x2[2 * i + 1] = x[3 * i + 1];
                }
                if (st == TF_OK)
                    st = tf_fit_linear((P - 1) * nsizes, 2, x2, y, 1, fit);
                free(x2);
                fit->coef[2] = 0;
            }
        }
        if (st == TF_OK && cfg->log) {
            FILE *f = cfg->log;
            fprintf(f, "collective (MPI_Ineighbor_alltoallw, hindexed from window memory, "
                       "%d reps, first start to last end, median):\n", reps);
            fprintf(f, "  %-8s %2s %6s %10s %6s %10s %11s %11s %7s\n", "pattern", "d", "rows",
                       "bytes/msg", "peers", "bytes", "meas_us", "model_us", "err");
            for (int i = 0; i < npts; i++) {
                double pred = tf_fit_eval(3, fit->coef, x + 3 * i);
                fprintf(f, "  %-8s %2d %6d %10.0f %6.0f %10.0f %11.1f %11.1f %+6.1f%%\n",
                        pts[i].pattern == PAT_RING ? "ring" : "fan-out", pts[i].d, pts[i].rows,
                        (double)pts[i].rows * (double)rowbytes, pts[i].peers, pts[i].bytes,
                        1e6 * y[i], 1e6 * pred, 100.0 * (pred - y[i]) / y[i]);
            }
            /* The recipient dependence, read off the fan-out rows: the
             * owner's time per added recipient at the largest size. */
            int sl = nsizes - 1;
            fprintf(f, "  fan-out, %d rows (%.0f KiB) per recipient: owner time by recipients:",
                    sizes[sl], (double)sizes[sl] * (double)rowbytes / 1024.0);
            for (int d = 1; d <= P - 1; d++)
                fprintf(f, " d=%d %.1f us%s", d, 1e6 * y[((P - 1) + d - 1) * nsizes + sl],
                        d < P - 1 ? "," : "\n");
            if (P > 2) {
                double first = y[(P - 1) * nsizes + sl], last = y[(2 * (P - 1) - 1) * nsizes + sl];
                double blk = (double)sizes[sl] * (double)rowbytes;
                fprintf(f, "  cost of one more recipient: measured %.1f us, model %.1f us "
                           "(alpha_coll + (beta_coll + beta_coll_max) * %.0f bytes)\n",
                        1e6 * (last - first) / (P - 2),
                        1e6 * (fit->coef[0] + (fit->coef[1] + fit->coef[2]) * blk), blk);
            }
            static const char *const nm[3] = {"alpha_coll", "beta_coll", "beta_coll_max"};
            static const char *const un[3] = {"s/message", "s/byte", "s/byte"};
            if (duplex)
                tf_cal_print_fit(f, "on all points, t = alpha_coll*(peers_in+peers_out) + "
                                    "beta_coll*(bytes_in+bytes_out) + "
                                    "beta_coll_max*max(bytes_in,bytes_out)",
                                 fit, nm, un);
            else
                tf_cal_print_fit(f, "on the ring points, t = alpha_coll*(peers_in+peers_out) + "
                                    "beta_coll*(bytes_in+bytes_out) (a third term on "
                                    "max(bytes_in,bytes_out) came out negative: beta_coll_max = 0)",
                                 fit, nm, un);
            /* Per family: does one (alpha, beta) serve both, i.e. is the
             * send side charged like the receive side? */
            for (int pat = 0; pat < 2; pat++) {
                double ss = 0;
                int n = 0;
                for (int i = 0; i < npts; i++)
                    if (pts[i].pattern == pat) {
                        double e = (tf_fit_eval(3, fit->coef, x + 3 * i) - y[i]) / y[i];
                        ss += e * e;
                        n++;
                    }
                fprintf(f, "  RMS relative error, %s points: %.1f%%%s\n",
                        pat == PAT_RING ? "ring" : "fan-out", n ? 100.0 * sqrt(ss / n) : 0.0,
                        pat == PAT_RING || duplex ? " (fitted)"
                                                  : " (not fitted: the owner-side check)");
            }
        }
        st = tf_cal_agree(cfg->comm, st);
    }

    for (int i = 0; pts && i < npts; i++)
        point_free(&pts[i], row);
    for (int g = 0; graphs && g < npat; g++)
        tf_xchg_free(&graphs[g]);
    if (win != MPI_WIN_NULL)
        MPI_Win_free(&win);
    if (row != MPI_DATATYPE_NULL)
        MPI_Type_free(&row);
    free(graphs);
    free(pts);
    free(src);
    free(dst);
    free(rbuf);
    free(t);
    free(te);
    free(x);
    free(y);
    return st;
}
