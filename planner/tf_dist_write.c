#include "tf_dist_write.h"
#include "tf_dist_comm.h"
#include "tf_dist_encode.h"
#include "tf_dist_planner.h"
#include "tf_error.h"
#include "tf_idle.h"
#include "tf_plan_io.h"
#include "tf_plan_layout.h"
#include "tf_plan_write_encode.h"

#include <zstd.h>

#include <stdlib.h>
#include <string.h>

enum { TAG_ASK = 7301, TAG_HEAD = 7302, TAG_DATA = 7303 };
#define PIECE ((int64_t)1 << 30)

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

/* An encoded part travels as its head, then its chunk sizes, then its bytes. */
static int send_part(MPI_Comm comm, const tf_pl_enc_part *e)
{
    if (MPI_Send(&e->h, (int)sizeof e->h, MPI_BYTE, 0, TAG_HEAD, comm) != MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "sending a plan part's header to rank 0 failed");
    int st = send_big(comm, e->sizes, e->h.n_sizes * (int64_t)sizeof *e->sizes, 0);
    return st ? st : send_big(comm, e->bytes, e->h.n_bytes, 0);
}

/* Drains what the sender sends when there is no memory to keep it, so that
 * it does not block. */
static void drain(MPI_Comm comm, int src, int64_t bytes)
{
    for (int64_t off = 0; off < bytes;) {
        MPI_Status stt;
        MPI_Probe(src, TAG_DATA, comm, &stt);
        int cnt;
        MPI_Get_count(&stt, MPI_BYTE, &cnt);
        char *tmp = malloc((size_t)(cnt > 0 ? cnt : 1));
        char sink;
        MPI_Recv(tmp ? tmp : &sink, tmp ? cnt : 0, MPI_BYTE, src, TAG_DATA, comm,
                 MPI_STATUS_IGNORE);
        free(tmp);
        off += cnt > 0 ? cnt : 1;
    }
}

