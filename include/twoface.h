/* twoface: distributed sparse x dense matrix multiply C = A * B.
 *
 * A (m x n, sparse) and C (m x K, dense) are split into contiguous row bands,
 * one per MPI rank; B (n x K, dense) into bands of its rows. A plan file made
 * by twoface-plan says, for every rank, which nonzeros are local, which are
 * served by a collective (rows of B sent to every rank that needs them by a
 * neighbourhood exchange, MPI_Ineighbor_alltoallv of packed rows by default)
 * and which by one-sided fetches (MPI_Rget of runs of B rows). This header is
 * the whole public API of the executor; docs/executor.md explains it.
 *
 * Typical use (every call collective over the communicator except tf_b_rows,
 * the getters, the error functions and those marked Local: tf_check_backward,
 * tf_even_rows, tf_exec_options_default, tf_timing_reset,
 * tf_comm_precision_name):
 *
 *     tf_handle *h;  tf_ctx *ctx;
 *     if (tf_open("plan.h5", MPI_COMM_WORLD, &h)) { puts(tf_last_error()); ... }
 *     tf_context_create(h, 128, NULL, &ctx);
 *     int64_t b0, nb;  float *b = tf_b_rows(ctx, &b0, &nb);
 *     ... fill b: nb rows (global rows b0 .. b0+nb-1), 128 floats each ...
 *     tf_spmm(ctx, c);   // c: this rank's nrows x 128 floats, row-major
 *     tf_context_free(ctx);  tf_close(h);
 *
 * Errors: every function that can fail returns 0 on success or a positive
 * status code (TF_ERR_*). tf_status_string() gives a generic text for the code,
 * tf_last_error() the detailed one-line message of the last failure on the
 * calling thread. The collective calls (tf_open, tf_context_create,
 * tf_context_free, tf_close) agree on the outcome: if any rank fails, every
 * rank returns the same status with the same message, and no rank hangs.
 *
 * Threads: the program must call MPI_Init_thread; with MPI_THREAD_MULTIPLE
 * the executor runs the collective half and the fetch half of an SpMM on two
 * OpenMP thread groups at once. With a lower thread level it uses one thread
 * for MPI and overlaps through non-blocking MPI calls instead. */
#ifndef TWOFACE_H
#define TWOFACE_H

#include <mpi.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. Inside the twoface source tree they come from tf_error.h
 * (same names and values); an installed copy of this header defines them. */
#if defined(__has_include)
#if __has_include("tf_error.h")
#include "tf_error.h"
#endif
#endif
#ifndef TF_ERROR_H
typedef enum {
    TF_OK = 0,
    TF_ERR_ARG,      /* bad argument or option */
    TF_ERR_IO,       /* cannot open, read or write a file */
    TF_ERR_PARSE,    /* malformed input text */
    TF_ERR_FORMAT,   /* well-formed file that is not what was expected (plan) */
    TF_ERR_NOMEM,    /* allocation failed */
    TF_ERR_MPI,      /* an MPI call failed, or another rank failed */
    TF_ERR_HDF5,     /* an HDF5 call failed */
    TF_ERR_RANGE,    /* a size or count does not fit */
    TF_ERR_INTERNAL  /* an invariant was broken: a bug */
} tf_status;
#endif

/* A loaded plan: this rank's part of it plus the global header. */
typedef struct tf_handle tf_handle;
/* Buffers, communicators and datatypes for one dense width K. */
typedef struct tf_ctx tf_ctx;

/* ---- Plans ------------------------------------------------------------- */

/* Collective over comm. Every rank reads the header and its own part of the
 * plan file, checks that the plan was made for comm's size and that the
 * matrix fingerprint recomputed from the parts loaded by all ranks matches
 * the one stored in the plan. comm is duplicated; the caller may free its
 * own. On failure *h is NULL. */
int tf_open(const char *plan_path, MPI_Comm comm, tf_handle **h);

/* Collective. Frees everything; h may be NULL (then it is a no-op, and must be
 * NULL on every rank). Always returns 0. */
int tf_close(tf_handle *h);

/* Getters (local, no communication). */
int tf_get_nranks(const tf_handle *h);
int tf_get_rank(const tf_handle *h);
int64_t tf_get_m(const tf_handle *h); /* rows of A and C */
int64_t tf_get_n(const tf_handle *h); /* columns of A = rows of B */
int64_t tf_get_nnz(const tf_handle *h);
/* This rank's rows of A and C: [*row_begin, *row_begin + *nrows). */
void tf_get_rows(const tf_handle *h, int64_t *row_begin, int64_t *nrows);
/* This rank's rows of B: [*brow_begin, *brow_begin + *nbrows). */
void tf_get_brows(const tf_handle *h, int64_t *brow_begin, int64_t *nbrows);
int tf_get_k_planned(const tf_handle *h);
/* 0 = twoface, 1 = fetch only, 2 = collective only (as in the plan file). */
int tf_get_mode(const tf_handle *h);
/* "twoface", "fetch" or "collective". */
const char *tf_get_mode_name(const tf_handle *h);

