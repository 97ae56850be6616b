#include "tf_cost_model.h"

#include <math.h>

double tf_cost_fetch_hidden(const tf_coeffs *c, double t_compute, double t_fetch_bytes)
{
    if (c->threads >= 2 || !(c->overlap_fetch > 0))
        return 0.0;
    /* The one-thread executor posts its gets between chunks of the local
     * part and computes each run as it lands, so the bytes still on the
     * wire travel while it computes: the local part, and the runs that
     * landed before. The per-request part is the caller's own work (or, in
     * the simulation, overhead charged to the call that completes it) and
     * stays. */
    double w = c->overlap_fetch > 1 ? 1.0 : c->overlap_fetch;
    return w * fmin(t_compute, t_fetch_bytes);
}

double tf_cost_rank_time(const tf_coeffs *c, double t_local, double t_coll_comm,
                         double t_coll_comp, double t_fetch_comm, double t_fetch_comp,
                         double t_fetch_bytes)
{
    if (c->threads >= 2) {
        /* Collective group: starts the exchange, computes the local part
         * while it flies, then the collective part. Fetch group: gets and
         * computes run by run; with the shared-memory one-sided component a
         * get is a copy by the calling thread, so the two add up. */
        double a = fmax(t_local, t_coll_comm) + t_coll_comp;
        double b = t_fetch_comm + t_fetch_comp;
        return fmax(a, b);
    }
    /* One thread: only the transfers progress in the background. On one
     * node they are copies by the caller, so everything adds up; where the
     * network carries a get alone (overlap_fetch), compute hides its bytes. */
    return t_local + t_coll_comm + t_coll_comp + t_fetch_comm + t_fetch_comp -
           tf_cost_fetch_hidden(c, t_local + t_fetch_comp, t_fetch_bytes);
}

/* Bytes per element of B that travels: the byte terms halve with bf16.
 * Anything but 2 is float32's 4 (coefficients filled field by field by
 * older code leave it 0). */
static double elem_bytes(const tf_coeffs *c) { return c->elem_bytes == 2 ? 2.0 : 4.0; }

double tf_cost_fetch_bytes(const tf_coeffs *c, int k, int64_t rows)
{
    return c->beta_fetch * (double)rows * elem_bytes(c) * k;
}

double tf_cost_csr(const tf_coeffs *c, double gamma, int k, int64_t nnz, int64_t miss)
{
    /* A nonzero whose B row is in cache costs its multiply-adds; one whose
     * row comes from memory costs the load too, which dominates (3-8x on
     * the development VM). A single gamma per nonzero, fitted on rows that
     * mostly miss, charged web graphs 2-7x their kernel time: their rows
     * are reused within a few thousand nonzeros (URL order, hub pages). */
    if (c->cache_bytes <= 0 || miss > nnz || miss < 0)
        return gamma * (double)nnz * k;
    return (gamma * (double)miss + c->gamma_cached * (double)(nnz - miss)) * k;
}

double tf_cost_csc(const tf_coeffs *c, int k, int64_t nnz, int64_t miss)
{
    /* The CSC kernel loads, adds into and stores a row of C per nonzero;
     * when that row is in cache from an earlier nonzero it runs 2-3x
     * faster. A rate fitted on rows from memory charged a rank whose
     * fetched nonzeros update a cache's worth of rows 2-4x its time. */
    if (!(c->gamma_fetch_cached > 0) || c->cache_bytes <= 0 || miss > nnz || miss < 0)
        return c->gamma_fetch * (double)nnz * k;
    return (c->gamma_fetch * (double)miss + c->gamma_fetch_cached * (double)(nnz - miss)) * k;
}

double tf_cost_rows(const tf_coeffs *c, int k, int64_t rows)
{
    /* However few nonzeros a row has, the kernel loads (or zeroes) its C
     * row, stores it back and runs its loop: on a road network, two
     * nonzeros per row, that is half the kernel time, and a per-nonzero
     * gamma fitted on eight per row charged it 0.4x. */
    return c->gamma_row * (double)rows * k;
}

int tf_cost_row_weight(const tf_coeffs *c, int64_t *num, int64_t *den)
{
    /* A 16th of a nonzero is finer than the ratio is known (it moved
     * between 1.2 and 3 with K and the miss share), and small integers keep
     * the partition's prefix sums exact. */
    *den = TF_ROW_WEIGHT_DEN;
    if (!(c->gamma_row > 0) || !(c->gamma_local > 0)) {
        *num = TF_ROW_WEIGHT_BUILTIN;
        return 0;
    }
    double r = c->gamma_row / c->gamma_local;
    *num = r >= TF_ROW_WEIGHT_MAX ? (int64_t)TF_ROW_WEIGHT_MAX * TF_ROW_WEIGHT_DEN
                                  : (int64_t)llround(r * TF_ROW_WEIGHT_DEN);
    return 1;
}

void tf_cost_work_weights(const tf_coeffs *c, int k, tf_work_weights *w)
{
    int64_t den;
    tf_cost_row_weight(c, &w->row, &den);
    w->miss = den;
    w->hit = den;
    w->window = 0;
    if (!(c->gamma_cached > 0) || !(c->gamma_local > 0) || !(c->gamma_cached < c->gamma_local))
        return;
    int64_t h = llround(den * c->gamma_cached / c->gamma_local);
    w->hit = h < 1 ? 1 : h > den ? den : h;
    w->window = w->hit < den ? tf_cost_reuse_window(c, k) : 0;
}

