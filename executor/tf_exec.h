/* Executor internals: the handle and context structures, shared by the
 * executor's files. The public API is include/twoface.h; what other library
 * rooms may use beyond it is in tf_engine.h. */
#ifndef TF_EXEC_H
#define TF_EXEC_H

#include "tf_agree.h"
#include "tf_engine.h"
#include "tf_error.h"
#include "tf_exchange.h"
#include "tf_csr.h"
#include "tf_plan.h"
#include "tf_shm_wait.h"
#include "twoface.h"

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

struct tf_handle {
    MPI_Comm comm; /* duplicate of the caller's communicator */
    int rank, nranks;
    int node_ranks; /* ranks of comm sharing this rank's node */
    tf_plan plan;        /* header + this rank's part (n_parts == 1) */
    tf_rank_plan *rp;    /* = &plan.parts[0] */
    /* This rank's rows of A with global column indices, ascending per row:
     * nrows x n, row r is global row rp->row_begin + r. */
    tf_csr rows;
    /* Global column of every collective buffer row and fetch buffer row. */
    int64_t *coll_gcol; /* coll_buf_rows */
    int64_t *fetch_gcol; /* fetch_buf_rows */
    /* The plan's runner-up (plan.alt) opened like the plan itself, with
     * rows checked equal to `rows`; NULL if the plan carries none. */
    struct tf_handle *alt;
    /* Original ids of this rank's rows of A/C and of B (tf_exec_perm.c):
     * plan.perm + row_begin, or the identity, held here either way. */
    int64_t *row_ids, *brow_ids;
};

/* One rank's flags of the shared-memory collective (tf_coll_shm.c), in a
 * small shared window: `entered` = the SpMMs this rank has entered (its B
 * is written), `done` = readers' copies of its B completed, summed over
 * SpMMs. Cache lines of their own: readers poll one, owners the other. */
typedef struct {
    _Atomic int64_t entered;
    char pad0[64 - sizeof(int64_t)];
    tf_shm_counter done;
    char pad1[64 - sizeof(tf_shm_counter)];
} tf_shm_flags;

/* Per-thread fetch state: a contiguous range [run_begin, run_end) of the
 * context's run order, cut into segments of runs from one owner. */
typedef struct {
    int64_t run_begin, run_end;
    int n_seg;
    int *seg_owner;             /* index into ctx->owner_rank */
    int64_t *seg_begin, *seg_end, *seg_next; /* positions in ctx->run_order */
    int seg_first;              /* segments before it are fully issued */
    float *acc;                 /* compact accumulator n_fetch_rows * K (threaded path) */
    MPI_Request *req;           /* req_off + max_req entries */
    int req_off;                /* slot s is req[req_off + s] */
    int hwm;                    /* slots [0, hwm) used so far in this SpMM */
    int64_t *slot_run;          /* run in each slot, -1 if free */
    int *done_idx;              /* MPI_Testsome/Waitsome indices */
    int *free_slot;             /* stack of free slots */
    int nfree, inflight;
    int64_t *landed;            /* runs landed but not computed yet */
    int64_t nlanded;
    double t_wait, t_comp;
} tf_fetch_thread;

/* An ordinary SpMM context: everything one plan's SpMMs at dense width K
 * need (tf_exec_ctx.c creates it, tf_spmm.c runs it). The public tf_ctx
 * (context/tf_select.c) is a layer over one of these, or two during the start-up
 * trial between a plan and its runner-up. */
typedef struct tf_spmm_ctx tf_spmm_ctx;
struct tf_spmm_ctx {
    tf_handle *h;
    int k;
    int threads;       /* total OpenMP threads of an SpMM */
    int threads_fetch; /* fetch group size; 0 = single-thread overlap */
    int max_req;

    /* What travels (tf_exec_options.comm, resolved): B rows as float32
     * (bf16 = 0, es = 4) or as bfloat16 (bf16 = 1, es = 2, tf_bf16.h). */
    int bf16;
    size_t es;

