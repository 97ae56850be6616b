#include "tf_mem_policy.h"

#include <stdlib.h> /* defines __GLIBC__ on glibc */
#if defined(__GLIBC__)
#include <malloc.h>
#endif

void tf_mem_policy_planner(void)
{
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD)
    /* 4 MiB: below it the heap's reuse is cheap and holes are small; 1 MiB
     * saved a little more memory and cost measurably more page faults. */
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
#if defined(TF_SIM_SHARED_HEAP)
    mallopt(M_MXFAST, 0);
#endif
#endif
}
