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

enum { TAG_ASK = 7301, TAG_DATA = 7303 };
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

/* An encoded part travels as its chunk sizes, then its bytes: rank 0 knows
 * both lengths from the heads it gathered, so it posts the receives before
 * it asks. */
static int send_part(MPI_Comm comm, const tf_pl_enc_part *e)
{
    int st = send_big(comm, e->sizes, e->h.n_sizes * (int64_t)sizeof *e->sizes, 0);
    return st ? st : send_big(comm, e->bytes, e->h.n_bytes, 0);
}

/* Rank 0 keeps up to WINDOW parts in flight, asked for and being received
 * while it places the chunks of the one before: one round trip per part
 * (ask, then the data) would otherwise be paid P times in a row, the
 * larger part of the write's messages at P = 64 (docs/scale.md). The
 * window also stops at WINDOW_BYTES, so rank 0 never holds more than a
 * few parts, or one when a part alone is larger. */
enum { WINDOW = 8 };
#define WINDOW_BYTES ((int64_t)16 << 20)
static int window_parts = WINDOW;
static int64_t window_bytes = WINDOW_BYTES;

void tf_dist_write_window(int parts, int64_t bytes)
{
    window_parts = parts < 1 || parts > WINDOW ? WINDOW : parts;
    window_bytes = bytes < 1 ? WINDOW_BYTES : bytes;
}

typedef struct {
    int64_t seq;         /* alt * nranks + part; -1: free */
    tf_pl_enc_part e;
    int64_t bytes;       /* its sizes and bytes, counted in bytes_in_flight */
    MPI_Request *reqs;
    int nreqs;           /* receives not yet waited for */
} slot;

typedef struct {
    MPI_Comm comm;
    const tf_plan *plan;
    const int *first_part;
    int Q;
    const tf_dist_enc *own; /* this rank's parts, encoded: plan's and runner-up's */
    tf_pl_enc_head *heads[2]; /* every rank's heads, gathered before the write */
    uint32_t shared;          /* arrays whose chunks are the same in both plans */
    slot win[WINDOW];
    int nslots;             /* window_parts when the write began */
    int64_t max_bytes;      /* window_bytes likewise */
    int64_t next;           /* the next part in write order not yet considered */
    int64_t bytes_in_flight;
    int gated;              /* root_gate ran: the others were told to stop and agreed */
} root_ctx;

static int holder_of(const root_ctx *c, int p)
{
    int x = 0;
    while (x < c->Q - 1 && c->first_part[x + 1] <= p)
        x++;
    return x;
}

static int64_t n_parts_to_write(const root_ctx *c)
{
    return (int64_t)c->plan->nranks * (c->plan->alt ? 2 : 1);
}

static int held_here(const root_ctx *c, int alt, int p)
{
    const tf_plan *pl = alt ? c->plan->alt : c->plan;
    return p >= pl->first_rank && p < pl->first_rank + pl->n_parts;
}

static int64_t pieces(int64_t bytes) { return (bytes + PIECE - 1) / PIECE; }

static int post_recv_big(MPI_Comm comm, void *p, int64_t bytes, int src, MPI_Request *r,
                         int *n)
{
    for (int64_t off = 0; off < bytes; off += PIECE) {
        int64_t m = bytes - off < PIECE ? bytes - off : PIECE;
        if (MPI_Irecv((char *)p + off, (int)m, MPI_BYTE, src, TAG_DATA, comm, &r[*n]) !=
            MPI_SUCCESS)
            return tf_fail(TF_ERR_MPI, "receiving a plan part from rank %d failed", src);
        (*n)++;
    }
    return TF_OK;
}