    /* B rows of this rank as the caller fills them (float32), and the
     * window memory other ranks read: B itself for float32; for bf16 the
     * owner's rounded export of its rows, and B lives in b_own, or, when
     * the collective reads it from shared memory, in bwin. */
    MPI_Win win;
    float *b;
    void *xb;
    float *b_own; /* malloc'ed B when it is not the window (bf16, window owner) */
    /* bf16 on one node: a shared window holding float32 B (b), from which
     * readers round their collective rows (tf_coll_shm.c); freed with the
     * window, locked for its lifetime. MPI_WIN_NULL otherwise. */
    MPI_Win bwin;
    /* bf16: the ranges of owner-local B rows some rank receives, merged;
     * packed into xb at the start of every SpMM (tf_export.c). */
    int64_t n_xr;
    int64_t *xr_first, *xr_rows;
    /* The window (and its B) is this context's to free; a context created
     * with `share` uses the window of the one it stands beside. */
    int owns_win;
    int released; /* tf_spmm_ctx_release: B and its window only */
    /* The passive-target epoch (MPI_Win_lock_all) is open (owner only). */
    int locked;
    /* Every rank's float32 B is mapped into every other rank
     * (MPI_Win_allocate_shared, tf_coll_shm.c): in win for float32, in
     * bwin for bf16. */
    int win_shared;
    /* Rows on cache lines (docs/executor.md, "Rows on cache lines"): where
     * a row is a whole number of 64-byte lines, each rank's part of a
     * window has one row of slack and its rows begin at the first line
     * boundary in it. win_pad[q] (bwin_pad[q]): bytes from rank q's base
     * of win (bwin) to its row 0, for every rank (one-sided displacements,
     * shared-memory addresses); row_slack: the rows of slack (0 or 1).
     * Allocated with the window, freed by its owner. */
    MPI_Aint *win_pad, *bwin_pad;
    int row_slack;

    void *coll_buf;  /* coll_buf_rows * K elements of es bytes */
    void *fetch_buf; /* fetch_buf_rows * K elements of es bytes */

    MPI_Datatype row_type; /* K contiguous elements that travel (float or bf16 bits) */

    /* Collective: one distributed-graph communicator (NULL if no rank uses
     * the collective), per-neighbour datatypes. */
    int any_coll;  /* some rank receives through the collective */
    int any_fetch; /* some rank fetches */
    tf_xchg xchg; /* the exchange over the neighbours (tf_exchange.h) */
    int n_src, n_dst;
    int *src_ranks, *dst_ranks;
    MPI_Datatype *send_types, *recv_types;
    int *send_counts, *recv_counts;
    MPI_Aint *send_displs, *recv_displs;
    int64_t coll_msgs; /* sources this rank receives from */
    /* Packed send side (tf_collective.c): the destinations whose blocks are
     * short get their rows copied into pack_buf at the start of every SpMM
     * and travel as one contiguous count; the others stay zero-copy. A
     * packed destination's displacement is pack_buf's address relative to
     * xb (MPI_Aint_diff), so one exchange mixes both forms. */
    void *pack_buf;
    int64_t n_pack_runs, pack_rows; /* runs copied, rows in pack_buf */
    int64_t *pack_first, *pack_len; /* per run: first owner-local row, rows */
    int n_pack_dst;                 /* destinations sent packed */
    /* bf16 (tf_pack.h): the pack rounds from B as it copies, except runs
     * (pack_from_xb[r] = 1) that tf_export_pack rounded into xb already
     * (fetchers read them, or they go to 3+ destinations); dst_packed[j]:
     * destination j travels packed, so its rows need not be in xb
     * (tf_export.c). */
    char *pack_from_xb;
    char *dst_packed;
    /* Every rank sends all its rows packed: the exchange takes plain counts
     * (tf_xchg_start_v, p2p's call) with these displacements in rows. */
    int coll_v;
    int *v_sdispl, *v_rdispl;

    /* Shared-memory transport of the collective (tf_coll_shm.c): instead of
     * the exchange, each receiver copies its stripes straight from the
     * owners' float32 B into coll_buf (rounding them to bf16 on the way
     * when that is what travels). Segments are runs of stripes merged when
     * both sides are contiguous; shm_split (n_coll_threads + 1 bounds)
     * gives each collective thread segments of about equal size.
     * Flags in shared memory (tf_shm_flags, one per rank in shm_flag_win)
     * stand in for the exchange's messages: an owner publishes that it
     * entered, a reader that it copied. */
    int coll_shm;
    MPI_Win shm_flag_win;
    tf_shm_flags *shm_my_flag;
    tf_shm_flags **shm_flag; /* per owner I read from */
    int64_t shm_epoch;       /* SpMMs entered on this context */
    char *shm_copied;        /* per owner: copied in this SpMM */
    int64_t n_shm_seg;
    const float **shm_src; /* address in the owner's float32 B */
    int64_t *shm_dst;      /* element offset in coll_buf */
    int64_t *shm_len;      /* elements */
    int64_t *shm_split;
    int shm_n_src, shm_n_rd; /* ranks I read from, ranks reading from me */
    int *shm_src_rank;
    int64_t *shm_seg_first; /* owner i's segments: [shm_seg_first[i], [i + 1]) */
    int shm_left;           /* owners not copied yet in this SpMM */

