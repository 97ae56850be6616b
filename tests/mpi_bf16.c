/* B rows travelling as bfloat16 (tf_exec_options.comm = TF_COMM_BF16,
 * twoface-plan --comm bf16): the result is bitwise the executor's order of
 * operations on B with every remote row rounded to bf16 (a collective plan,
 * whose order is fixed), within float32 summation of a double reference
 * that rounds the same rows (every plan), the float32 executor's bits when B
 * is already bf16, within the documented bound of the float32 reference, the same bits from every kernel variant and thread set-up, half
 * the bytes; the plan's choice is the default; ranks that disagree fail
 * together. Runs at any number of ranks (the checks that need remote rows
 * apply from 2 on). */
#include "tf_test.h"

#include "tf_bf16.h"
#include "tf_dense.h"
#include "tf_algo.h"
#include "tf_error.h"
#include "tf_exec.h"
#include "tf_kernels.h"
#include "tf_plan_io.h"
#include "tf_planner.h"
#include "tf_reference.h"
#include "twoface.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOL 1e-5

static int g_rank, g_size;

static int all_true(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

static int any_rank(int yes)
{
    int any = 0;
    MPI_Allreduce(&yes, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any;
}

static int same_message_everywhere(const char *msg)
{
    char m0[1024];
    memset(m0, 0, sizeof m0);
    snprintf(m0, sizeof m0, "%s", msg);
    MPI_Bcast(m0, (int)sizeof m0, MPI_CHAR, 0, MPI_COMM_WORLD);
    return all_true(strcmp(m0, msg) == 0 && msg[0] != '\0');
}

/* Sparse random entries (fetched) and a hub of B rows 0..47 that every rank
 * wants (collective), as in mpi_exec.c, so a twoface plan mixes both. */
static void hub_matrix(tf_csr *a)
{
    tf_csr r;
    tf_coo coo;
    tf_test_random_csr(&r, 300, 300, 400, 17);
    if (tf_coo_init(&coo, 300, 300, 16) != TF_OK)
        abort();
    for (int64_t i = 0; i < r.nrows; i++) {
        for (int64_t e = r.rowptr[i]; e < r.rowptr[i + 1]; e++)
            if (r.col[e] > 48 && tf_coo_push(&coo, (int32_t)i, r.col[e], r.val[e]) != TF_OK)
                abort();
        if (tf_coo_push(&coo, (int32_t)i, (int32_t)(i % 48), 0.25 + (double)(i % 5)) != TF_OK)
            abort();
    }
    tf_csr_free(&r);
    if (tf_csr_from_coo(a, &coo) != TF_OK)
        abort();
    tf_coo_free(&coo);
}

/* hub_matrix, and a block of rows that each want only a few rows of the hub
 * (3 nonzeros in its 48 rows, scattered): those ranks fetch hub rows that
 * others receive by the collective, so one owner's rows travel both ways. */
static void overlap_matrix(tf_csr *a)
{
    tf_csr h;
    hub_matrix(&h);
    tf_coo coo;
    if (tf_coo_init(&coo, 300, 300, 16) != TF_OK)
        abort();
    for (int64_t i = 0; i < h.nrows; i++)
        for (int64_t e = h.rowptr[i]; e < h.rowptr[i + 1]; e++) {
            int sparse = i >= 150 && i < 225 && h.col[e] < 48;
            if (sparse && i % 16 != 0)
                continue; /* this block keeps a hub entry on one row in 16 */
            if (tf_coo_push(&coo, (int32_t)i, h.col[e], h.val[e]) != TF_OK)
                abort();
        }
    tf_csr_free(&h);
    if (tf_csr_from_coo(a, &coo) != TF_OK)
        abort();
    tf_coo_free(&coo);
}

static void options(tf_plan_options *o, int mode, int prec)
{
    tf_plan_options_default(o);
    o->nranks = g_size;
    o->mode = mode;
    o->k = 32;
    o->stripe_width = 8;
    o->gap = 2;
    o->comm = prec;
    /* mpi_exec.c's coefficients under which the hub travels collectively
     * and the lone rows are fetched. */
    o->coeffs.alpha_coll = 1e-6;
    o->coeffs.beta_coll = 0.4e-9;
    o->coeffs.alpha_fetch = 0.1e-6;
    o->coeffs.beta_fetch = 1.6e-9;
    o->coeffs.alpha_sync = 0;
    o->no_pure_check = 1;
}

static int open_mem(const tf_csr *a, int mode, int prec, tf_handle **h)
{
    tf_plan_options o;
    options(&o, mode, prec);
    tf_plan plan;
    int st = tf_agree(MPI_COMM_WORLD, tf_plan_build(a, &o, &plan));
    if (st)
        return st;
    st = tf_open_plan(&plan, MPI_COMM_WORLD, h);
    tf_plan_free(&plan);
    return st;
}

/* Max over ranks of c's scaled error against a double reference: with
 * own_end > own_begin, B's rows outside [own_begin, own_end) rounded. */
static double error_vs(const tf_handle *h, const tf_csr *a, int k, uint64_t seed, int rounded,
                       const float *c)
{
    int64_t r0, nr, b0, nb;
    tf_get_rows(h, &r0, &nr);
    tf_get_brows(h, &b0, &nb);
    double *cref = malloc((size_t)(nr > 0 ? nr : 1) * (size_t)k * sizeof *cref);
    double *absrow = malloc((size_t)(nr > 0 ? nr : 1) * sizeof *absrow);
    if (rounded)
        tf_reference_spmm_gen_bf16(a, r0, r0 + nr, seed, k, b0, b0 + nb, cref);
    else
        tf_reference_spmm_gen(a, r0, r0 + nr, seed, k, cref);
    for (int64_t i = 0; i < nr; i++) {
        absrow[i] = 0.0;
        for (int64_t e = a->rowptr[r0 + i]; e < a->rowptr[r0 + i + 1]; e++)
            absrow[i] += fabs((double)a->val[e]);
    }
    double err = tf_reference_scaled_error(c, cref, absrow, nr, k, 1.0);
    free(cref);
    free(absrow);
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return err;
}

static tf_ctx *ctx_of(tf_handle *h, int k, int comm, int threads, int tfetch)
{
    tf_exec_options opt;
    tf_exec_options_default(&opt);
    opt.threads = threads;
    opt.threads_fetch = tfetch;
    opt.comm = comm;
    tf_ctx *ctx = NULL;
    int st = tf_context_create(h, k, &opt, &ctx);
    ck_assert_msg(all_true(st == TF_OK), "context: %s", tf_error_message());
    ck_assert_int_eq(tf_ctx_comm_precision(ctx), comm);
    return ctx;
}

/* B from the generator at seed; rounded to bf16 first when exact. */
static void fill(tf_ctx *ctx, int k, uint64_t seed, int exact)
{
    int64_t b0, nb;
    float *b = tf_b_rows(ctx, &b0, &nb);
    if (nb > 0)
        tf_dense_fill(b, seed, b0, nb, k);
    if (exact)
        for (int64_t x = 0; x < nb * k; x++)
            b[x] = tf_bf16_round_f32(b[x]);
}

/* The bitwise reference of a collective plan: this rank's rows computed
 * with the executor's own order of operations on the plan's arrays - the
 * local part from the float32 B rows, then the collective part from the
 * rows it receives, rounded to bf16 and widened - by the float32 kernel
 * (every variant and row split gives the same bits, test_kernels.c). B is
 * the generator's at seed. */
static void bitwise_reference(const tf_handle *h, int k, uint64_t seed, float *c)
{
    const tf_rank_plan *rp = h->rp;
    int64_t b0 = rp->brow_begin, nb = rp->nbrows, nc = rp->coll_buf_rows;
    float *own = malloc((size_t)(nb > 0 ? nb : 1) * k * sizeof *own);
    float *recv = malloc((size_t)(nc > 0 ? nc : 1) * k * sizeof *recv);
    ck_assert(own && recv);
    if (nb > 0)
        tf_dense_fill(own, seed, b0, nb, k);
    for (int64_t r = 0; r < nc; r++)
        for (int x = 0; x < k; x++)
            recv[r * k + x] = tf_bf16_round_f32(tf_dense_value(seed, h->coll_gcol[r], x));
    tf_kern_csr(0, rp->nrows, rp->loc_ptr, rp->loc_idx, rp->loc_val, own, k, c, 0);
    tf_kern_csr(0, rp->nrows, rp->coll_ptr, rp->coll_idx, rp->coll_val, recv, k, c, 1);
    free(own);
    free(recv);
}

static int remote_nonzeros(const tf_handle *h)
{
    const tf_rank_plan *rp = h->rp;
    return any_rank(rp->coll_ptr[rp->nrows] + rp->fet_ptr[rp->fetch_buf_rows] > 0);
}

/* Every mode and both thread set-ups, two K: bounded, bitwise on exact B,
 * half the bytes, B changing between SpMMs. */
START_TEST(bounded_bitwise_half_bytes)
{
    tf_csr a;
    hub_matrix(&a);
    static const int ks[2] = {7, 64};
    static const int setups[2][2] = {{1, 0}, {2, 1}};
    for (int mode = 0; mode < 3; mode++) {
        tf_handle *h = NULL;
        ck_assert(all_true(open_mem(&a, mode, TF_PREC_F32, &h) == TF_OK));
        int remote = remote_nonzeros(h);
        ck_assert(remote == (g_size > 1));
        int64_t r0, nr;
        tf_get_rows(h, &r0, &nr);
        for (int ki = 0; ki < 2; ki++)
            for (int s = 0; s < 2; s++) {
                const int k = ks[ki];
                /* Both through the copies: float32 read in place (the
                 * default on one node) copies nothing to halve. */
                setenv("TWOFACE_COLL_SHM", "copy", 1);
                tf_ctx *c32 = ctx_of(h, k, TF_COMM_F32, setups[s][0], setups[s][1]);
                tf_ctx *c16 = ctx_of(h, k, TF_COMM_BF16, setups[s][0], setups[s][1]);
                unsetenv("TWOFACE_COLL_SHM");
                size_t csz = (size_t)(nr > 0 ? nr : 1) * (size_t)k;
                float *y32 = malloc(csz * sizeof *y32), *y16 = malloc(csz * sizeof *y16);
                for (int rep = 0; rep < 2; rep++) {
                    uint64_t seed = 500 + (uint64_t)(10 * rep + s);
                    fill(c32, k, seed, 0);
                    fill(c16, k, seed, 0);
                    for (size_t x = 0; x < csz; x++)
                        y16[x] = NAN; /* every entry must be written */
                    ck_assert(all_true(tf_spmm(c32, y32) == TF_OK));
                    ck_assert(all_true(tf_spmm(c16, y16) == TF_OK));
                    double e_round = error_vs(h, &a, k, seed, 1, y16);
                    double e_f32 = error_vs(h, &a, k, seed, 0, y16);
                    ck_assert_msg(e_round < TOL, "%s K=%d: %g vs the rounded reference",
                                  tf_mode_name(mode), k, e_round);
                    ck_assert_msg(e_f32 <= TF_BF16_REL_BOUND + TOL,
                                  "%s K=%d: %g vs the float32 reference", tf_mode_name(mode), k,
                                  e_f32);
                    if (mode == TF_MODE_COLLECTIVE) { /* a fixed order: bitwise */
                        float *ref = malloc(csz * sizeof *ref);
                        ck_assert_ptr_nonnull(ref);
                        bitwise_reference(h, k, seed, ref);
                        ck_assert_msg(all_true(memcmp(ref, y16, (size_t)nr * (size_t)k *
                                                                   sizeof *ref) == 0),
                                      "K=%d: not bitwise the rounded reference", k);
                        free(ref);
                    }
                    /* Remote rows really were rounded. */
                    int differ = memcmp(y16, y32, (size_t)nr * (size_t)k * sizeof *y16) != 0;
                    ck_assert(any_rank(differ) == remote);
                    /* On B that bf16 holds exactly, float32's result: the same
                     * bits where the summation order is fixed (local, then
                     * collective); fetched runs are added in the order they land,
                     * which differs from call to call in float32 too. */
                    fill(c32, k, seed, 1);
                    fill(c16, k, seed, 1);
                    ck_assert(all_true(tf_spmm(c32, y32) == TF_OK));
                    ck_assert(all_true(tf_spmm(c16, y16) == TF_OK));
                    int same = memcmp(y16, y32, (size_t)nr * (size_t)k * sizeof *y16) == 0;
                    if (mode == TF_MODE_COLLECTIVE)
                        ck_assert_msg(all_true(same), "K=%d: bf16 differs from float32 on "
                                                      "exact B", k);
                    double d = 0;
                    for (int64_t x = 0; x < nr * k; x++)
                        d = fmax(d, fabs((double)y16[x] - (double)y32[x]));
                    ck_assert_msg(all_true(d < 1e-5), "%s K=%d: %g from float32 on exact B",
                                  tf_mode_name(mode), k, d);
                }
                tf_timing t32, t16;
                tf_timing_get(c32, &t32);
                tf_timing_get(c16, &t16);
                ck_assert_int_eq(t16.calls, t32.calls);
                ck_assert(t16.bytes_coll * 2 == t32.bytes_coll);
                ck_assert(t16.bytes_fetch * 2 == t32.bytes_fetch);
                ck_assert(t32.pack == 0.0);
                free(y32);
                free(y16);
                tf_context_free(c16);
                tf_context_free(c32);
            }
        tf_close(h);
    }
    tf_csr_free(&a);
}
END_TEST

/* Every kernel variant this CPU runs gives the same bits (a collective
 * plan: a fixed summation order; the fetch kernels' variants are compared
 * in test_kernels.c). */
START_TEST(variants_bitwise)
{
    tf_csr a;
    hub_matrix(&a);
    tf_handle *h = NULL;
    ck_assert(all_true(open_mem(&a, TF_MODE_COLLECTIVE, TF_PREC_F32, &h) == TF_OK));
    const int k = 75; /* every tile width and a scalar tail */
    int64_t r0, nr;
    tf_get_rows(h, &r0, &nr);
    size_t csz = (size_t)(nr > 0 ? nr : 1) * (size_t)k;
    float *first = malloc(csz * sizeof *first), *y = malloc(csz * sizeof *y);
    int nv = 0, ran = 0;
    const char *const *names = tf_kern_variants(&nv);
    const char *before = tf_kern_variant();
    for (int v = 0; v < nv; v++) {
        if (!all_true(tf_kern_available(names[v])))
            continue;
        ck_assert(tf_kern_select(names[v]) == TF_OK);
        tf_ctx *c16 = ctx_of(h, k, TF_COMM_BF16, 1, 0);
        fill(c16, k, 77, 0);
        ck_assert(all_true(tf_spmm(c16, ran ? y : first) == TF_OK));
        if (ran)
            ck_assert_msg(all_true(memcmp(first, y, (size_t)nr * k * sizeof *y) == 0),
                          "variant %s differs from %s", names[v], names[0]);
        ran++;
        tf_context_free(c16);
    }
    ck_assert(ran >= 1);
    tf_kern_select(before);
    free(first);
    free(y);
    tf_close(h);
    tf_csr_free(&a);
}
END_TEST

/* Ranks asking for different precisions, or an invalid one, fail together
 * with one message; nobody hangs. */
START_TEST(mismatch_is_agreed)
{
    tf_csr a;
    hub_matrix(&a);
    tf_handle *h = NULL;
    ck_assert(all_true(open_mem(&a, TF_MODE_TWOFACE, TF_PREC_F32, &h) == TF_OK));
    tf_exec_options opt;
    tf_exec_options_default(&opt);
    tf_ctx *ctx = NULL;
    if (g_size > 1) {
        opt.comm = g_rank == 0 ? TF_COMM_BF16 : TF_COMM_PLAN; /* the plan says f32 */
        int st = tf_context_create(h, 8, &opt, &ctx);
        ck_assert(all_true(st == TF_ERR_ARG && ctx == NULL));
        ck_assert(same_message_everywhere(tf_last_error()));
        ck_assert(strstr(tf_last_error(), "differs over the ranks") != NULL);
    }
    opt.comm = g_rank == g_size - 1 ? 9 : TF_COMM_BF16;
    int st = tf_context_create(h, 8, &opt, &ctx);
    ck_assert(all_true(st == TF_ERR_ARG && ctx == NULL));
    ck_assert(same_message_everywhere(tf_last_error()));
    ck_assert(strstr(tf_last_error(), "comm = 9") != NULL);
    /* The handle still works. */
    opt.comm = TF_COMM_BF16;
    ck_assert(all_true(tf_context_create(h, 8, &opt, &ctx) == TF_OK));
    tf_context_free(ctx);
    tf_close(h);
    tf_csr_free(&a);
}
END_TEST

/* A plan made for bf16 records it (through a file), the executor follows it
 * by default and an explicit option overrides it; with a runner-up the
 * start-up trial runs both plans in bf16 over one window. */
START_TEST(plan_choice_and_trial)
{
    tf_csr a;
    hub_matrix(&a);
    tf_plan_options o;
    options(&o, TF_MODE_TWOFACE, TF_PREC_BF16);
    tf_plan plan, *alt = malloc(sizeof *alt);
    int st = tf_plan_build(&a, &o, &plan);
    if (st == TF_OK) {
        o.mode = TF_MODE_FETCH;
        st = tf_plan_build(&a, &o, alt);
        if (st == TF_OK)
            plan.alt = alt;
    }
    ck_assert(all_true(st == TF_OK));
    ck_assert_int_eq(plan.comm, TF_PREC_BF16);
    ck_assert_int_eq(plan.coeffs.elem_bytes, 2);
    char path[512];
    if (g_rank == 0) {
        const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        snprintf(path, sizeof path, "%s/tf_mpi_bf16_%d.h5", dir, (int)getpid());
        st = tf_plan_write(path, &plan, 0);
    }
    tf_plan_free(&plan);
    MPI_Bcast(path, (int)sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    ck_assert(all_true(tf_agree(MPI_COMM_WORLD, st) == TF_OK));
    tf_handle *h = NULL;
    st = tf_open(path, MPI_COMM_WORLD, &h);
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0)
        unlink(path);
    ck_assert(all_true(st == TF_OK));
    ck_assert_int_eq(tf_get_comm_precision(h), TF_COMM_BF16);
    ck_assert_str_eq(tf_comm_precision_name(tf_get_comm_precision(h)), "bf16");

    const int k = 9;
    int64_t r0, nr;
    tf_get_rows(h, &r0, &nr);
    float *y = malloc((size_t)(nr > 0 ? nr : 1) * k * sizeof *y);
    tf_ctx *ctx = NULL;
    /* Through the copies: read in place, both classes read the same rows
     * and there is no runner-up to try. */
    setenv("TWOFACE_COLL_SHM", "copy", 1);
    ck_assert(all_true(tf_context_create(h, k, NULL, &ctx) == TF_OK));
    unsetenv("TWOFACE_COLL_SHM");
    ck_assert_int_eq(tf_ctx_comm_precision(ctx), TF_COMM_BF16);
    tf_selection sel;
    tf_selection_get(ctx, &sel);
    ck_assert(sel.trial);
    for (int call = 0; call < sel.calls_total + 3; call++) {
        uint64_t seed = 900 + (uint64_t)call;
        fill(ctx, k, seed, 0);
        ck_assert(all_true(tf_spmm(ctx, y) == TF_OK));
        ck_assert(error_vs(h, &a, k, seed, 1, y) < TOL);
    }
    tf_selection_get(ctx, &sel);
    ck_assert(sel.decided);
    tf_context_free(ctx);

    tf_exec_options opt;
    tf_exec_options_default(&opt);
    opt.comm = TF_COMM_F32;
    ck_assert(all_true(tf_context_create(h, k, &opt, &ctx) == TF_OK));
    ck_assert_int_eq(tf_ctx_comm_precision(ctx), TF_COMM_F32);
    fill(ctx, k, 5, 0);
    ck_assert(all_true(tf_spmm(ctx, y) == TF_OK));
    ck_assert(error_vs(h, &a, k, 5, 0, y) < TOL);
    tf_context_free(ctx);
    free(y);
    tf_close(h);
    tf_csr_free(&a);
}
END_TEST

/* The pack's rounding (the collective rounds float32 B as it packs, and
 * copies from the window only rows fetchers read too) sends the bits the
 * window's export held before: every received row, collective and fetched,
 * is tf_bf16 of the owner's B, and C is bitwise the same whether the
 * exchange packs every destination (the fused rounding), some (auto), or
 * none (zero-copy from the window: the rounding into the window that every
 * bf16 row used to take), and when the readers round from the owners' B in
 * shared memory instead (TWOFACE_COLL_SHM=copy), where the owner exports
 * only the rows fetchers read. A fixed summation order makes C comparable:
 * two threads, one of them fetching one run at a time into its
 * accumulator, merged after the collective group's local and collective
 * parts. Read in place (TWOFACE_COLL_SHM=direct, the last variant) no row
 * travels: nothing is exported or rounded, and C is float32's. */
START_TEST(pack_round_sends_the_window_bits)
{
    static const char *const names[3] = {"never", "auto", "always"};
    static const char *const labels[5] = {"TWOFACE_COLL_PACK=never", "TWOFACE_COLL_PACK=auto",
                                          "TWOFACE_COLL_PACK=always", "the shared-memory copy",
                                          "read in place"};
    tf_csr a;
    overlap_matrix(&a);
    const int k = 13; /* a vector body and a scalar tail in the rounding */
    int from_window = 0, rounded_in_pack = 0;
    for (int mode = 0; mode < 3; mode++) {
        tf_handle *h = NULL;
        ck_assert(all_true(open_mem(&a, mode, TF_PREC_F32, &h) == TF_OK));
        const tf_rank_plan *rp = h->rp;
        size_t csz = (size_t)(rp->nrows > 0 ? rp->nrows : 1) * (size_t)k;
        float *c[5];
        for (int pm = 0; pm < 5; pm++) {
            if (pm < 3) {
                setenv("TWOFACE_COLL_SHM", "off", 1);
                setenv("TWOFACE_COLL_PACK", names[pm], 1);
            } else {
                setenv("TWOFACE_COLL_SHM", pm == 3 ? "copy" : "direct", 1);
            }
            tf_exec_options opt;
            tf_exec_options_default(&opt);
            opt.comm = TF_COMM_BF16;
            opt.threads = 2;
            opt.threads_fetch = 1;
            opt.max_requests = 1;
            tf_spmm_ctx *ctx = NULL;
            ck_assert(all_true(tf_spmm_ctx_create(h, k, &opt, NULL, 1, &ctx) == TF_OK));
            unsetenv("TWOFACE_COLL_PACK");
            unsetenv("TWOFACE_COLL_SHM");
            ck_assert(pm == 0 || pm == 3 ? ctx->n_pack_dst == 0
                                         : pm == 1 || ctx->n_pack_dst == ctx->n_dst);
            /* One node: every rank reads B through shared memory, and a
             * plan nobody fetches in exports nothing. */
            if (pm == 4) {
                ck_assert_int_eq(ctx->direct, ctx->any_coll || ctx->any_fetch);
                ck_assert_int_eq(ctx->n_xr, 0); /* nothing exported */
            } else {
                ck_assert(pm < 3 ? !ctx->coll_shm : ctx->coll_shm == ctx->any_coll);
            }
            if (pm == 3 && !ctx->any_fetch)
                ck_assert_int_eq(ctx->n_xr, 0);
            int shared = 0;
            for (int64_t r = 0; r < ctx->n_pack_runs; r++) {
                if (ctx->pack_from_xb && ctx->pack_from_xb[r])
                    from_window++;
                else
                    rounded_in_pack++;
                shared |= ctx->pack_from_xb && ctx->pack_from_xb[r];
            }
            /* At 4 ranks every rank wants the hub: a collective plan packs
             * it for 3 destinations, rounded once into the window. */
            if (mode == TF_MODE_COLLECTIVE && pm == 2 && g_size == 4)
                ck_assert(any_rank(shared));
            c[pm] = malloc(csz * sizeof(float));
            ck_assert_ptr_nonnull(c[pm]);
            for (int rep = 0; rep < 2; rep++) { /* B changes between SpMMs */
                uint64_t seed = 700 + (uint64_t)(10 * mode + rep);
                if (rp->nbrows > 0)
                    tf_dense_fill(ctx->b, seed, rp->brow_begin, rp->nbrows, k);
                ck_assert(all_true(tf_spmm_run(ctx, c[pm]) == TF_OK));
                const uint16_t *cb = ctx->coll_buf, *fb = ctx->fetch_buf;
                int ok = 1;
                for (int64_t r = 0; r < rp->coll_buf_rows && !ctx->direct; r++)
                    for (int x = 0; x < k; x++)
                        ok &= cb[r * k + x] ==
                              tf_bf16_from_f32(tf_dense_value(seed, h->coll_gcol[r], x));
                for (int64_t r = 0; r < rp->fetch_buf_rows && !ctx->direct; r++)
                    for (int x = 0; x < k; x++)
                        ok &= fb[r * k + x] ==
                              tf_bf16_from_f32(tf_dense_value(seed, h->fetch_gcol[r], x));
                ck_assert_msg(all_true(ok), "%s, %s: a received row is not "
                                            "the owner's B rounded", tf_mode_name(mode), labels[pm]);
                ck_assert(error_vs(h, &a, k, seed, pm < 4, c[pm]) < TOL);
            }
            tf_spmm_ctx_destroy(ctx);
        }
        for (int pm = 1; pm < 4; pm++)
            ck_assert_msg(all_true(memcmp(c[0], c[pm], (size_t)rp->nrows * k * sizeof(float)) == 0),
                          "%s: C with %s differs from TWOFACE_COLL_PACK=never",
                          tf_mode_name(mode), labels[pm]);
        for (int pm = 0; pm < 5; pm++)
            free(c[pm]);
        tf_close(h);
    }
    /* Both sources of the pack were used. */
    if (g_size > 1)
        ck_assert(any_rank(rounded_in_pack > 0));
    if (g_size > 2)
        ck_assert(any_rank(from_window > 0));
    tf_csr_free(&a);
}
END_TEST

/* The baselines move B as bf16 when asked, as twoface does: the rounded
 * reference to float32 summation (shift at c = 1: a rank's own block is
 * its only float32 one), half the bytes. */
START_TEST(baselines_follow)
{
    tf_csr a;
    hub_matrix(&a);
    tf_handle *h = NULL;
    ck_assert(all_true(open_mem(&a, TF_MODE_TWOFACE, TF_PREC_BF16, &h) == TF_OK));
    tf_algo_spec *specs = NULL;
    int n = 0;
    ck_assert(tf_algo_parse("allgather,shift,p2p", "1", g_size, &specs, &n) == TF_OK);
    const int k = 20;
    int64_t r0, nr;
    tf_get_rows(h, &r0, &nr);
    float *y = malloc((size_t)(nr > 0 ? nr : 1) * k * sizeof *y);
    for (int x = 0; x < n; x++) {
        tf_algo *al[2];
        int64_t bytes[2];
        for (int bf = 0; bf < 2; bf++) {
            tf_exec_options opt;
            tf_exec_options_default(&opt);
            opt.comm = bf ? TF_COMM_PLAN : TF_COMM_F32; /* the plan says bf16 */
            ck_assert(all_true(tf_algo_create(&specs[x], &h, 1, k, &opt, &al[bf]) == TF_OK));
            ck_assert_int_eq(tf_algo_comm(al[bf]), bf ? TF_COMM_BF16 : TF_COMM_F32);
            int64_t b0, nb;
            tf_get_brows(h, &b0, &nb);
            if (nb > 0)
                tf_dense_fill(tf_algo_b(al[bf]), 31, b0, nb, k);
            ck_assert(all_true(tf_algo_run(al[bf], y) == TF_OK));
            double e = error_vs(h, &a, k, 31, bf, y);
            ck_assert_msg(e < TOL, "%s %s: error %g", specs[x].name, bf ? "bf16" : "f32", e);
            tf_algo_stats st;
            tf_algo_stats_get(al[bf], &st);
            bytes[bf] = st.bytes;
        }
        ck_assert_msg(bytes[1] * 2 == bytes[0], "%s: %lld bytes in bf16, %lld in f32",
                      specs[x].name, (long long)bytes[1], (long long)bytes[0]);
        tf_algo_free(al[0]);
        tf_algo_free(al[1]);
    }
    free(specs);
    free(y);
    tf_close(h);
    tf_csr_free(&a);
}
END_TEST

static Suite *make_suite(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    Suite *s = suite_create("mpi_bf16");
    TCase *tc = tcase_create("bf16");
    tcase_add_test(tc, bounded_bitwise_half_bytes);
    tcase_add_test(tc, variants_bitwise);
    tcase_add_test(tc, mismatch_is_agreed);
    tcase_add_test(tc, plan_choice_and_trial);
    tcase_add_test(tc, baselines_follow);
    tcase_add_test(tc, pack_round_sends_the_window_bits);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    tf_test_reexec(argv);
    return tf_test_run_mpi(&argc, &argv, make_suite);
}
