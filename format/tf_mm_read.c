/* Matrix Market reader. See tf_mm_read.h for what is accepted.
 *
 * Layout: a byte source (file descriptor or memory) feeds an optional
 * decoder (zstd, gzip) that appends text to one buffer; the buffer is cut at
 * its last newline and the complete lines are parsed in place, the partial
 * last line being carried over to the next refill. Every line handed to the
 * parser therefore ends in '\n', which serves as the sentinel that lets the
 * hot loop scan characters without bounds checks.
 *
 * Entry lines go through a fast path that handles the common shapes (plain
 * integers, short decimals); anything it does not recognise, valid or not, is
 * re-parsed by a slow path that handles every legal form and produces the
 * error messages. Keeping diagnosis out of the fast path is what makes it
 * fast, and keeping one slow parser as the reference keeps both consistent. */
#include "tf_mm_read.h"
#include "tf_error.h"
#include "tf_meminfo.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define DEFAULT_CHUNK ((size_t)1 << 20)
#define RAW_CAP ((size_t)128 << 10)
/* For compressed input the size line cannot be checked against the file
 * size, so storage starts at most this large and grows as entries arrive. */
#define UNTRUSTED_CAP ((int64_t)1 << 20)
#define SHOW_TOKEN 40 /* longest token quoted in a message */

enum { SRC_PLAIN = TF_MM_PLAIN, SRC_GZIP = TF_MM_GZIP, SRC_ZSTD = TF_MM_ZSTD };
enum { FIELD_REAL = TF_MM_REAL, FIELD_INTEGER = TF_MM_INTEGER, FIELD_PATTERN = TF_MM_PATTERN };
enum { SYM_GENERAL = TF_MM_GENERAL, SYM_SYMMETRIC = TF_MM_SYMMETRIC, SYM_SKEW = TF_MM_SKEW };
enum { STAGE_BANNER, STAGE_SIZE, STAGE_ENTRIES };

typedef struct {
    const char *name;
    /* Raw bytes: from fd, or from mem when fd < 0. */
    int fd;
    const unsigned char *mem;
    size_t mem_len, mem_pos;
    int64_t raw_size; /* -1 when unknown (pipe) */
    int64_t raw_done;
    /* Raw bytes waiting for the decoder (also holds the magic-byte peek). */
    unsigned char *in;
    size_t in_pos, in_len;
    int in_eof;
    int kind;
    z_stream zs;
    int zs_live, gz_member_done;
    ZSTD_DStream *zd;
    size_t zret; /* last ZSTD_decompressStream hint: 0 = at a frame boundary */
    /* Text: buf[pos, end) not yet parsed; one spare byte for a sentinel. */
    char *buf;
    size_t cap, pos, end, chunk;
    size_t scan; /* buf[pos, scan) is known to hold no newline */
    int eof;
    int64_t text_done; /* text bytes discarded before buf[0] */
    int64_t line;      /* lines parsed so far */
    int header_only;   /* stop after the size line, allocate no entry storage */
    /* Progress */
    int progress, shown;
    double t_last;
} reader;

typedef struct {
    int stage, field, sym;
    int64_t nrows, ncols, declared, seen;
    tf_coo coo;
    int coo_live;
} matrix;

/* ---- messages --------------------------------------------------------- */

__attribute__((format(printf, 4, 5)))
static int fail_at(const reader *r, int64_t line, int status, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tf_fail(status, "%s:%lld: %s", r->name, (long long)line, msg);
}

static int show_len(size_t n) { return n > SHOW_TOKEN ? SHOW_TOKEN : (int)n; }

/* ---- progress ----------------------------------------------------------- */

static double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Four updates a second are enough to see movement and cost nothing; the
 * check runs once per refilled chunk, not per line. */
static void progress_update(reader *r)
{
    if (!r->progress)
        return;
    double t = now_sec();
    if (t - r->t_last < 0.25)
        return;
    r->t_last = t;
    double mb = (double)(r->text_done + (int64_t)r->end) / 1e6;
    int n;
    if (r->raw_size > 0)
        n = fprintf(stderr, "\rreading %s: %3d%% (%.1f MB of text)", r->name,
                    (int)(100.0 * (double)r->raw_done / (double)r->raw_size), mb);
    else
        n = fprintf(stderr, "\rreading %s: %.1f MB of text", r->name, mb);
    if (n > r->shown)
        r->shown = n;
}

static void progress_clear(reader *r)
{
    if (r->progress && r->shown > 0)
        fprintf(stderr, "\r%*s\r", r->shown, "");
    r->shown = 0;
}

/* ---- byte sources and decoders ----------------------------------------- */

static int raw_read(reader *r, void *dst, size_t n, size_t *got)
{
    *got = 0;
    if (r->fd < 0) {
        size_t k = r->mem_len - r->mem_pos;
        if (k > n)
            k = n;
        if (k)
            memcpy(dst, r->mem + r->mem_pos, k);
        r->mem_pos += k;
        *got = k;
    } else {
        ssize_t k;
        do
            k = read(r->fd, dst, n);
        while (k < 0 && errno == EINTR);
        if (k < 0)
            return fail_at(r, r->line + 1, TF_ERR_IO, "read failed: %s", strerror(errno));
        *got = (size_t)k;
    }
    r->raw_done += (int64_t)*got;
    return TF_OK;
}

static int refill_in(reader *r)
{
    if (r->in_pos < r->in_len || r->in_eof)
        return TF_OK;
    size_t got;
    int st = raw_read(r, r->in, RAW_CAP, &got);
    if (st)
        return st;
    r->in_pos = 0;
    r->in_len = got;
    r->in_eof = got == 0;
    return TF_OK;
}

/* Chooses the decoder from the first bytes, so that a compressed file with
 * the wrong suffix (or none, or a pipe) still reads. */