    /* In place on one node (tf_node_direct.c; coll_shm is 1 too): every
     * remote nonzero, collective and fetch alike, in one CSR over nrows
     * rows (dir_ptr/dir_idx/dir_val) whose columns are global B rows of
     * node_b, the node's contiguous float32 B; the SpMM computes from the
     * owners' rows where they are. The flags above, with readers' `done`
     * counting computes instead of copies. */
    int direct;
    const float *node_b; /* the address global B row 0 would have */
    int64_t *dir_ptr;
    int32_t *dir_idx;
    float *dir_val;
    int64_t direct_rows; /* distinct B rows read from peers per SpMM */

    /* Protection of B against one-sided reads, pairwise (docs/executor.md):
     * an owner sends READY (zero bytes) to each rank that fetches from it once
     * its B is written; a fetcher gets from an owner only after its READY,
     * and sends DONE once its gets from that owner completed; an owner
     * returns only after DONE from each of its fetchers. Persistent requests
     * on a communicator of their own. */
    MPI_Comm sync_comm;
    int n_owners;          /* ranks I fetch from */
    int *owner_rank;
    int64_t *owner_runs;   /* runs from each owner */
    _Atomic int64_t *owner_left; /* runs not completed yet in this SpMM */
    MPI_Request *ready_recv, *done_send; /* n_owners each */
    char *owner_ready;     /* READY arrived in this SpMM */
    int n_fetchers;        /* ranks fetching from me */
    int *fetcher_rank;
    MPI_Request *ready_send, *done_recv; /* n_fetchers each */
    int32_t *run_owner_idx; /* owner index of each run */
    int64_t *run_order;     /* runs in issue order: owners from rank+1 on */

    /* Fetch threads (threads_fetch entries, at least 1). */
    int n_fetch_threads;
    tf_fetch_thread *ft;
    float **accs; /* ft[f].acc for every f, for the merge */

    /* Rows of the collective group's threads: thread g computes rows
     * [row_split[g], row_split[g + 1]) (balanced by local + collective
     * nonzeros); n_coll_threads + 1 bounds. */
    int n_coll_threads;
    int64_t *row_split;

    /* Chunks of the local part for the single-thread path: between chunks it
     * makes progress on the fetches. n_local_chunks + 1 bounds. */
    int n_local_chunks;
    int64_t *local_split;

    /* `add` of the kernels that overwrite C: TF_KERN_STREAM when this
     * rank's C is too large to stay in cache (tf_kern_c_mode), else 0. */
    int c_mode;

    int64_t fetch_rows_got; /* B rows fetched per SpMM (sum of run counts) */

    tf_timing timing;
};

/* Opens a plan already in memory (tests): takes ownership of *plan (which may
 * hold every rank's part; only this rank's is kept) and leaves *plan zeroed.
 * Collective, with the same checks and agreement as tf_open. */
int tf_open_plan(tf_plan *plan, MPI_Comm comm, tf_handle **h);

/* Where a context's remote rows come from on one node (tf_spmm_ctx_create's
 * place; reading in place only where TWOFACE_COLL_SHM allows it,
 * tf_node_direct.c): */
enum {
    TF_PLACE_NEVER = 0,  /* never in place: the collective copies (or the exchange) */
    TF_PLACE_ANY = 1,    /* read peers' rows in place where possible */
    TF_PLACE_LAYOUT = 2, /* not this context, but B laid out so that one sharing its window can */
    /* With LAYOUT: the collective through the MPI exchange although B is in
     * shared memory (the start-up trial's other side where ranks share
     * processors, tf_select.c). */
    TF_PLACE_XCHG = 4
};

/* tf_exec_ctx.c: a context for h's own plan (collective, agreed). With
 * `share`, the context of another plan of the same matrix and partition, B
 * and its window are share's: a runner-up reads and serves the very rows the
 * caller fills. place: TF_PLACE_NEVER, TF_PLACE_ANY, TF_PLACE_LAYOUT, or
 * TF_PLACE_LAYOUT | TF_PLACE_XCHG. opt must not be NULL. */
int tf_spmm_ctx_create(tf_handle *h, int k, const tf_exec_options *opt, tf_spmm_ctx *share,
                       int place, tf_spmm_ctx **out);
/* 1 when the node's ranks x h's threads for opt exceed its processors, on
 * any rank (collective; every rank gets the same answer). */
