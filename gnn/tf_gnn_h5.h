/* The few HDF5 calls of twoface-gcn's own files (checkpoint, saved model):
 * scalar attributes on the root group and uncompressed double datasets, so
 * that plain h5dump reads every file without the plan's zstd plugin. Each
 * returns a tf_status; messages name the file and the object. HDF5's own
 * error stack printing is off while these run (quiet() in tf_gnn_h5.c). */
#ifndef TF_GNN_H5_H
#define TF_GNN_H5_H

#include <hdf5.h>
#include <stdint.h>

typedef struct {
    hid_t file;
    const char *path; /* for messages */
    H5E_auto2_t func; /* HDF5's error printing, restored by close */
    void *data;
} tf_gnn_h5;

/* Creates (truncates) path, with checksummed metadata (latest format). */
int tf_gnn_h5_create(tf_gnn_h5 *f, const char *path);
int tf_gnn_h5_open(tf_gnn_h5 *f, const char *path);
/* Closes; a failure to close a created file is a write failure. */
int tf_gnn_h5_close(tf_gnn_h5 *f);

int tf_gnn_h5_put_i64(tf_gnn_h5 *f, const char *name, int64_t v);
int tf_gnn_h5_put_u64(tf_gnn_h5 *f, const char *name, uint64_t v);
int tf_gnn_h5_put_f64(tf_gnn_h5 *f, const char *name, double v);
int tf_gnn_h5_put_str(tf_gnn_h5 *f, const char *name, const char *s);
/* A dataset of rows x cols doubles (cols 0: one dimension of rows). */
int tf_gnn_h5_put_data(tf_gnn_h5 *f, const char *name, const double *v, int64_t rows,
                       int64_t cols);

int tf_gnn_h5_get_i64(tf_gnn_h5 *f, const char *name, int64_t *v);
int tf_gnn_h5_get_u64(tf_gnn_h5 *f, const char *name, uint64_t *v);
int tf_gnn_h5_get_f64(tf_gnn_h5 *f, const char *name, double *v);
/* Reads a string attribute into s (n bytes, truncated). */
int tf_gnn_h5_get_str(tf_gnn_h5 *f, const char *name, char *s, size_t n);
/* Number of values of a dataset (-1, with a message, if it is missing). */
int64_t tf_gnn_h5_data_len(tf_gnn_h5 *f, const char *name);
/* Reads a one-dimensional dataset of exactly n doubles into v. */
int tf_gnn_h5_get_data(tf_gnn_h5 *f, const char *name, double *v, int64_t n);

#endif