static int detect(reader *r)
{
    while (r->in_len < 6 && !r->in_eof) {
        size_t got;
        int st = raw_read(r, r->in + r->in_len, RAW_CAP - r->in_len, &got);
        if (st)
            return st;
        r->in_len += got;
        r->in_eof = got == 0;
    }
    const unsigned char *b = r->in;
    size_t n = r->in_len;
    r->kind = SRC_PLAIN;
    if (n >= 4 && b[1] == 0xB5 && b[2] == 0x2F && b[3] == 0xFD && b[0] == 0x28)
        r->kind = SRC_ZSTD;
    else if (n >= 4 && (b[0] & 0xF0) == 0x50 && b[1] == 0x2A && b[2] == 0x4D && b[3] == 0x18)
        r->kind = SRC_ZSTD; /* starts with a skippable frame */
    else if (n >= 2 && b[0] == 0x1F && b[1] == 0x8B)
        r->kind = SRC_GZIP;
    else if (n >= 6 && memcmp(b, "\xFD" "7zXZ", 5) == 0 && b[5] == 0)
        return fail_at(r, 1, TF_ERR_FORMAT,
                       "xz-compressed input is not supported (use zstd or gzip)");
    else if (n >= 4 && memcmp(b, "BZh", 3) == 0 && b[3] >= '1' && b[3] <= '9')
        return fail_at(r, 1, TF_ERR_FORMAT,
                       "bzip2-compressed input is not supported (use zstd or gzip)");

    if (r->kind == SRC_ZSTD) {
        r->zd = ZSTD_createDStream();
        if (!r->zd)
            return tf_fail(TF_ERR_NOMEM, "%s: cannot create a zstd decoder", r->name);
        r->zret = 1; /* nothing decoded yet: an empty stream is truncated */
        size_t z = ZSTD_initDStream(r->zd);
        if (ZSTD_isError(z))
            return tf_fail(TF_ERR_NOMEM, "%s: cannot initialise zstd: %s", r->name,
                           ZSTD_getErrorName(z));
    } else if (r->kind == SRC_GZIP) {
        memset(&r->zs, 0, sizeof r->zs);
        if (inflateInit2(&r->zs, 15 + 16) != Z_OK)
            return tf_fail(TF_ERR_NOMEM, "%s: cannot initialise zlib", r->name);
        r->zs_live = 1;
    }
    return TF_OK;
}

static int decode_plain(reader *r, char *dst, size_t room, size_t *got)
{
    if (r->in_pos < r->in_len) { /* the bytes peeked by detect() */
        size_t k = r->in_len - r->in_pos;
        if (k > room)
            k = room;
        memcpy(dst, r->in + r->in_pos, k);
        r->in_pos += k;
        *got = k;
        return TF_OK;
    }
    if (r->in_eof) {
        *got = 0;
        return TF_OK;
    }
    return raw_read(r, dst, room, got);
}

static int decode_zstd(reader *r, char *dst, size_t room, size_t *got)
{
    *got = 0;
    for (;;) {
        int st = refill_in(r);
        if (st)
            return st;
        ZSTD_inBuffer ib = {r->in, r->in_len, r->in_pos};
        ZSTD_outBuffer ob = {dst, room, 0};
        size_t z = ZSTD_decompressStream(r->zd, &ob, &ib);
        int moved = ob.pos > 0 || ib.pos != r->in_pos;
        r->in_pos = ib.pos;
        if (ZSTD_isError(z))
            return fail_at(r, r->line + 1, TF_ERR_IO, "corrupt zstd stream (%s)",
                           ZSTD_getErrorName(z));
        /* A call that moved nothing says nothing about the stream: at a frame
         * boundary with no input left, zstd asks for the next frame header. */
        if (moved)
            r->zret = z;
        if (ob.pos) {
            *got = ob.pos;
            return TF_OK;
        }
        /* Only a call that produced nothing with no input left proves the
         * end: zstd may hold decoded bytes back until asked again. */
        if (r->in_pos == r->in_len && r->in_eof) {
            if (r->zret != 0)
                return fail_at(r, r->line + 1, TF_ERR_IO,
                               "truncated zstd stream (input ends inside a frame)");
            return TF_OK;
        }
    }
}

static int decode_gzip(reader *r, char *dst, size_t room, size_t *got)
{
    *got = 0;
    for (;;) {
        int st = refill_in(r);
        if (st)
            return st;
        if (r->gz_member_done) {
            if (r->in_pos == r->in_len)
                return TF_OK; /* refill_in found the end: clean end of file */
            /* Concatenated members are legal gzip (gzip -c a b); anything
             * else after a member fails in inflate's header check. */
            inflateReset(&r->zs);
            r->gz_member_done = 0;
        }
        r->zs.next_in = r->in + r->in_pos;
        r->zs.avail_in = (uInt)(r->in_len - r->in_pos);
        r->zs.next_out = (unsigned char *)dst;
        r->zs.avail_out = (uInt)room;
        int ret = inflate(&r->zs, Z_NO_FLUSH);
        r->in_pos = r->in_len - r->zs.avail_in;
        size_t produced = room - r->zs.avail_out;
        if (ret == Z_STREAM_END)
            r->gz_member_done = 1;
        else if (ret == Z_MEM_ERROR)
            return tf_fail(TF_ERR_NOMEM, "%s: zlib out of memory", r->name);
        else if (ret != Z_OK && ret != Z_BUF_ERROR)
            return fail_at(r, r->line + 1, TF_ERR_IO, "corrupt gzip stream (%s)",
                           r->zs.msg ? r->zs.msg : "invalid data");
        if (produced) {
            *got = produced;
            return TF_OK;
        }
        if (!r->gz_member_done && r->in_pos == r->in_len && r->in_eof)
            return fail_at(r, r->line + 1, TF_ERR_IO,
                           "truncated gzip stream (input ends inside a member)");
    }
}

/* Moves the unparsed tail to the front and appends at least one byte of
 * text, or sets eof. */
static int fill(reader *r)
{
    size_t keep = r->end - r->pos;
    if (r->pos) {
        memmove(r->buf, r->buf + r->pos, keep);
        r->text_done += (int64_t)r->pos;
        r->pos = 0;
        r->end = keep;
    }
    size_t need = keep + r->chunk + 1;
    if (need > r->cap) {
        size_t nc = r->cap * 2 > need ? r->cap * 2 : need;
        char *nb = realloc(r->buf, nc);
        if (!nb)
            return fail_at(r, r->line + 1, TF_ERR_NOMEM, "cannot grow the line buffer to %zu bytes",
                           nc);
        r->buf = nb;
        r->cap = nc;
    }
    r->scan = r->end; /* everything before has been searched for '\n' */
    size_t got = 0;
    int st;
    switch (r->kind) {
    case SRC_ZSTD: st = decode_zstd(r, r->buf + r->end, r->chunk, &got); break;
    case SRC_GZIP: st = decode_gzip(r, r->buf + r->end, r->chunk, &got); break;
    default: st = decode_plain(r, r->buf + r->end, r->chunk, &got); break;
    }
    if (st)
        return st;
    r->end += got;
    r->eof = got == 0;
    progress_update(r);
    return TF_OK;
}

