/* One interface over every SpMM strategy twoface-exec can run and compare
 * (docs/baselines.md, "Side by side: `twoface-exec --algo`"):
 *
 *   twoface, fetch, collective   tf_spmm with a plan of that mode (twoface-plan --mode)
 *   allgather, shift(c), p2p     the baselines of tf_baseline.h, on the rows of A
 *                                the first plan's handle rebuilt (tf_handle_rows)
 *                                and that plan's partition
 *
 * An algorithm owns its B rows (tf_algo_b: fill them before every run), runs
 * one SpMM into the caller's C rows, and accumulates per-rank statistics
 * (bytes received, messages, time waiting for communication, time computing)
 * in the same units for every strategy.
 *
 * Collective calls (tf_algo_create, tf_algo_run, tf_algo_free) must be made by
 * every rank of the plans' communicator in the same order; create agrees on
 * its outcome like tf_open. */
#ifndef TF_ALGO_H
#define TF_ALGO_H

#include "twoface.h"

#include <stdint.h>

typedef enum {
    /* The first three equal the plan modes (tf_mode). */
    TF_ALGO_TWOFACE = 0,
    TF_ALGO_FETCH = 1,
    TF_ALGO_COLLECTIVE = 2,
    TF_ALGO_ALLGATHER = 3,
    TF_ALGO_SHIFT = 4,
    TF_ALGO_P2P = 5
} tf_algo_kind;

#define TF_ALGO_NAME_MAX 32
/* Default replication factors of a bare `shift`: every divisor of P up to this. */
#define TF_ALGO_SHIFT_DEFAULT_MAX_C 4
/* Entries of an --algo list after expansion (shift x replications). */
#define TF_ALGO_MAX 64

typedef struct {
    int kind;        /* tf_algo_kind */
    int replication; /* shift: c (divides P); 1 otherwise */
    char name[TF_ALGO_NAME_MAX]; /* "twoface", "p2p", "shift(c=2)" */
    int comm;        /* TF_COMM_*: what B rows travel as; TF_COMM_PLAN (0) = the
                        options' choice (tf_exec_options.comm) */
} tf_algo_spec;

/* Parses a comma-separated --algo list ("twoface,fetch,shift,p2p") for nranks
 * ranks. Every `shift` becomes one entry per replication factor: those of
 * `replications` ("1,2,4"; each must divide nranks) or, when it is NULL, every
 * divisor of nranks up to TF_ALGO_SHIFT_DEFAULT_MAX_C. A replication list
 * without `shift` in the list, an unknown name, an empty item, a repeated
 * entry or a bad factor is TF_ERR_ARG with a message. *specs is malloc'd. */
int tf_algo_parse(const char *list, const char *replications, int nranks, tf_algo_spec **specs,
                  int *n);

/* Checks that the plans (all open on the same communicator) can be compared:
 * same matrix (size, nonzeros, fingerprint), same row and B-row partitions,
 * at most one plan per mode. Local (every rank sees the same headers). */
int tf_algo_check_plans(tf_handle *const *plans, const char *const *names, int nplans);

/* Which of the plans an algorithm uses: the one whose mode matches for
 * twoface/fetch/collective (TF_ERR_ARG "--algo fetch needs a plan made with
 * --mode fetch" if none), the first for the baselines. */
int tf_algo_pick_plan(const tf_algo_spec *spec, tf_handle *const *plans, int nplans, int *index);

/* Accumulated since create or the last reset; times summed over calls, as
 * measured on this rank. */
typedef struct {
    int64_t calls;
    double comm;    /* waiting for communication (collective, fetch, sync / MPI waits) */
    double compute; /* multiply loops, merge, packing (bf16: the owner's rounding) */
    tf_timing detail; /* twoface, fetch, collective: the executor's own breakdown */
    int64_t bytes;  /* bytes of B (and, for shift c > 1, C partials) received */
    int64_t msgs;   /* messages received / requests issued */
} tf_algo_stats;

typedef struct tf_algo tf_algo;

/* Collective. Creates the algorithm for dense width k on the plan chosen by
 * tf_algo_pick_plan. opt (may be NULL) sets the threads and the precision of
 * what travels (comm) for every algorithm; the baselines use tf_ctx-style
 * default threads and the executor's options only for those two. Allocates and touches every buffer. */
int tf_algo_create(const tf_algo_spec *spec, tf_handle *const *plans, int nplans, int k,
                   const tf_exec_options *opt, tf_algo **out);

/* This rank's B rows (nbrows x k floats, row-major): fill before each run. */
float *tf_algo_b(tf_algo *a);
/* Collective: c (nrows x k) = this rank's rows of A times B. */
int tf_algo_run(tf_algo *a, float *c);
void tf_algo_stats_get(const tf_algo *a, tf_algo_stats *s);
void tf_algo_reset(tf_algo *a);
const tf_algo_spec *tf_algo_spec_of(const tf_algo *a);
int tf_algo_plan_index(const tf_algo *a);
int tf_algo_threads(const tf_algo *a);
int tf_algo_threads_fetch(const tf_algo *a); /* 0 for the baselines */
/* What B rows travel as: TF_COMM_F32 or TF_COMM_BF16 (the baselines follow
 * the same option as twoface's contexts: tf_exec_options.comm, else the
 * plan's choice). */
int tf_algo_comm(const tf_algo *a);
/* twoface, fetch, collective: how the collective rows move
 * (tf_ctx_coll_transport: "shm", "mpi" or "none"); NULL for the baselines. */
const char *tf_algo_coll_transport(const tf_algo *a);
/* The start-up trial of a twoface/fetch/collective algorithm's context:
 * returns 1 and fills *s, or 0 for the baselines. */
int tf_algo_selection(const tf_algo *a, tf_selection *s);
/* Collective; a may be NULL on every rank. */
int tf_algo_free(tf_algo *a);

#endif
