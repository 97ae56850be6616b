/* The distributed reader. Every phase that can fail on one rank ends in an
 * agreement (tf_agree_key) before the next collective step, so a failure
 * anywhere stops every rank at the same point with the same message.
 *
 * Text errors are keyed by their true line number. A plain file's ranks know
 * the line of their first byte from an exclusive scan of newline counts; a
 * streamed file's blocks carry it. "More entries than declared" needs the
 * global count: a first pass parses without the limit, a scan of the counts
 * finds the rank holding entry declared + 1, and that rank alone parses its
 * text again with the limit, which reports the serial reader's line. */
#include "tf_dist_read.h"
#include "tf_dist_comm.h"
#include "tf_agree.h"
#include "tf_agree_key.h"
#include "tf_agree_carry.h"
#include "tf_error.h"
#include "tf_h5csr.h"
#include "tf_meminfo.h"
#include "tf_mm_read.h"
#include "tf_node.h"
#include "tf_row_exchange.h"
#include "tf_dist_bounds.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_BLOCK ((size_t)1 << 20)
#define TAG_META 7301
#define TAG_TEXT 7302

typedef struct {
    MPI_Comm comm;
    int rank, Q;
    const char *path;
    size_t block;
    int64_t round;
    int64_t max_memory; /* tf_dist_read_options */
    int sharers;        /* ranks on this node that share its memory (max_memory 0) */
    tf_mm_header h;
} ctx;

/* The ranks on this node that share its memory (1 under an explicit limit),
 * counted once: a collective, so every rank calls it or none, also a rank
 * with a limit of its own (--max-memory may be given on some nodes only). */
static void count_sharers(ctx *c)
{
    if (!c->sharers) {
        int node = tf_node_ranks(c->comm);
        c->sharers = c->max_memory == 0 ? node : 1;
    }
}

/* The band's row arrays follow the size line's rows, not the file's bytes
 * (tf_mm_read.h), so they are checked before any entry is read. Without an
 * explicit limit, first as if every band were on this node: counting the
 * ranks that share the node is a split of the communicator (with the rest
 * of the check, about 0.2 ms of a simulated 64-rank read of a small graph),
 * needed only where the bands would not all fit. Collective. */
static int check_band(ctx *c, int64_t r0, int64_t r1)
{
    int64_t need = (r1 - r0 + 1) * TF_CSR_BUILD_ROW_BYTES;
    /* Every rank agrees, with a limit of its own or without. */
    if (tf_agree(c->comm, c->max_memory == 0 ? tf_mem_check(need * c->Q, 0)
                                             : tf_mem_check(need, c->max_memory)) == TF_OK)
        return TF_OK;
    count_sharers(c);
    int st = tf_mem_check(need * c->sharers, c->max_memory);
    if (st && c->Q > 1)
        tf_fail_prefix(st, "%s: rows %lld..%lld of a %lld x %lld matrix (%d bytes a row, %d "
                       "bands read on this node)", c->path, (long long)r0, (long long)r1 - 1,
                       (long long)c->h.m, (long long)c->h.n, TF_CSR_BUILD_ROW_BYTES,
                       c->sharers);
    else if (st)
        tf_fail_prefix(st, "%s: a %lld x %lld matrix's row arrays (%d bytes a row)", c->path,
                       (long long)c->h.m, (long long)c->h.n, TF_CSR_BUILD_ROW_BYTES);
    /* Rows are in rank order, so the lowest failing rank's band is first. */
    return tf_agree(c->comm, st);
}

static int fail_eof(const ctx *c, int64_t line, int64_t seen)
{
    return tf_fail(TF_ERR_PARSE, "%s:%lld: unexpected end of file after %lld of %lld declared entries",
                   c->path, (long long)line, (long long)seen, (long long)c->h.declared);
}

/* The rank's rows, the band [off[rank], off[rank + 1]) (off NULL: its
 * block), from entries that all belong to them (global rows). */