/* ---- tokens and numbers ------------------------------------------------- */

typedef struct {
    const char *s;
    size_t n;
} token;

static inline int is_ws(char c) { return c == ' ' || c == '\t' || c == '\r'; }
static inline int is_digit(char c) { return (unsigned char)(c - '0') < 10; }

/* Splits [p, e) at whitespace; stores up to max tokens, returns how many
 * there are in all (so that messages can say "found 5"). */
static int tokenize(const char *p, const char *e, token *t, int max)
{
    int n = 0;
    while (p < e) {
        while (p < e && is_ws(*p))
            p++;
        if (p == e)
            break;
        const char *s = p;
        while (p < e && !is_ws(*p))
            p++;
        if (n < max) {
            t[n].s = s;
            t[n].n = (size_t)(p - s);
        }
        n++;
    }
    return n;
}

/* ASCII-only: strncasecmp follows the locale, and in a Turkish one 'I' does
 * not lower to 'i'. */
static int tok_is(token t, const char *word)
{
    size_t n = strlen(word);
    if (t.n != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = t.s[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != word[i])
            return 0;
    }
    return 1;
}

enum { NUM_OK, NUM_SYNTAX, NUM_OVERFLOW };

/* [+-]?[0-9]+ into int64 with overflow detection. */
static int parse_int(token t, int64_t *out)
{
    const char *p = t.s, *e = t.s + t.n;
    int neg = 0;
    if (p < e && (*p == '+' || *p == '-'))
        neg = *p++ == '-';
    if (p == e)
        return NUM_SYNTAX;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    int over = 0;
    for (; p < e; p++) {
        if (!is_digit(*p))
            return NUM_SYNTAX;
        unsigned d = (unsigned)(*p - '0');
        if (v > (limit - d) / 10)
            over = 1; /* keep scanning: "12x" with many digits is still syntax */
        else
            v = v * 10 + d;
    }
    if (over)
        return NUM_OVERFLOW;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return NUM_OK;
}

/* The decimal grammar strtod accepts minus the forms we refuse (inf, nan,
 * hex): [+-]? (D+ (. D*)? | . D+) ([eE] [+-]? D+)? */
static int is_decimal(token t)
{
    const char *p = t.s, *e = t.s + t.n;
    if (p < e && (*p == '+' || *p == '-'))
        p++;
    size_t digits = 0;
    while (p < e && is_digit(*p))
        p++, digits++;
    if (p < e && *p == '.') {
        p++;
        while (p < e && is_digit(*p))
            p++, digits++;
    }
    if (!digits)
        return 0;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-'))
            p++;
        if (p == e || !is_digit(*p))
            return 0;
        while (p < e && is_digit(*p))
            p++;
    }
    return p == e;
}

/* strtod in the C locale whatever the program's setlocale(): a German
 * locale would otherwise stop "0.5" at the '.'. Created once, kept for the
 * life of the process. (strtod_l would be simpler but is a GNU extension.) */
static locale_t c_locale(void)
{
    static _Atomic(locale_t) cached;
    locale_t l = atomic_load(&cached);
    if (l)
        return l;
    locale_t fresh = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (!fresh)
        return (locale_t)0;
    locale_t expected = (locale_t)0;
    if (atomic_compare_exchange_strong(&cached, &expected, fresh))
        return fresh;
    freelocale(fresh);
    return expected;
}

/* Validated token -> double, correctly rounded. The token is followed in
 * the buffer by whitespace or '\n', so strtod stops at its end. */
static int slow_real(token t, double *out)
{
    if (!is_decimal(t))
        return NUM_SYNTAX;
    char *end;
    locale_t loc = c_locale(), old = (locale_t)0;
    if (loc)
        old = uselocale(loc); /* per thread, unlike setlocale */
    errno = 0;
    double v = strtod(t.s, &end);
    int range = errno == ERANGE;
    if (loc)
        uselocale(old);
    if (end != t.s + t.n)
        return NUM_SYNTAX;
    /* Underflow (ERANGE with a tiny result) is a legitimate tiny value. The
     * smallest double that rounds to infinity in float32 is FLT_MAX plus
     * half an ulp, 0x1.ffffffp127. */
    if ((range && fabs(v) > 1.0) || fabs(v) >= 0x1.ffffffp127)
        return NUM_OVERFLOW;
    *out = v;
    return NUM_OK;
}

static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Clinger's fast path: a mantissa below 2^53 and a power of ten up to 1e22
 * are both exact doubles, so one IEEE multiply or divide rounds correctly.
 * Returns the end of the number, or NULL to defer to strtod. The results
 * are below 1e38, so they always fit in float32. */
static inline const char *fast_real(const char *p, double *out)
{
#if FLT_EVAL_METHOD != 0
    (void)p; (void)out;
    return NULL; /* x87 extended precision would double-round */
#else
    int neg = 0;
    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    uint64_t m = 0;
    int nd = 0, e10 = 0, any = 0;
    while (*p == '0')
        p++, any = 1;
    while (is_digit(*p)) {
        if (++nd > 19)
            return NULL;
        m = m * 10 + (uint64_t)(*p++ - '0');
        any = 1;
    }
    if (*p == '.') {
        p++;
        if (m == 0)
            while (*p == '0')
                p++, e10--, any = 1;
        while (is_digit(*p)) {
            if (++nd > 19)
                return NULL;
            m = m * 10 + (uint64_t)(*p++ - '0');
            e10--;
            any = 1;
        }
    }
    if (!any)
        return NULL;
    if (*p == 'e' || *p == 'E') {
        p++;
        int eneg = 0, ex = 0;
        if (*p == '-' || *p == '+')
            eneg = *p++ == '-';
        if (!is_digit(*p))
            return NULL;
        while (is_digit(*p)) {
            if (ex < 100000)
                ex = ex * 10 + (*p - '0');
            p++;
        }
        e10 += eneg ? -ex : ex;
    }
    double v;
    if (m == 0)
        v = 0.0;
    else if (m <= ((uint64_t)1 << 53) && e10 >= -22 && e10 <= 22)
        v = e10 < 0 ? (double)m / pow10_exact[-e10] : (double)m * pow10_exact[e10];
    else
        return NULL;
    *out = neg ? -v : v;
    return p;
#endif
}

