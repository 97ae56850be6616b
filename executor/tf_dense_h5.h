/* Dense float32 matrices in HDF5 files, for the executor's B input and C
 * output: one 2-D dataset (rows x K, row-major), read by row ranges so that
 * every rank reads only the rows it needs (serial HDF5, file opened
 * read-only by every rank). */
#ifndef TF_DENSE_H5_H
#define TF_DENSE_H5_H

#include <mpi.h>
#include <stdint.h>

/* Shape of dataset `dset` (e.g. "/B"): fails unless it exists, is 2-D and is
 * a 32-bit float type. */
int tf_dense_h5_shape(const char *path, const char *dset, int64_t *rows, int64_t *cols);

/* Rows [row_begin, row_begin + nrows) of an (any x k) dataset into out
 * (nrows x k). Checks the shape again (k columns, enough rows). */
int tf_dense_h5_read_rows(const char *path, const char *dset, int64_t row_begin, int64_t nrows,
                          int64_t k, float *out);

/* Rows rows[0..n) (ascending, distinct) into out (n x k): nearby rows are
 * read together, one hyperslab per group. */
int tf_dense_h5_read_row_set(const char *path, const char *dset, const int32_t *rows, int64_t n,
                             int64_t k, float *out);

/* Writes a whole rows x k matrix to a new file (serial; tests and tools). */
int tf_dense_h5_write(const char *path, const char *dset, int64_t rows, int64_t k,
                      const float *data);

/* Collective: every rank contributes its rows [row_begin, row_begin + nrows)
 * of an m x k matrix, written to dataset `dset` of a new file `path` in
 * global row order. Rank 0 makes a temporary file with tf_outpath (links
 * followed, anything but a regular file refused), the ranks write into it one
 * after the other, and rank 0 renames it over the target only when all
 * succeeded (removed otherwise). All ranks return the same status and
 * message. */
int tf_dense_h5_write_dist(MPI_Comm comm, const char *path, const char *dset, int64_t m,
                           int64_t k, int64_t row_begin, int64_t nrows, const float *c);

#endif
