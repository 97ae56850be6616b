/* Opening a plan: read this rank's part, check it, rebuild this rank's rows
 * of A with global columns, check the matrix fingerprint over all ranks, and
 * agree on the outcome. */
#include "tf_exec.h"
#include "tf_node.h"
#include "tf_exec_perm.h"
#include "tf_fingerprint.h"
#include "tf_kernels.h"
#include "tf_plan_perm.h"
#include "tf_plan_io.h"

#include <stdlib.h>
#include <string.h>

/* ---- Checks the executor relies on beyond the reader's validation ------ */

static int check_part(const tf_plan *plan, const tf_rank_plan *rp, int rank)
{
    const int64_t *bo = plan->brow_off;
    int P = plan->nranks;
    if (rp->rank != rank)
        return tf_fail(TF_ERR_FORMAT, "plan part is for rank %d, expected %d", rp->rank, rank);
    if (rp->row_begin != plan->row_off[rank] ||
        rp->nrows != plan->row_off[rank + 1] - plan->row_off[rank] ||
        rp->brow_begin != bo[rank] || rp->nbrows != bo[rank + 1] - bo[rank])
        return tf_fail(TF_ERR_FORMAT, "rank %d: row ranges disagree with the plan header", rank);
    if (plan->m < 0 || plan->n < 0 || plan->m > TF_MAX_DIM || plan->n > TF_MAX_DIM)
        return tf_fail(TF_ERR_FORMAT, "plan: matrix size %lld x %lld out of range",
                       (long long)plan->m, (long long)plan->n);
#define BAD(...) return tf_fail(TF_ERR_FORMAT, __VA_ARGS__)
    /* CSR parts */
    const int64_t *ptrs[2] = {rp->loc_ptr, rp->coll_ptr};
    const int32_t *idxs[2] = {rp->loc_idx, rp->coll_idx};
    int64_t nnzs[2] = {rp->loc_nnz, rp->coll_nnz};
    int64_t lims[2] = {rp->nbrows, rp->coll_buf_rows};
    const char *names[2] = {"local", "collective"};
    for (int p = 0; p < 2; p++) {
        if (rp->nrows > 0 && !ptrs[p])
            BAD("rank %d: %s part has no row pointers", rank, names[p]);
        if (rp->nrows > 0 && (ptrs[p][0] != 0 || ptrs[p][rp->nrows] != nnzs[p]))
            BAD("rank %d: %s row pointers do not span its %lld nonzeros", rank, names[p],
                (long long)nnzs[p]);
        for (int64_t i = 0; i < rp->nrows; i++)
            if (ptrs[p][i + 1] < ptrs[p][i])
                BAD("rank %d: %s row pointers decrease at row %lld", rank, names[p], (long long)i);
        for (int64_t e = 0; e < nnzs[p]; e++)
            if (idxs[p][e] < 0 || idxs[p][e] >= lims[p])
                BAD("rank %d: %s column index %d out of [0, %lld)", rank, names[p], idxs[p][e],
                    (long long)lims[p]);
    }
    if (rp->nrows == 0 && (rp->loc_nnz || rp->coll_nnz))
        BAD("rank %d: nonzeros without rows", rank);
    /* Receive schedule: ordered by source, contiguous in the buffer. */
    int64_t off = 0;
    for (int64_t r = 0; r < rp->n_recv; r++) {
        int s = rp->recv_src[r];
        if (s < 0 || s >= P || s == rank)
            BAD("rank %d: receive %lld from invalid rank %d", rank, (long long)r, s);
        if (r > 0 && s < rp->recv_src[r - 1])
            BAD("rank %d: receive schedule not ordered by source", rank);
        if (rp->recv_first[r] < 0 || rp->recv_rows[r] <= 0 ||
            (int64_t)rp->recv_first[r] + rp->recv_rows[r] > bo[s + 1] - bo[s])
            BAD("rank %d: receive %lld: rows [%d, +%d) outside rank %d's B rows", rank,
                (long long)r, rp->recv_first[r], rp->recv_rows[r], s);
        if (rp->recv_off[r] != off)
            BAD("rank %d: receive %lld: buffer offset %lld, expected %lld", rank, (long long)r,
                (long long)rp->recv_off[r], (long long)off);
        off += rp->recv_rows[r];
    }
    if (off != rp->coll_buf_rows)
        BAD("rank %d: collective buffer has %lld rows, schedule fills %lld", rank,
            (long long)rp->coll_buf_rows, (long long)off);
    for (int64_t r = 0; r < rp->n_send; r++) {
        int d = rp->send_dst[r];
        if (d < 0 || d >= P || d == rank)
            BAD("rank %d: send %lld to invalid rank %d", rank, (long long)r, d);
        if (r > 0 && d < rp->send_dst[r - 1])
            BAD("rank %d: send schedule not ordered by recipient", rank);
        if (rp->send_first[r] < 0 || rp->send_rows[r] <= 0 ||
            (int64_t)rp->send_first[r] + rp->send_rows[r] > rp->nbrows)
            BAD("rank %d: send %lld: rows [%d, +%d) outside its %lld B rows", rank, (long long)r,
                rp->send_first[r], rp->send_rows[r], (long long)rp->nbrows);
    }
    /* Fetch runs */
    for (int64_t r = 0; r < rp->n_runs; r++) {
        int o = rp->run_owner[r];
        if (o < 0 || o >= P || o == rank)
            BAD("rank %d: run %lld from invalid rank %d", rank, (long long)r, o);
        if (rp->run_first[r] < 0 || rp->run_count[r] <= 0 ||
            (int64_t)rp->run_first[r] + rp->run_count[r] > bo[o + 1] - bo[o])
            BAD("rank %d: run %lld: rows [%d, +%d) outside rank %d's B rows", rank, (long long)r,
                rp->run_first[r], rp->run_count[r], o);
        if (rp->run_off[r] < 0 || rp->run_off[r] + rp->run_count[r] > rp->fetch_buf_rows)
            BAD("rank %d: run %lld outside the fetch buffer", rank, (long long)r);
    }
    for (int64_t i = 0; i < rp->n_fetch_rows; i++)
        if (rp->fetch_rows[i] < 0 || rp->fetch_rows[i] >= rp->nrows ||
            (i > 0 && rp->fetch_rows[i] <= rp->fetch_rows[i - 1]))
            BAD("rank %d: fetch row list not ascending within [0, %lld)", rank,
                (long long)rp->nrows);
    if (rp->fetch_buf_rows > 0 || rp->fet_nnz > 0) {
        if (!rp->fet_ptr || rp->fet_ptr[0] != 0 || rp->fet_ptr[rp->fetch_buf_rows] != rp->fet_nnz)
            BAD("rank %d: fetch column pointers do not span its %lld nonzeros", rank,
                (long long)rp->fet_nnz);
        for (int64_t j = 0; j < rp->fetch_buf_rows; j++)
            if (rp->fet_ptr[j + 1] < rp->fet_ptr[j])
                BAD("rank %d: fetch column pointers decrease", rank);
        for (int64_t e = 0; e < rp->fet_nnz; e++)
            if (rp->fet_idx[e] < 0 || rp->fet_idx[e] >= rp->n_fetch_rows)
                BAD("rank %d: fetch row index %d out of [0, %lld)", rank, rp->fet_idx[e],
                    (long long)rp->n_fetch_rows);
    }
#undef BAD
    return TF_OK;
}

