/* Validation of plans, shared by the writer (which refuses a plan the reader
 * would reject) and the reader (which checks every size and index against the
 * header before the executor trusts them). */
#include "tf_plan_layout.h"
#include "tf_plan_io.h"
#include "tf_error.h"
#include "tf_partition.h"
#include "tf_plan_perm.h"

#include <stdint.h>
/* ------------------------------------------------------------------ */
/* Validation, shared by writer and reader                              */

static int check_offsets(const int64_t *off, int nranks, int64_t total, const char *name)
{
    if (!off)
        return tf_fail(TF_ERR_FORMAT, "%s is missing", name);
    if (off[0] != 0)
        return tf_fail(TF_ERR_FORMAT, "%s[0] = %lld, expected 0", name, (long long)off[0]);
    for (int p = 0; p < nranks; p++)
        if (off[p + 1] < off[p] || off[p + 1] - off[p] > INT32_MAX)
            return tf_fail(TF_ERR_FORMAT, "%s[%d..%d] = %lld..%lld is not a valid band", name, p,
                           p + 1, (long long)off[p], (long long)off[p + 1]);
    if (off[nranks] != total)
        return tf_fail(TF_ERR_FORMAT, "%s[%d] = %lld, expected %lld", name, nranks,
                       (long long)off[nranks], (long long)total);
    return TF_OK;
}

/* Header and global summaries: everything but the parts. */
int tf_pl_validate_header(const tf_plan *p)
{
    if (p->nranks < 1 || p->nranks > MAX_RANKS)
        return tf_fail(TF_ERR_FORMAT, "nranks = %d is out of range", p->nranks);
    if (p->m < 0 || p->n < 0 || p->nnz < 0)
        return tf_fail(TF_ERR_FORMAT, "negative matrix size %lld x %lld, %lld nonzeros",
                       (long long)p->m, (long long)p->n, (long long)p->nnz);
    if (p->partition != TF_PART_ROWS && p->partition != TF_PART_NNZ &&
        p->partition != TF_PART_METIS && p->partition != TF_PART_WORK)
        return tf_fail(TF_ERR_FORMAT, "unknown partition kind %d", p->partition);
    /* A permutation renumbers rows and columns alike: square A, metis only.
     * A metis plan without one is an alternative, which uses its root's. */
    if ((p->perm || p->iperm) && (p->partition != TF_PART_METIS || p->m != p->n))
        return tf_fail(TF_ERR_FORMAT,
                       "a permutation (perm, iperm) belongs to a square metis plan, not to a "
                       "%s plan of %lld x %lld",
                       tf_partition_name(p->partition), (long long)p->m, (long long)p->n);
    if (p->partition == TF_PART_METIS && p->m != p->n)
        return tf_fail(TF_ERR_FORMAT, "a metis plan must be square, this one is %lld x %lld",
                       (long long)p->m, (long long)p->n);
    if (p->perm || p->iperm) {
        int pst = p->perm && p->iperm
                      ? tf_perm_check(p->perm, p->iperm, p->n)
                      : tf_fail(TF_ERR_FORMAT, "%s is missing beside %s", p->perm ? "iperm" : "perm",
                                p->perm ? "perm" : "iperm");
        if (pst != TF_OK)
            return pst;
    }
    if (p->mode < TF_MODE_TWOFACE || p->mode > TF_MODE_COLLECTIVE)
        return tf_fail(TF_ERR_FORMAT, "unknown mode %d", p->mode);
    if (p->normalization < TF_NORM_NONE || p->normalization > TF_NORM_MEAN)
        return tf_fail(TF_ERR_FORMAT, "unknown normalisation %d", p->normalization);
    if ((p->symmetric != 0 && p->symmetric != 1) || (p->transposed != 0 && p->transposed != 1))
        return tf_fail(TF_ERR_FORMAT, "symmetric = %d, transposed = %d: expected 0 or 1",
                       p->symmetric, p->transposed);
    if (p->symmetric && p->m != p->n)
        return tf_fail(TF_ERR_FORMAT, "symmetric = 1 for a %lld x %lld matrix", (long long)p->m,
                       (long long)p->n);
    if (!p->transposed && p->transpose_of != 0)
        return tf_fail(TF_ERR_FORMAT, "transpose_of is set in a plan that is not transposed");
    if (p->comm != TF_PREC_F32 && p->comm != TF_PREC_BF16)
        return tf_fail(TF_ERR_FORMAT, "unknown precision %d of what travels (comm)", p->comm);
    int st = check_offsets(p->row_off, p->nranks, p->m, "row_offsets");
    if (st == TF_OK)
        st = check_offsets(p->brow_off, p->nranks, p->n, "brow_offsets");
    if (st != TF_OK)
        return st;
    const tf_stripe_table *s = &p->stripes;
    if (s->n < 0)
        return tf_fail(TF_ERR_FORMAT, "negative stripe count %lld", (long long)s->n);
    if (s->n > 0 && (!s->owner || !s->first || !s->rows || !s->recipients || !s->fetchers))
        return tf_fail(TF_ERR_FORMAT, "stripe table arrays missing");
    for (int64_t i = 0; i < s->n; i++) {
        int32_t q = s->owner[i];
        if (q < 0 || q >= p->nranks)
            return tf_fail(TF_ERR_FORMAT, "stripes/owner[%lld] = %d is not a rank", (long long)i,
                           q);
        if (s->rows[i] < 0 || s->first[i] < p->brow_off[q] ||
            s->first[i] > p->brow_off[q + 1] - s->rows[i])
            return tf_fail(TF_ERR_FORMAT,
                           "stripe %lld (rows %lld + %d) is outside rank %d's B rows [%lld, %lld)",
                           (long long)i, (long long)s->first[i], s->rows[i], q,
                           (long long)p->brow_off[q], (long long)p->brow_off[q + 1]);
        if (s->recipients[i] < 0 || s->recipients[i] > p->nranks || s->fetchers[i] < 0 ||
            s->fetchers[i] > p->nranks)
            return tf_fail(TF_ERR_FORMAT, "stripe %lld: recipients %d / fetchers %d out of range",
                           (long long)i, s->recipients[i], s->fetchers[i]);
    }
    return TF_OK;
}

