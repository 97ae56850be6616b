#include "tf_mem_trace.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double status_mib(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double v = -1;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0)
            v = atof(line + n) / 1024.0;
    if (f)
        fclose(f);
    return v;
}

void tf_mem_trace(const char *after)
{
    if (!getenv("TF_MEM_TRACE"))
        return;
    int on = 0, me = 0;
    if (MPI_Initialized(&on) == MPI_SUCCESS && on)
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
    fprintf(stderr, "tf-mem rank %d after %-16s rss %8.1f MiB  peak since last %8.1f MiB\n", me,
            after, status_mib("VmRSS:"), status_mib("VmHWM:"));
    /* "5" resets VmHWM to the current RSS (Linux >= 4.0), so the next line's
     * peak is the next phase's own. */
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}
