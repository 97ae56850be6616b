/* How much memory this node has left for new allocations: the baselines'
 * whole copies of B and C check against it before they allocate, so that a
 * run that would not fit fails in one line instead of being ended by the
 * kernel's out-of-memory killer (docs/baselines.md, "Memory"). */
#ifndef TF_MEMINFO_H
#define TF_MEMINFO_H

#include <stdint.h>

/* *bytes = TWOFACE_MEM_AVAILABLE_MIB MiB when that variable is set (a job
 * held below its node's memory, by a cgroup for instance, which
 * /proc/meminfo does not show), else Linux's MemAvailable, else -1 (not
 * known: no check). TF_ERR_ARG, with a message, when the variable is not a
 * positive whole number of MiB. */
int tf_mem_available(int64_t *bytes);

#endif