/* ---- The plan's matrix: normalisation, symmetry, backward plans --------
 * (twoface-plan --normalize, --transpose, --bands-from; docs/normalization.md).
 * Local getters, no communication. */

/* How the planner normalised the matrix read: "none", "gcn"
 * (D_out^-1/2 (A + I) D_in^-1/2) or "mean" (D_out^-1 A). "none" for plans
 * of format 2.1. */
const char *tf_get_normalization(const tf_handle *h);
/* 1 if the plan's matrix, as stored (pattern and float32 values, after
 * normalisation), equals its transpose: then the plan serves both the
 * forward product and the backward one (dH = A^T dZ). Detected at plan
 * time; 0 when not symmetric, and for plans of format 2.1 (unknown). */
int tf_get_symmetric(const tf_handle *h);
/* 1 if the plan is the transpose of another plan's matrix
 * (twoface-plan --transpose): its matrix is (normalised A)^T. */
int tf_get_transposed(const tf_handle *h);
/* The matrix fingerprint stored in the plan (checked against the parts at
 * tf_open): a checksum of the stored matrix salted with the normalisation,
 * the same for any partition and number of ranks. */
uint64_t tf_get_fingerprint(const tf_handle *h);
/* TF_OK if bwd can serve the products with the transpose of fwd's matrix:
 * either bwd was made by --transpose from the same matrix and normalisation
 * as fwd (bwd's transpose_of = fwd's fingerprint), or fwd's matrix is
 * symmetric and bwd is a plan of that same matrix; in both cases with the
 * same number of ranks, bwd's row bands equal to fwd's B-row bands and bwd's
 * B-row bands to fwd's row bands, so that this rank's rows of dZ (= its rows
 * of fwd's C) are its rows of bwd's B, and its rows of bwd's C its rows of
 * fwd's B. Otherwise TF_ERR_ARG with a one-line message (tf_last_error())
 * naming the first difference. Local: the headers it compares are the same
 * on every rank, so every rank returns the same. fwd == bwd is allowed (a
 * symmetric plan). Plans of --partition metis must also share the
 * permutation (--bands-from carries it). */
int tf_check_backward(const tf_handle *fwd, const tf_handle *bwd);

/* ---- Permuted plans (twoface-plan --partition metis) -------------------
 *
 * A METIS plan renumbers the rows of a square A so that each rank's part of
 * the graph is a contiguous band: the plan is of P A P^T, and "global row i"
 * in tf_get_rows, tf_get_brows and tf_b_rows means row i of the permuted
 * matrix. Its original (input-file, 0-based) id is given below; C row r of
 * this rank is row tf_get_row_ids(h)[r] of the user's C, and the B rows this
 * rank fills are rows tf_get_brow_ids(h)[i] of the user's B. For plans that
 * do not permute, the ids are the identity (row_begin + i), so code written
 * with these functions works with every plan.
 *
 * Inputs in original order reach the plan's rows in one of two ways:
 *  - a rank that holds all of an input (or can read any row of it) picks its
 *    rows: for i < nbrows, b[i] = input[tf_get_brow_ids(h)[i]];
 *  - ranks that each hold a contiguous range of original rows (say, rows
 *    read from a file in even shares) redistribute them collectively with
 *    tf_scatter_rows, and bring outputs (C, or any per-node result) back to
 *    original order with tf_gather_rows.
 * All local unless marked collective; every rank holds the whole
 * permutation (16 bytes a row). */

/* 1 if the plan renumbers rows (METIS order), else 0. */
int tf_get_permuted(const tf_handle *h);
/* Original ids of this rank's rows of A and C, in local order (nrows
 * entries, see tf_get_rows); NULL only when the rank has no rows. Valid
 * until tf_close. */
const int64_t *tf_get_row_ids(const tf_handle *h);
/* The same for this rank's rows of B (nbrows entries, see tf_get_brows). */
const int64_t *tf_get_brow_ids(const tf_handle *h);

/* Which rows a redistribution moves: rows of A and C (m of them, the plan's
 * bands tf_get_rows) or rows of B (n, tf_get_brows). */