/* Up to 18 digits cannot overflow int64; longer runs go to the slow path. */
static inline const char *fast_uint(const char *p, int64_t *out)
{
    const char *s = p;
    uint64_t v = 0;
    while (is_digit(*p))
        v = v * 10 + (uint64_t)(*p++ - '0');
    if (p == s || p - s > 18)
        return NULL;
    *out = (int64_t)v;
    return p;
}

/* ---- entries ------------------------------------------------------------ */

/* Range and triangle checks, then the entry and its mirror. */
static inline int add_entry(reader *r, matrix *m, int64_t line, int64_t i, int64_t j, double v)
{
    if (i < 1 || i > m->nrows)
        return fail_at(r, line, TF_ERR_PARSE, "row index %lld out of range 1..%lld",
                       (long long)i, (long long)m->nrows);
    if (j < 1 || j > m->ncols)
        return fail_at(r, line, TF_ERR_PARSE, "column index %lld out of range 1..%lld",
                       (long long)j, (long long)m->ncols);
    if (m->sym != SYM_GENERAL) {
        if (i == j && m->sym == SYM_SKEW)
            return fail_at(r, line, TF_ERR_PARSE,
                           "diagonal entry (%lld, %lld) in a skew-symmetric matrix "
                           "(its diagonal is zero by definition)",
                           (long long)i, (long long)j);
        if (j > i)
            return fail_at(r, line, TF_ERR_PARSE,
                           "entry (%lld, %lld) is above the diagonal; a %s file stores "
                           "only the lower triangle (row >= column)",
                           (long long)i, (long long)j,
                           m->sym == SYM_SKEW ? "skew-symmetric" : "symmetric");
    }
    tf_coo *c = &m->coo;
    if (c->cap - c->n < 2 || (!c->val && (v != 1.0 || m->sym == SYM_SKEW))) {
        /* tf_coo_push grows the arrays (doubling) when they are full. */
        int st = tf_coo_push(c, (int32_t)(i - 1), (int32_t)(j - 1), v);
        if (!st && m->sym != SYM_GENERAL && i != j)
            st = tf_coo_push(c, (int32_t)(j - 1), (int32_t)(i - 1), m->sym == SYM_SKEW ? -v : v);
        if (st)
            return tf_fail_prefix(st, "%s:%lld", r->name, (long long)line);
    } else {
        int64_t n = c->n;
        c->row[n] = (int32_t)(i - 1);
        c->col[n] = (int32_t)(j - 1);
        if (c->val)
            c->val[n] = v;
        n++;
        if (m->sym != SYM_GENERAL && i != j) {
            c->row[n] = (int32_t)(j - 1);
            c->col[n] = (int32_t)(i - 1);
            if (c->val)
                c->val[n] = m->sym == SYM_SKEW ? -v : v;
            n++;
        }
        c->n = n;
    }
    m->seen++;
    return TF_OK;
}

/* Bytes that never occur in a text file; reporting them as such beats
 * "expected a number, found '\0\0\x03'". */
static int find_binary(const char *p, const char *e)
{
    for (; p < e; p++) {
        unsigned char c = (unsigned char)*p;
        if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f)
            return c;
    }
    return -1;
}

/* Comments may hold any text (UTF-8, control characters from old editors)
 * except NUL, which only binary data has. */
static int is_comment(const char *p, const char *e)
{
    while (p < e && is_ws(*p))
        p++;
    return p < e && *p == '%';
}

static int comment_ok(reader *r, const char *ls, const char *le, int64_t line)
{
    if (le - ls > TF_MM_MAX_LINE)
        return fail_at(r, line, TF_ERR_PARSE, "line longer than %d bytes", TF_MM_MAX_LINE);
    if (memchr(ls, '\0', (size_t)(le - ls)))
        return fail_at(r, line, TF_ERR_PARSE, "binary data (NUL byte) in a comment line");
    return TF_OK;
}

static const char *index_name(int k) { return k == 0 ? "row" : "column"; }

/* Any entry line the fast path did not take: parses every legal form and
 * names what is wrong with the rest. [ls, le) excludes the '\n'. */
static int slow_entry(reader *r, matrix *m, const char *ls, const char *le, int64_t line)
{
    if (le - ls > TF_MM_MAX_LINE)
        return fail_at(r, line, TF_ERR_PARSE, "line longer than %d bytes", TF_MM_MAX_LINE);
    if (is_comment(ls, le))
        return comment_ok(r, ls, le, line); /* the fast path normally takes these */
    int bad = find_binary(ls, le);
    if (bad >= 0)
        return fail_at(r, line, TF_ERR_PARSE,
                       "binary data (byte 0x%02x) where a matrix entry was expected", bad);
    token t[3];
    int n = tokenize(ls, le, t, 3);
    if (n == 0)
        return TF_OK;
    if (m->seen == m->declared)
        return fail_at(r, line, TF_ERR_PARSE, "more entries than the %lld declared in the size line",
                       (long long)m->declared);
    int want = m->field == FIELD_PATTERN ? 2 : 3;
    if (n != want)
        return fail_at(r, line, TF_ERR_PARSE, "expected %d tokens (%s), found %d", want,
                       want == 2 ? "row col" : "row col value", n);
    int64_t ij[2];
    for (int k = 0; k < 2; k++) {
        int st = parse_int(t[k], &ij[k]);
        if (st == NUM_SYNTAX)
            return fail_at(r, line, TF_ERR_PARSE, "%s index '%.*s' is not an integer",
                           index_name(k), show_len(t[k].n), t[k].s);
        if (st == NUM_OVERFLOW)
            return fail_at(r, line, TF_ERR_PARSE, "%s index '%.*s' overflows int64",
                           index_name(k), show_len(t[k].n), t[k].s);
    }
    double v = 1.0;
    if (m->field == FIELD_INTEGER) {
        int64_t iv;
        int st = parse_int(t[2], &iv);
        if (st == NUM_SYNTAX)
            return fail_at(r, line, TF_ERR_PARSE, "value '%.*s' is not %s", show_len(t[2].n),
                           t[2].s,
                           is_decimal(t[2]) ? "an integer (the field is integer)" : "a number");
        if (st == NUM_OVERFLOW)
            return fail_at(r, line, TF_ERR_RANGE, "integer value '%.*s' out of int64 range",
                           show_len(t[2].n), t[2].s);
        v = (double)iv;
    } else if (m->field == FIELD_REAL) {
        int st = slow_real(t[2], &v);
        if (st == NUM_SYNTAX)
            return fail_at(r, line, TF_ERR_PARSE, "value '%.*s' is not a number",
                           show_len(t[2].n), t[2].s);
        if (st == NUM_OVERFLOW)
            return fail_at(r, line, TF_ERR_RANGE,
                           "value '%.*s' out of range (float32 holds at most %g)",
                           show_len(t[2].n), t[2].s, (double)FLT_MAX);
    }
    return add_entry(r, m, line, ij[0], ij[1], v);
}

