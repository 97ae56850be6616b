/* One MPI_Alltoallv per round over packed entries (row, col, value
 * together, so one message per peer): 16 bytes, or 8 when no rank's
 * entries have values other than 1 (tf_coo_init_ones: a pattern matrix
 * travels and is held without its values). The number of rounds is agreed
 * first (the largest pair count over the communicator), so every rank
 * makes the same collective calls even when it has nothing to send. */
#include "tf_row_exchange.h"
#include "tf_dcsr.h"
#include "tf_error.h"
#include "tf_idle.h"
#include "tf_partition.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t row, col;
    double val;
} entry;

/* An entry of a matrix without values. */
typedef struct {
    int32_t row, col;
} entry_ones;

static void put(unsigned char *buf, int vals, int64_t at, const tf_coo *c, int64_t e)
{
    if (vals) {
        entry *x = (entry *)buf + at;
        x->row = c->row[e];
        x->col = c->col[e];
        x->val = c->val[e];
    } else {
        entry_ones *x = (entry_ones *)buf + at;
        x->row = c->row[e];
        x->col = c->col[e];
    }
}

static void get(const unsigned char *buf, int vals, int64_t at, tf_coo *c, int64_t e)
{
    if (vals) {
        const entry *x = (const entry *)buf + at;
        c->row[e] = x->row;
        c->col[e] = x->col;
        c->val[e] = x->val;
    } else {
        const entry_ones *x = (const entry_ones *)buf + at;
        c->row[e] = x->row;
        c->col[e] = x->col;
    }
}

int tf_row_owner(int64_t m, int Q, int64_t i)
{
    /* The largest r with floor(m r / Q) <= i, from m r < (i + 1) Q. */
    int r = m <= 0            ? 0
            : m <= INT32_MAX ? (int)(((i + 1) * Q + m - 1) / m) - 1
                             : (int)(((__int128)(i + 1) * Q + m - 1) / m) - 1;
    if (r < 0)
        r = 0;
    if (r > Q - 1)
        r = Q - 1;
    while (r + 1 < Q && tf_dcsr_block(m, Q, r + 1) <= i)
        r++;
    while (r > 0 && tf_dcsr_block(m, Q, r) > i)
        r--;
    return r;
}

static int reserve(tf_coo *c, int64_t more)
{
    if (c->n + more <= c->cap)
        return TF_OK;
    int64_t cap = c->cap * 2 > c->n + more ? c->cap * 2 : c->n + more;
    int32_t *r = realloc(c->row, (size_t)cap * sizeof *r);
    if (r)
        c->row = r;
    int32_t *k = realloc(c->col, (size_t)cap * sizeof *k);
    if (k)
        c->col = k;
    double *v = c->val ? realloc(c->val, (size_t)cap * sizeof *v) : NULL;
    if (v)
        c->val = v;
    if (!r || !k || (c->val && !v))
        return tf_fail(TF_ERR_NOMEM, "cannot hold %lld received entries", (long long)(c->n + more));
    c->cap = cap;
    return TF_OK;
}

