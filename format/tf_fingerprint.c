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

uint64_t tf_fingerprint_salt(const char *normalization)
{
    if (!normalization || strcmp(normalization, "none") == 0)
        return 0;
    uint64_t h = tf_mix64(0x6e6f726dULL); /* "norm" */
    size_t len = strlen(normalization);
    for (size_t i = 0; i < len; i++)
        h = tf_mix64(h ^ (uint64_t)(unsigned char)normalization[i]);
    return tf_mix64(h ^ (uint64_t)len);
}