enum { TF_ROWS = 0, TF_BROWS = 1 };

/* The even split of the original rows (of A/C for TF_ROWS, of B for
 * TF_BROWS) over the ranks, the first (total % P) ranks getting one more:
 * the natural ranges for tf_scatter_rows / tf_gather_rows. */
void tf_even_rows(const tf_handle *h, int which, int64_t *orig_begin, int64_t *orig_nrows);

/* Collective: original order -> the plan's order. Rank p passes the
 * original rows [orig_begin, orig_begin + orig_nrows) in src (row_bytes
 * bytes each, consecutive); the ranges, in rank order, must tile [0, m)
 * (TF_ROWS) or [0, n) (TF_BROWS), any sizes (tf_even_rows is one choice; an
 * empty range may start anywhere).
 * dst receives this rank's rows in the plan's order: nrows (TF_ROWS) or
 * nbrows (TF_BROWS) rows of row_bytes bytes - for B with K columns,
 * row_bytes = K * sizeof(float) and dst = tf_b_rows(ctx, ...). Works for
 * any row type (features, labels, masks). A bad range or row size (also one
 * that differs between ranks), or a NULL src or dst on a rank that has rows
 * there, fails on every rank alike with TF_ERR_ARG; nothing is moved then. */
int tf_scatter_rows(const tf_handle *h, int which, size_t row_bytes, int64_t orig_begin,
                    int64_t orig_nrows, const void *src, void *dst);

/* Collective: the plan's order -> original order, the inverse of
 * tf_scatter_rows: src holds this rank's rows (nrows or nbrows of them, as
 * tf_spmm writes C), dst receives the original rows
 * [orig_begin, orig_begin + orig_nrows), ranges as for tf_scatter_rows. */
int tf_gather_rows(const tf_handle *h, int which, size_t row_bytes, const void *src,
                   int64_t orig_begin, int64_t orig_nrows, void *dst);

/* ---- Contexts ---------------------------------------------------------- */

/* The precision of the B rows that travel between ranks
 * (tf_exec_options.comm; docs/executor.md, "Precision of what travels").
 * TF_COMM_BF16: each owner rounds the rows it exports to bfloat16 (round to
 * nearest even) once per SpMM, half the bytes of float32; receivers widen
 * them in the kernels' loads and compute in float32. The local part, C and
 * every sum stay float32, so each remote product a*b is off by at most
 * 2^-8 |a b|. */
enum { TF_COMM_PLAN = 0, TF_COMM_F32 = 1, TF_COMM_BF16 = 2 };

/* The plan's choice (twoface-plan --comm): TF_COMM_F32 or TF_COMM_BF16;
 * TF_COMM_F32 for plans that record none (format 2.2 and older). Local. */
int tf_get_comm_precision(const tf_handle *h);
/* "f32" or "bf16" for TF_COMM_F32 / TF_COMM_BF16, NULL otherwise. */
const char *tf_comm_precision_name(int comm);

typedef struct {
    /* OpenMP threads per rank for an SpMM, at most 4096; 0 = OMP_NUM_THREADS
     * when it is set, else at most the node's processors divided by the
     * plan's ranks on the node. */
    int threads;
    /* Threads of the fetch group; the others form the collective group.
     * -1 (default) = 1 when threads >= 2 and this rank fetches anything,
     * else 0. 0 = a single thread drives both halves, overlapping through
     * non-blocking MPI (the compute loops still use all threads). Clamped to
     * threads - 1. Forced to 0 when MPI was not initialised with
     * MPI_THREAD_MULTIPLE. Below -1: TF_ERR_ARG. */
    int threads_fetch;
    /* Maximum MPI_Rget requests in flight per fetch thread; 0 = 512. */
    int max_requests;
    /* Reserved for the baselines (0 = the plan's own schedule). */
    int baseline;
    /* When the plan carries a runner-up (twoface-plan keeps one when the
     * model cannot rank the two with confidence), or every rank is on one
     * node whose ranks share processors (the runner-up is then the same
     * plan with peers' rows read in place): timed SpMM calls per plan in
     * the start-up trial. 0 = default: 4, more where a call is short
     * (nonzeros x k / ranks under 2^24: 4 x 2^24 / that, up to 32), so
     * that scheduler noise does not decide; -1 = no trial, run the
     * planner's choice with the copies (the runner-up is then not set up
     * at all). */
    int select_calls;
    /* What B rows travel as: TF_COMM_PLAN (0, default) = the plan's choice,
     * TF_COMM_F32 or TF_COMM_BF16. Must resolve to the same on every rank:
     * otherwise tf_context_create fails on every rank with TF_ERR_ARG. */
    int comm;
} tf_exec_options;