/* ---- header ------------------------------------------------------------- */

/* For format strings, hence the doubled percent signs. */
#define BANNER "%%%%MatrixMarket matrix coordinate <field> <symmetry>"

/* At most 64 bytes of s, those outside printable ASCII as \xHH. */
static void printable(const char *s, size_t len, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < len && i < 64 && o + 5 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f)
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
    }
    out[o] = '\0';
}

static int banner_line(reader *r, matrix *m, const char *ls, const char *le)
{
    if (le - ls >= 3 && memcmp(ls, "\xEF\xBB\xBF", 3) == 0)
        ls += 3; /* UTF-8 BOM from Windows editors */
    if (le - ls > TF_MM_MAX_LINE)
        return fail_at(r, 1, TF_ERR_PARSE, "line longer than %d bytes", TF_MM_MAX_LINE);
    /* The HDF5 signature's first line: a plan or a dense file given as a
     * matrix, said in words rather than shown as bytes. */
    if (le - ls >= 4 && memcmp(ls, "\x89HDF", 4) == 0)
        return fail_at(r, 1, TF_ERR_PARSE, "this is an HDF5 file, not a Matrix Market file");
    int bad = find_binary(ls, le);
    if (bad >= 0)
        return fail_at(r, 1, TF_ERR_PARSE,
                       "binary data (byte 0x%02x), expected the banner '" BANNER "'", bad);
    token t[6];
    int n = tokenize(ls, le, t, 6);
    if (n == 0 || !tok_is(t[0], "%%matrixmarket")) {
        char shown[4 * 64 + 1];
        printable(n ? t[0].s : "", n ? (size_t)(le - t[0].s) : 0, shown, sizeof shown);
        return fail_at(r, 1, TF_ERR_PARSE, "expected the banner '" BANNER "', found '%s'",
                       shown);
    }
    if (n != 5)
        return fail_at(r, 1, TF_ERR_PARSE, "banner has %d words, expected 5: '" BANNER "'", n);
    if (!tok_is(t[1], "matrix"))
        return fail_at(r, 1, TF_ERR_FORMAT, "object '%.*s' not supported (only 'matrix')",
                       show_len(t[1].n), t[1].s);
    if (tok_is(t[2], "array"))
        return fail_at(r, 1, TF_ERR_FORMAT,
                       "format 'array' (dense) not supported, only 'coordinate'");
    if (!tok_is(t[2], "coordinate"))
        return fail_at(r, 1, TF_ERR_PARSE, "unknown format '%.*s', expected 'coordinate'",
                       show_len(t[2].n), t[2].s);
    if (tok_is(t[3], "real"))
        m->field = FIELD_REAL;
    else if (tok_is(t[3], "integer"))
        m->field = FIELD_INTEGER;
    else if (tok_is(t[3], "pattern"))
        m->field = FIELD_PATTERN;
    else if (tok_is(t[3], "complex"))
        return fail_at(r, 1, TF_ERR_FORMAT,
                       "field 'complex' not supported (real, integer or pattern)");
    else
        return fail_at(r, 1, TF_ERR_PARSE,
                       "unknown field '%.*s', expected real, integer or pattern",
                       show_len(t[3].n), t[3].s);
    if (tok_is(t[4], "general"))
        m->sym = SYM_GENERAL;
    else if (tok_is(t[4], "symmetric"))
        m->sym = SYM_SYMMETRIC;
    else if (tok_is(t[4], "skew-symmetric"))
        m->sym = SYM_SKEW;
    else if (tok_is(t[4], "hermitian"))
        return fail_at(r, 1, TF_ERR_FORMAT,
                       "symmetry 'hermitian' not supported (general, symmetric or skew-symmetric)");
    else
        return fail_at(r, 1, TF_ERR_PARSE,
                       "unknown symmetry '%.*s', expected general, symmetric or skew-symmetric",
                       show_len(t[4].n), t[4].s);
    m->stage = STAGE_SIZE;
    return TF_OK;
}

