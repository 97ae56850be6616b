/* Agreement on a status across the ranks of a communicator, and the text of
 * a failed MPI call: what every MPI room (planner, executor, baselines,
 * calibrate, gnn) uses so that a failure on one rank reaches all of them and
 * none waits for a rank that gave up. */
#ifndef TF_AGREE_H
#define TF_AGREE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* Agreement: every rank passes its status; if any failed, every rank gets the
 * lowest failing rank's status and message (recorded with tf_fail) and the
 * function returns it; else TF_OK. Collective over comm. */
int tf_agree(MPI_Comm comm, int status);

/* tf_agree without the injected failure (tf_agree_injected): for an
 * agreement that another collective carried and counted
 * (tf_agree_carry.h), once it has shown that a rank failed. */
int tf_agree_settle(MPI_Comm comm, int status);

/* Rank 0's status, told to every rank: for a step that only rank 0 can
 * fail, such as writing and renaming a file it alone writes, after the
 * other ranks' part in it was agreed on (their own status must be TF_OK
 * here). Every rank returns rank 0's status and message. A broadcast, not
 * an agreement: a failure injected at the others' agreements (below) cannot
 * land where they have nothing left to fail. Collective over comm. */
int tf_agree_root(MPI_Comm comm, int status);

/* Before the agreement on reading a file that every rank opens: when some
 * ranks, but not all, could not read it (TF_ERR_IO: each node its own copy,
 * one missing), each of those adds "(rank R; N of P ranks cannot read it)"
 * to its message, since the file's name alone does not say where it is
 * missing. Collective over comm; returns status unchanged. */
int tf_agree_note_io(MPI_Comm comm, int status);

/* The end of every agreement: every rank takes rank `first`'s status
 * (TF_ERR_INTERNAL if that is TF_OK) and message, recorded with tf_fail, and
 * returns it. Collective over comm; `first` is the same on every rank. */
int tf_agree_adopt(MPI_Comm comm, int first, int status);

/* What every rank must have alike (the options that decide the collectives
 * each rank takes part in, its copy of an input), hashed by the caller with
 * tf_agree_mix: a rank whose hash differs from rank 0's fails with status
 * and the message of fmt (which names the rank), and the ranks agree.
 * Collective over comm. */
int tf_agree_same(MPI_Comm comm, uint64_t hash, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static inline uint64_t tf_agree_mix(uint64_t h, uint64_t v)
{
    return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
}

/* The same over n integers, a string (NULL apart from ""), a double's bits. */
uint64_t tf_agree_mix_ints(uint64_t h, const int64_t *v, size_t n);
uint64_t tf_agree_mix_str(uint64_t h, const char *s);
uint64_t tf_agree_mix_double(uint64_t h, double d);

/* The status an agreement works with: `status`, or on the rank and at the
 * agreement that TF_FAULT_AGREE=R:N names (rank R's N-th agreement), a
 * failure injected for tests when `status` is TF_OK. Called by tf_agree and
 * tf_agree_key on entry. */
int tf_agree_injected(int status);

/* The first failing MPI call's message: TF_ERR_MPI with "<what> failed:
 * <MPI's error string>". */
int tf_mpi_fail(int err, const char *what);

#endif
