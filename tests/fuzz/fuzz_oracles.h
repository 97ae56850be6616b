/* What the fuzz targets check for one input, shared by the libFuzzer
 * targets (tests/fuzz/fuzz_*.c, built by `make fuzz` with clang) and by the
 * Check suite that replays the seed corpora and every saved regression input
 * in the normal and sanitizer builds (tests/test_fuzz_replay.c).
 *
 * Beyond "no crash, no leak, no undefined behaviour" (the sanitizers' job),
 * each oracle checks the library's promises and calls abort() when one is
 * broken:
 *   - a failure returns a tf_status with a non-empty one-line message that
 *     names the input, and leaves the output empty;
 *   - a success returns a structurally valid result (a CSR matrix that
 *     passes tf_csr_validate; a plan whose every part passes
 *     tf_plan_validate_rank), every element of which is read once so that
 *     AddressSanitizer sees any array shorter than its stated length;
 *   - Matrix Market: the result does not depend on where the input is cut
 *     into decoding chunks (a second read with 1..16-byte chunks must give
 *     the same status -- for compressed input only the same success or
 *     failure -- and, on success, the same matrix bit for bit);
 *   - plans: reading one rank agrees with reading all of them. */
#ifndef TF_FUZZ_ORACLES_H
#define TF_FUZZ_ORACLES_H

#include "tf_csr.h"
#include "tf_error.h"
#include "tf_mm_read.h"
#include "tf_plan.h"
#include "tf_plan_io.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUZZ_MM_NAME "fuzz.mtx"
/* Each file that includes this uses only some of the functions. */
#define FUZZ_FN static __attribute__((unused))

/* Name of the input being replayed (tests/test_fuzz_replay.c), for messages. */
static const char *fuzz_current_input;

FUZZ_FN void fuzz_broken(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz oracle: %s%s%s: %s\n", fuzz_current_input ? fuzz_current_input : "",
            fuzz_current_input ? ": " : "", what, detail ? detail : "");
    abort();
}

/* A failure's message: non-empty, one line, starting with `name`. */
FUZZ_FN void fuzz_check_message(int st, const char *name)
{
    const char *msg = tf_error_message();
    if (st <= TF_OK || st > TF_ERR_INTERNAL)
        fuzz_broken("status out of range", msg);
    if (!msg[0] || strchr(msg, '\n'))
        fuzz_broken("message empty or not one line", msg);
    if (name && strncmp(msg, name, strlen(name)) != 0)
        fuzz_broken("message does not name the input", msg);
}

static volatile uint64_t fuzz_sink;

FUZZ_FN void fuzz_touch(const void *p, size_t bytes)
{
    const unsigned char *b = p;
    uint64_t s = 0;
    for (size_t i = 0; i < bytes; i++)
        s += b[i];
    fuzz_sink += s;
}

FUZZ_FN int fuzz_csr_equal(const tf_csr *a, const tf_csr *b)
{
    if (a->nrows != b->nrows || a->ncols != b->ncols || a->nnz != b->nnz)
        return 0;
    if (memcmp(a->rowptr, b->rowptr, (size_t)(a->nrows + 1) * sizeof *a->rowptr) != 0)
        return 0;
    if (a->nnz && (memcmp(a->col, b->col, (size_t)a->nnz * sizeof *a->col) != 0 ||
                   memcmp(a->val, b->val, (size_t)a->nnz * sizeof *a->val) != 0))
        return 0;
    return 1;
}

FUZZ_FN int fuzz_csr_zeroed(const tf_csr *m)
{
    return !m->rowptr && !m->col && !m->val && !m->nnz && !m->nrows && !m->ncols;
}

/* The dimensions on the size line of plain (uncompressed) text, else 0.
 * A valid size line may ask for 2^31 - 1 rows, and the CSR matrix then
 * needs its 16 GiB of row pointers, which the reader allocates (and
 * twoface-plan refuses beforehand when they exceed the memory): correct, but
 * a fuzzer would spend its time in page faults, so the libFuzzer target
 * skips such inputs (FUZZ_MAX_DIM). */
#define FUZZ_MAX_DIM 50000
FUZZ_FN long long fuzz_mm_max_dim(const uint8_t *data, size_t size)
{
    size_t i = 0;
    int line = 0;
    while (i < size) {
        size_t b = i;
        while (i < size && data[i] != '\n')
            i++;
        size_t e = i++;
        if (line++ == 0)
            continue; /* the banner */
        while (b < e && (data[b] == ' ' || data[b] == '\t' || data[b] == '\r'))
            b++;
        if (b == e || data[b] == '%')
            continue;
        long long d = 0, best = 0;
        for (int k = 0; k < 2; k++) {
            while (b < e && (data[b] == ' ' || data[b] == '\t'))
                b++;
            d = 0;
            while (b < e && data[b] >= '0' && data[b] <= '9' && d < (1LL << 40))
                d = d * 10 + (data[b++] - '0');
            if (d > best)
                best = d;
        }
        return best;
    }
    return 0;
}

