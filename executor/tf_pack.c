/* The collective's send pack: tf_pack.h. */
#include "tf_pack.h"

#include "tf_bf16.h"

#include <string.h>

int64_t tf_pack_split(const int64_t *first, const int64_t *len, int64_t n,
                      const int64_t *xr_first, const int64_t *xr_rows, int64_t n_xr,
                      int64_t *out_first, int64_t *out_len, char *from)
{
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t f = first[i], e = first[i] + len[i];
        /* The first range that ends after f (binary search: ranges are
         * sorted and disjoint, so their ends are sorted too). */
        int64_t lo = 0, hi = n_xr;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (xr_first[mid] + xr_rows[mid] <= f)
                lo = mid + 1;
            else
                hi = mid;
        }
        while (f < e) {
            int64_t stop;
            char in;
            if (lo < n_xr && xr_first[lo] <= f) { /* inside range lo */
                in = 1;
                stop = xr_first[lo] + xr_rows[lo];
                lo++;
            } else { /* before range lo, or past every range */
                in = 0;
                stop = lo < n_xr ? xr_first[lo] : e;
            }
            if (stop > e)
                stop = e;
            if (out_first) {
                out_first[m] = f;
                out_len[m] = stop - f;
                from[m] = in;
            }
            m++;
            f = stop;
        }
    }
    return m;
}

void tf_pack_rows(int bf16, size_t es, int64_t k, const void *win, const float *b,
                  int64_t n, const int64_t *first, const int64_t *len, const char *from,
                  void *dst)
{
    const size_t rowbytes = (size_t)k * es;
    char *out = dst;
    for (int64_t s = 0; s < n; s++) {
        size_t bytes = (size_t)len[s] * rowbytes;
        if (!bf16 || (from && from[s]))
            memcpy(out, (const char *)win + (size_t)first[s] * rowbytes, bytes);
        else
            tf_bf16_pack(b + first[s] * k, (uint16_t *)(void *)out, len[s] * k);
        out += bytes;
    }
}
