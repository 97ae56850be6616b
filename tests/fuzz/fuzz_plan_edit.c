/* libFuzzer target, structure-aware: edits to real plans against the
 * structural checks of the plan loader (tf_plan_validate_rank).
 *
 * The byte-level target (fuzz_plan.c) rarely gets past the checksums (HDF5's
 * on metadata, Fletcher-32 on chunks, ours on every rank's arrays): a random
 * change is caught before the structural checks ever see it. Those checks
 * are what stands between a hand-edited or buggy-writer plan, re-signed with
 * valid checksums, and an out-of-bounds access in the executor, so they get
 * a target of their own. Its input is a list of 16-byte edits applied to the
 * plans of tests/fuzz/corpus_plan/ (read once, every rank), in the forms a
 * file can take after tf_plan_read, whose datasets always have the lengths
 * their counts say:
 *   byte 0   which plan (mod the number of plans) and byte 1 which rank part
 *   byte 2   operation: 0..3 set one element of an array, 4 resize an
 *            extent-defined array group (e.g. local/col and local/val
 *            together, as their datasets would be), 5 set coll_buf_rows,
 *            6 set fetch_buf_rows (fetch/colptr resized to match)
 *   byte 3   which array (mod 21, the order of docs/plan-format.md)
 *   4..7     element index or new length (little-endian, reduced)
 *   8..15    value (little-endian int64, truncated to the element type)
 * Then every part goes through tf_plan_validate_rank. Oracle: a part that
 * validates is used the way the executor uses it (tf_exec_open.c, the
 * kernels) on buffers of exactly the sizes the plan states, so
 * AddressSanitizer reports any index the checks let through; a part that
 * does not validate must fail with a one-line message.
 *
 * The plans are found in $FUZZ_PLAN_DIR, else tests/fuzz/corpus_plan
 * (make fuzz runs from the repository root). */
#include "fuzz_oracles.h"

#include <dirent.h>
#include <stdlib.h>

#define MAX_PLANS 16
#define MAX_LEN 4096 /* longest array an edit may create */

static tf_plan g_base[MAX_PLANS];
static int g_nbase;

static void load_bases(void)
{
    const char *dir = getenv("FUZZ_PLAN_DIR") ? getenv("FUZZ_PLAN_DIR") : "tests/fuzz/corpus_plan";
    DIR *d = opendir(dir);
    if (!d)
        fuzz_broken("cannot open the plan directory (set FUZZ_PLAN_DIR)", dir);
    struct dirent *e;
    while ((e = readdir(d)) != NULL && g_nbase < MAX_PLANS) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 3, ".h5") != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (tf_plan_read(path, TF_PLAN_READ_ALL, &g_base[g_nbase]) == TF_OK)
            g_nbase++;
    }
    closedir(d);
    if (g_nbase == 0)
        fuzz_broken("no readable plan in", dir);
}

/* ---- Arrays of a part, as the reader's table (tf_plan_layout.c) ---------- */

enum { K_I32, K_I64, K_F32 };
enum { N_ROWS1, N_LOC, N_COLL, N_RECV, N_SEND, N_RUNS, N_FROWS, N_FBUF1, N_FET };
static const struct {
    int kind, count;
} arrays[21] = {
    {K_I64, N_ROWS1}, {K_I32, N_LOC},  {K_F32, N_LOC},   {K_I64, N_ROWS1}, {K_I32, N_COLL},
    {K_F32, N_COLL},  {K_I32, N_RECV}, {K_I32, N_RECV},  {K_I32, N_RECV},  {K_I64, N_RECV},
    {K_I32, N_SEND},  {K_I32, N_SEND}, {K_I32, N_SEND},  {K_I32, N_RUNS},  {K_I32, N_RUNS},
    {K_I32, N_RUNS},  {K_I64, N_RUNS}, {K_I32, N_FROWS}, {K_I64, N_FBUF1}, {K_I32, N_FET},
    {K_F32, N_FET},
};

