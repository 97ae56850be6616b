/* libFuzzer target: the Matrix Market reader (tf_mm_read_buffer_opt), plain,
 * zstd and gzip input. Oracles: tests/fuzz/fuzz_oracles.h. Built and run by
 * `make fuzz`; seeds in tests/fuzz/corpus_mm/. */
#include "fuzz_oracles.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fuzz_mm_max_dim(data, size) > FUZZ_MAX_DIM)
        return 0;
    fuzz_mm_one(data, size);
    return 0;
}
