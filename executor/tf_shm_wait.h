/* A counter in shared memory that one process waits on and others add to,
 * waited for asleep (docs/executor.md, "One node: B read in place", its paragraph
 * on waiting). */
#ifndef TF_SHM_WAIT_H
#define TF_SHM_WAIT_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct {
    _Atomic int64_t count;
    _Atomic uint32_t wake;     /* bumped to wake a sleeping waiter (a futex word) */
    _Atomic uint32_t sleeping; /* the waiter may be asleep on `wake` */
} tf_shm_counter;

/* Zero, by the process that owns the memory, before anyone else uses it. */
void tf_shm_counter_init(tf_shm_counter *c);
/* count += n with release order, then wakes the waiter if it sleeps. */
void tf_shm_counter_add(tf_shm_counter *c, int64_t n);
/* Returns once count >= goal (acquire order): yields for the first
 * microseconds, then sleeps until an adder wakes it. One waiter per
 * counter. */
void tf_shm_counter_wait(tf_shm_counter *c, int64_t goal);

#endif