static int recv_part(MPI_Comm comm, int src, tf_pl_enc_part *e)
{
    memset(e, 0, sizeof *e);
    if (MPI_Recv(&e->h, (int)sizeof e->h, MPI_BYTE, src, TAG_HEAD, comm, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "receiving a plan part's header from rank %d failed", src);
    int64_t nsz = e->h.n_sizes * (int64_t)sizeof *e->sizes, nb = e->h.n_bytes;
    e->sizes = malloc((size_t)(nsz > 0 ? nsz : 1));
    e->bytes = malloc((size_t)(nb > 0 ? nb : 1));
    if (!e->sizes || !e->bytes) {
        drain(comm, src, nsz);
        drain(comm, src, nb);
        return tf_fail(TF_ERR_NOMEM, "rank 0: out of memory for rank %d's part (%lld bytes)",
                       (int)e->h.rank, (long long)nb);
    }
    int st = recv_big(comm, e->sizes, nsz, src);
    return st ? st : recv_big(comm, e->bytes, nb, src);
}

typedef struct {
    MPI_Comm comm;
    const tf_plan *plan;
    const int *first_part;
    int Q;
    const tf_dist_enc *own; /* this rank's parts, encoded: plan's and runner-up's */
    tf_pl_enc_head *heads[2]; /* every rank's heads, gathered before the write */
    tf_pl_enc_part got;     /* a part received, until released */
} root_ctx;

static int root_heads(void *ctx, int alt, const tf_pl_enc_head **h)
{
    root_ctx *c = ctx;
    *h = c->heads[alt];
    return *h ? TF_OK : tf_fail(TF_ERR_INTERNAL, "no heads gathered for the %s",
                                alt ? "runner-up" : "plan");
}

static int holder_of(const root_ctx *c, int p)
{
    int x = 0;
    while (x < c->Q - 1 && c->first_part[x + 1] <= p)
        x++;
    return x;
}

static int root_get(void *ctx, int alt, int p, const tf_pl_enc_part **e)
{
    root_ctx *c = ctx;
    const tf_plan *pl = alt ? c->plan->alt : c->plan;
    if (p >= pl->first_rank && p < pl->first_rank + pl->n_parts) {
        *e = &c->own[alt].parts[p - pl->first_rank];
        return TF_OK;
    }
    int src = holder_of(c, p);
    int ask[2] = {alt, p};
    if (MPI_Send(ask, 2, MPI_INT, src, TAG_ASK, c->comm) != MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "asking rank %d for plan part %d failed", src, p);
    *e = &c->got;
    return recv_part(c->comm, src, &c->got);
}

static void root_release(void *ctx, int alt, int p)
{
    (void)alt;
    (void)p;
    tf_pl_enc_part_free(&((root_ctx *)ctx)->got);
}

/* Rank 0 gathers the heads of every part of pl (NULL on other ranks):
 * the tables it writes before any part's bytes. */
static int gather_heads(MPI_Comm comm, const tf_plan *pl, const tf_pl_enc_part *own,
                        const int *first_part, tf_pl_enc_head **out)
{
    int Q, me;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    *out = NULL;
    int n = pl ? pl->n_parts : 0, st = TF_OK;
    tf_pl_enc_head *mine = malloc((size_t)(n ? n : 1) * sizeof *mine);
    int *counts = NULL, *displs = NULL;
    if (me == 0) {
        counts = malloc((size_t)Q * sizeof *counts);
        displs = malloc((size_t)Q * sizeof *displs);
        *out = pl ? malloc((size_t)pl->nranks * sizeof **out) : NULL;
    }
    int ok = mine != NULL && (me != 0 || (counts && displs && (!pl || *out)));
    for (int i = 0; mine && i < n; i++)
        mine[i] = own[i].h;
    for (int x = 0; me == 0 && ok && x < Q; x++) {
        counts[x] = (first_part[x + 1] - first_part[x]) * (int)sizeof **out;
        displs[x] = first_part[x] * (int)sizeof **out;
    }
    st = tf_agree(comm, ok ? TF_OK : tf_fail(TF_ERR_NOMEM, "out of memory for part heads"));
    if (st == TF_OK && pl &&
        MPI_Gatherv(mine, n * (int)sizeof *mine, MPI_BYTE, me == 0 ? *out : NULL, counts, displs,
                    MPI_BYTE, 0, comm) != MPI_SUCCESS)
        st = tf_fail(TF_ERR_MPI, "gathering the plan parts' heads failed");
    free(mine);
    free(counts);
    free(displs);
    if (st != TF_OK) {
        free(*out);
        *out = NULL;
    }
    return st;
}

int tf_dist_plan_write(MPI_Comm comm, const char *path, const tf_plan *plan, int zstd_level)
{
    if (zstd_level < 0 || zstd_level > ZSTD_maxCLevel())
        return tf_agree(comm, tf_fail(TF_ERR_ARG, "%s: zstd level %d is outside 0..%d",
                                      path, zstd_level, ZSTD_maxCLevel()));
    /* Every rank checks, checksums and compresses its own parts at once, in
     * parallel; rank 0 then only places the finished chunks. */
    tf_dist_enc enc[2];
    memset(enc, 0, sizeof enc);
    int st = tf_dist_encode(comm, plan, zstd_level, &enc[0]);
    if (st == TF_OK && plan->alt)
        st = tf_dist_encode(comm, plan->alt, zstd_level, &enc[1]);
    if (st == TF_OK)
        st = tf_dist_plan_write_enc(comm, path, plan, enc, zstd_level);
    else
        st = tf_fail_prefix(st, "%s", path);
    tf_dist_enc_free(&enc[0]);
    tf_dist_enc_free(&enc[1]);
    return st;
}

int tf_dist_plan_write_enc(MPI_Comm comm, const char *path, const tf_plan *plan,
                           const tf_dist_enc enc[2], int zstd_level)
{
    int Q, me;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    const int P = plan->nranks;
    if (zstd_level < 0 || zstd_level > ZSTD_maxCLevel())
        return tf_agree(comm, tf_fail(TF_ERR_ARG, "%s: zstd level %d is outside 0..%d",
                                      path, zstd_level, ZSTD_maxCLevel()));
    int ok = enc[0].n_parts == plan->n_parts &&
             (!plan->alt || enc[1].n_parts == plan->alt->n_parts);
    if (!ok)
        return tf_agree(comm, tf_fail(TF_ERR_INTERNAL,
                                      "%s: rank %d holds %d encoded parts of %d", path, me,
                                      enc[0].n_parts, plan->n_parts));
    int *first_part = malloc((size_t)(Q + 1) * sizeof *first_part);
    if (!first_part)
        return tf_agree(comm, tf_fail(TF_ERR_NOMEM, "out of memory for %d ranks", Q));
    for (int r = 0; r <= Q; r++)
        first_part[r] = tf_dist_first_part(P, Q, r);
    tf_pl_enc_head *heads[2] = {NULL, NULL};
    int st = gather_heads(comm, plan, enc[0].parts, first_part, &heads[0]);
    if (st == TF_OK)
        st = gather_heads(comm, plan->alt, enc[1].parts, first_part, &heads[1]);
    if (st != TF_OK) {
        free(heads[0]);
        free(heads[1]);
        free(first_part);
        return st;
    }
    if (me == 0) {
        root_ctx c = {comm, plan, first_part, Q, enc, {heads[0], heads[1]}, {{0}, NULL, NULL}};
        tf_plan_part_source src = {root_heads, root_get, root_release, &c};
        st = tf_plan_write_source(path, plan, zstd_level, &src);
        tf_pl_enc_part_free(&c.got);
        /* Whoever still waits to be asked is told to stop. */
        int stop[2] = {-1, -1};
        for (int x = 1; x < Q; x++)
            MPI_Send(stop, 2, MPI_INT, x, TAG_ASK, comm);
    } else {
        for (;;) {
            int ask[2];
            /* Asleep between tests: rank 0 may write for seconds. */
            MPI_Request rq;
            if (MPI_Irecv(ask, 2, MPI_INT, 0, TAG_ASK, comm, &rq) != MPI_SUCCESS ||
                tf_mpi_wait_idle(&rq, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
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
            if ((st = send_part(comm, &enc[ask[0] ? 1 : 0].parts[i])) != TF_OK)
                break;
        }
    }
    free(heads[0]);
    free(heads[1]);
    free(first_part);
    return tf_agree(comm, st);
}