static void **slot(tf_rank_plan *rp, int i)
{
    void **s[21] = {(void **)&rp->loc_ptr,    (void **)&rp->loc_idx,    (void **)&rp->loc_val,
                    (void **)&rp->coll_ptr,   (void **)&rp->coll_idx,   (void **)&rp->coll_val,
                    (void **)&rp->recv_src,   (void **)&rp->recv_first, (void **)&rp->recv_rows,
                    (void **)&rp->recv_off,   (void **)&rp->send_dst,   (void **)&rp->send_first,
                    (void **)&rp->send_rows,  (void **)&rp->run_owner,  (void **)&rp->run_first,
                    (void **)&rp->run_count,  (void **)&rp->run_off,    (void **)&rp->fetch_rows,
                    (void **)&rp->fet_ptr,    (void **)&rp->fet_idx,    (void **)&rp->fet_val};
    return s[i];
}

static int64_t *count_ref(tf_rank_plan *rp, int c)
{
    switch (c) {
    case N_LOC: return &rp->loc_nnz;
    case N_COLL: return &rp->coll_nnz;
    case N_RECV: return &rp->n_recv;
    case N_SEND: return &rp->n_send;
    case N_RUNS: return &rp->n_runs;
    case N_FROWS: return &rp->n_fetch_rows;
    case N_FET: return &rp->fet_nnz;
    default: return NULL;
    }
}

static int64_t length(const tf_rank_plan *rp, int c)
{
    switch (c) {
    case N_ROWS1: return rp->nrows + 1;
    case N_FBUF1: return rp->fetch_buf_rows + 1;
    default: return *count_ref((tf_rank_plan *)rp, c);
    }
}

static size_t esize(int kind) { return kind == K_I64 ? 8 : 4; }

/* An exact-size copy (so that ASan sees the end), never NULL. */
static void *dup_exact(const void *p, int64_t n, size_t es)
{
    void *q = malloc(n > 0 ? (size_t)n * es : 1);
    if (!q)
        abort();
    if (n > 0 && p)
        memcpy(q, p, (size_t)n * es);
    else if (n > 0)
        memset(q, 0, (size_t)n * es);
    return q;
}

static void copy_plan(const tf_plan *src, tf_plan *dst)
{
    *dst = *src; /* header arrays shared, read-only */
    dst->parts = calloc((size_t)src->n_parts, sizeof *dst->parts);
    if (!dst->parts)
        abort();
    for (int r = 0; r < src->n_parts; r++) {
        tf_rank_plan *d = &dst->parts[r];
        *d = src->parts[r];
        for (int i = 0; i < 21; i++)
            *slot(d, i) = dup_exact(*slot(&src->parts[r], i), length(d, arrays[i].count),
                                    esize(arrays[i].kind));
    }
}

static void free_copy(tf_plan *p)
{
    for (int r = 0; r < p->n_parts; r++)
        for (int i = 0; i < 21; i++)
            free(*slot(&p->parts[r], i));
    free(p->parts);
}

static void set_elem(void *a, int kind, int64_t at, int64_t v)
{
    if (kind == K_I64)
        ((int64_t *)a)[at] = v;
    else if (kind == K_I32)
        ((int32_t *)a)[at] = (int32_t)v;
    else
        ((float *)a)[at] = (float)v;
}

static void resize_group(tf_rank_plan *rp, int c, int64_t len, int64_t fill)
{
    for (int i = 0; i < 21; i++) {
        if (arrays[i].count != c)
            continue;
        int64_t old = length(rp, c);
        size_t es = esize(arrays[i].kind);
        void *q = dup_exact(NULL, len, es);
        memcpy(q, *slot(rp, i), (size_t)(old < len ? old : len) * es);
        for (int64_t x = old; x < len; x++)
            set_elem(q, arrays[i].kind, x, fill + x);
        free(*slot(rp, i));
        *slot(rp, i) = q;
    }
    int64_t *cnt = count_ref(rp, c);
    if (cnt)
        *cnt = len;
    else if (c == N_FBUF1)
        rp->fetch_buf_rows = len - 1;
}

