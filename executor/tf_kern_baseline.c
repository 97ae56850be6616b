/* The kernels for any CPU of the architecture (on x86-64: SSE2). */
#define TF_VW 4
#define TF_KERN_OPS tf_kern_ops_baseline
#define TF_KERN_NAME "baseline"
#include "tf_kern_loops.h"