int tf_node_crowded(tf_handle *h, const tf_exec_options *opt);
/* Frees a context (collective parts included; NULL is a no-op). A context
 * that shares another's window goes first. */
void tf_spmm_ctx_destroy(tf_spmm_ctx *ctx);
/* Hands the window (and its passive-target epoch) of `from` to `to`, which
 * shares it, so that `from` can be destroyed while `to` stays. */
void tf_spmm_ctx_take_window(tf_spmm_ctx *to, tf_spmm_ctx *from);
/* Frees the buffers the context's SpMM moves rows through (the receive,
 * fetch and pack buffers, the fetch accumulators) and keeps B, its window
 * and the rest: for a context whose B another strategy reads from now on
 * (dense shifting, context/tf_select.c). tf_spmm_run on it fails from then
 * on. Local. */
void tf_spmm_ctx_release(tf_spmm_ctx *ctx);

/* tf_spmm.c: one SpMM with this context's plan. */
int tf_spmm_run(tf_spmm_ctx *ctx, float *c);

/* tf_collective.c */
int tf_coll_setup(tf_spmm_ctx *ctx);
void tf_coll_free(tf_spmm_ctx *ctx);
/* Packs the rows of packed destinations, then starts the exchange. */
int tf_coll_start(tf_spmm_ctx *ctx, MPI_Request *req);
/* How the send side travels (TWOFACE_COLL_PACK, else the build default):
 * every destination packed, plain counts (always: the default, measured no
 * slower than auto on graphs with long blocks, docs/executor.md), packed per
 * destination when its blocks are short (auto), or never (zero-copy
 * datatypes). */
enum { TF_COLL_PACK_AUTO = 0, TF_COLL_PACK_ALWAYS = 1, TF_COLL_PACK_NEVER = 2 };
#ifndef TF_COLL_PACK_DEFAULT
#define TF_COLL_PACK_DEFAULT TF_COLL_PACK_ALWAYS
#endif
/* auto packs a destination whose blocks average fewer bytes than this. */
#ifndef TF_COLL_PACK_BLOCK_BYTES
#define TF_COLL_PACK_BLOCK_BYTES 65536
#endif
int tf_coll_pack_mode(int *mode);
/* bf16: cuts the pack runs where the window export (xr) begins or ends, so
 * each run is either rounded from B or copied from xb (local). */
int tf_coll_pack_sources(tf_spmm_ctx *ctx);
/* Collective: exchanges until their time settles (context creation). */
int tf_coll_warm(tf_spmm_ctx *ctx);

/* tf_coll_shm.c. TWOFACE_COLL_SHM=auto|direct|trial|copy|off (unset:
 * auto), the same on every rank (collective, agreed). With every rank on
 * one node: direct reads peers' float32 B in place (tf_node_direct.c);
 * copy has the collective's receivers copy their rows (what direct falls
 * back to); trial lets the start-up trial choose between in place and the
 * copies, or the exchange where few nonzeros are remote (tf_select.c);
 * auto is direct when the node's ranks x threads do not exceed its
 * processors and trial otherwise (docs/executor.md); off sends messages. */
enum { TF_SHM_OFF = 0, TF_SHM_COPY = 1, TF_SHM_DIRECT = 2, TF_SHM_TRIAL = 3, TF_SHM_AUTO = 4 };
int tf_coll_shm_mode(MPI_Comm comm, int *mode);
/* Allocates the window (nbrows x K elements of es bytes) and B: float32 B
 * in shared memory when `want` on every rank and every rank of the
 * communicator is on this node (the window itself, or for bf16 bwin beside
 * an MPI_Win_allocate export window); else, or when the shared allocation
 * fails anywhere, MPI_Win_allocate (and b_own for bf16). contig: float32
 * B contiguous over the ranks (MPI's default layout), which the in-place
 * path needs. Collective, agreed; sets win, xb, b, bwin, b_own, win_shared. */
int tf_coll_shm_window(tf_spmm_ctx *ctx, int want, int contig);
/* The copy schedule from the owners' B and the flags (collective, agreed;
 * win_shared only). */
int tf_coll_shm_setup(tf_spmm_ctx *ctx);
void tf_coll_shm_free(tf_spmm_ctx *ctx);
/* The flags window, and the flags of the shm_n_src owners in shm_src_rank
 * (shm_flag allocated by tf_coll_shm_peers_set). Collective, agreed. */
int tf_coll_shm_flags(tf_spmm_ctx *ctx);
/* Local: the owners this rank reads (reads[q] > 0, nranks entries) and the
 * ranks that read it (read_by[q] > 0): shm_n_src, shm_n_rd, shm_src_rank
 * and the per-owner arrays. */