int64_t tf_cost_reuse_window(const tf_coeffs *c, int k)
{
    if (!(c->cache_bytes > 0) || k < 1)
        return 0;
    /* Coefficients given in memory are not the file's, which bounds them. */
    double w = c->cache_bytes / (4.0 * k);
    return w >= 0x1p62 ? (int64_t)1 << 62 : (int64_t)w;
}

int64_t tf_cost_fetch_window(const tf_coeffs *c, int k)
{
    /* A C row is float32 whatever travels: the same window as B's rows. */
    return c->gamma_fetch_cached > 0 ? tf_cost_reuse_window(c, k) : 0;
}

void tf_cost_predict(const tf_coeffs *c, int k, tf_rank_stats *s)
{
    s->t_local = tf_cost_csr(c, c->gamma_local, k, s->nnz_local, s->nnz_local_miss) +
                 tf_cost_rows(c, k, s->rows_local);
    s->t_coll_comp = tf_cost_csr(c, c->gamma_coll, k, s->nnz_coll, s->nnz_coll_miss) +
                     tf_cost_rows(c, k, s->rows_coll);
    s->t_fetch_comm = c->alpha_fetch * (double)s->fetch_requests +
                      tf_cost_fetch_bytes(c, k, s->fetch_rows);
    s->t_fetch_comp = tf_cost_csc(c, k, s->nnz_fetch, s->nnz_fetch_miss);
    tf_cost_predict_sends(c, k, s);
}

void tf_cost_predict_sends(const tf_coeffs *c, int k, tf_rank_stats *s)
{
    const double bytes_per_row = elem_bytes(c) * k;
    s->t_coll_comm = c->alpha_coll * (double)(s->coll_peers_recv + s->coll_peers_sent) +
                     c->beta_coll * (double)(s->coll_rows_recv + s->coll_rows_sent) * bytes_per_row +
                     c->beta_coll_max *
                         (double)(s->coll_rows_recv > s->coll_rows_sent ? s->coll_rows_recv
                                                                        : s->coll_rows_sent) *
                         bytes_per_row;
    const double t_fetch_bytes = tf_cost_fetch_bytes(c, k, s->fetch_rows);
    s->t_sync = tf_cost_sync(c, s->fetch_peers_recv + s->fetch_peers_sent);
    s->t_coll_half = fmax(s->t_local, s->t_coll_comm) + s->t_coll_comp;
    s->t_fetch_half = s->t_fetch_comm + s->t_fetch_comp;
    s->t_total = tf_cost_rank_time(c, s->t_local, s->t_coll_comm, s->t_coll_comp,
                                   s->t_fetch_comm, s->t_fetch_comp, t_fetch_bytes) +
                 s->t_sync + tf_cost_round(c, k, s);
}

double tf_cost_shift(const tf_coeffs *c, const tf_rank_stats *s, int64_t bytes, int64_t msgs)
{
    /* bf16 halves the B blocks; the C partials of c > 1 stay float32, a
     * share the volume model does not separate: charged at B's size. */
    const double b = (double)bytes * elem_bytes(c) / 4.0;
    return s->t_local + s->t_coll_comp + s->t_fetch_comp + 2.0 * c->alpha_coll * (double)msgs +
           (2.0 * c->beta_coll + c->beta_coll_max) * b;
}

double tf_cost_fetch_hidden_of(const tf_coeffs *c, int k, const tf_rank_stats *s)
{
    return tf_cost_fetch_hidden(c, s->t_local + s->t_fetch_comp,
                                tf_cost_fetch_bytes(c, k, s->fetch_rows));
}

double tf_cost_round(const tf_coeffs *c, int k, const tf_rank_stats *s)
{
    if (elem_bytes(c) != 2.0)
        return 0.0;
    /* One float32 element read, rounded and stored per exported element,
     * priced like one element of B through the local kernel: both are a
     * pass over float32 rows with a few operations per value. The
     * collective's rows are rounded by their sender as it packs them, once
     * per recipient. A fetched row is rounded by its owner before READY,
     * which the fetcher waits for; the counts give no rank's rows fetched by
     * others, so the fetcher is charged its own fetched rows. */
    return c->gamma_local * (double)(s->coll_rows_sent + s->fetch_rows) * k;
}

double tf_cost_sync(const tf_coeffs *c, int64_t fetch_peers)
{
    /* Added after both halves, not overlapped: a fetcher cannot start on an
     * owner before its READY and an owner cannot return before every DONE,
     * so the handshake (and, on transports where a get needs the target to
     * enter MPI, the wait for that) stretches the SpMM itself. */
    return c->alpha_sync * (double)fetch_peers;
}

double tf_cost_fetch(const tf_coeffs *c, int k, int64_t requests, int64_t rows, int64_t nnz)
{
    return c->alpha_fetch * (double)requests + tf_cost_fetch_bytes(c, k, rows) +
           c->gamma_fetch * (double)nnz * k;
}

int tf_cost_coll_gap(int k)
{
    return k >= 1 ? 16 / k : 0;
}

int tf_cost_gap(const tf_coeffs *c, int k)
{
    double per_row = c->beta_fetch * elem_bytes(c) * k;
    if (per_row <= 0)
        return TF_MAX_GAP;
    double g = floor(c->alpha_fetch / per_row * (1.0 + 1e-9));
    if (g < 0)
        g = 0;
    return g > TF_MAX_GAP ? TF_MAX_GAP : (int)g;
}