/* Matrix Market reader on `data`. */
FUZZ_FN void fuzz_mm_one(const uint8_t *data, size_t size)
{
    tf_csr a, b;
    /* 4 KiB chunks rather than the default 1 MiB: the same code path for
     * inputs of fuzzing size, without a fresh 1 MiB buffer (and its page
     * faults, which dominated the run time) for every input. */
    tf_mm_read_options o = {0, 0, 4096, 0};
    int st = tf_mm_read_buffer_opt(FUZZ_MM_NAME, (const char *)data, size, &a, &o);
    if (st != TF_OK) {
        fuzz_check_message(st, FUZZ_MM_NAME);
        if (!fuzz_csr_zeroed(&a))
            fuzz_broken("failed read left a matrix behind", NULL);
    } else {
        if (tf_csr_validate(&a) != TF_OK)
            fuzz_broken("invalid CSR", tf_error_message());
        fuzz_touch(a.rowptr, (size_t)(a.nrows + 1) * sizeof *a.rowptr);
        fuzz_touch(a.col, (size_t)a.nnz * sizeof *a.col);
        fuzz_touch(a.val, (size_t)a.nnz * sizeof *a.val);
    }
    /* The same bytes in tiny chunks (skipped for big inputs: slow). */
    if (size <= 16384) {
        o.chunk_bytes = 1 + (size ? data[size / 2] % 16 : 0);
        int st2 = tf_mm_read_buffer_opt(FUZZ_MM_NAME, (const char *)data, size, &b, &o);
        /* Compressed input is parsed while it is decoded, so a damaged
         * stream fails with whichever comes first, a parse error in the
         * garbage text or the stream's checksum at its end, and that
         * depends on the chunk size. Success and failure must agree. */
        int compressed = size >= 2 && ((data[0] == 0x1F && data[1] == 0x8B) ||
                                       (size >= 4 && data[0] == 0x28 && data[1] == 0xB5 &&
                                        data[2] == 0x2F && data[3] == 0xFD));
        if (compressed ? (st2 == TF_OK) != (st == TF_OK) : st2 != st) {
            char d[64];
            snprintf(d, sizeof d, "status %d with default chunks, %d with %zu-byte chunks", st,
                     st2, o.chunk_bytes);
            fuzz_broken("result depends on chunking", d);
        }
        if (st2 == TF_OK && !fuzz_csr_equal(&a, &b))
            fuzz_broken("matrix depends on chunking", NULL);
        if (st2 == TF_OK)
            tf_csr_free(&b);
        else
            fuzz_check_message(st2, FUZZ_MM_NAME);
    }
    if (st == TF_OK)
        tf_csr_free(&a);
}

FUZZ_FN void fuzz_check_plan(const tf_plan *p)
{
    fuzz_touch(p->row_off, (size_t)(p->nranks + 1) * sizeof *p->row_off);
    fuzz_touch(p->brow_off, (size_t)(p->nranks + 1) * sizeof *p->brow_off);
    fuzz_touch(p->all_stats, (size_t)p->nranks * sizeof *p->all_stats);
    const tf_stripe_table *t = &p->stripes;
    if (t->n > 0) {
        fuzz_touch(t->owner, (size_t)t->n * sizeof *t->owner);
        fuzz_touch(t->first, (size_t)t->n * sizeof *t->first);
        fuzz_touch(t->rows, (size_t)t->n * sizeof *t->rows);
        fuzz_touch(t->recipients, (size_t)t->n * sizeof *t->recipients);
        fuzz_touch(t->fetchers, (size_t)t->n * sizeof *t->fetchers);
    }
    for (int i = 0; i < p->n_parts; i++) {
        const tf_rank_plan *rp = &p->parts[i];
        if (tf_plan_validate_rank(p, rp) != TF_OK)
            fuzz_broken("a part read successfully does not validate", tf_error_message());
        if (tf_plan_rank_checksum(rp) == 0)
            fuzz_sink++; /* reads every array of the part */
    }
}

/* Plan loader on `data`, written to a fresh file in `dir` (a new inode for
 * every input: HDF5 1.10.8 can keep a damaged file open after H5Fclose, and
 * would then hand the stale open file to a later H5Fopen of the same inode). */
FUZZ_FN void fuzz_plan_one(const uint8_t *data, size_t size, const char *dir)
{
    static unsigned long serial;
    char path[512];
    snprintf(path, sizeof path, "%s/tf_fuzz_plan_%ld_%lu.h5", dir, (long)getpid(), serial++);
    FILE *f = fopen(path, "wb");
    if (!f)
        fuzz_broken("cannot create", path);
    int bad = size && fwrite(data, 1, size, f) != size;
    bad |= fclose(f) != 0; /* closed either way */
    if (bad)
        fuzz_broken("cannot write", path);
    tf_plan one, all;
    int st1 = tf_plan_read(path, 0, &one);
    if (st1 == TF_OK) {
        if (one.n_parts != 1)
            fuzz_broken("rank 0 read without exactly one part", NULL);
        fuzz_check_plan(&one);
    } else {
        fuzz_check_message(st1, path);
    }
    int st2 = tf_plan_read(path, TF_PLAN_READ_ALL, &all);
    if (st2 == TF_OK) {
        if (all.n_parts != all.nranks)
            fuzz_broken("TF_PLAN_READ_ALL did not read every part", NULL);
        fuzz_check_plan(&all);
        /* Everything read: rank 0 alone must have read as well, and the same. */
        if (st1 != TF_OK)
            fuzz_broken("rank 0 fails alone but not with every rank", tf_error_message());
        if (tf_plan_rank_checksum(&one.parts[0]) != tf_plan_rank_checksum(&all.parts[0]))
            fuzz_broken("rank 0 differs between the two reads", NULL);
        tf_plan_free(&all);
    } else {
        fuzz_check_message(st2, path);
    }
    if (st1 == TF_OK)
        tf_plan_free(&one);
    unlink(path);
}

#endif
