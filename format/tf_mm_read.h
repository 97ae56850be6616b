/* Matrix Market reader: `coordinate` files, plain or zstd/gzip compressed,
 * into a tf_csr.
 *
 * Input is untrusted (downloaded graphs, fuzzers), so every malformed file
 * ends in a status from tf_error.h and a one-line message of the form
 * "FILE:LINE: what was expected, what was found"; nothing in a file can make
 * the reader crash or leak, and the entry storage never grows beyond what the
 * file can hold. The row arrays do follow the declared number of rows, not
 * the file's bytes (a valid 70-byte file may declare an empty matrix of 2^31
 * - 1 rows, whose row arrays take 48 GiB): so the size line's rows must fit,
 * at TF_CSR_BUILD_ROW_BYTES each, in the memory the node has available
 * (tf_mem_check, tf_meminfo.h: MemAvailable, or TWOFACE_MEM_AVAILABLE_MIB),
 * or in max_memory below; otherwise the size line fails with TF_ERR_NOMEM
 * before anything is allocated. A valid matrix whose rows fit keeps
 * reading as before; one whose row arrays alone exceed the node's memory
 * could not have been read anyway.
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
    /* Bytes the row arrays of the declared rows may take (see above): 0
     * means what the node has available (tf_mem_available), -1 no bound
     * (a caller that has checked the size line itself), > 0 that many. */
    int64_t max_memory;
} tf_mm_read_options;

/* Defaults: progress auto, no explicit entry cap, 1 MiB chunks, rows
 * bounded by the node's available memory. (A zeroed struct is the same
 * except that progress is off.) */
#define TF_MM_READ_OPTIONS_INIT {-1, 0, 0, 0}

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

/* ---- The pieces, for readers that split the work (planner/tf_dist_read.c) */

enum { TF_MM_REAL, TF_MM_INTEGER, TF_MM_PATTERN };    /* field */
enum { TF_MM_GENERAL, TF_MM_SYMMETRIC, TF_MM_SKEW };  /* symmetry */
enum { TF_MM_PLAIN, TF_MM_GZIP, TF_MM_ZSTD };         /* compression, by magic bytes */

/* What the banner and size line say, and where the entries start. */
typedef struct {
    int64_t m, n, declared; /* size line: rows, columns, entries */
    int field, symmetry, compression;
    int64_t file_size;   /* bytes in the file, -1 when not a regular file */
    /* Plain files: the byte offset of the first byte after the size line
     * (its '\n' included), which is where entry lines start; for compressed
     * files the same offset counted in decompressed text. */
    int64_t data_offset;
    /* Lines up to and including the size line: the first line after it is
     * line data_line + 1. */
    int64_t data_line;
} tf_mm_header;

/* Reads and checks the banner and size line of the file at `path` with the
 * messages and limits of tf_mm_read (so a size line declaring more entries
 * than a plain file's bytes can hold fails here). */
int tf_mm_read_header(const char *path, tf_mm_header *h);

/* The text of a file, decompressed if need be, in blocks of complete lines:
 * open reads the header, then each next returns the following lines (each
 * ending in '\n'; a last line without one gets it), valid until the next
 * call, and the true line number of the first; *len == 0 at the end.
 * chunk_bytes as in tf_mm_read_options (0: 1 MiB). Decoder errors (corrupt
 * or truncated streams) carry the line number where they happened. */
typedef struct tf_mm_stream tf_mm_stream;
int tf_mm_stream_open(const char *path, size_t chunk_bytes, tf_mm_header *h, tf_mm_stream **s);
int tf_mm_stream_next(tf_mm_stream *s, const char **text, size_t *len, int64_t *first_line);
/* Blocks for reading a header: enough for a banner, comments and the size
 * line, without a 1 MiB buffer filled with entries nobody parses (the
 * distributed read's rank 0 does it alone while the others wait). */
#define TF_MM_HEADER_CHUNK ((size_t)64 << 10)
/* The block size of the next calls (0: 1 MiB): a stream opened with small
 * blocks to read the header alone goes on in large ones. */
void tf_mm_stream_set_chunk(tf_mm_stream *s, size_t chunk_bytes);
void tf_mm_stream_close(tf_mm_stream *s);

/* Parses `len` bytes of entry lines (comments and blank lines allowed; the
 * last byte must be '\n') whose first line is line `first_line` of file
 * `name`, with the rules of tf_mm_read: entries are appended to `coo` (which
 * tf_coo_init made; 0-based global indices, symmetric and skew entries
 * mirrored, values in double) and *seen counts entry lines. With
 * check_declared, an entry line met when *seen == h->declared fails as
 * "more entries than the N declared". On failure the message is
 * "name:LINE: ..." and *err_line is that LINE; entries before it stay
 * appended. */
int tf_mm_parse_lines(const char *name, const tf_mm_header *h, const char *text, size_t len,
                      int64_t first_line, int check_declared, int64_t *seen, tf_coo *coo,
                      int64_t *err_line);
/* The same, and on success *lines = the lines of text parsed (its
 * newlines), which the parser counts anyway: a caller numbering the lines of
 * the next block need not scan this one again. */
int tf_mm_parse_lines_counted(const char *name, const tf_mm_header *h, const char *text,
                              size_t len, int64_t first_line, int check_declared, int64_t *seen,
                              tf_coo *coo, int64_t *err_line, int64_t *lines);

#endif
