/* Matrix Market reader: `coordinate` files, plain or zstd/gzip compressed,
 * into a tf_csr.
 *
 * Input is untrusted (downloaded graphs, fuzzers), so every malformed file
 * ends in a status from tf_error.h and a one-line message of the form
 * "FILE:LINE: what was expected, what was found"; nothing in a file can make
 * the reader crash or leak, and the entry storage never grows beyond what the
 * file can hold. One allocation does follow the declared dimensions: the CSR
 * row pointers (8 bytes per row), so a 70-byte file declaring 2^31 - 1 rows
 * costs 16 GiB; twoface-plan estimates that before reading and refuses it
 * (--max-memory, docs/reliability.md). Callers of this function who read
 * untrusted files should bound the dimensions the same way.
 *
 * What is accepted, and why where it is a choice:
 *   - banner `%%MatrixMarket matrix coordinate FIELD SYMMETRY`, keywords in
 *     any case (writers disagree on case; the standard's own examples mix it);
 *   - FIELD real, integer or pattern (pattern entries get the value 1);
 *     complex and the `array` format are rejected: SpMM here is real-valued
 *     and dense inputs do not belong in a sparse pipeline;
 *   - SYMMETRY general, symmetric, skew-symmetric, always expanded to the full
 *     matrix, because every consumer (partitioner, kernels) wants both
 *     triangles. Hermitian is rejected along with complex.
 *   - symmetric files must store the lower triangle (row >= col), as the
 *     standard says and as every shared graph does. An entry above the
 *     diagonal is an error rather than silently mirrored: a file that is
 *     labelled symmetric but stores both triangles would otherwise come out
 *     with every value doubled (pattern graphs with weights of 2) and no
 *     warning. Skew-symmetric files must store the strict lower triangle.
 *   - duplicate entries are summed (in double, rounded to float once);
 *   - CRLF line endings, blank lines and `%` comment lines anywhere after the
 *     banner, spaces and tabs around and between tokens, a UTF-8 BOM.
 *   - compression is recognised by magic bytes, not by the file name, so a
 *     renamed or mislabelled file still reads.
 * Values must be finite and fit in float32 (the matrix is stored in float32);
 * `nan`/`inf` text and overflow are errors, not silently stored. Decimal
 * values are converted with correct rounding (as strtod in the C locale), so
 * the result does not depend on the caller's setlocale(). Integer-field
 * values must be whole numbers within the int64 range. */
#ifndef TF_MM_READ_H
#define TF_MM_READ_H

#include <stddef.h>
#include <stdint.h>

#include "tf_csr.h"

/* A single text line may not be longer than this. Real files have lines of a
 * few dozen bytes; the cap bounds the carry-over buffer when a file has no
 * newlines at all (binary data, a wrong file). */
#define TF_MM_MAX_LINE (1 << 20)

typedef struct {
    /* Progress on stderr while reading: -1 only when stderr is a terminal (so
     * that logs and CI output are never littered with \r updates), 0 never,
     * 1 always. Updates are rate-limited and the line is erased at the end. */
    int progress;
    /* Upper bound on the entry count a size line may declare; a larger count
     * fails with TF_ERR_RANGE before anything is allocated. 0 means: for a
     * plain file of known size, the most entries its remaining bytes could
     * hold (so a lying size line cannot trigger a huge allocation); for
     * compressed input no bound, but then storage starts small and grows only
     * as entries actually arrive. */
    int64_t max_entries;
    /* Bytes of text decoded per refill; 0 means 1 MiB. Exists so tests and
     * fuzzers can use tiny chunks and put a chunk boundary inside every token
     * of a small input, which is where buffered parsers break. */
    size_t chunk_bytes;
} tf_mm_read_options;

/* Defaults: progress auto, no explicit entry cap, 1 MiB chunks. (A zeroed
 * struct is the same except that progress is off.) */
#define TF_MM_READ_OPTIONS_INIT {-1, 0, 0}

/* Reads the Matrix Market file at `path` (plain, .zst or .gz by content)
 * into `out`. `opt` may be NULL for the defaults. Returns TF_OK, or
 * TF_ERR_IO (cannot open/read, corrupt or truncated compressed data),
 * TF_ERR_PARSE (malformed text), TF_ERR_FORMAT (a well-formed but unsupported
 * kind: array, complex, hermitian), TF_ERR_RANGE (sizes or values that do
 * not fit), TF_ERR_NOMEM. On failure `out` is left zeroed: nothing to free. */
int tf_mm_read(const char *path, tf_csr *out, const tf_mm_read_options *opt);

/* The same, from bytes in memory (which may themselves be zstd or gzip
 * compressed). `name` is used only in error messages. For fuzz targets and
 * for callers that already hold the file; uses the default options with
 * progress off. */
int tf_mm_read_buffer(const char *name, const char *data, size_t len, tf_csr *out);

/* tf_mm_read_buffer with options (progress counts bytes of `data`). */
int tf_mm_read_buffer_opt(const char *name, const char *data, size_t len, tf_csr *out,
                          const tf_mm_read_options *opt);

#endif