static int size_line(reader *r, matrix *m, const tf_mm_read_options *opt, const char *ls,
                     const char *le, int64_t line)
{
    static const char *const what[3] = {"number of rows", "number of columns",
                                        "number of entries"};
    if (le - ls > TF_MM_MAX_LINE)
        return fail_at(r, line, TF_ERR_PARSE, "line longer than %d bytes", TF_MM_MAX_LINE);
    if (is_comment(ls, le))
        return comment_ok(r, ls, le, line); /* comments may precede the size line */
    int bad = find_binary(ls, le);
    if (bad >= 0)
        return fail_at(r, line, TF_ERR_PARSE,
                       "binary data (byte 0x%02x), expected the size line 'rows cols entries'",
                       bad);
    token t[3];
    int n = tokenize(ls, le, t, 3);
    if (n == 0)
        return TF_OK; /* and blank lines */
    if (n != 3)
        return fail_at(r, line, TF_ERR_PARSE,
                       "expected the size line 'rows cols entries', found %d token%s", n,
                       n == 1 ? "" : "s");
    int64_t v[3];
    for (int k = 0; k < 3; k++) {
        int st = parse_int(t[k], &v[k]);
        if (st == NUM_SYNTAX)
            return fail_at(r, line, TF_ERR_PARSE,
                           "%s '%.*s' is not an integer (size line 'rows cols entries')",
                           what[k], show_len(t[k].n), t[k].s);
        if (st == NUM_OVERFLOW)
            return fail_at(r, line, TF_ERR_RANGE, "%s '%.*s' overflows int64", what[k],
                           show_len(t[k].n), t[k].s);
        if (v[k] < 0)
            return fail_at(r, line, TF_ERR_PARSE, "%s %lld is negative", what[k],
                           (long long)v[k]);
        if (k < 2 && v[k] > TF_MAX_DIM)
            return fail_at(r, line, TF_ERR_RANGE,
                           "dimension %lld (%s) exceeds %d: column indices are 32-bit",
                           (long long)v[k], what[k], TF_MAX_DIM);
    }
    m->nrows = v[0];
    m->ncols = v[1];
    m->declared = v[2];
    if (m->sym != SYM_GENERAL && m->nrows != m->ncols)
        return fail_at(r, line, TF_ERR_PARSE, "a %s matrix must be square, size line says %lld x %lld",
                       m->sym == SYM_SKEW ? "skew-symmetric" : "symmetric",
                       (long long)m->nrows, (long long)m->ncols);
    /* Both dimensions are below 2^31, so these products fit in int64. */
    int64_t most = m->nrows * m->ncols;
    const char *part = "";
    if (m->sym == SYM_SYMMETRIC) {
        most = m->nrows * (m->nrows + 1) / 2;
        part = " in its lower triangle";
    } else if (m->sym == SYM_SKEW) {
        most = m->nrows * (m->nrows - 1) / 2;
        part = " strictly below the diagonal";
    }
    if (m->declared > most)
        return fail_at(r, line, TF_ERR_PARSE,
                       "%lld entries declared, but a %lld x %lld matrix has only %lld positions%s",
                       (long long)m->declared, (long long)m->nrows, (long long)m->ncols,
                       (long long)most, part);
    if (opt->max_entries > 0 && m->declared > opt->max_entries)
        return fail_at(r, line, TF_ERR_RANGE, "%lld entries declared, more than the limit of %lld",
                       (long long)m->declared, (long long)opt->max_entries);
    int trusted = 0; /* is the declared count bounded by bytes actually present? */
    if (opt->max_entries == 0 && r->kind == SRC_PLAIN && r->raw_size >= 0) {
        int64_t after = r->text_done + (int64_t)(le + 1 - r->buf);
        int64_t rem = r->raw_size - after;
        if (rem < 0)
            rem = 0;
        /* "1 1\n" is the shortest entry line; the last may lack its '\n'.
         * (A real entry needs 6 bytes, but the looser bound lets a file
         * with a short line be blamed on that line, not on its size.) */
        int64_t fit = (rem + 1) / 4;
        if (m->declared > fit)
            return fail_at(r, line, TF_ERR_PARSE,
                           "%lld entries declared, but the %lld bytes after the size line "
                           "can hold at most %lld",
                           (long long)m->declared, (long long)rem, (long long)fit);
        trusted = 1;
    }
    if (r->header_only) {
        m->stage = STAGE_ENTRIES;
        return TF_OK;
    }
    int st = tf_mem_check((m->nrows + 1) * TF_CSR_BUILD_ROW_BYTES, opt->max_memory);
    if (st)
        return tf_fail_prefix(st, "%s:%lld: a %lld x %lld matrix's row arrays (%d bytes a row)",
                              r->name, (long long)line, (long long)m->nrows,
                              (long long)m->ncols, TF_CSR_BUILD_ROW_BYTES);
    int64_t cap = m->sym == SYM_GENERAL ? m->declared : 2 * m->declared;
    if (!trusted && cap > UNTRUSTED_CAP)
        cap = UNTRUSTED_CAP;
    st = tf_coo_init_ones(&m->coo, m->nrows, m->ncols, cap);
    if (st)
        return tf_fail_prefix(st, "%s:%lld", r->name, (long long)line);
    m->coo_live = 1;
    m->stage = STAGE_ENTRIES;
    return TF_OK;
}

/* ---- the line loop ------------------------------------------------------ */

/* Parses the complete lines in [p, lim); lim[-1] is '\n'. *stop is where
 * parsing stopped: lim, the start of the failing line, or (header_only) the
 * first byte after the size line. */
static int parse_lines(reader *r, matrix *m, const tf_mm_read_options *opt, const char *p,
                       const char *lim, const char **stop)
{
    int64_t line = r->line;
    int st = TF_OK;
    while (p < lim) {
        const char *ls = p;
        line++;
        if (m->stage == STAGE_ENTRIES) {
            while (is_ws(*p))
                p++;
            if (is_digit(*p) && m->seen < m->declared) {
                int64_t i, j;
                double v = 1.0;
                const char *q = fast_uint(p, &i);
                if (!q || !is_ws(*q))
                    goto slow;
                while (is_ws(*q))
                    q++;
                q = fast_uint(q, &j);
                if (!q)
                    goto slow;
                if (m->field != FIELD_PATTERN) {
                    if (!is_ws(*q))
                        goto slow;
                    while (is_ws(*q))
                        q++;
                    if (m->field == FIELD_REAL) {
                        q = fast_real(q, &v);
                    } else {
                        int neg = *q == '-';
                        int64_t iv;
                        q = fast_uint(q + (neg || *q == '+'), &iv);
                        v = neg ? -(double)iv : (double)iv;
                    }
                    if (!q)
                        goto slow;
                }
                while (is_ws(*q))
                    q++;
                if (*q != '\n' || q - ls > TF_MM_MAX_LINE)
                    goto slow;
                st = add_entry(r, m, line, i, j, v);
                if (st)
                    break;
                p = q + 1;
                continue;
            }
            if (*p == '\n') {
                p++;
                continue;
            }
            if (*p == '%') {
                const char *nl = memchr(p, '\n', (size_t)(lim - p));
                st = comment_ok(r, ls, nl, line);
                if (st)
                    break;
                p = nl + 1;
                continue;
            }
        slow:;
            const char *nl = memchr(ls, '\n', (size_t)(lim - ls));
            st = slow_entry(r, m, ls, nl, line);
            if (st)
                break;
            p = nl + 1;
        } else {
            const char *nl = memchr(ls, '\n', (size_t)(lim - ls));
            if (m->stage == STAGE_BANNER)
                st = banner_line(r, m, ls, nl);
            else
                st = size_line(r, m, opt, ls, nl, line);
            if (st)
                break;
            p = nl + 1;
            if (m->stage == STAGE_ENTRIES && r->header_only)
                break;
        }
    }
    r->line = line;
    *stop = p;
    return st;
}

