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

/* For allocations that follow a size a file declares rather than what it
 * holds (a size line's rows, an HDF5 'shape'): a few bytes of a file can
 * declare 2^31 rows, whose row arrays would take tens of GiB and be touched
 * before anything else could fail. TF_OK when `need` bytes fit in `limit`
 * (limit > 0), or, when limit is 0, in what tf_mem_available reports (TF_OK
 * when that is not known); limit < 0 checks nothing. Otherwise
 * TF_ERR_NOMEM, message "need 48.0 GiB, more than the 7.5 GiB this node has
 * available (MemAvailable)", for the caller to prefix with what needs it;
 * or tf_mem_available's TF_ERR_ARG. */
int tf_mem_check(int64_t need, int64_t limit);

#endif