int tf_coll_shm_peers_set(tf_spmm_ctx *ctx, const int64_t *reads, const int64_t *read_by);
/* Owner i (of shm_src_rank) has entered this SpMM: its B is written
 * (acquire order). */
int tf_coll_shm_entered(const tf_spmm_ctx *ctx, int i);
/* Entry of an SpMM: this rank's B is written; publishes it. */
int tf_coll_shm_enter(tf_spmm_ctx *ctx);
/* Single-thread path: copies the rows of every owner that has entered
 * (with `threads` OpenMP threads) and tells it; block: until every owner
 * is copied. shm_left counts the owners still to copy. */
int tf_coll_shm_poll(tf_spmm_ctx *ctx, int block, int threads);
/* Threaded path: waits until every owner I read from has entered. */
int tf_coll_shm_wait(tf_spmm_ctx *ctx);
/* Every owner has entered: orders this rank's reads after the owners'
 * writes (before any copy, on the thread that saw them). */
void tf_coll_shm_arrived(tf_spmm_ctx *ctx);
/* The window holding every owner's float32 B: the B window, or with bf16
 * bwin beside the export. */
MPI_Win tf_coll_shm_b_window(const tf_spmm_ctx *ctx);
/* Bytes from rank q's base of that window to its row 0 ("Rows on cache
 * lines", tf_coll_shm_window). */
MPI_Aint tf_coll_shm_b_pad(const tf_spmm_ctx *ctx, int q);
/* After tf_coll_shm_arrived: copies part `part` of `parts` of this
 * rank's segments (parts = n_coll_threads, or 1 for all of them). */
void tf_coll_shm_copy(tf_spmm_ctx *ctx, int part, int parts);
/* After every copy of this rank (threaded path): tells the owners. */
int tf_coll_shm_copied(tf_spmm_ctx *ctx);
/* Before returning: waits until every reader of this rank's B copied. */
int tf_coll_shm_leave(tf_spmm_ctx *ctx);

/* tf_node_direct.c. Collective, agreed: sets direct when every remote
 * row can be read in place (float32, contiguous shared B, bands in rank
 * order), with the CSR and the flags; otherwise direct stays 0 and
 * nothing is allocated. */
int tf_direct_setup(tf_spmm_ctx *ctx);
void tf_direct_free(tf_spmm_ctx *ctx);
/* During an SpMM, after tf_coll_shm_enter: 1 when every owner I read has
 * entered (then my reads are ordered after their writes); block: until
 * then. */
int tf_direct_arrived(tf_spmm_ctx *ctx, int block);
/* My reads of every owner's B are over. */
void tf_direct_release(tf_spmm_ctx *ctx);

/* tf_export.c (bf16 only): which of my rows others read from the window -
 * the runs they fetch and the collective's zero-copy stripes - (collective,
 * agreed: it exchanges the fetch runs with their owners; it also cuts the
 * collective's pack runs at those rows, tf_coll_pack_sources), and their
 * rounding into the window at the start of an SpMM (local). */
int tf_export_setup(tf_spmm_ctx *ctx);
void tf_export_free(tf_spmm_ctx *ctx);
void tf_export_pack(tf_spmm_ctx *ctx);

/* tf_fetch.c */
int tf_fetch_setup(tf_spmm_ctx *ctx);
void tf_fetch_free(tf_spmm_ctx *ctx);

/* Resets a fetch thread's slots before an SpMM; its requests go to
 * req[req_off..] (the single-thread path keeps other requests first).
 * Free slots are reused lowest first, so MPI_Waitsome only scans
 * req[0, req_off + hwm). */
void tf_fetch_reset(tf_spmm_ctx *ctx, tf_fetch_thread *ft, int req_off);
/* Issues MPI_Rget for the thread's next runs while request slots are free,
 * skipping owners whose READY has not arrived (ready NULL: all arrived). */
int tf_fetch_issue(tf_spmm_ctx *ctx, tf_fetch_thread *ft, const char *ready);
/* The pairwise B protection: setup (collective), per-SpMM start (post
 * READY sends to fetchers, READY receives from owners, DONE receives from
 * fetchers) and free. */
int tf_sync_setup(tf_spmm_ctx *ctx);
int tf_sync_start(tf_spmm_ctx *ctx);
void tf_sync_free(tf_spmm_ctx *ctx);
/* Frees the slot of a completed request (index into req) and returns its run. */
int64_t tf_fetch_complete(tf_spmm_ctx *ctx, tf_fetch_thread *ft, int index);

#endif
