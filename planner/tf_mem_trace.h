/* Where the planner's memory goes: with TF_MEM_TRACE set in the environment,
 * tf_mem_trace prints one line per call to stderr with this rank's resident
 * memory now and its peak since the previous call, then starts a new peak.
 * Without it, nothing happens. docs/planning.md, "Where the memory goes",
 * uses it; the per-phase peak resets VmHWM, so the --json peak of a traced
 * run is the last phase's, not the run's. */
#ifndef TF_MEM_TRACE_H
#define TF_MEM_TRACE_H

/* after: what just ended ("read", "analyse", ...). Not collective. */
void tf_mem_trace(const char *after);

#endif