/* ---- Rebuilding this rank's rows of A with global columns -------------- */

typedef struct {
    int32_t col;
    float val;
} entry;

static int entry_cmp(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    return (x->col > y->col) - (x->col < y->col);
}

static int rebuild_rows(tf_handle *h)
{
    const tf_plan *plan = &h->plan;
    const tf_rank_plan *rp = h->rp;
    const int64_t *bo = plan->brow_off;
    int64_t nr = rp->nrows;

    h->coll_gcol = malloc((size_t)(rp->coll_buf_rows + 1) * sizeof *h->coll_gcol);
    h->fetch_gcol = malloc((size_t)(rp->fetch_buf_rows + 1) * sizeof *h->fetch_gcol);
    int64_t *cnt = calloc((size_t)nr + 1, sizeof *cnt);
    if (!h->coll_gcol || !h->fetch_gcol || !cnt) {
        free(cnt);
        return tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate the column maps", h->rank);
    }
    for (int64_t r = 0; r < rp->n_recv; r++)
        for (int32_t x = 0; x < rp->recv_rows[r]; x++)
            h->coll_gcol[rp->recv_off[r] + x] = bo[rp->recv_src[r]] + rp->recv_first[r] + x;
    for (int64_t j = 0; j < rp->fetch_buf_rows; j++)
        h->fetch_gcol[j] = -1;
    for (int64_t r = 0; r < rp->n_runs; r++)
        for (int32_t x = 0; x < rp->run_count[r]; x++)
            h->fetch_gcol[rp->run_off[r] + x] = bo[rp->run_owner[r]] + rp->run_first[r] + x;

    /* Row lengths. */
    for (int64_t i = 0; i < nr; i++)
        cnt[i + 1] = (rp->loc_ptr[i + 1] - rp->loc_ptr[i]) + (rp->coll_ptr[i + 1] - rp->coll_ptr[i]);
    for (int64_t j = 0; j < rp->fetch_buf_rows; j++) {
        if (rp->fet_ptr[j + 1] > rp->fet_ptr[j] && h->fetch_gcol[j] < 0) {
            free(cnt);
            return tf_fail(TF_ERR_FORMAT, "rank %d: fetch buffer row %lld has nonzeros but no run",
                           h->rank, (long long)j);
        }
        for (int64_t e = rp->fet_ptr[j]; e < rp->fet_ptr[j + 1]; e++)
            cnt[rp->fetch_rows[rp->fet_idx[e]] + 1]++;
    }
    for (int64_t i = 0; i < nr; i++)
        cnt[i + 1] += cnt[i];
    int64_t nnz = cnt[nr];
    int st = tf_csr_alloc(&h->rows, nr, plan->n, nnz);
    if (st) {
        free(cnt);
        return st;
    }
    entry *e_all = malloc((size_t)(nnz ? nnz : 1) * sizeof *e_all);
    int64_t *pos = malloc((size_t)(nr + 1) * sizeof *pos);
    if (!e_all || !pos) {
        free(cnt);
        free(e_all);
        free(pos);
        return tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate %lld nonzeros", h->rank,
                       (long long)nnz);
    }
    memcpy(pos, cnt, (size_t)(nr + 1) * sizeof *pos);
    for (int64_t i = 0; i < nr; i++) {
        for (int64_t e = rp->loc_ptr[i]; e < rp->loc_ptr[i + 1]; e++)
            e_all[pos[i]++] = (entry){(int32_t)(rp->brow_begin + rp->loc_idx[e]), rp->loc_val[e]};
        for (int64_t e = rp->coll_ptr[i]; e < rp->coll_ptr[i + 1]; e++)
            e_all[pos[i]++] = (entry){(int32_t)h->coll_gcol[rp->coll_idx[e]], rp->coll_val[e]};
    }
    for (int64_t j = 0; j < rp->fetch_buf_rows; j++)
        for (int64_t e = rp->fet_ptr[j]; e < rp->fet_ptr[j + 1]; e++) {
            int64_t i = rp->fetch_rows[rp->fet_idx[e]];
            e_all[pos[i]++] = (entry){(int32_t)h->fetch_gcol[j], rp->fet_val[e]};
        }
    st = TF_OK;
    for (int64_t i = 0; i < nr && st == TF_OK; i++) {
        entry *row = e_all + cnt[i];
        int64_t len = cnt[i + 1] - cnt[i];
        int sorted = 1;
        for (int64_t x = 1; x < len && sorted; x++)
            sorted = row[x - 1].col < row[x].col;
        if (!sorted)
            qsort(row, (size_t)len, sizeof *row, entry_cmp);
        h->rows.rowptr[i + 1] = cnt[i + 1];
        for (int64_t x = 0; x < len; x++) {
            if (x > 0 && row[x].col == row[x - 1].col) {
                st = tf_fail(TF_ERR_FORMAT, "rank %d: row %lld holds column %d twice", h->rank,
                             (long long)(rp->row_begin + i), row[x].col);
                break;
            }
            h->rows.col[cnt[i] + x] = row[x].col;
            h->rows.val[cnt[i] + x] = row[x].val;
        }
    }
    free(cnt);
    free(e_all);
    free(pos);
    return st;
}

