/* libFuzzer target: the plan loader (tf_plan_read of rank 0 and of every
 * rank) on the input bytes written to a temporary file. Oracles:
 * tests/fuzz/fuzz_oracles.h. Built and run by `make fuzz`; seeds (small real
 * plans) in tests/fuzz/corpus_plan/. */
#include "fuzz_oracles.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Each input goes to its own file, removed after the reads (libFuzzer
     * ends with _Exit, so nothing may be left for an exit handler). */
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    fuzz_plan_one(data, size, tmp);
    return 0;
}