/* The scalars of a part against the header: checked before any array is
 * read, since they size the arrays. */
int tf_pl_check_rank_scalars(const tf_plan *p, const tf_rank_plan *rp)
{
    int r = rp->rank;
    if (r < 0 || r >= p->nranks)
        return tf_fail(TF_ERR_FORMAT, "rank %d is out of range (plan has %d ranks)", r,
                       p->nranks);
    if (rp->row_begin != p->row_off[r] || rp->nrows != p->row_off[r + 1] - p->row_off[r])
        return tf_fail(TF_ERR_FORMAT, "rank %d: rows %lld + %lld do not match row_offsets", r,
                       (long long)rp->row_begin, (long long)rp->nrows);
    if (rp->brow_begin != p->brow_off[r] || rp->nbrows != p->brow_off[r + 1] - p->brow_off[r])
        return tf_fail(TF_ERR_FORMAT, "rank %d: B rows %lld + %lld do not match brow_offsets", r,
                       (long long)rp->brow_begin, (long long)rp->nbrows);
    /* Each buffer holds distinct B rows of other ranks. */
    if (rp->coll_buf_rows < 0 || rp->coll_buf_rows > p->n)
        return tf_fail(TF_ERR_FORMAT, "rank %d: coll_buf_rows = %lld is outside [0, %lld]", r,
                       (long long)rp->coll_buf_rows, (long long)p->n);
    if (rp->fetch_buf_rows < 0 || rp->fetch_buf_rows > p->n)
        return tf_fail(TF_ERR_FORMAT, "rank %d: fetch_buf_rows = %lld is outside [0, %lld]", r,
                       (long long)rp->fetch_buf_rows, (long long)p->n);
    return TF_OK;
}

/* Upper bound of an extent-defined count, so that a file cannot make the
 * reader allocate more than the header's matrix could need. */
int64_t tf_pl_count_bound(const tf_plan *p, const tf_rank_plan *rp, int c)
{
    switch (c) {
    case N_LOC:
    case N_COLL:
    case N_FET: return p->nnz;
    case N_SEND: return (int64_t)p->nranks * (rp->nbrows + 1);
    case N_FROWS: return rp->nrows;
    default: return p->n + p->nranks; /* N_RECV, N_RUNS: at most one per stripe */
    }
}

static int check_ptr(const int64_t *ptr, int64_t n, int64_t nnz, int r, const char *name)
{
    if (ptr[0] != 0)
        return tf_fail(TF_ERR_FORMAT, "rank %d: %s[0] = %lld, expected 0", r, name,
                       (long long)ptr[0]);
    for (int64_t i = 0; i < n; i++)
        if (ptr[i + 1] < ptr[i])
            return tf_fail(TF_ERR_FORMAT, "rank %d: %s decreases at %lld", r, name,
                           (long long)i);
    if (ptr[n] != nnz)
        return tf_fail(TF_ERR_FORMAT, "rank %d: %s ends at %lld, expected %lld nonzeros", r,
                       name, (long long)ptr[n], (long long)nnz);
    return TF_OK;
}

static int check_idx(const int32_t *idx, int64_t n, int64_t bound, int r, const char *name,
                     const char *what)
{
    for (int64_t i = 0; i < n; i++)
        if (idx[i] < 0 || idx[i] >= bound)
            return tf_fail(TF_ERR_FORMAT, "rank %d: %s[%lld] = %d is outside [0, %lld) (%s)", r,
                           name, (long long)i, idx[i], (long long)bound, what);
    return TF_OK;
}

/* Row ranges [first, first + cnt) of rank q's B band and their buffer slots
 * [off, off + cnt) within a buffer of buf_rows rows (off may be NULL). */
