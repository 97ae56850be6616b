/* Status agreement and MPI error text (tf_agree.h). */
#include "tf_agree.h"
#include "tf_error.h"
#include "tf_idle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AGREE_MSG_MAX 1024

int tf_mpi_fail(int err, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(err, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof s, "error %d", err);
    return tf_fail(TF_ERR_MPI, "%s failed: %s", what, s);
}

/* A failure injected for tests (docs/reliability.md, "Tests"):
 * TF_FAULT_AGREE=R:N makes rank R of MPI_COMM_WORLD fail the N-th
 * agreement it enters (tf_agree, tf_agree_key) as if its own step before it
 * had failed, so that a test can walk every agreement of a program and see
 * every rank end with one line and none wait (tests/e2e_agree_faults.sh).
 * Read once; without the variable an agreement pays one comparison. */
int tf_agree_injected(int status)
{
    static int armed = -1;
    static long at, calls;
    static int who;
    if (armed < 0) {
        armed = 0;
        const char *e = getenv("TF_FAULT_AGREE");
        int r = -1, me = -1, init = 0;
        long n = 0;
        char tail = 0;
        MPI_Initialized(&init);
        if (init)
            MPI_Comm_rank(MPI_COMM_WORLD, &me);
        if (e && sscanf(e, "%d:%ld%c", &r, &n, &tail) == 2 && r >= 0 && n > 0 && r == me) {
            armed = 1;
            at = n;
            who = r;
        }
    }
    if (!armed || ++calls != at || status != TF_OK)
        return status;
    /* Said at once: a step may look again after a failed agreement and go
     * on (a first, coarse check of memory), and the test must tell that
     * from a run that had no N-th agreement. */
    fprintf(stderr, "tf_agree: failure injected on rank %d at its agreement %ld\n", who, at);
    return tf_fail(TF_ERR_NOMEM, "rank %d: failure injected at its agreement %ld "
                                 "(TF_FAULT_AGREE)", who, at);
}

int tf_agree(MPI_Comm comm, int status)
{
    return tf_agree_settle(comm, tf_agree_injected(status));
}

int tf_agree_settle(MPI_Comm comm, int status)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int mine = status != TF_OK ? rank : size, first = size;
    /* Agreements end phases, so a rank often waits here for a slower one:
     * asleep, not spinning (tf_idle.h). */
    if (tf_mpi_allreduce_idle(&mine, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "MPI_Allreduce failed while agreeing on a status");
    if (first == size)
        return TF_OK;
    return tf_agree_adopt(comm, first, status);
}

int tf_agree_root(MPI_Comm comm, int status)
{
    int code = status;
    if (MPI_Bcast(&code, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
        return tf_agree(comm, tf_fail(TF_ERR_MPI, "MPI_Bcast of rank 0's status failed"));
    return code == TF_OK ? TF_OK : tf_agree_adopt(comm, 0, status);
}

int tf_agree_same(MPI_Comm comm, uint64_t hash, int status, const char *fmt, ...)
{
    uint64_t h0 = hash;
    if (MPI_Bcast(&h0, 1, MPI_UINT64_T, 0, comm) != MPI_SUCCESS)
        return tf_agree(comm, tf_fail(TF_ERR_MPI, "MPI_Bcast of rank 0's hash failed"));
    int st = TF_OK;
    if (h0 != hash) {
        char msg[AGREE_MSG_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        st = tf_fail(status, "%s", msg);
    }
    return tf_agree(comm, st);
}

uint64_t tf_agree_mix_ints(uint64_t h, const int64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = tf_agree_mix(h, (uint64_t)v[i]);
    return h;
}

uint64_t tf_agree_mix_str(uint64_t h, const char *s)
{
    h = tf_agree_mix(h, s != NULL);
    for (; s && *s; s++)
        h = tf_agree_mix(h, (unsigned char)*s);
    return h;
}

uint64_t tf_agree_mix_double(uint64_t h, double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return tf_agree_mix(h, b);
}

int tf_agree_adopt(MPI_Comm comm, int first, int status)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    int st = status;
    char msg[AGREE_MSG_MAX];
    memset(msg, 0, sizeof msg);
    if (rank == first)
        snprintf(msg, sizeof msg, "%s", tf_error_message());
    MPI_Bcast(&st, 1, MPI_INT, first, comm);
    MPI_Bcast(msg, AGREE_MSG_MAX, MPI_CHAR, first, comm);
    msg[AGREE_MSG_MAX - 1] = '\0';
    if (st == TF_OK)
        st = TF_ERR_INTERNAL;
    return tf_fail(st, "%s", msg[0] ? msg : tf_strerror(st));
}

int tf_agree_note_io(MPI_Comm comm, int status)
{
    int size = 1, rank = 0, failed = status == TF_ERR_IO, n = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    MPI_Allreduce(&failed, &n, 1, MPI_INT, MPI_SUM, comm);
    if (failed && n < size) {
        char old[1024]; /* the length of a message (tf_error.c) */
        snprintf(old, sizeof old, "%s", tf_error_message());
        tf_fail(status, "%s (rank %d; %d of %d ranks cannot read it)", old, rank, n, size);
    }
    return status;
}
