#include "tf_gnn_labels.h"
#include "tf_error.h"
#include "tf_gnn_rng.h"
#include "tf_gnn_text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Calls fn(text, line number, node) for the n lines of a file, with
 * surrounding blanks removed; checks there are exactly n lines. */
typedef int (*line_fn)(const char *path, int64_t line, const char *text, int64_t node,
                       void *arg);

/* A label or split line is a few bytes; a longer one is a wrong file, and
 * reading it whole (getline) would let /dev/zero or a large binary file
 * grow the buffer until the process is killed. */
#define MAX_LINE 4096

/* The next line of f without its '\n' into buf (MAX_LINE + 1 bytes): its
 * length, -1 at the end of the file, -2 when it is longer than MAX_LINE. */
static long next_line(FILE *f, char *buf)
{
    long n = 0;
    int c;
    while ((c = getc_unlocked(f)) != EOF && c != '\n') {
        if (n == MAX_LINE)
            return -2;
        buf[n++] = (char)c;
    }
    buf[n] = '\0';
    return c == EOF && n == 0 ? -1 : n;
}

static int for_each_line(const char *path, int64_t n, line_fn fn, void *arg)
{
    if (tf_gnn_is_hdf5(path))
        return tf_fail(TF_ERR_PARSE, "%s: this is an HDF5 file; expected text, one line per node",
                       path);
    FILE *f = fopen(path, "r");
    if (!f)
        return tf_fail(TF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    char buf[MAX_LINE + 1];
    long len;
    int64_t line = 0;
    int st = TF_OK;
    while (!st && (len = next_line(f, buf)) != -1) {
        line++;
        if (len == -2) {
            st = tf_fail(TF_ERR_PARSE, "%s:%lld: line longer than %d bytes (not a text file of "
                         "one value per node?)", path, (long long)line, MAX_LINE);
            break;
        }
        char *s = buf, *e = buf + len;
        while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
            *--e = '\0';
        while (*s == ' ' || *s == '\t')
            s++;
        /* Blank lines after the last node are accepted, as most readers do;
         * within the first n lines a blank line is a missing node. */
        if (line > n && !*s && (size_t)(e - s) == 0)
            continue;
        if (line > n)
            st = tf_fail(TF_ERR_PARSE, "%s:%lld: more than %lld lines, but the plan's graph has "
                         "%lld nodes", path, (long long)line, (long long)n, (long long)n);
        else if ((size_t)(e - s) != strlen(s))
            st = tf_fail(TF_ERR_PARSE, "%s:%lld: a NUL byte in the line (not a text file?)", path,
                         (long long)line);
        else if (!*s)
            st = tf_fail(TF_ERR_PARSE, "%s:%lld: blank line, but node %lld needs one", path,
                         (long long)line, (long long)line - 1);
        else
            st = fn(path, line, s, line - 1, arg);
    }
    if (!st && ferror(f))
        st = tf_fail(TF_ERR_IO, "%s:%lld: read error: %s", path, (long long)line + 1,
                     strerror(errno));
    if (!st && line > n)
        line = n; /* only trailing blank lines beyond */
    if (!st && line < n)
        st = tf_fail(TF_ERR_PARSE, "%s:%lld: the file ends after %lld lines, but the plan's graph "
                     "has %lld nodes", path, (long long)line + 1, (long long)line, (long long)n);
    fclose(f);
    return st;
}

typedef struct {
    const int32_t *map;
    tf_gnn_data *d;
    int max;
} line_ctx;

static int label_line(const char *path, int64_t line, const char *s, int64_t node, void *arg)
{
    line_ctx *c = arg;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < 0 || v >= TF_GNN_MAX_CLASSES) {
        char shown[200];
        tf_gnn_printable(s, 40, shown, sizeof shown);
        return tf_fail(TF_ERR_PARSE, "%s:%lld: expected a class 0..%d, got '%s'", path,
                       (long long)line, TF_GNN_MAX_CLASSES - 1, shown);
    }
    if (v > c->max)
        c->max = (int)v;
    if (c->map[node] >= 0)
        c->d->label[c->map[node]] = (int32_t)v;
    return TF_OK;
}

static const char *const split_words[TF_GNN_NSPLITS] = {"none", "train", "val", "test"};

static int split_line(const char *path, int64_t line, const char *s, int64_t node, void *arg)
{
    line_ctx *c = arg;
    for (int w = 0; w < TF_GNN_NSPLITS; w++)
        if (strcmp(s, split_words[w]) == 0) {
            if (c->map[node] >= 0)
                c->d->split[c->map[node]] = (int8_t)w;
            return TF_OK;
        }
    char shown[200];
    tf_gnn_printable(s, 40, shown, sizeof shown);
    return tf_fail(TF_ERR_PARSE, "%s:%lld: expected train, val, test or none, got '%s'", path,
                   (long long)line, shown);
}

static int alloc_rows(void **p, int64_t nrows, size_t size)
{
    *p = calloc((size_t)(nrows > 0 ? nrows : 1), size);
    return *p ? TF_OK : tf_fail(TF_ERR_NOMEM, "out of memory for %lld nodes", (long long)nrows);
}

int tf_gnn_labels_read(const char *path, const int32_t *map, tf_gnn_data *d)
{
    int st = alloc_rows((void **)&d->label, d->nrows, sizeof *d->label);
    line_ctx c = {map, d, -1};
    if (!st)
        st = for_each_line(path, d->n, label_line, &c);
    if (!st)
        d->classes = c.max + 1;
    return st;
}

int tf_gnn_split_read(const char *path, const int32_t *map, tf_gnn_data *d)
{
    int st = alloc_rows((void **)&d->split, d->nrows, sizeof *d->split);
    line_ctx c = {map, d, 0};
    return st ? st : for_each_line(path, d->n, split_line, &c);
}

int tf_gnn_labels_random(uint64_t seed, int classes, tf_gnn_data *d)
{
    if (classes < 2 || classes > TF_GNN_MAX_CLASSES)
        return tf_fail(TF_ERR_ARG, "--random-classes %d: expected 2..%d", classes,
                       TF_GNN_MAX_CLASSES);
    int st = alloc_rows((void **)&d->label, d->nrows, sizeof *d->label);
    if (st)
        return st;
    uint64_t key = tf_gnn_rng_key(seed, 0, TF_GNN_RNG_LABELS);
    for (int64_t i = 0; i < d->nrows; i++)
        d->label[i] = (int32_t)(tf_gnn_rng_bits(tf_gnn_rng_node(key, (uint64_t)d->ids[i]), 0) %
                                (uint64_t)classes);
    d->classes = classes;
    return TF_OK;
}

int tf_gnn_split_random(uint64_t seed, tf_gnn_data *d)
{
    int st = alloc_rows((void **)&d->split, d->nrows, sizeof *d->split);
    if (st)
        return st;
    uint64_t key = tf_gnn_rng_key(seed, 0, TF_GNN_RNG_SPLIT);
    for (int64_t i = 0; i < d->nrows; i++) {
        double u = tf_gnn_rng_u01(tf_gnn_rng_node(key, (uint64_t)d->ids[i]), 0);
        d->split[i] = u < 0.1 ? TF_GNN_TRAIN : u < 0.2 ? TF_GNN_VAL : u < 0.4 ? TF_GNN_TEST
                                                                             : TF_GNN_NONE;
    }
    return TF_OK;
}
