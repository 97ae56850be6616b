#include "tf_fingerprint.h"
#include "tf_dense.h"

#include <string.h>

uint64_t tf_row_hash(int64_t row, const int32_t *cols, const float *vals, int64_t len)
{
    uint64_t h = tf_mix64((uint64_t)row + 1);
    for (int64_t e = 0; e < len; e++) {
        uint32_t bits;
        memcpy(&bits, &vals[e], sizeof bits);
        h = tf_mix64(h ^ ((uint64_t)cols[e] + 1));
        h = tf_mix64(h ^ (uint64_t)bits);
    }
    return tf_mix64(h ^ (uint64_t)len);
}

uint64_t tf_fingerprint_rows(const int64_t *rowptr, const int32_t *col, const float *val,
                             int64_t row_begin, int64_t nrows)
{
    uint64_t sum = 0;
    for (int64_t r = 0; r < nrows; r++)
        sum += tf_row_hash(row_begin + r, col + rowptr[r], val + rowptr[r],
                           rowptr[r + 1] - rowptr[r]);
    return sum;
}