/* ---- Open / close ------------------------------------------------------- */

static void handle_free(tf_handle *h)
{
    if (!h)
        return;
    handle_free(h->alt);
    tf_perm_handle_free(h);
    tf_plan_free(&h->plan);
    tf_csr_free(&h->rows);
    free(h->coll_gcol);
    free(h->fetch_gcol);
    if (h->comm != MPI_COMM_NULL)
        MPI_Comm_free(&h->comm);
    free(h);
}

/* Keeps only part `rank` of a plan holding several parts. */
static int keep_own_part(tf_plan *plan, int rank)
{
    if (rank < plan->first_rank || rank >= plan->first_rank + plan->n_parts)
        return tf_fail(TF_ERR_FORMAT, "plan holds no part for rank %d", rank);
    if (plan->n_parts == 1)
        return TF_OK;
    tf_rank_plan *mine = malloc(sizeof *mine);
    if (!mine)
        return tf_fail(TF_ERR_NOMEM, "cannot allocate a plan part");
    int idx = rank - plan->first_rank;
    *mine = plan->parts[idx];
    memset(&plan->parts[idx], 0, sizeof plan->parts[idx]);
    for (int i = 0; i < plan->n_parts; i++)
        tf_rank_plan_free(&plan->parts[i]);
    free(plan->parts);
    plan->parts = mine;
    plan->n_parts = 1;
    plan->first_rank = rank;
    return TF_OK;
}

