/* The neighbour exchange, two ways (tf_exchange.h). */
#include "tf_exchange.h"

#include "tf_exec.h"

#include <stdlib.h>
#include <string.h>

#ifdef TF_EXCHANGE_DEFAULT_ALLTOALL
#define TF_XCHG_DEFAULT TF_XCHG_ALLTOALL
#else
#define TF_XCHG_DEFAULT TF_XCHG_NEIGHBOR
#endif

const char *tf_xchg_mode_name(int mode)
{
    return mode == TF_XCHG_ALLTOALL ? "alltoall" : "neighbor";
}

int tf_xchg_mode(int *mode)
{
    const char *s = getenv("TWOFACE_EXCHANGE");
    *mode = TF_XCHG_DEFAULT;
    if (!s || !*s)
        return TF_OK;
    if (strcmp(s, "neighbor") == 0)
        *mode = TF_XCHG_NEIGHBOR;
    else if (strcmp(s, "alltoall") == 0)
        *mode = TF_XCHG_ALLTOALL;
    else
        return tf_fail(TF_ERR_ARG, "TWOFACE_EXCHANGE=%s: expected neighbor or alltoall", s);
    return TF_OK;
}

void tf_xchg_init(tf_xchg *x)
{
    memset(x, 0, sizeof *x);
    x->comm = MPI_COMM_NULL;
}

static void free_types(MPI_Datatype *t, int n)
{
    for (int i = 0; t && i < n; i++)
        if (t[i] != MPI_DATATYPE_NULL && t[i] != MPI_BYTE)
            MPI_Type_free(&t[i]);
}

void tf_xchg_free(tf_xchg *x)
{
    free_types(x->a_stype, x->a_stype ? x->nranks : 0);
    free_types(x->a_rtype, x->a_rtype ? x->nranks : 0);
    free(x->a_stype);
    free(x->a_rtype);
    free(x->a_scount);
    free(x->a_rcount);
    free(x->a_sdispl);
    free(x->a_rdispl);
    free(x->src);
    free(x->dst);
    if (x->comm != MPI_COMM_NULL && !x->borrowed)
        MPI_Comm_free(&x->comm);
    tf_xchg_init(x);
}

static int *copy_ints(const int *a, int n)
{
    int *c = malloc(((size_t)n + 1) * sizeof *c);
    if (c && n > 0)
        memcpy(c, a, (size_t)n * sizeof *c);
    return c;
}

