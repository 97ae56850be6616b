/* What the text readers of twoface-gcn say about input that is not text:
 * an HDF5 file is named as such (with the FILE.h5:/dataset hint where a
 * dataset would have been accepted), and a token quoted in a message never
 * carries raw bytes to the terminal. */
#ifndef TF_GNN_TEXT_H
#define TF_GNN_TEXT_H

#include <stddef.h>

/* 1 if the file starts with the HDF5 signature, else 0 (also when it cannot
 * be read: the reader that follows reports that). */
int tf_gnn_is_hdf5(const char *path);

/* Copies at most `max` characters of s into out (size n), each byte outside
 * printable ASCII written as \xHH. */
void tf_gnn_printable(const char *s, size_t max, char *out, size_t n);

#endif