/* The runner-up plan (h->plan.alt, already checked against the plan by
 * tf_plan_check_alt) becomes h->alt, opened like the plan: its own part,
 * checked, its rows of A rebuilt - which must be exactly h's, or the two
 * would not compute the same C. */
static int open_alt(tf_handle *h)
{
    tf_handle *a = calloc(1, sizeof *a);
    if (!a)
        return tf_fail(TF_ERR_NOMEM, "cannot allocate a handle");
    a->comm = MPI_COMM_NULL;
    a->rank = h->rank;
    a->nranks = h->nranks;
    a->plan = *h->plan.alt;
    free(h->plan.alt);
    h->plan.alt = NULL;
    h->alt = a;
    int st = keep_own_part(&a->plan, h->rank);
    if (st == TF_OK) {
        a->rp = &a->plan.parts[0];
        st = check_part(&a->plan, a->rp, h->rank);
    }
    if (st == TF_OK)
        st = rebuild_rows(a);
    if (st == TF_OK &&
        (a->rows.nnz != h->rows.nnz ||
         memcmp(a->rows.rowptr, h->rows.rowptr, ((size_t)h->rows.nrows + 1) * sizeof *h->rows.rowptr) ||
         (h->rows.nnz > 0 &&
          (memcmp(a->rows.col, h->rows.col, (size_t)h->rows.nnz * sizeof *h->rows.col) ||
           memcmp(a->rows.val, h->rows.val, (size_t)h->rows.nnz * sizeof *h->rows.val)))))
        st = tf_fail(TF_ERR_FORMAT, "rank %d: the alternative plan holds other rows of A", h->rank);
    if (st != TF_OK)
        st = tf_fail_prefix(st, "alternative plan");
    return st;
}

/* Common tail of tf_open and tf_open_plan: `st` is this rank's status so far
 * (the plan is owned and freed on failure). */