static int build_band(const ctx *c, int st_in, const int64_t *off, tf_coo *mine, tf_dcsr *out)
{
    int64_t r0 = 0, r1 = 0;
    int st = st_in;
    if (!st) {
        r0 = off ? off[c->rank] : tf_dcsr_block(c->h.m, c->Q, c->rank);
        r1 = off ? off[c->rank + 1] : tf_dcsr_block(c->h.m, c->Q, c->rank + 1);
        for (int64_t e = 0; e < mine->n; e++)
            mine->row[e] -= (int32_t)r0;
        mine->nrows = r1 - r0;
        mine->ncols = c->h.n;
        st = tf_csr_from_coo_take(&out->loc, mine, r0);
        if (st)
            tf_fail_prefix(st, "%s", c->path);
    }
    /* The sum of the nonzeros carries the agreement. Rows are in rank
     * order, so the lowest failing rank has the first row. */
    int64_t nnz = st ? 0 : out->loc.nnz;
    if ((st = tf_agree_allreduce(c->comm, st, &nnz, 1, MPI_INT64_T, MPI_SUM)))
        return st;
    out->m = c->h.m;
    out->n = c->h.n;
    out->row0 = r0;
    out->nrows = r1 - r0;
    out->nnz_total = nnz;
    return TF_OK;
}

/* ---- plain files: a byte range per rank ---------------------------------- */

static int read_at(const ctx *c, int fd, char *dst, size_t n, int64_t at)
{
    while (n) {
        ssize_t k = pread(fd, dst, n, (off_t)at);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return tf_fail(TF_ERR_IO, "%s: read failed at byte %lld: %s", c->path, (long long)at,
                           strerror(errno));
        if (k == 0)
            return tf_fail(TF_ERR_IO, "%s: ends at byte %lld, expected %lld bytes (did the "
                           "file change while it was read?)", c->path, (long long)at,
                           (long long)c->h.file_size);
        dst += k;
        n -= (size_t)k;
        at += k;
    }
    return TF_OK;
}

/* The first line start at or after `from` (> 0): from itself if a line ends
 * just before it, else the byte after the next newline, else the end. */
static int line_start(const ctx *c, int fd, char *buf, int64_t from, int64_t *start)
{
    int64_t S = c->h.file_size, at = from - 1;
    while (at < S) {
        size_t n = (size_t)(S - at < (int64_t)c->block ? S - at : (int64_t)c->block);
        int st = read_at(c, fd, buf, n, at);
        if (st)
            return st;
        const char *nl = memchr(buf, '\n', n);
        if (nl) {
            *start = at + (nl - buf) + 1;
            return TF_OK;
        }
        at += (int64_t)n;
    }
    *start = S;
    return TF_OK;
}

/* Parses [a, b) block by block; buf holds block + TF_MM_MAX_LINE + 1 bytes
 * (a carried partial line plus a block plus a final newline). The range's
 * first line is numbered `line`; *lines: the lines parsed (all of the
 * range's on success). */
static int parse_range(const ctx *c, int fd, char *buf, int64_t a, int64_t b, int64_t line,
                       int check, int64_t *seen, tf_coo *coo, int64_t *err_line, int64_t *lines)
{
    size_t have = 0;
    const int64_t first = line;
    *err_line = 0;
    *lines = 0;
    for (int64_t at = a; at < b || have;) {
        size_t n = (size_t)(b - at < (int64_t)c->block ? b - at : (int64_t)c->block);
        int st = read_at(c, fd, buf + have, n, at);
        if (st)
            return st;
        at += (int64_t)n;
        have += n;
        size_t lim = 0;
        if (at == b) {
            if (have && buf[have - 1] != '\n')
                buf[have++] = '\n'; /* only at the end of the file */
            lim = have;
        } else {
            for (size_t k = have; k > 0; k--)
                if (buf[k - 1] == '\n') {
                    lim = k;
                    break;
                }
        }
        if (lim == 0) {
            if (have > TF_MM_MAX_LINE) {
                *err_line = line;
                *lines = line - first + 1;
                return tf_fail(TF_ERR_PARSE, "%s:%lld: line longer than %d bytes", c->path,
                               (long long)line, TF_MM_MAX_LINE);
            }
            continue;
        }
        int64_t done = 0;
        st = tf_mm_parse_lines_counted(c->path, &c->h, buf, lim, line, check, seen, coo,
                                       err_line, &done);
        if (st) {
            /* Up to the failing line: the ranges after this one are then
             * numbered past it, so that their failures sort after it. */
            if (*err_line >= first)
                *lines = *err_line - first + 1;
            return st;
        }
        line += done;
        *lines = line - first;
        memmove(buf, buf + lim, have - lim);
        have -= lim;
    }
    return TF_OK;
}

