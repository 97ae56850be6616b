/* Compressed sparse row matrix, the in-memory form of A everywhere.
 *
 * Row pointers are 64-bit (nnz can pass 2^31 on real graphs); column indices
 * are 32-bit, which bounds both dimensions by TF_MAX_DIM. Values are float32
 * because B and C are float32 and the kernels multiply in float; the reader
 * sums duplicates in double before rounding once. */
#ifndef TF_CSR_H
#define TF_CSR_H

#include <stdint.h>

#define TF_MAX_DIM INT32_MAX

/* Bytes per row that building a CSR from entries (tf_csr_from_coo) holds
 * at its peak, whatever the entries: row pointers, per-row counts and
 * insertion positions, 8 bytes each. Readers check a file's declared rows
 * against it before they read any entry (tf_mem_check, tf_meminfo.h). */
#define TF_CSR_BUILD_ROW_BYTES 24

typedef struct {
    int64_t nrows;
    int64_t ncols;
    int64_t nnz;
    int64_t *rowptr; /* nrows + 1 */
    int32_t *col;    /* nnz, sorted and unique within a row */
    float *val;      /* nnz */
} tf_csr;

/* Coordinate triplets as read from a file, before sorting. */
typedef struct {
    int64_t nrows;
    int64_t ncols;
    int64_t n;   /* entries stored */
    int64_t cap; /* entries allocated */
    int32_t *row;
    int32_t *col;
    double *val; /* NULL: every value is 1 (tf_coo_init_ones) */
} tf_coo;

int tf_coo_init(tf_coo *coo, int64_t nrows, int64_t ncols, int64_t cap_hint);
/* Without values until one differs from 1: a pattern matrix (most graphs)
 * then holds 8 bytes an entry instead of 16 until it is a CSR. */
int tf_coo_init_ones(tf_coo *coo, int64_t nrows, int64_t ncols, int64_t cap_hint);
/* Gives a tf_coo_init_ones matrix its values array (all 1), if it has none. */
int tf_coo_values(tf_coo *coo);
int tf_coo_push(tf_coo *coo, int32_t r, int32_t c, double v);
void tf_coo_free(tf_coo *coo);

/* Sorts by (row, col), sums duplicates, converts values to float. Fails with
 * TF_ERR_RANGE if a summed value does not fit in float32. */
int tf_csr_from_coo(tf_csr *out, const tf_coo *coo);

/* The same for a band of rows whose first is global row row_base (coo rows
 * are relative to it): only the messages name global rows. */
int tf_csr_from_coo_rows(tf_csr *out, const tf_coo *coo, int64_t row_base);

/* The same, consuming *coo: its arrays are freed as the build stops needing
 * them (so the triplets and the whole CSR are never held together), and
 * *coo is zeroed on return, whether or not the build succeeded. */
int tf_csr_from_coo_take(tf_csr *out, tf_coo *coo, int64_t row_base);

/* Allocates an nrows x ncols matrix with room for nnz entries (rowptr zeroed). */
int tf_csr_alloc(tf_csr *m, int64_t nrows, int64_t ncols, int64_t nnz);
void tf_csr_free(tf_csr *m);

/* Checks the structural invariants (monotone rowptr, columns in range, sorted
 * and unique per row). Returns TF_OK or TF_ERR_FORMAT with a message. */
int tf_csr_validate(const tf_csr *m);

#endif
