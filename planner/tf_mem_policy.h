/* The allocator's policy for a planning process.
 *
 * Why: the planner allocates and frees arrays of tens of MiB again and
 * again (each candidate plan's parts, their compressed chunks, A's band
 * moving between ranks). glibc serves such an array from its own mapping
 * only until the first is freed; from then on its threshold rises and
 * arrays come from the heap, where the ones freed leave holes that the
 * next sizes do not fit, and the resident memory grows by the holes
 * (docs/planning.md, "Where the memory goes"). A fixed threshold keeps
 * every array of 4 MiB and more in its own mapping, given back when
 * freed. */
#ifndef TF_MEM_POLICY_H
#define TF_MEM_POLICY_H

/* Call once at the start of the process, before the big allocations. A C
 * library without mallopt is left as it is. */
void tf_mem_policy_planner(void);

#endif