void tf_exec_options_default(tf_exec_options *o);

/* Collective. Creates a context for dense width k >= 1 (any k, not only the
 * planned one): allocates and touches every buffer once, creates the
 * communicator, datatypes and window the SpMMs reuse. opt may be NULL. */
int tf_context_create(tf_handle *h, int k, const tf_exec_options *opt, tf_ctx **ctx);

/* Collective. ctx may be NULL on every rank. Always returns 0. */
int tf_context_free(tf_ctx *ctx);

/* The start-up trial. A plan may carry a runner-up plan beside the
 * planner's choice. Then the first 2 + 2 x select_calls tf_spmm calls of a
 * context (at most) run both (both compute the same C from the same B): one
 * untimed call of each (the first call of a plan pays one-off costs), then
 * select_calls timed calls of each in ABBA order; each call is timed on its
 * slowest rank, and the plan with the lower median is kept (where the other
 * side is the same plan read in place: in place only when its median is at
 * least 10 % below the MPI exchange's, the collective's copies only when
 * theirs is at least 10 % below in place's). From 4 timed
 * calls each on, the trial ends early after any ABBA block where every call
 * of one plan beat every call of the other (by that margin). The other's
 * buffers and communicators are freed inside the deciding call. Every
 * call's C is exact, so the trial costs only the slower plan's excess.
 * Across nodes, where the cost model predicts 1.5D dense shifting faster
 * than the plan and its runner-up, shifting is the other side
 * instead (TWOFACE_SHIFT=never|c overrides; its C equals the plan's within
 * rounding, summed in another order).
 * tf_timing covers the calls of the plan in use. */
typedef struct {
    int trial;    /* 1 when the context has a runner-up (trial running or done) */
    int decided;  /* 1 when the trial is over */
    int chose_alternative; /* 1: the runner-up won */
    int calls;    /* timed tf_spmm calls per plan in the trial */
    int calls_total; /* longest the trial can run: 2 + 2 x calls */
    int calls_made; /* trial calls made so far (fewer than calls_total when
                       the trial ended early) */
    double median[2]; /* median slowest-rank time per call: [0] the planner's
                         choice, [1] the runner-up (when decided) */
    char classes[2][16]; /* their classes: "hybrid", "fetch", "collective", "local";
                            [1] is "shift(c=C)" where the other side is 1.5D
                            dense shifting (TWOFACE_SHIFT; docs/executor.md,
                            "Dense shifting as the other side") */
    /* How each moves its remote rows (tf_ctx_coll_transport). Where every
     * rank is on one node and ranks share processors, the runner-up is the
     * planner's choice itself, read in place: "shm" (or "mpi" where few
     * nonzeros are remote) against "direct". */
    char transport[2][8]; /* "ring" for dense shifting */
} tf_selection;

void tf_selection_get(const tf_ctx *ctx, tf_selection *s);

/* This rank's rows of B, row-major with k columns, inside the memory other
 * ranks read: fill them before each tf_spmm (or once, if B does not change).
 * Sets *row_begin (global index of the first row) and *nrows; may return
 * NULL when *nrows is 0. The pointer stays valid until tf_context_free.
 * With k a multiple of 16 it is 64-byte aligned, so every row is whole
 * cache lines (docs/executor.md, "Rows on cache lines"). */
float *tf_b_rows(tf_ctx *ctx, int64_t *row_begin, int64_t *nrows);

/* Collective. c = this rank's rows of A times B: nrows x k floats, row-major
 * (every entry written). Allocates nothing; may be called any number of
 * times. When it returns, no rank reads this rank's B any more, so B may be
 * overwritten for the next call; and no rank reads B before its owner has
 * entered tf_spmm. A failure inside an SpMM (an MPI error) is not
 * recoverable: it returns TF_ERR_MPI and the caller should MPI_Abort.
 * Speed: with c 64-byte aligned (aligned_alloc(64, ...)) and k a multiple
 * of 16, a C of 4 MiB or more per rank is written with non-temporal stores, which
 * do not read it first (docs/executor.md, "Stores of C"); any c works. */
int tf_spmm(tf_ctx *ctx, float *c);