int tf_xchg_create(tf_xchg *x, MPI_Comm comm, int mode, int n_src, const int *src, int n_dst,
                   const int *dst)
{
    tf_xchg_init(x);
    int rank = 0, st = TF_OK;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &x->nranks);
    x->mode = mode;
    /* Ranks in different modes would meet in different collectives and hang. */
    st = tf_agree_same(comm, tf_agree_mix(0, (uint64_t)mode), TF_ERR_ARG,
                       "TWOFACE_EXCHANGE differs between ranks (%s on rank %d)",
                       tf_xchg_mode_name(mode), rank);
    if (st)
        return st;
    x->n_src = n_src;
    x->n_dst = n_dst;
    x->src = copy_ints(src, n_src);
    x->dst = copy_ints(dst, n_dst);
    if (!x->src || !x->dst)
        st = tf_fail(TF_ERR_NOMEM, "rank %d: cannot allocate the neighbour lists", rank);
    st = tf_agree(comm, st);
    if (st)
        return st;
    int err;
    if (mode == TF_XCHG_NEIGHBOR) {
        /* gcc 12 warns (-Wstringop-overread) that MPI_UNWEIGHTED, a one-int
         * sentinel address, is read as an array of degree elements: a false
         * positive, MPI never reads through the sentinel. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wstringop-overread"
        err = MPI_Dist_graph_create_adjacent(comm, n_src, x->src, MPI_UNWEIGHTED, n_dst, x->dst,
                                             MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &x->comm);
#pragma GCC diagnostic pop
    } else {
        err = MPI_Comm_dup(comm, &x->comm);
    }
    if (err != MPI_SUCCESS) {
        x->comm = MPI_COMM_NULL;
        st = tf_mpi_fail(err, mode == TF_XCHG_NEIGHBOR ? "MPI_Dist_graph_create_adjacent"
                                                       : "MPI_Comm_dup");
    }
    return tf_agree(comm, st);
}

int tf_xchg_borrow(tf_xchg *x, const tf_xchg *base)
{
    tf_xchg_init(x);
    x->mode = base->mode;
    x->nranks = base->nranks;
    x->n_src = base->n_src;
    x->n_dst = base->n_dst;
    x->src = copy_ints(base->src, base->n_src);
    x->dst = copy_ints(base->dst, base->n_dst);
    if (!x->src || !x->dst)
        return tf_fail(TF_ERR_NOMEM, "cannot allocate the neighbour lists");
    x->comm = base->comm;
    x->borrowed = 1;
    return TF_OK;
}

int tf_xchg_alltoall_i64(tf_xchg *x, const int64_t *send, int64_t *recv)
{
    int err;
    if (x->mode == TF_XCHG_NEIGHBOR) {
        err = MPI_Neighbor_alltoall(send, 1, MPI_INT64_T, recv, 1, MPI_INT64_T, x->comm);
        return err == MPI_SUCCESS ? TF_OK : tf_mpi_fail(err, "MPI_Neighbor_alltoall");
    }
    const size_t P = (size_t)x->nranks;
    int64_t *s = calloc(P, sizeof *s), *r = calloc(P, sizeof *r);
    if (!s || !r) {
        free(s);
        free(r);
        return tf_fail(TF_ERR_NOMEM, "cannot allocate %zu counts", P);
    }
    for (int j = 0; j < x->n_dst; j++)
        s[x->dst[j]] = send[j];
    err = MPI_Alltoall(s, 1, MPI_INT64_T, r, 1, MPI_INT64_T, x->comm);
    for (int i = 0; i < x->n_src && err == MPI_SUCCESS; i++)
        recv[i] = r[x->src[i]];
    free(s);
    free(r);
    return err == MPI_SUCCESS ? TF_OK : tf_mpi_fail(err, "MPI_Alltoall");
}

static int alloc_args(tf_xchg *x, int types)
{
    const size_t P = (size_t)x->nranks;
    x->a_scount = calloc(P, sizeof(int));
    x->a_rcount = calloc(P, sizeof(int));
    x->a_sdispl = calloc(P, sizeof(int));
    x->a_rdispl = calloc(P, sizeof(int));
    if (types) {
        x->a_stype = malloc(P * sizeof(MPI_Datatype));
        x->a_rtype = malloc(P * sizeof(MPI_Datatype));
    }
    if (!x->a_scount || !x->a_rcount || !x->a_sdispl || !x->a_rdispl ||
        (types && (!x->a_stype || !x->a_rtype)))
        return tf_fail(TF_ERR_NOMEM, "cannot allocate the arguments of a %zu-rank exchange", P);
    /* Non-neighbours get a zero count of a predefined type (never freed). */
    for (size_t p = 0; types && p < P; p++)
        x->a_stype[p] = x->a_rtype[p] = MPI_DATATYPE_NULL;
    return TF_OK;
}

/* count x type at byte displacement d, as one block at displacement 0. */
static int wrap_block(int count, MPI_Aint d, MPI_Datatype type, MPI_Datatype *out)
{
    int err = MPI_Type_create_hindexed(1, &count, &d, type, out);
    if (err == MPI_SUCCESS)
        err = MPI_Type_commit(out);
    if (err != MPI_SUCCESS) {
        *out = MPI_DATATYPE_NULL;
        return tf_mpi_fail(err, "MPI_Type_create_hindexed");
    }
    return TF_OK;
}