static int open_common(tf_plan *plan, int st, MPI_Comm comm, tf_handle **out)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);

    st = tf_agree_note_io(comm, st);
    /* A plan for another number of ranks: every rank says the same thing,
     * whether or not it could read a part for its own rank number. */
    int nr = st == TF_OK ? plan->nranks : -1, maxnr = -1, minnr = -1;
    int nr_min_in = st == TF_OK ? plan->nranks : INT32_MAX;
    MPI_Allreduce(&nr, &maxnr, 1, MPI_INT, MPI_MAX, comm);
    MPI_Allreduce(&nr_min_in, &minnr, 1, MPI_INT, MPI_MIN, comm);
    if (maxnr >= 0 && (maxnr != size || minnr != size)) {
        int shown = maxnr != size ? maxnr : minnr;
        st = tf_fail(TF_ERR_FORMAT, "plan is for %d ranks, but %d ranks are running", shown,
                     size);
    }
    /* Every rank must hold the same plan: ranks that read their own copies
     * (no shared file system) may find different files, and schedules that
     * disagree, or a runner-up on some ranks only (its start-up trial),
     * leave ranks waiting for each other. */
    uint64_t id = st == TF_OK ? tf_plan_identity(plan) : 0, id0 = id;
    MPI_Bcast(&id0, 1, MPI_UINT64_T, 0, comm);
    if (st == TF_OK && id != id0)
        st = tf_fail(TF_ERR_FORMAT, "rank %d holds another plan than rank 0 (another file, or "
                     "another version of it): every rank must open the same plan", rank);

    tf_handle *h = NULL;
    if (st == TF_OK) {
        h = calloc(1, sizeof *h);
        if (!h)
            st = tf_fail(TF_ERR_NOMEM, "cannot allocate a handle");
    }
    if (st == TF_OK) {
        h->comm = MPI_COMM_NULL;
        h->rank = rank;
        h->nranks = size;
        h->plan = *plan;
        memset(plan, 0, sizeof *plan);
        st = keep_own_part(&h->plan, rank);
        if (st == TF_OK) {
            h->rp = &h->plan.parts[0];
            st = check_part(&h->plan, h->rp, rank);
        }
        if (st == TF_OK)
            st = rebuild_rows(h);
        if (st == TF_OK)
            st = tf_perm_handle_init(h);
        if (st == TF_OK && h->plan.alt)
            st = open_alt(h);
    }
    if (st == TF_OK)
        st = tf_kern_init(); /* a bad TF_KERNEL fails here, on every rank */
    st = tf_agree(comm, st);
    if (st != TF_OK) {
        handle_free(h);
        tf_plan_free(plan);
        return st;
    }

    /* Fingerprint: the sum of every rank's rows must be the planner's; a
     * permuted plan's is that of A in the original ids (tf_plan_perm.h). */
    uint64_t share = 0, total = 0;
    st = tf_agree(comm, tf_perm_fingerprint_rows(&h->rows, h->rp->row_begin, h->plan.perm,
                                                 &share));
    if (st != TF_OK) {
        handle_free(h);
        return st;
    }
    int64_t nnz_mine = h->rows.nnz, nnz_all = 0;
    MPI_Allreduce(&share, &total, 1, MPI_UINT64_T, MPI_SUM, comm);
    MPI_Allreduce(&nnz_mine, &nnz_all, 1, MPI_INT64_T, MPI_SUM, comm);
    if (nnz_all != h->plan.nnz)
        st = tf_fail(TF_ERR_FORMAT,
                     "plan parts hold %lld nonzeros in total, the header says %lld",
                     (long long)nnz_all, (long long)h->plan.nnz);
    /* The plan's checksum is salted with its normalisation (tf_fingerprint.h). */
    else if ((total += tf_fingerprint_salt(tf_norm_name(h->plan.normalization))) !=
             h->plan.checksum)
        st = tf_fail(TF_ERR_FORMAT,
                     "matrix fingerprint mismatch: the plan says %016llx, its parts give %016llx",
                     (unsigned long long)h->plan.checksum, (unsigned long long)total);
    if (st == TF_OK && MPI_Comm_dup(comm, &h->comm) != MPI_SUCCESS)
        st = tf_fail(TF_ERR_MPI, "MPI_Comm_dup failed");
    /* h->alt exists on every rank or on none: the agreement above covered
     * reading it, and every rank read the same file. */
    if (st == TF_OK && h->alt && MPI_Comm_dup(comm, &h->alt->comm) != MPI_SUCCESS)
        st = tf_fail(TF_ERR_MPI, "MPI_Comm_dup failed");
    h->node_ranks = tf_node_ranks(comm);
    if (h->alt)
        h->alt->node_ranks = h->node_ranks;
    st = tf_agree(comm, st);
    if (st != TF_OK) {
        handle_free(h);
        return st;
    }
    *out = h;
    return TF_OK;
}

