/* Waiting for peers on one node without taking their processor.
 *
 * An owner on one node waits for its readers (tf_coll_shm.c,
 * tf_node_direct.c) by watching a counter they add to. Yielding in a loop
 * keeps the waiter runnable: where ranks share cores the scheduler keeps
 * giving it slices, and once the last reader adds, the waiter notices only
 * when its turn comes round - traced on cnr-2000 at P = 4 on 2 cores, an
 * owner returned 3 ms after its last reader had finished. So after a short
 * spin the waiter sleeps on a futex in the shared page, and the adder
 * wakes it: asleep it takes no slice, and a woken task is scheduled at
 * once. Where futexes do not exist (not Linux) it yields throughout.
 *
 * No lost wake-up: the waiter stores sleeping = 1, reads `wake`, then
 * re-reads count and sleeps only if wake is unchanged; an adder adds to
 * count, then reads sleeping and, if set, bumps wake and wakes. All four
 * are sequentially consistent, so either the waiter sees the new count or
 * the adder sees sleeping = 1, and a bump after the waiter read wake makes
 * the futex call return at once. A sleep is also bounded (1 ms), so a
 * peer that dies while this rank waits still leaves it polling, as
 * before. */
#include "tf_shm_wait.h"

#include <sched.h>
#include <time.h>

#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* Spin (yielding) this long before sleeping: the copying path's waits
 * for readers' copies are usually shorter. */
#define SPIN_NS 50000L

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000L + t.tv_nsec;
}

void tf_shm_counter_init(tf_shm_counter *c)
{
    atomic_init(&c->count, 0);
    atomic_init(&c->wake, 0);
    atomic_init(&c->sleeping, 0);
}

void tf_shm_counter_add(tf_shm_counter *c, int64_t n)
{
    atomic_fetch_add_explicit(&c->count, n, memory_order_seq_cst);
#ifdef __linux__
    if (atomic_load_explicit(&c->sleeping, memory_order_seq_cst)) {
        atomic_fetch_add_explicit(&c->wake, 1, memory_order_seq_cst);
        /* Shared, not FUTEX_PRIVATE: the waiter is another process. */
        syscall(SYS_futex, (uint32_t *)&c->wake, FUTEX_WAKE, 1, NULL, NULL, 0);
    }
#endif
}

void tf_shm_counter_wait(tf_shm_counter *c, int64_t goal)
{
    if (atomic_load_explicit(&c->count, memory_order_acquire) >= goal)
        return;
    const int64_t t0 = now_ns();
    while (atomic_load_explicit(&c->count, memory_order_acquire) < goal) {
#ifdef __linux__
        if (now_ns() - t0 < SPIN_NS) {
            sched_yield();
            continue;
        }
        atomic_store_explicit(&c->sleeping, 1, memory_order_seq_cst);
        uint32_t v = atomic_load_explicit(&c->wake, memory_order_seq_cst);
        if (atomic_load_explicit(&c->count, memory_order_seq_cst) < goal) {
            struct timespec cap = {0, 1000000L};
            syscall(SYS_futex, (uint32_t *)&c->wake, FUTEX_WAIT, v, &cap, NULL, 0);
        }
#else
        sched_yield();
#endif
    }
    atomic_store_explicit(&c->sleeping, 0, memory_order_relaxed);
}