/* memrchr is a GNU extension; the scan is short anyway, since it starts at
 * the end of the chunk and stops at the first newline it meets. */
static const char *last_newline(const char *s, const char *e)
{
    while (e > s)
        if (*--e == '\n')
            return e;
    return NULL;
}

/* The block size of the reader's fills (0: the default). */
static void reader_set_chunk(reader *r, size_t chunk_bytes)
{
    r->chunk = chunk_bytes ? chunk_bytes : DEFAULT_CHUNK;
    if (r->chunk > ((size_t)64 << 20))
        r->chunk = (size_t)64 << 20; /* zlib counts output room in 32 bits */
}

/* Sets up buffers and the decoder; the first step of every use of a reader. */
static int reader_start(reader *r, const tf_mm_read_options *opt)
{
    reader_set_chunk(r, opt->chunk_bytes);
    r->in = malloc(RAW_CAP);
    if (!r->in)
        return tf_fail(TF_ERR_NOMEM, "%s: cannot allocate read buffers", r->name);
    r->progress = opt->progress < 0 ? isatty(2) : opt->progress != 0;
    /* When forced on (logs, tests) show the first update at once; on a
     * terminal wait a moment so that small files never flash a line. */
    r->t_last = opt->progress < 0 ? now_sec() : 0.0;
    return detect(r);
}

/* The next run of complete lines, buf[*s, *lim), each ending in '\n' (a last
 * line without one gets it); *s == *lim at the end of the text. The caller
 * sets r->pos to where it stopped consuming. */
static int next_lines(reader *r, char **s, char **lim)
{
    for (;;) {
        if (!r->eof) {
            int st = fill(r);
            if (st)
                return st;
        }
        char *b = r->buf + r->pos, *e = r->buf + r->end;
        *s = b;
        if (r->eof) {
            if (b != e && e[-1] != '\n') /* last line without newline: fill left a spare byte */
                *e++ = '\n', r->end++;
            *lim = e;
            return TF_OK;
        }
        /* Only the new bytes: rescanning a long partial line on every refill
         * would be quadratic with small chunks. */
        const char *nl = last_newline(r->buf + (r->scan > r->pos ? r->scan : r->pos), e);
        if (nl) {
            *lim = (char *)nl + 1;
            return TF_OK;
        }
        if (e - b > TF_MM_MAX_LINE)
            return fail_at(r, r->line + 1, TF_ERR_PARSE, "line longer than %d bytes",
                           TF_MM_MAX_LINE);
    }
}

/* Runs the line loop until the text ends (or, header_only, the size line
 * has been read), then reports a text that ended too early. */
static int parse_all(reader *r, matrix *m, const tf_mm_read_options *opt)
{
    int st = TF_OK;
    for (;;) {
        char *s, *lim;
        const char *stop;
        st = next_lines(r, &s, &lim);
        if (st || s == lim)
            break;
        st = parse_lines(r, m, opt, s, lim, &stop);
        r->pos = (size_t)(stop - r->buf);
        if (st || (r->header_only && m->stage == STAGE_ENTRIES))
            break;
    }
    if (!st) {
        int64_t at = r->line + 1;
        if (m->stage == STAGE_BANNER)
            st = fail_at(r, 1, TF_ERR_PARSE, "empty file, expected the banner '" BANNER "'");
        else if (m->stage == STAGE_SIZE)
            st = fail_at(r, at, TF_ERR_PARSE,
                         "unexpected end of file, expected the size line 'rows cols entries'");
        else if (m->seen < m->declared && !r->header_only)
            st = fail_at(r, at, TF_ERR_PARSE,
                         "unexpected end of file after %lld of %lld declared entries",
                         (long long)m->seen, (long long)m->declared);
    }
    return st;
}

static int run(reader *r, tf_csr *out, const tf_mm_read_options *opt)
{
    matrix m;
    memset(&m, 0, sizeof m);
    int st = reader_start(r, opt);
    if (!st)
        st = parse_all(r, &m, opt);
    if (!st) {
        st = tf_csr_from_coo_take(out, &m.coo, 0);
        if (st)
            tf_fail_prefix(st, "%s", r->name);
    }
    progress_clear(r);
    if (m.coo_live)
        tf_coo_free(&m.coo);
    return st;
}

static void reader_close(reader *r)
{
    if (r->zd)
        ZSTD_freeDStream(r->zd);
    if (r->zs_live)
        inflateEnd(&r->zs);
    free(r->in);
    free(r->buf);
    if (r->fd >= 0)
        close(r->fd);
}

static const tf_mm_read_options defaults = TF_MM_READ_OPTIONS_INIT;

int tf_mm_read(const char *path, tf_csr *out, const tf_mm_read_options *opt)
{
    if (!out)
        return tf_fail(TF_ERR_ARG, "tf_mm_read: no output matrix");
    memset(out, 0, sizeof *out);
    if (!path)
        return tf_fail(TF_ERR_ARG, "tf_mm_read: no file name");
    reader r;
    memset(&r, 0, sizeof r);
    r.name = path;
    r.raw_size = -1;
    r.fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r.fd < 0)
        return tf_fail(TF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(r.fd, &sb) == 0 && S_ISREG(sb.st_mode))
        r.raw_size = (int64_t)sb.st_size;
    int st = run(&r, out, opt ? opt : &defaults);
    reader_close(&r);
    if (st)
        tf_csr_free(out);
    return st;
}