static int check_ranges(const tf_plan *p, int r, int64_t n, const int32_t *rank_of, int32_t self,
                        const int32_t *first, const int32_t *cnt, const int64_t *off,
                        int64_t buf_rows, const char *name)
{
    for (int64_t i = 0; i < n; i++) {
        int32_t q = rank_of ? rank_of[i] : self;
        if (q < 0 || q >= p->nranks)
            return tf_fail(TF_ERR_FORMAT, "rank %d: %s[%lld]: rank %d is out of range", r, name,
                           (long long)i, q);
        int64_t band = p->brow_off[q + 1] - p->brow_off[q];
        if (first[i] < 0 || cnt[i] < 0 || (int64_t)first[i] + cnt[i] > band)
            return tf_fail(TF_ERR_FORMAT,
                           "rank %d: %s[%lld]: rows %d + %d are outside rank %d's %lld B rows", r,
                           name, (long long)i, first[i], cnt[i], q, (long long)band);
        if (off && (off[i] < 0 || off[i] > buf_rows - cnt[i]))
            return tf_fail(TF_ERR_FORMAT,
                           "rank %d: %s[%lld]: buffer rows %lld + %d exceed the %lld-row buffer",
                           r, name, (long long)i, (long long)off[i], cnt[i], (long long)buf_rows);
    }
    return TF_OK;
}

int tf_plan_validate_rank(const tf_plan *p, const tf_rank_plan *rp)
{
    int st = tf_pl_check_rank_scalars(p, rp);
    if (st != TF_OK)
        return st;
    int r = rp->rank;
    for (int i = 0; i < N_RANK_ARRAYS; i++) {
        int64_t n = tf_pl_count_get(rp, tf_pl_rank_arrays[i].count);
        if (n < 0)
            return tf_fail(TF_ERR_FORMAT, "rank %d: %s has negative length %lld", r,
                           tf_pl_rank_arrays[i].name, (long long)n);
        if (n > 0 && !tf_pl_array_get(rp, i))
            return tf_fail(TF_ERR_FORMAT, "rank %d: %s is missing (%lld elements)", r,
                           tf_pl_rank_arrays[i].name, (long long)n);
    }
    if (rp->loc_nnz > p->nnz || rp->coll_nnz > p->nnz - rp->loc_nnz ||
        rp->fet_nnz > p->nnz - rp->loc_nnz - rp->coll_nnz)
        return tf_fail(TF_ERR_FORMAT, "rank %d: %lld + %lld + %lld nonzeros exceed the matrix's %lld",
                       r, (long long)rp->loc_nnz, (long long)rp->coll_nnz, (long long)rp->fet_nnz,
                       (long long)p->nnz);
    if (rp->n_fetch_rows > rp->nrows)
        return tf_fail(TF_ERR_FORMAT, "rank %d: %lld fetch rows but only %lld rows", r,
                       (long long)rp->n_fetch_rows, (long long)rp->nrows);
    const int64_t *loc_ptr = tf_pl_array_get(rp, 0), *coll_ptr = tf_pl_array_get(rp, 3),
                  *fet_ptr = tf_pl_array_get(rp, 18);
    if ((st = check_ptr(loc_ptr, rp->nrows, rp->loc_nnz, r, "local/rowptr")) ||
        (st = check_idx(rp->loc_idx, rp->loc_nnz, rp->nbrows, r, "local/col", "own B rows")) ||
        (st = check_ptr(coll_ptr, rp->nrows, rp->coll_nnz, r, "collective/rowptr")) ||
        (st = check_idx(rp->coll_idx, rp->coll_nnz, rp->coll_buf_rows, r, "collective/col",
                        "collective buffer rows")) ||
        (st = check_ranges(p, r, rp->n_recv, rp->recv_src, 0, rp->recv_first, rp->recv_rows,
                           rp->recv_off, rp->coll_buf_rows, "collective/recv")) ||
        (st = check_ranges(p, r, rp->n_send, NULL, r, rp->send_first, rp->send_rows, NULL, 0,
                           "send")) ||
        (st = check_idx(rp->send_dst, rp->n_send, p->nranks, r, "send/dst", "ranks")) ||
        (st = check_ranges(p, r, rp->n_runs, rp->run_owner, 0, rp->run_first, rp->run_count,
                           rp->run_off, rp->fetch_buf_rows, "fetch/run")) ||
        (st = check_idx(rp->fetch_rows, rp->n_fetch_rows, rp->nrows, r, "fetch/rows_touched",
                        "own rows")) ||
        (st = check_ptr(fet_ptr, rp->fetch_buf_rows, rp->fet_nnz, r, "fetch/colptr")) ||
        (st = check_idx(rp->fet_idx, rp->fet_nnz, rp->n_fetch_rows, r, "fetch/row",
                        "positions in fetch/rows_touched")))
        return st;
    for (int64_t i = 1; i < rp->n_fetch_rows; i++)
        if (rp->fetch_rows[i] <= rp->fetch_rows[i - 1])
            return tf_fail(TF_ERR_FORMAT, "rank %d: fetch/rows_touched is not increasing at %lld",
                           r, (long long)i);
    return TF_OK;
}