static uint64_t le(const uint8_t *b, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

static void apply(tf_plan *plans, const uint8_t *e)
{
    tf_plan *p = &plans[e[0] % g_nbase];
    if (p->n_parts < 1)
        return;
    tf_rank_plan *rp = &p->parts[e[1] % p->n_parts];
    int op = e[2] % 7, a = e[3] % 21;
    uint32_t idx = (uint32_t)le(e + 4, 4);
    int64_t v = (int64_t)le(e + 8, 8);
    /* Small values are the interesting ones near every bound. */
    if (e[15] < 0xF0)
        v = (int64_t)(int8_t)e[8];
    int c = arrays[a].count;
    if (op <= 3) {
        int64_t n = length(rp, c);
        if (n > 0)
            set_elem(*slot(rp, a), arrays[a].kind, (int64_t)(idx % (uint64_t)n), v);
    } else if (op == 4) {
        if (c != N_ROWS1 && c != N_FBUF1)
            resize_group(rp, c, (int64_t)(idx % MAX_LEN), v);
    } else if (op == 5) {
        rp->coll_buf_rows = v;
    } else if (v >= 0 && v < MAX_LEN) {
        int64_t old = rp->fetch_buf_rows + 1;
        resize_group(rp, N_FBUF1, v + 1, 0);
        for (int64_t x = old; x < v + 1; x++)
            rp->fet_ptr[x] = rp->fet_nnz; /* empty columns at the end */
    }
}

/* ---- The executor's use of a part that validated --------------------- */

static void use_part(const tf_plan *p, const tf_rank_plan *rp)
{
    /* Every rank's B band, each in a buffer of its exact size. */
    int P = p->nranks;
    float **band = calloc((size_t)P, sizeof *band);
    for (int q = 0; q < P; q++)
        band[q] = dup_exact(NULL, p->brow_off[q + 1] - p->brow_off[q], 4);
    float *c = dup_exact(NULL, rp->nrows, 4);
    float *coll = dup_exact(NULL, rp->coll_buf_rows, 4);
    float *fbuf = dup_exact(NULL, rp->fetch_buf_rows, 4);
    float *acc = dup_exact(NULL, rp->n_fetch_rows, 4);
    float *own = band[rp->rank];
    /* Collective: what this rank receives, and sends from its own band. */
    for (int64_t r = 0; r < rp->n_recv; r++)
        for (int32_t x = 0; x < rp->recv_rows[r]; x++)
            coll[rp->recv_off[r] + x] = band[rp->recv_src[r]][rp->recv_first[r] + x];
    for (int64_t s = 0; s < rp->n_send; s++)
        for (int32_t x = 0; x < rp->send_rows[s]; x++)
            fuzz_sink += (uint64_t)own[rp->send_first[s] + x] + (uint64_t)rp->send_dst[s];
    /* Fetch runs land in the fetch buffer. */
    for (int64_t r = 0; r < rp->n_runs; r++)
        for (int32_t x = 0; x < rp->run_count[r]; x++)
            fbuf[rp->run_off[r] + x] = band[rp->run_owner[r]][rp->run_first[r] + x];
    /* The three kernels. */
    for (int64_t i = 0; i < rp->nrows; i++) {
        for (int64_t e = rp->loc_ptr[i]; e < rp->loc_ptr[i + 1]; e++)
            c[i] += rp->loc_val[e] * own[rp->loc_idx[e]];
        for (int64_t e = rp->coll_ptr[i]; e < rp->coll_ptr[i + 1]; e++)
            c[i] += rp->coll_val[e] * coll[rp->coll_idx[e]];
    }
    for (int64_t j = 0; j < rp->fetch_buf_rows; j++)
        for (int64_t e = rp->fet_ptr[j]; e < rp->fet_ptr[j + 1]; e++)
            acc[rp->fet_idx[e]] += rp->fet_val[e] * fbuf[j];
    for (int64_t i = 0; i < rp->n_fetch_rows; i++)
        c[rp->fetch_rows[i]] += acc[i];
    for (int q = 0; q < P; q++)
        free(band[q]);
    free(band);
    free(c);
    free(coll);
    free(fbuf);
    free(acc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!g_nbase)
        load_bases();
    tf_plan plans[MAX_PLANS];
    for (int b = 0; b < g_nbase; b++)
        copy_plan(&g_base[b], &plans[b]);
    for (size_t off = 0; off + 16 <= size && off < 16 * 64; off += 16)
        apply(plans, data + off);
    for (int b = 0; b < g_nbase; b++) {
        for (int r = 0; r < plans[b].n_parts; r++) {
            const tf_rank_plan *rp = &plans[b].parts[r];
            tf_error_clear();
            int st = tf_plan_validate_rank(&plans[b], rp);
            if (st == TF_OK)
                use_part(&plans[b], rp);
            else
                fuzz_check_message(st, NULL);
        }
        free_copy(&plans[b]);
    }
    return 0;
}
