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