static int read_plain(ctx *c, tf_dcsr *out)
{
    const tf_mm_header *h = &c->h;
    int64_t D = h->data_offset, S = h->file_size;
    int st = TF_OK, fd = open(c->path, O_RDONLY | O_CLOEXEC);
    char *buf = malloc(c->block + TF_MM_MAX_LINE + 2);
    int64_t *starts = malloc((size_t)(c->Q + 1) * sizeof *starts);
    int64_t *band = malloc((size_t)(c->Q + 1) * sizeof *band);
    int64_t *bins = malloc((size_t)c->Q * TF_DIST_BOUNDS_BINS * sizeof *bins);
    int64_t *all3 = malloc((size_t)c->Q * 3 * sizeof *all3);
    tf_coo coo, mine;
    memset(&coo, 0, sizeof coo);
    memset(&mine, 0, sizeof mine);
    if (fd < 0)
        st = tf_fail(TF_ERR_IO, "rank %d: %s: cannot open: %s", c->rank, c->path, strerror(errno));
    else if (!buf || !starts || !band || !bins || !all3)
        st = tf_fail(TF_ERR_NOMEM, "%s: cannot allocate a read buffer", c->path);
    /* Equal byte ranges, each moved forward to the next line start. */
    int64_t start = D;
    if (!st && c->rank > 0)
        st = line_start(c, fd, buf, D + (int64_t)((__int128)(S - D) * c->rank / c->Q), &start);
    /* The gathering of the starts carries the agreement: the lowest
     * failing rank's message, as TF_KEY_FIRST gives. */
    if ((st = tf_agree_allgather_i64(c->comm, st, &start, starts, 1)))
        goto done;
    int64_t end = c->rank + 1 < c->Q ? starts[c->rank + 1] : S;

    /* The range is parsed with its lines numbered from 1, and the true
     * number of its first line comes after, from the ranges before it:
     * counting the lines first would read every range twice. A failure's
     * message is then made again by parsing the range up to it with the
     * true numbers. A failing range counts its lines up to the failure, so
     * the ranges after it are numbered short but past it, and the first
     * failure in the file still has the smallest line. */
    int64_t lines = 0, seen = 0, err_line = 0;
    /* This range's share of the declared entries, as if spread evenly. */
    int64_t hint = S > D ? (int64_t)((__int128)h->declared * (end - start) / (S - D)) : 0;
    if (h->symmetry != TF_MM_GENERAL)
        hint *= 2;
    st = tf_coo_init_ones(&coo, h->m, h->n, hint + 16);
    if (!st)
        st = parse_range(c, fd, buf, start, end, 1, 0, &seen, &coo, &err_line, &lines);
    /* The ranges' lines and entries, and whether a range parses again, in
     * one gathering rather than an exscan and a sum of each: the lines
     * before this range and in all, and, unless a range parses again (its
     * entries may then change), the entries likewise. */
    int reparse = st && err_line > 0;
    int64_t mine3[3] = {lines, seen, reparse}, before_lines = 0, all_lines = h->data_line;
    int64_t before = 0, total = 0, again_any = 0;
    MPI_Allgather(mine3, 3, MPI_INT64_T, all3, 3, MPI_INT64_T, c->comm);
    for (int r = 0; r < c->Q; r++) {
        if (r < c->rank) {
            before_lines += all3[3 * r];
            before += all3[3 * r + 1];
        }
        all_lines += all3[3 * r];
        total += all3[3 * r + 1];
        again_any |= all3[3 * r + 2];
    }
    int64_t first_line = h->data_line + before_lines + 1;
    if (reparse) {
        int64_t again = 0, l2 = 0;
        coo.n = 0;
        seen = 0;
        st = parse_range(c, fd, buf, start, end, first_line, 0, &again, &coo, &err_line, &l2);
        if (!st)
            st = tf_fail(TF_ERR_INTERNAL, "%s: a parse failure was not found again", c->path);
    }
    if (again_any) {
        before = tf_dist_exscan_i64(c->comm, seen);
        total = tf_dist_sum_i64(c->comm, seen);
    }
    if (before <= h->declared && before + seen > h->declared) {
        /* Entry declared + 1 is here: parse again with the limit. */
        coo.n = 0;
        int64_t again = before;
        int64_t l2 = 0;
        st = parse_range(c, fd, buf, start, end, first_line, 1, &again, &coo, &err_line, &l2);
        if (!st)
            st = tf_fail(TF_ERR_INTERNAL, "%s: more entries than declared, but not found again",
                         c->path);
    }
    st = tf_agree_key(c->comm, st, st && err_line ? err_line : TF_KEY_FIRST);
    if (st)
        goto done;
    if (total < h->declared) {
        st = fail_eof(c, all_lines + 1, total);
        goto done;
    }
    free(buf);
    buf = NULL;
    /* Every entry is parsed before any moves, so the bands can follow the
     * entries: equal row blocks left the first ranks of a graph numbered
     * by degree (SNAP, R-MAT) most of the entries, and the read and the
     * preparation after it waited for them. */
    st = tf_dist_balanced_bounds(c->comm, h->m, coo.row, coo.n, bins, band);
    if (!st)
        st = tf_coo_init_ones(&mine, h->m, h->n, 0); /* the exchange sizes it */
    st = tf_agree_key(c->comm, st, TF_KEY_FIRST);
    /* Bands other than the blocks checked before the read are checked
     * again; every rank has the same bands, so all check, or none. */
    int moved = 0;
    for (int r = 0; !st && r <= c->Q; r++)
        moved |= band[r] != tf_dcsr_block(h->m, c->Q, r);
    if (moved)
        st = check_band(c, band[c->rank], band[c->rank + 1]);
    if (!st)
        st = tf_row_exchange(c->comm, h->m, band, &coo, &mine, c->round);
    /* Not agreed: the band's build carries it. */
    st = build_band(c, st, band, &mine, out);
done:
    if (coo.row)
        tf_coo_free(&coo);
    if (mine.row)
        tf_coo_free(&mine);
    free(buf);
    free(starts);
    free(band);
    free(bins);
    free(all3);
    if (fd >= 0)
        close(fd);
    return st;
}