int tf_xchg_prepare_w(tf_xchg *x, const int *scount, const MPI_Aint *sdispl,
                      const MPI_Datatype *stype, const int *rcount, const MPI_Aint *rdispl,
                      const MPI_Datatype *rtype)
{
    if (x->mode == TF_XCHG_NEIGHBOR)
        return TF_OK;
    int st = alloc_args(x, 1);
    for (int j = 0; j < x->n_dst && st == TF_OK; j++) {
        int d = x->dst[j];
        x->a_scount[d] = 1;
        st = wrap_block(scount[j], sdispl[j], stype[j], &x->a_stype[d]);
    }
    for (int i = 0; i < x->n_src && st == TF_OK; i++) {
        int s = x->src[i];
        x->a_rcount[s] = 1;
        st = wrap_block(rcount[i], rdispl[i], rtype[i], &x->a_rtype[s]);
    }
    /* MPI reads every type entry, counts of zero included. */
    for (int p = 0; p < x->nranks && st == TF_OK; p++) {
        if (x->a_stype[p] == MPI_DATATYPE_NULL)
            x->a_stype[p] = MPI_BYTE;
        if (x->a_rtype[p] == MPI_DATATYPE_NULL)
            x->a_rtype[p] = MPI_BYTE;
    }
    return st;
}

int tf_xchg_start_w(tf_xchg *x, const void *sbuf, const int *scount, const MPI_Aint *sdispl,
                    const MPI_Datatype *stype, void *rbuf, const int *rcount,
                    const MPI_Aint *rdispl, const MPI_Datatype *rtype, MPI_Request *req)
{
    int err;
    if (x->mode == TF_XCHG_NEIGHBOR) {
        err = MPI_Ineighbor_alltoallw(sbuf, scount, sdispl, stype, rbuf, rcount, rdispl, rtype,
                                      x->comm, req);
        return err == MPI_SUCCESS ? TF_OK : tf_mpi_fail(err, "MPI_Ineighbor_alltoallw");
    }
    err = MPI_Ialltoallw(sbuf, x->a_scount, x->a_sdispl, x->a_stype, rbuf, x->a_rcount,
                         x->a_rdispl, x->a_rtype, x->comm, req);
    return err == MPI_SUCCESS ? TF_OK : tf_mpi_fail(err, "MPI_Ialltoallw");
}

int tf_xchg_prepare_v(tf_xchg *x, const int *scount, const int *sdispl, const int *rcount,
                      const int *rdispl)
{
    if (x->mode == TF_XCHG_NEIGHBOR)
        return TF_OK;
    int st = alloc_args(x, 0);
    for (int j = 0; j < x->n_dst && st == TF_OK; j++) {
        x->a_scount[x->dst[j]] = scount[j];
        x->a_sdispl[x->dst[j]] = sdispl[j];
    }
    for (int i = 0; i < x->n_src && st == TF_OK; i++) {
        x->a_rcount[x->src[i]] = rcount[i];
        x->a_rdispl[x->src[i]] = rdispl[i];
    }
    return st;
}

int tf_xchg_start_v(tf_xchg *x, const void *sbuf, const int *scount, const int *sdispl,
                    void *rbuf, const int *rcount, const int *rdispl, MPI_Datatype type,
                    MPI_Request *req)
{
    int err;
    if (x->mode == TF_XCHG_NEIGHBOR) {
        err = MPI_Ineighbor_alltoallv(sbuf, scount, sdispl, type, rbuf, rcount, rdispl, type,
                                      x->comm, req);
        return err == MPI_SUCCESS ? TF_OK : tf_mpi_fail(err, "MPI_Ineighbor_alltoallv");
    }
    err = MPI_Ialltoallv(sbuf, x->a_scount, x->a_sdispl, type, rbuf, x->a_rcount, x->a_rdispl,
                         type, x->comm, req);
    return err == MPI_SUCCESS ? TF_OK : tf_mpi_fail(err, "MPI_Ialltoallv");
}