static int comm_ok(MPI_Comm comm)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin)
        return tf_fail(TF_ERR_MPI, "MPI is not initialised");
    if (comm == MPI_COMM_NULL)
        return tf_fail(TF_ERR_ARG, "communicator is MPI_COMM_NULL");
    return TF_OK;
}

int tf_open(const char *plan_path, MPI_Comm comm, tf_handle **h)
{
    if (!h)
        return tf_fail(TF_ERR_ARG, "tf_open: NULL handle pointer");
    *h = NULL;
    int st = comm_ok(comm);
    if (st)
        return st; /* nothing to agree over */
    int rank;
    MPI_Comm_rank(comm, &rank);
    tf_plan plan;
    memset(&plan, 0, sizeof plan);
    if (!plan_path)
        st = tf_fail(TF_ERR_ARG, "tf_open: NULL plan path");
    else
        st = tf_plan_read(plan_path, rank, &plan);
    return open_common(&plan, st, comm, h);
}

/* The reader's validation of this rank's part, for a plan built in memory
 * (a missing part is open_common's to report). */
static int validate_own_part(const tf_plan *plan, int rank)
{
    if (plan->n_parts > 0 && rank >= plan->first_rank && rank < plan->first_rank + plan->n_parts &&
        rank < plan->nranks)
        return tf_plan_validate_rank(plan, &plan->parts[rank - plan->first_rank]);
    return TF_OK;
}

int tf_open_plan(tf_plan *plan, MPI_Comm comm, tf_handle **h)
{
    if (!h || !plan)
        return tf_fail(TF_ERR_ARG, "tf_open_plan: NULL argument");
    *h = NULL;
    int st = comm_ok(comm);
    if (st)
        return st;
    int rank;
    MPI_Comm_rank(comm, &rank);
    st = validate_own_part(plan, rank);
    if (st == TF_OK && plan->alt) {
        st = tf_plan_check_alt(plan, plan->alt);
        if (st == TF_OK)
            st = validate_own_part(plan->alt, rank);
    }
    return open_common(plan, st, comm, h);
}

int tf_close(tf_handle *h)
{
    handle_free(h);
    return TF_OK;
}

const tf_csr *tf_handle_rows(const tf_handle *h) { return &h->rows; }

const tf_plan *tf_handle_plan(const tf_handle *h) { return &h->plan; }

int tf_get_nranks(const tf_handle *h) { return h->nranks; }
int tf_get_rank(const tf_handle *h) { return h->rank; }
int64_t tf_get_m(const tf_handle *h) { return h->plan.m; }
int64_t tf_get_n(const tf_handle *h) { return h->plan.n; }
int64_t tf_get_nnz(const tf_handle *h) { return h->plan.nnz; }
void tf_get_rows(const tf_handle *h, int64_t *row_begin, int64_t *nrows)
{
    if (row_begin)
        *row_begin = h->rp->row_begin;
    if (nrows)
        *nrows = h->rp->nrows;
}
void tf_get_brows(const tf_handle *h, int64_t *brow_begin, int64_t *nbrows)
{
    if (brow_begin)
        *brow_begin = h->rp->brow_begin;
    if (nbrows)
        *nbrows = h->rp->nbrows;
}
int tf_get_k_planned(const tf_handle *h) { return h->plan.k_planned; }
int tf_get_mode(const tf_handle *h) { return h->plan.mode; }
const char *tf_get_mode_name(const tf_handle *h) { return tf_mode_name(h->plan.mode); }
const char *tf_get_normalization(const tf_handle *h) { return tf_norm_name(h->plan.normalization); }
int tf_get_symmetric(const tf_handle *h) { return h->plan.symmetric; }
int tf_get_transposed(const tf_handle *h) { return h->plan.transposed; }
uint64_t tf_get_fingerprint(const tf_handle *h) { return h->plan.checksum; }

const char *tf_status_string(int status) { return tf_strerror(status); }
const char *tf_last_error(void) { return tf_error_message(); }