/* Waits for what a slot still receives. */
static int slot_wait(slot *s)
{
    int err = s->nreqs ? MPI_Waitall(s->nreqs, s->reqs, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
    s->nreqs = 0;
    return err;
}

/* Waits for what a slot still receives and frees it. */
static int slot_finish(slot *s)
{
    int st = slot_wait(s) != MPI_SUCCESS ? tf_fail(TF_ERR_MPI, "receiving a plan part failed")
                                         : TF_OK;
    free(s->reqs);
    tf_pl_enc_part_free(&s->e);
    memset(s, 0, sizeof *s);
    s->seq = -1;
    return st;
}

static slot *slot_of(root_ctx *c, int64_t seq)
{
    for (int i = 0; i < c->nslots; i++)
        if (c->win[i].seq == seq)
            return &c->win[i];
    return NULL;
}

/* Asks for the parts after those in flight while the window has room:
 * buffers first, receives posted, then the ask, so that the holder's sends
 * always find their receives. */
static int fill_window(root_ctx *c)
{
    const int P = c->plan->nranks;
    while (c->next < n_parts_to_write(c)) {
        int alt = (int)(c->next / P), p = (int)(c->next % P);
        if (held_here(c, alt, p)) {
            c->next++;
            continue;
        }
        const tf_pl_enc_head *h = &c->heads[alt][p];
        slot *s = slot_of(c, -1);
        int64_t nsz = h->n_sizes * (int64_t)sizeof *s->e.sizes, nb = h->n_bytes;
        int busy = s == NULL || (c->bytes_in_flight > 0 &&
                                 c->bytes_in_flight + nsz + nb > c->max_bytes);
        if (busy)
            return TF_OK;
        if (nsz < 0 || nb < 0)
            return tf_fail(TF_ERR_INTERNAL, "part %d announced a negative size", p);
        s->e.h = *h;
        s->e.sizes = malloc((size_t)(nsz > 0 ? nsz : 1));
        s->e.bytes = malloc((size_t)(nb > 0 ? nb : 1));
        s->reqs = malloc((size_t)(pieces(nsz) + pieces(nb) + 1) * sizeof *s->reqs);
        if (!s->e.sizes || !s->e.bytes || !s->reqs) {
            slot_finish(s);
            return tf_fail(TF_ERR_NOMEM, "rank 0: out of memory for rank %d's part (%lld bytes)",
                           p, (long long)nb);
        }
        s->seq = c->next;
        int src = holder_of(c, p), ask[2] = {alt, p}, st;
        if ((st = post_recv_big(c->comm, s->e.sizes, nsz, src, s->reqs, &s->nreqs)) == TF_OK &&
            (st = post_recv_big(c->comm, s->e.bytes, nb, src, s->reqs, &s->nreqs)) == TF_OK &&
            MPI_Send(ask, 2, MPI_INT, src, TAG_ASK, c->comm) != MPI_SUCCESS)
            st = tf_fail(TF_ERR_MPI, "asking rank %d for plan part %d failed", src, p);
        if (st != TF_OK) {
            /* Receives posted for a holder never asked would never complete. */
            for (int i = 0; i < s->nreqs; i++)
                if (MPI_Cancel(&s->reqs[i]) == MPI_SUCCESS)
                    MPI_Request_free(&s->reqs[i]);
            s->nreqs = 0;
            slot_finish(s);
            return st;
        }
        s->bytes = nsz + nb;
        c->bytes_in_flight += s->bytes;
        c->next++;
    }
    return TF_OK;
}

/* The writer asks for the heads before it creates the file: the first
 * parts are asked for then, and travel while it writes the tables. */
static int root_heads(void *ctx, int alt, const tf_pl_enc_head **h)
{
    root_ctx *c = ctx;
    *h = c->heads[alt];
    if (!*h)
        return tf_fail(TF_ERR_INTERNAL, "no heads gathered for the %s",
                       alt ? "runner-up" : "plan");
    return fill_window(c);
}

static int root_get(void *ctx, int alt, int p, const tf_pl_enc_part **e)
{
    root_ctx *c = ctx;
    /* Also while rank 0 writes its own parts: the others' arrive meanwhile. */
    int st = fill_window(c);
    if (st == TF_OK && held_here(c, alt, p)) {
        const tf_plan *pl = alt ? c->plan->alt : c->plan;
        *e = &c->own[alt].parts[p - pl->first_rank];
        return TF_OK;
    }
    slot *s = slot_of(c, (int64_t)alt * c->plan->nranks + p);
    if (st == TF_OK && !s)
        st = tf_fail(TF_ERR_INTERNAL, "rank 0 did not ask for plan part %d", p);
    if (st != TF_OK)
        return st;
    if (slot_wait(s) != MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "receiving plan part %d from rank %d failed", p,
                       holder_of(c, p));
    *e = &s->e;
    return TF_OK;
}

static void root_release(void *ctx, int alt, int p)
{
    root_ctx *c = ctx;
    slot *s = slot_of(c, (int64_t)alt * c->plan->nranks + p);
    if (!s)
        return;
    c->bytes_in_flight -= s->bytes;
    slot_finish(s);
}

/* Rank 0 is done with the parts (written, or the write failed): parts
 * asked for and not written are still received, so that no holder stays in
 * its send, and whoever still waits to be asked is told to stop. */
static void root_done(root_ctx *c)
{
    for (int i = 0; i < WINDOW; i++)
        if (c->win[i].seq >= 0)
            slot_finish(&c->win[i]);
    int stop[2] = {-1, -1};
    for (int x = 1; x < c->Q; x++)
        MPI_Send(stop, 2, MPI_INT, x, TAG_ASK, c->comm);
}

static uint32_t root_shared(void *ctx) { return ((root_ctx *)ctx)->shared; }

/* The arrays (bit i: tf_pl_rank_arrays[i]) whose encoded chunks are the
 * same bytes in a part of the runner-up (b) as in the plan's part of the
 * same rank (a). */
static uint32_t same_chunks(const tf_pl_enc_part *a, const tf_pl_enc_part *b)
{
    uint32_t m = 0;
    const uint32_t *sa = a->sizes, *sb = b->sizes;
    const unsigned char *ba = a->bytes, *bb = b->bytes;
    for (int i = 0; i < N_RANK_ARRAYS; i++) {
        int64_t na = a->h.nchunks[i], nb = b->h.nchunks[i];
        size_t la = 0, lb = 0;
        for (int64_t j = 0; j < na; j++)
            la += sa[j];
        for (int64_t j = 0; j < nb; j++)
            lb += sb[j];
        if (na == nb && la == lb && (na == 0 || memcmp(sa, sb, (size_t)na * sizeof *sa) == 0) &&
            (la == 0 || memcmp(ba, bb, la) == 0))
            m |= 1u << i;
        sa += na;
        sb += nb;
        ba += la;
        bb += lb;
    }
    return m;
}

/* Before the file is renamed into place: the ranks agree on the write, so
 * that a failure on any of them leaves no file (and an older one as it
 * was). The rename, which can still fail on rank 0, is agreed on after. */
static int root_gate(void *ctx, int status)
{
    root_ctx *c = ctx;
    c->gated = 1;
    root_done(c);
    return tf_agree(c->comm, status);
}

/* A part's head as it travels to rank 0, with the arrays it shares with
 * the plan's part of its rank (runner-up only; 0 otherwise). */
typedef struct {
    tf_pl_enc_head h;
    uint64_t shared;
} wire_head;

/* Rank 0 gathers the heads of every part of pl (NULL on other ranks):
 * the tables it writes before any part's bytes. On the runner-up's turn,
 * each part also says which arrays it shares with the plan's part of its
 * rank (plan_parts; NULL: none), and rank 0 gets in *shared those every
 * part shares. */
static int gather_heads(MPI_Comm comm, const tf_plan *pl, const tf_pl_enc_part *own,
                        int runner_up, const tf_pl_enc_part *plan_parts, const int *first_part,
                        tf_pl_enc_head **out, uint32_t *shared)
{
    int Q, me;
    MPI_Comm_size(comm, &Q);
    MPI_Comm_rank(comm, &me);
    *out = NULL;
    *shared = 0;
    int n = pl ? pl->n_parts : 0, st = TF_OK, P = pl ? pl->nranks : 0;
    wire_head *mine = malloc((size_t)(n ? n : 1) * sizeof *mine), *all = NULL;
    int *counts = NULL, *displs = NULL;
    if (me == 0) {
        counts = malloc((size_t)Q * sizeof *counts);
        displs = malloc((size_t)Q * sizeof *displs);
        *out = pl ? malloc((size_t)P * sizeof **out) : NULL;
        all = pl ? malloc((size_t)P * sizeof *all) : NULL;
    }
    int ok = mine != NULL && (me != 0 || (counts && displs && (!pl || (*out && all))));
    for (int i = 0; mine && i < n; i++) {
        mine[i].h = own[i].h;
        mine[i].shared = plan_parts && plan_parts[i].h.rank == own[i].h.rank
                             ? same_chunks(&plan_parts[i], &own[i])
                             : 0;
    }
    for (int x = 0; me == 0 && ok && x < Q; x++) {
        counts[x] = (first_part[x + 1] - first_part[x]) * (int)sizeof *all;
        displs[x] = first_part[x] * (int)sizeof *all;
    }
    st = tf_agree(comm, ok ? TF_OK : tf_fail(TF_ERR_NOMEM, "out of memory for part heads"));
    if (st == TF_OK && pl &&
        MPI_Gatherv(mine, n * (int)sizeof *mine, MPI_BYTE, me == 0 ? all : NULL, counts, displs,
                    MPI_BYTE, 0, comm) != MPI_SUCCESS)
        st = tf_fail(TF_ERR_MPI, "gathering the plan parts' heads failed");
    if (st == TF_OK && me == 0 && pl) {
        uint64_t m = runner_up ? ((uint64_t)1 << N_RANK_ARRAYS) - 1 : 0;
        for (int p = 0; p < P; p++) {
            (*out)[p] = all[p].h;
            m &= all[p].shared;
        }
        *shared = (uint32_t)m;
    }
    free(mine);
    free(all);
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
    uint32_t none, shared = 0;
    int st = gather_heads(comm, plan, enc[0].parts, 0, NULL, first_part, &heads[0], &none);
    /* Every rank has a runner-up, or none; a runner-up's part is of the
     * same rank as the plan's part at the same index. */
    if (st == TF_OK && plan->alt)
        st = gather_heads(comm, plan->alt, enc[1].parts, 1,
                          plan->alt->n_parts == plan->n_parts ? enc[0].parts : NULL, first_part,
                          &heads[1], &shared);
    if (st != TF_OK) {
        free(heads[0]);
        free(heads[1]);
        free(first_part);
        return st;
    }
    if (me == 0) {
        root_ctx c = {.comm = comm,
                      .plan = plan,
                      .first_part = first_part,
                      .Q = Q,
                      .own = enc,
                      .heads = {heads[0], heads[1]},
                      .shared = shared,
                      .nslots = window_parts,
                      .max_bytes = window_bytes};
        for (int i = 0; i < WINDOW; i++)
            c.win[i].seq = -1;
        tf_plan_part_source src = {root_heads, root_get, root_release, &c, root_gate, root_shared};
        st = tf_plan_write_source(path, plan, zstd_level, &src);
        if (!c.gated) {
            /* The write failed before it had a file to rename. */
            root_done(&c);
            st = tf_agree(comm, st);
        }
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
        /* Rank 0's agreement before it renames the file (root_gate). */
        st = tf_agree(comm, st);
    }
    free(heads[0]);
    free(heads[1]);
    free(first_part);
    /* Every rank has the agreed status of the write; the rename after it
     * was rank 0's alone, which tells the others how it went. */
    return tf_agree_root(comm, st);
}