int tf_mm_read_buffer_opt(const char *name, const char *data, size_t len, tf_csr *out,
                          const tf_mm_read_options *opt)
{
    if (!out)
        return tf_fail(TF_ERR_ARG, "tf_mm_read_buffer: no output matrix");
    memset(out, 0, sizeof *out);
    if (!data && len)
        return tf_fail(TF_ERR_ARG, "tf_mm_read_buffer: no data");
    reader r;
    memset(&r, 0, sizeof r);
    r.name = name ? name : "<buffer>";
    r.fd = -1;
    r.mem = (const unsigned char *)data;
    r.mem_len = len;
    r.raw_size = (int64_t)len;
    int st = run(&r, out, opt ? opt : &defaults);
    reader_close(&r);
    if (st)
        tf_csr_free(out);
    return st;
}

int tf_mm_read_buffer(const char *name, const char *data, size_t len, tf_csr *out)
{
    tf_mm_read_options opt = TF_MM_READ_OPTIONS_INIT;
    opt.progress = 0;
    return tf_mm_read_buffer_opt(name, data, len, out, &opt);
}

/* ---- the pieces, for readers that split the work ------------------------ */

struct tf_mm_stream {
    reader r;
    matrix m;
};

void tf_mm_stream_close(tf_mm_stream *s)
{
    if (!s)
        return;
    reader_close(&s->r);
    free(s);
}

int tf_mm_stream_open(const char *path, size_t chunk_bytes, tf_mm_header *h, tf_mm_stream **out)
{
    if (!h || !out || !path)
        return tf_fail(TF_ERR_ARG, "tf_mm_stream_open: missing argument");
    *out = NULL;
    memset(h, 0, sizeof *h);
    tf_mm_stream *s = calloc(1, sizeof *s);
    if (!s)
        return tf_fail(TF_ERR_NOMEM, "%s: cannot allocate a reader", path);
    reader *r = &s->r;
    r->name = path;
    r->raw_size = -1;
    r->header_only = 1;
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        int st = tf_fail(TF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        free(s);
        return st;
    }
    struct stat sb;
    if (fstat(r->fd, &sb) == 0 && S_ISREG(sb.st_mode))
        r->raw_size = (int64_t)sb.st_size;
    tf_mm_read_options opt = TF_MM_READ_OPTIONS_INIT;
    opt.progress = 0;
    opt.chunk_bytes = chunk_bytes;
    int st = reader_start(r, &opt);
    if (!st)
        st = parse_all(r, &s->m, &opt);
    if (st) {
        tf_mm_stream_close(s);
        return st;
    }
    h->m = s->m.nrows;
    h->n = s->m.ncols;
    h->declared = s->m.declared;
    h->field = s->m.field;
    h->symmetry = s->m.sym;
    h->compression = r->kind;
    h->file_size = r->raw_size;
    h->data_offset = r->text_done + (int64_t)r->pos;
    if (r->raw_size >= 0 && h->data_offset > r->raw_size)
        h->data_offset = r->raw_size; /* the size line was the last, unterminated */
    h->data_line = r->line;
    *out = s;
    return TF_OK;
}

void tf_mm_stream_set_chunk(tf_mm_stream *s, size_t chunk_bytes)
{
    if (s)
        reader_set_chunk(&s->r, chunk_bytes);
}

int tf_mm_read_header(const char *path, tf_mm_header *h)
{
    tf_mm_stream *s;
    int st = tf_mm_stream_open(path, TF_MM_HEADER_CHUNK, h, &s);
    tf_mm_stream_close(s);
    return st;
}

int tf_mm_stream_next(tf_mm_stream *s, const char **text, size_t *len, int64_t *first_line)
{
    reader *r = &s->r;
    char *b, *lim;
    *text = NULL;
    *len = 0;
    *first_line = r->line + 1;
    /* Whole lines already decoded (the header's read leaves some) go out
     * before the decoder is asked for more: the serial reader parses them
     * before it refills, so a damaged stream must fail after them, at the
     * line the serial reader reaches, and an earlier bad line must win. */
    const char *nl = r->pos < r->end ? last_newline(r->buf + r->pos, r->buf + r->end) : NULL;
    int st = TF_OK;
    if (nl) {
        b = r->buf + r->pos;
        lim = (char *)nl + 1;
    } else {
        st = next_lines(r, &b, &lim);
    }
    if (st)
        return st;
    /* The lines are the caller's to parse; count them here so that the next
     * block's first line, and any decoder error, carry true line numbers. */
    for (const char *p = b; (p = memchr(p, '\n', (size_t)(lim - p))) != NULL; p++)
        r->line++;
    r->pos = (size_t)(lim - r->buf);
    *text = b;
    *len = (size_t)(lim - b);
    return TF_OK;
}

int tf_mm_parse_lines(const char *name, const tf_mm_header *h, const char *text, size_t len,
                      int64_t first_line, int check_declared, int64_t *seen, tf_coo *coo,
                      int64_t *err_line)
{
    int64_t lines;
    return tf_mm_parse_lines_counted(name, h, text, len, first_line, check_declared, seen, coo,
                                     err_line, &lines);
}

int tf_mm_parse_lines_counted(const char *name, const tf_mm_header *h, const char *text,
                              size_t len, int64_t first_line, int check_declared, int64_t *seen,
                              tf_coo *coo, int64_t *err_line, int64_t *lines)
{
    *err_line = 0;
    *lines = 0;
    if (len && text[len - 1] != '\n')
        return tf_fail(TF_ERR_ARG, "tf_mm_parse_lines: %s:%lld: text does not end in a newline",
                       name, (long long)first_line);
    reader r;
    memset(&r, 0, sizeof r);
    r.name = name;
    r.fd = -1;
    r.line = first_line - 1;
    matrix m;
    memset(&m, 0, sizeof m);
    m.stage = STAGE_ENTRIES;
    m.field = h->field;
    m.sym = h->symmetry;
    m.nrows = h->m;
    m.ncols = h->n;
    m.declared = check_declared ? h->declared : INT64_MAX;
    m.seen = *seen;
    m.coo = *coo;
    m.coo_live = 1;
    const char *stop;
    int st = len ? parse_lines(&r, &m, &defaults, text, text + len, &stop) : TF_OK;
    *coo = m.coo;
    *seen = m.seen;
    if (st)
        *err_line = r.line;
    else
        *lines = r.line - (first_line - 1);
    return st;
}