/* ---- compressed files: rank 0 deals blocks of lines out ------------------ */

/* Rank 0's side of one round: the next Q blocks, the first kept, the others
 * sent (in pieces of at most one block, so that a receiver without room can
 * still drain them). Once the text has ended or failed, blocks are empty. */
typedef struct {
    tf_mm_stream *s;
    int ended;
    int status;       /* a decoder failure, with its line */
    int64_t err_line;
    int64_t end_line; /* the line after the last, once ended */
} dealer;

static int send_block(const ctx *c, int to, const char *t, size_t len, int64_t first)
{
    int64_t meta[2] = {(int64_t)len, first};
    MPI_Send(meta, 2, MPI_INT64_T, to, TAG_META, c->comm);
    for (size_t off = 0; off < len; off += c->block) {
        size_t n = len - off < c->block ? len - off : c->block;
        MPI_Send(t + off, (int)n, MPI_CHAR, to, TAG_TEXT, c->comm);
    }
    return TF_OK;
}

static int recv_block(const ctx *c, char **text, size_t *cap, size_t *len, int64_t *first,
                      char *scratch)
{
    int64_t meta[2];
    MPI_Recv(meta, 2, MPI_INT64_T, 0, TAG_META, c->comm, MPI_STATUS_IGNORE);
    *len = (size_t)meta[0];
    *first = meta[1];
    int st = TF_OK;
    if (*len > *cap) {
        char *t = realloc(*text, *len);
        if (t) {
            *text = t;
            *cap = *len;
        } else {
            st = tf_fail(TF_ERR_NOMEM, "rank %d: cannot hold %zu bytes of text", c->rank, *len);
        }
    }
    for (size_t off = 0; off < *len; off += c->block) {
        size_t n = *len - off < c->block ? *len - off : c->block;
        MPI_Recv(st ? scratch : *text + off, (int)n, MPI_CHAR, 0, TAG_TEXT, c->comm,
                 MPI_STATUS_IGNORE);
    }
    if (st)
        *len = 0;
    return st;
}

