#include "tf_dist_write.h"
#include "tf_dist_comm.h"
#include "tf_dist_planner.h"
#include "tf_error.h"
#include "tf_plan_io.h"
#include "tf_plan_layout.h"

#include <stdlib.h>
#include <string.h>

enum { TAG_ASK = 7301, TAG_HEAD = 7302, TAG_DATA = 7303 };
#define PIECE ((int64_t)1 << 30)

/* What travels ahead of a part's arrays. */
typedef struct {
    int64_t rank, row_begin, nrows, brow_begin, nbrows, coll_buf_rows, fetch_buf_rows;
    int64_t counts[N_COUNTS];
    tf_rank_stats stats;
} part_head;

static int send_big(MPI_Comm comm, const void *p, int64_t bytes, int dst)
{
    for (int64_t off = 0; off < bytes; off += PIECE) {
        int64_t n = bytes - off < PIECE ? bytes - off : PIECE;
        if (MPI_Send((const char *)p + off, (int)n, MPI_BYTE, dst, TAG_DATA, comm) != MPI_SUCCESS)
            return tf_fail(TF_ERR_MPI, "sending a plan part to rank %d failed", dst);
    }
    return TF_OK;
}

static int recv_big(MPI_Comm comm, void *p, int64_t bytes, int src)
{
    for (int64_t off = 0; off < bytes; off += PIECE) {
        int64_t n = bytes - off < PIECE ? bytes - off : PIECE;
        if (MPI_Recv((char *)p + off, (int)n, MPI_BYTE, src, TAG_DATA, comm,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return tf_fail(TF_ERR_MPI, "receiving a plan part from rank %d failed", src);
    }
    return TF_OK;
}

static int send_part(MPI_Comm comm, const tf_rank_plan *rp)
{
    part_head h;
    memset(&h, 0, sizeof h);
    h.rank = rp->rank;
    h.row_begin = rp->row_begin;
    h.nrows = rp->nrows;
    h.brow_begin = rp->brow_begin;
    h.nbrows = rp->nbrows;
    h.coll_buf_rows = rp->coll_buf_rows;
    h.fetch_buf_rows = rp->fetch_buf_rows;
    for (int c = 0; c < N_COUNTS; c++)
        h.counts[c] = tf_pl_count_get(rp, c);
    h.stats = rp->stats;
    if (MPI_Send(&h, (int)sizeof h, MPI_BYTE, 0, TAG_HEAD, comm) != MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "sending a plan part's header to rank 0 failed");
    for (int i = 0; i < N_RANK_ARRAYS; i++) {
        const tf_pl_array_desc *d = &tf_pl_rank_arrays[i];
        int st = send_big(comm, tf_pl_array_get(rp, i),
                          h.counts[d->count] * (int64_t)tf_pl_kind_size(d->kind), 0);
        if (st)
            return st;
    }
    return TF_OK;
}

static int recv_part(MPI_Comm comm, int src, tf_rank_plan *rp)
{
    memset(rp, 0, sizeof *rp);
    part_head h;
    if (MPI_Recv(&h, (int)sizeof h, MPI_BYTE, src, TAG_HEAD, comm, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "receiving a plan part's header from rank %d failed", src);
    rp->rank = (int32_t)h.rank;
    rp->row_begin = h.row_begin;
    rp->nrows = h.nrows;
    rp->brow_begin = h.brow_begin;
    rp->nbrows = h.nbrows;
    rp->coll_buf_rows = h.coll_buf_rows;
    rp->fetch_buf_rows = h.fetch_buf_rows;
    for (int c = 0; c < N_COUNTS; c++)
        tf_pl_count_set(rp, c, h.counts[c]);
    rp->stats = h.stats;
    int st = TF_OK;
    for (int i = 0; i < N_RANK_ARRAYS; i++) {
        const tf_pl_array_desc *d = &tf_pl_rank_arrays[i];
        int64_t bytes = h.counts[d->count] * (int64_t)tf_pl_kind_size(d->kind);
        void *p = malloc((size_t)(bytes > 0 ? bytes : 1));
        if (!p) {
            /* Still drain what the sender sends, so that it does not block. */
            st = tf_fail(TF_ERR_NOMEM, "rank 0: out of memory for rank %d's part", (int)h.rank);
            char sink[4096];
            for (int64_t off = 0; off < bytes;) {
                int64_t n = bytes - off < (int64_t)sizeof sink ? bytes - off : (int64_t)sizeof sink;
                (void)n;
                MPI_Status stt;
                MPI_Probe(src, TAG_DATA, comm, &stt);
                int cnt;
                MPI_Get_count(&stt, MPI_BYTE, &cnt);
                char *tmp = malloc((size_t)(cnt > 0 ? cnt : 1));
                MPI_Recv(tmp ? tmp : sink, tmp ? cnt : 0, MPI_BYTE, src, TAG_DATA, comm,
                         MPI_STATUS_IGNORE);
                free(tmp);
                off += cnt;
            }
            continue;
        }
        tf_pl_array_set(rp, i, p);
        if (st == TF_OK)
            st = recv_big(comm, p, bytes, src);
    }
    return st;
}

typedef struct {
    MPI_Comm comm;
    const tf_plan *plan;
    const int *first_part;
    int Q;
    tf_rank_plan got; /* a part received, until released */
    int have_got;
} root_ctx;

static int holder_of(const root_ctx *c, int p)
{
    int x = 0;
    while (x < c->Q - 1 && c->first_part[x + 1] <= p)
        x++;
    return x;
}

static int root_get(void *ctx, int alt, int p, const tf_rank_plan **rp)
{
    root_ctx *c = ctx;
    const tf_plan *pl = alt ? c->plan->alt : c->plan;
    if (p >= pl->first_rank && p < pl->first_rank + pl->n_parts) {
        *rp = &pl->parts[p - pl->first_rank];
        return TF_OK;
    }
    int src = holder_of(c, p);
    int ask[2] = {alt, p};
    if (MPI_Send(ask, 2, MPI_INT, src, TAG_ASK, c->comm) != MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "asking rank %d for plan part %d failed", src, p);
    int st = recv_part(c->comm, src, &c->got);
    c->have_got = 1;
    *rp = &c->got;
    return st;
}

static void root_release(void *ctx, int alt, int p)
{
    (void)alt;
    (void)p;
    root_ctx *c = ctx;
    if (c->have_got)
        tf_rank_plan_free(&c->got);
    c->have_got = 0;
}

int tf_dist_plan_write(MPI_Comm comm, const char *path, const tf_plan *plan, int zstd_level)
{
    int Q, me;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    const int P = plan->nranks;
    int *first_part = malloc((size_t)(Q + 1) * sizeof *first_part);
    if (!first_part)
        return tf_dist_agree(comm, tf_fail(TF_ERR_NOMEM, "out of memory for %d ranks", Q));
    for (int r = 0; r <= Q; r++)
        first_part[r] = tf_dist_first_part(P, Q, r);
    int st = TF_OK;
    if (me == 0) {
        root_ctx c = {comm, plan, first_part, Q, {0}, 0};
        tf_plan_part_source src = {root_get, root_release, &c};
        st = tf_plan_write_source(path, plan, zstd_level, &src);
        if (c.have_got)
            tf_rank_plan_free(&c.got);
        /* Whoever still waits to be asked is told to stop. */
        int stop[2] = {-1, -1};
        for (int x = 1; x < Q; x++)
            MPI_Send(stop, 2, MPI_INT, x, TAG_ASK, comm);
    } else {
        for (;;) {
            int ask[2];
            if (MPI_Recv(ask, 2, MPI_INT, 0, TAG_ASK, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
                st = tf_fail(TF_ERR_MPI, "rank %d: waiting for rank 0 to ask for a part failed",
                             me);
                break;
            }
            if (ask[0] < 0)
                break;
            const tf_plan *pl = ask[0] ? plan->alt : plan;
            int i = ask[1] - (pl ? pl->first_rank : 0);
            if (!pl || i < 0 || i >= pl->n_parts) {
                st = tf_fail(TF_ERR_INTERNAL, "rank %d was asked for part %d, which it has not",
                             me, ask[1]);
                break;
            }
            if ((st = send_part(comm, &pl->parts[i])) != TF_OK)
                break;
        }
    }
    free(first_part);
    return tf_dist_agree(comm, st);
}
