/* "4,16,64" -> {4, 16, 64}: the rank lists of the bench programs. Header
 * only, because each bench program is one file compiled on its own. */
#ifndef TF_BENCH_LIST_H
#define TF_BENCH_LIST_H

#include <stdlib.h>

/* Up to max positive integers separated by commas into out; returns how
 * many, or -1 when an entry is not a positive integer. */
static inline int tf_bench_int_list(const char *s, int *out, int max)
{
    int n = 0;
    while (*s && n < max) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > (1 << 20) || (*end != ',' && *end != '\0'))
            return -1;
        out[n++] = (int)v;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

#endif