static int deal_round(const ctx *c, dealer *d, char **text, size_t *cap, size_t *len,
                      int64_t *first)
{
    int st = TF_OK;
    *len = 0;
    for (int k = 0; k < c->Q; k++) {
        const char *t = NULL;
        size_t n = 0;
        int64_t fl = 0;
        if (!d->ended) {
            int e = tf_mm_stream_next(d->s, &t, &n, &fl);
            if (e) {
                d->ended = 1;
                d->status = e;
                d->err_line = fl;
                n = 0;
            } else if (n == 0) {
                d->ended = 1;
                d->end_line = fl;
            }
        }
        if (k == 0) {
            if (n > *cap) {
                char *b = realloc(*text, n);
                if (!b) {
                    st = tf_fail(TF_ERR_NOMEM, "rank 0: cannot hold %zu bytes of text", n);
                    n = 0;
                } else {
                    *text = b;
                    *cap = n;
                }
            }
            if (n)
                memcpy(*text, t, n);
            *len = n;
            *first = fl;
        } else {
            send_block(c, k, t, n, fl);
        }
    }
    return st;
}

static int read_stream(const ctx *c, tf_mm_stream *s, tf_dcsr *out)
{
    const tf_mm_header *h = &c->h;
    dealer d = {.s = s};
    char *text = NULL, *scratch = malloc(c->block);
    size_t cap = 0;
    tf_coo part, mine;
    memset(&part, 0, sizeof part);
    memset(&mine, 0, sizeof mine);
    int st = scratch ? TF_OK : tf_fail(TF_ERR_NOMEM, "cannot allocate a text buffer");
    if (!st)
        st = tf_coo_init_ones(&part, h->m, h->n, 0);
    if (!st)
        st = tf_coo_init_ones(&mine, h->m, h->n, 0);
    st = tf_agree_key(c->comm, st, TF_KEY_FIRST);
    int64_t total = 0;
    for (int64_t fin[2] = {0, 0}; !st && !fin[0];) {
        size_t len = 0;
        int64_t first = 0, err_line = 0, key = TF_KEY_FIRST;
        if (c->rank == 0)
            st = deal_round(c, &d, &text, &cap, &len, &first);
        else
            st = recv_block(c, &text, &cap, &len, &first, scratch);
        if (c->rank == 0) {
            fin[0] = d.ended;
            fin[1] = d.end_line;
        }
        MPI_Bcast(fin, 2, MPI_INT64_T, 0, c->comm);
        int64_t seen = 0;
        if (!st && !part.row)
            st = tf_coo_init_ones(&part, h->m, h->n, 0); /* the exchange freed it */
        if (!st && len) {
            st = tf_mm_parse_lines(c->path, h, text, len, first, 0, &seen, &part, &err_line);
            key = err_line;
        }
        int64_t before = total + tf_dist_exscan_i64(c->comm, seen);
        total += tf_dist_sum_i64(c->comm, seen);
        if (before <= h->declared && before + seen > h->declared) {
            part.n = 0;
            int64_t again = before;
            st = tf_mm_parse_lines(c->path, h, text, len, first, 1, &again, &part, &err_line);
            if (!st)
                st = tf_fail(TF_ERR_INTERNAL, "%s: more entries than declared, but not found again",
                             c->path);
            key = err_line;
        }
        /* Rank 0's own block precedes every block it failed to decode. */
        if (!st && c->rank == 0 && d.status) {
            st = d.status;
            key = d.err_line;
        }
        st = tf_agree_key(c->comm, st, st ? key : TF_KEY_FIRST);
        if (!st)
            st = tf_row_exchange(c->comm, h->m, NULL, &part, &mine, c->round);
        if (!st && !fin[0])
            continue;
        st = tf_agree_key(c->comm, st, TF_KEY_FIRST);
        if (!st && total < h->declared)
            st = fail_eof(c, fin[1], total);
    }
    free(text);
    free(scratch);
    if (part.row)
        tf_coo_free(&part);
    if (!st)
        st = build_band(c, TF_OK, NULL, &mine, out);
    if (mine.row)
        tf_coo_free(&mine);
    return st;
}

/* ---- HDF5 CSR: a slice per rank ----------------------------------------- */