int tf_ctx_k(const tf_ctx *ctx);
int tf_ctx_threads(const tf_ctx *ctx);       /* threads used by an SpMM */
int tf_ctx_threads_fetch(const tf_ctx *ctx); /* 0 = single-thread overlap */
int tf_ctx_comm_precision(const tf_ctx *ctx);        /* TF_COMM_F32 or TF_COMM_BF16 */
/* How the plan in use moves its remote rows: "direct" (nothing moves:
 * each rank computes from its peers' B where it lies in shared memory,
 * collective and fetch rows alike, as float32 whatever the precision asked
 * since nothing travels; every rank on one node, TWOFACE_COLL_SHM not copy
 * or off, and where ranks share processors the start-up trial's choice),
 * "shm" (each receiver copies its collective
 * rows from its owners' B in shared memory, rounding them with bf16: every
 * rank on one node, TWOFACE_COLL_SHM not off), "mpi" (the neighbour
 * exchange; on one node where ranks share processors and at most 10 % of
 * the nonzeros are remote, the start-up trial's other side), "ring" (the
 * start-up trial kept 1.5D dense shifting: bands of B around rings of
 * ranks, the shift baseline's) or "none" (no rank receives through the
 * collective). */
const char *tf_ctx_coll_transport(const tf_ctx *ctx);

/* Per-call breakdown, accumulated over tf_spmm calls since the context was
 * created or tf_timing_reset was called. Times in seconds, summed over calls. */
typedef struct {
    int64_t calls;
    double total;        /* whole tf_spmm */
    double coll_wait;    /* starting, polling and waiting for the collective */
    double coll_comp;    /* computing the collective part */
    double local_comp;   /* computing the local part */
    double fetch_wait;   /* posting MPI_Rget (a copy, on shared memory) and
                            waiting for fetched runs */
    double fetch_comp;   /* computing the fetch part */
    double merge;        /* adding the fetch accumulators into C */
    double sync;         /* READY sends and the final DONE handshake that
                            makes B reusable */
    int64_t bytes_coll;  /* bytes of B received through the collective */
    int64_t bytes_fetch; /* bytes of B fetched one-sidedly */
    int64_t msgs_coll;   /* collective messages received (one per source) */
    int64_t msgs_fetch;  /* MPI_Rget requests issued */
    double pack;         /* TF_COMM_BF16: rounding this rank's exported rows
                            (included in total, in no other bucket) */
} tf_timing;

void tf_timing_get(const tf_ctx *ctx, tf_timing *t);
void tf_timing_reset(tf_ctx *ctx);

/* ---- Training loops ---------------------------------------------------
 *
 * A training loop (gnn/, twoface-gcn) runs several SpMMs per step on one
 * plan, at different widths: a GCN layer multiplies A by a hidden-width B
 * and by a classes-width B, forward and backward. What the API gives it:
 *
 *   - Several contexts on one handle, of any widths (tf_context_create as
 *     often as needed): each has its own B memory, buffers, communicators
 *     and timing; they share the handle's plan and rows. Calls on different
 *     contexts may be interleaved freely, as long as every rank makes the
 *     same collective calls in the same order (as for any MPI collective).
 *   - C into caller memory: tf_spmm writes exactly this rank's nrows x k
 *     floats of c and nothing else. c may be the B rows (tf_b_rows) of
 *     another context of the same width on the same handle when this
 *     rank's rows of C are its rows of B (every square plan: tf_get_rows ==
 *     tf_get_brows), which chains two SpMMs with no copy. c must not be the
 *     calling context's own B.
 *   - This rank's rows: tf_get_rows (C, labels) and tf_get_brows (B).
 *   - The communicator to sum gradients over: tf_get_comm.
 */

/* The handle's communicator (tf_open's duplicate of the caller's): the same
 * ranks in the same order, for the caller's own collectives (MPI_Allreduce
 * of weight gradients). Owned by the handle: valid until tf_close; do not
 * free it. Local. */
MPI_Comm tf_get_comm(const tf_handle *h);

/* ---- Callers without a C MPI_Comm (Python, Fortran) ------------------- */

/* tf_open with the communicator given as its Fortran handle (MPI_Fint, as
 * returned by MPI_Comm_c2f, mpi4py's Comm.py2f() or a Fortran INTEGER comm),
 * converted with MPI_Comm_f2c. A foreign function interface cannot build a C
 * MPI_Comm portably (its type differs between MPI libraries); the Fortran
 * handle is an integer everywhere. Collective like tf_open; a handle that is
 * not a communicator fails with TF_ERR_ARG on the calling rank, before any
 * communication. The Python module python/twoface opens plans through it. */
int tf_open_fcomm(const char *plan_path, int64_t fortran_comm, tf_handle **h);

/* ---- Errors ------------------------------------------------------------ */

const char *tf_status_string(int status);
const char *tf_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