int tf_row_exchange(MPI_Comm comm, int64_t m, const int64_t *off, tf_coo *in, tf_coo *out,
                    int64_t round_entries)
{
    int Q;
    MPI_Comm_size(comm, &Q);
    if (Q == 1) { /* every entry stays: hand the arrays over instead of copying */
        int st = TF_OK;
        if (out->n == 0) {
            tf_coo t = *out;
            *out = *in;
            *in = t;
        } else if (!(st = reserve(out, in->n))) {
            if (in->val || out->val) { /* one has values: both need them */
                st = tf_coo_values(in);
                if (!st)
                    st = tf_coo_values(out);
            }
            if (!st) {
                memcpy(out->row + out->n, in->row, (size_t)in->n * sizeof *in->row);
                memcpy(out->col + out->n, in->col, (size_t)in->n * sizeof *in->col);
                if (out->val)
                    memcpy(out->val + out->n, in->val, (size_t)in->n * sizeof *in->val);
                out->n += in->n;
            }
        }
        tf_coo_free(in);
        return st;
    }
    int st = TF_OK;
    int64_t *scount = calloc((size_t)Q, sizeof *scount);
    int64_t *rcount = calloc((size_t)Q, sizeof *rcount);
    int64_t *soff = calloc((size_t)Q + 1, sizeof *soff);
    int64_t *roff = calloc((size_t)Q + 1, sizeof *roff);
    int *sc = calloc((size_t)Q, sizeof *sc), *rc = calloc((size_t)Q, sizeof *rc);
    int *sd = calloc((size_t)Q, sizeof *sd), *rd = calloc((size_t)Q, sizeof *rd);
    int *dest = NULL;
    unsigned char *packed = NULL, *sbuf = NULL, *rbuf = NULL;
    MPI_Datatype et = MPI_DATATYPE_NULL;
    if (!scount || !rcount || !soff || !roff || !sc || !rc || !sd || !rd)
        st = tf_fail(TF_ERR_NOMEM, "cannot allocate the exchange counts");
    /* Values travel if any rank has some; then every rank's entries get them. */
    int vals = in->val || out->val;
    tf_mpi_allreduce_idle(MPI_IN_PLACE, &vals, 1, MPI_INT, MPI_MAX, comm);
    if (!st && vals && !(st = tf_coo_values(in)))
        st = tf_coo_values(out);
    const size_t esz = vals ? sizeof(entry) : sizeof(entry_ones);
    if (round_entries < 1)
        round_entries = 1;
    if (round_entries > INT_MAX / Q)
        round_entries = INT_MAX / Q;
    /* Stable counting sort by destination. */
    int64_t n = in->n;
    if (!st) {
        dest = malloc((size_t)(n ? n : 1) * sizeof *dest);
        packed = malloc((size_t)(n ? n : 1) * esz);
        if (!dest || !packed)
            st = tf_fail(TF_ERR_NOMEM, "cannot pack %lld entries for the exchange", (long long)n);
    }
    if (!st) {
        for (int64_t e = 0; e < n; e++) {
            dest[e] = off ? tf_partition_owner(off, Q, in->row[e]) : tf_row_owner(m, Q, in->row[e]);
            scount[dest[e]]++;
        }
        for (int q = 0; q < Q; q++)
            soff[q + 1] = soff[q] + scount[q];
        int64_t *pos = roff; /* borrowed as a cursor until the counts arrive */
        memcpy(pos, soff, (size_t)Q * sizeof *pos);
        for (int64_t e = 0; e < n; e++)
            put(packed, vals, pos[dest[e]]++, in, e);
        memset(roff, 0, ((size_t)Q + 1) * sizeof *roff);
        tf_coo_free(in); /* packed holds them now: never both for long */
    }
    free(dest);
    dest = NULL;
    /* Every rank takes part in the counting collectives even after a local
     * failure, and all agree whether to go on: Alltoallv needs matching
     * counts on both sides. */
    tf_mpi_alltoall_idle(scount, 1, MPI_INT64_T, rcount, 1, MPI_INT64_T, comm);
    for (int q = 0; q < Q; q++)
        roff[q + 1] = roff[q] + rcount[q];
    int64_t base = out->n;
    if (!st)
        st = reserve(out, roff[Q]);
    if (!st) {
        sbuf = malloc((size_t)Q * (size_t)round_entries * esz);
        rbuf = malloc((size_t)Q * (size_t)round_entries * esz);
        if (!sbuf || !rbuf)
            st = tf_fail(TF_ERR_NOMEM, "cannot allocate the exchange buffers");
    }
    int64_t most = 0;
    for (int q = 0; q < Q; q++)
        if (scount[q] > most)
            most = scount[q];
    int64_t mine[2] = {(most + round_entries - 1) / round_entries, st != TF_OK}, all[2];
    tf_mpi_allreduce_idle(mine, all, 2, MPI_INT64_T, MPI_MAX, comm);
    if (all[1] && !st)
        st = tf_fail(TF_ERR_MPI, "another rank failed while exchanging entries");
    MPI_Type_contiguous((int)esz, MPI_BYTE, &et);
    MPI_Type_commit(&et);
    for (int64_t k = 0; k < all[0] && !all[1]; k++) {
        int64_t from = k * round_entries;
        int so = 0, ro = 0;
        for (int q = 0; q < Q; q++) {
            int64_t s = scount[q] - from, r = rcount[q] - from;
            sc[q] = (int)(s < 0 ? 0 : s < round_entries ? s : round_entries);
            rc[q] = (int)(r < 0 ? 0 : r < round_entries ? r : round_entries);
            sd[q] = so;
            rd[q] = ro;
            if (sc[q])
                memcpy(sbuf + (size_t)so * esz, packed + (size_t)(soff[q] + from) * esz,
                       (size_t)sc[q] * esz);
            so += sc[q];
            ro += rc[q];
        }
        MPI_Alltoallv(sbuf, sc, sd, et, rbuf, rc, rd, et, comm);
        for (int q = 0; q < Q; q++) {
            int64_t at = base + roff[q] + from;
            for (int x = 0; x < rc[q]; x++)
                get(rbuf, vals, rd[q] + x, out, at + x);
        }
    }
    if (!st)
        out->n = base + roff[Q];
    MPI_Type_free(&et);
    free(packed);
    free(sbuf);
    free(rbuf);
    free(scount);
    free(rcount);
    free(soff);
    free(roff);
    free(sc);
    free(rc);
    free(sd);
    free(rd);
    return st;
}