static int read_h5(ctx *c, tf_dcsr *out)
{
    int64_t m = 0, n = 0, row0 = 0, key = TF_KEY_FIRST;
    count_sharers(c);
    int st = tf_h5csr_read_part(c->path, c->Q, c->rank, c->max_memory, c->sharers, &out->loc,
                                &m, &n, &row0, &key);
    st = tf_agree_key(c->comm, st, key);
    if (st)
        return st;
    /* Each rank reads its own copy (each node its own, without a shared
     * file system): copies of other shapes cut the matrix into bands that
     * do not fit together, and the exchanges that follow would abort. */
    int64_t first[2] = {m, n};
    MPI_Bcast(first, 2, MPI_INT64_T, 0, c->comm);
    if (first[0] != m || first[1] != n)
        st = tf_fail(TF_ERR_FORMAT, "%s: rank %d's copy is %lld x %lld, rank 0's %lld x %lld: "
                     "every rank must read the same file", c->path, c->rank, (long long)m,
                     (long long)n, (long long)first[0], (long long)first[1]);
    st = tf_agree_key(c->comm, st, TF_KEY_FIRST);
    if (st) {
        tf_csr_free(&out->loc);
        return st;
    }
    out->m = m;
    out->n = n;
    out->row0 = row0;
    out->nrows = out->loc.nrows;
    out->nnz_total = tf_dist_sum_i64(c->comm, out->loc.nnz);
    return TF_OK;
}

/* ---- the entry point ---------------------------------------------------- */

int tf_dist_read_opt(MPI_Comm comm, const char *path, tf_dcsr *out,
                     const tf_dist_read_options *opt)
{
    if (!out)
        return tf_fail(TF_ERR_ARG, "tf_dist_read: no output");
    memset(out, 0, sizeof *out);
    ctx c;
    memset(&c, 0, sizeof c);
    c.comm = comm;
    c.path = path ? path : "";
    MPI_Comm_rank(comm, &c.rank);
    MPI_Comm_size(comm, &c.Q);
    c.block = opt && opt->block_bytes ? opt->block_bytes : DEFAULT_BLOCK;
    if (c.block > ((size_t)64 << 20))
        c.block = (size_t)64 << 20; /* MPI counts are int */
    c.round = opt && opt->round_entries > 0 ? opt->round_entries : ((int64_t)1 << 18) / c.Q;
    if (c.round < 1024 && !(opt && opt->round_entries > 0))
        c.round = 1024;
    c.max_memory = opt ? opt->max_memory : 0;
    c.sharers = 0; /* counted where a check needs it */
    /* Every rank opens the file, even where rank 0 alone reads it, so that
     * a file missing on some node fails the same way for every kind. */
    int is_h5 = 0, st = path ? tf_h5csr_sniff(c.path, &is_h5)
                             : tf_fail(TF_ERR_ARG, "tf_dist_read: no file name");
    if (st && c.Q > 1)
        tf_fail_prefix(st, "rank %d", c.rank);
    /* Rank 0's verdict goes with the agreement: a sum to which only it
     * adds. */
    int64_t h5 = c.rank == 0 && is_h5;
    if ((st = tf_agree_allreduce(comm, st, &h5, 1, MPI_INT64_T, MPI_SUM)))
        return st;
    is_h5 = h5 != 0;
    if (is_h5) {
        st = read_h5(&c, out);
    } else {
        tf_mm_stream *s = NULL;
        /* The header in small blocks: a plain file's stream ends here, and
         * a compressed one goes on in blocks of c.block. */
        if (c.rank == 0 && (st = tf_mm_stream_open(c.path, TF_MM_HEADER_CHUNK, &c.h, &s)) == TF_OK)
            tf_mm_stream_set_chunk(s, c.block);
        /* Only rank 0 read: its status goes with the header, in one
         * broadcast. */
        struct {
            int st;
            tf_mm_header h;
        } head;
        memset(&head, 0, sizeof head);
        head.st = st;
        head.h = c.h;
        MPI_Bcast(&head, (int)sizeof head, MPI_BYTE, 0, comm);
        st = head.st == TF_OK ? TF_OK : tf_agree_adopt(comm, 0, st);
        if (!st) {
            c.h = head.h;
            st = check_band(&c, tf_dcsr_block(c.h.m, c.Q, c.rank),
                            tf_dcsr_block(c.h.m, c.Q, c.rank + 1));
        }
        if (!st) {
            if (c.h.compression == TF_MM_PLAIN && c.h.file_size >= 0) {
                tf_mm_stream_close(s);
                s = NULL;
                st = read_plain(&c, out);
            } else {
                st = read_stream(&c, s, out);
            }
        }
        tf_mm_stream_close(s);
        if (!st)
            out->mirrored = c.h.symmetry == TF_MM_SYMMETRIC;
    }
    if (st)
        tf_dcsr_free(out);
    return st;
}

int tf_dist_read(MPI_Comm comm, const char *path, tf_dcsr *out)
{
    return tf_dist_read_opt(comm, path, out, NULL);
}
