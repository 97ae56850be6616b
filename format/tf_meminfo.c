/* The memory left on this node: tf_meminfo.h. */
#include "tf_meminfo.h"

#include "tf_error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tf_mem_available(int64_t *bytes)
{
    *bytes = -1;
    const char *s = getenv("TWOFACE_MEM_AVAILABLE_MIB");
    if (s && *s) {
        char *end = NULL;
        errno = 0;
        long long mib = strtoll(s, &end, 10);
        /* At most 2^43 MiB (8 EiB): the byte count must fit in 63 bits. */
        if (*s < '0' || *s > '9' || errno || *end || mib <= 0 || mib > (1LL << 43))
            return tf_fail(TF_ERR_ARG,
                           "TWOFACE_MEM_AVAILABLE_MIB=%s: expected a positive whole number of MiB",
                           s);
        *bytes = (int64_t)mib << 20;
        return TF_OK;
    }
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return TF_OK;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        long long kib;
        if (sscanf(line, "MemAvailable: %lld kB", &kib) == 1 && kib >= 0) {
            *bytes = (int64_t)kib << 10;
            break;
        }
    }
    fclose(f);
    return TF_OK;
}

static void fmt_bytes(int64_t b, char *buf, size_t n)
{
    double d = (double)b;
    if (d >= 1024.0 * 1024.0 * 1024.0)
        snprintf(buf, n, "%.1f GiB", d / (1024.0 * 1024.0 * 1024.0));
    else if (d >= 1024.0 * 1024.0)
        snprintf(buf, n, "%.1f MiB", d / (1024.0 * 1024.0));
    else
        snprintf(buf, n, "%lld bytes", (long long)b);
}

int tf_mem_check(int64_t need, int64_t limit)
{
    if (limit < 0 || need <= 0)
        return TF_OK;
    int64_t have = limit;
    if (limit == 0) {
        int st = tf_mem_available(&have);
        if (st != TF_OK)
            return st;
        if (have < 0)
            return TF_OK;
    }
    if (need <= have)
        return TF_OK;
    char nb[40], hb[40];
    fmt_bytes(need, nb, sizeof nb);
    fmt_bytes(have, hb, sizeof hb);
    if (limit > 0)
        return tf_fail(TF_ERR_NOMEM, "need %s, more than the limit of %s", nb, hb);
    const char *env = getenv("TWOFACE_MEM_AVAILABLE_MIB");
    if (env && *env)
        return tf_fail(TF_ERR_NOMEM, "need %s, more than the %s TWOFACE_MEM_AVAILABLE_MIB allows",
                       nb, hb);
    return tf_fail(TF_ERR_NOMEM, "need %s, more than the %s this node has available "
                   "(MemAvailable)", nb, hb);
}
