/* Writing an output file of twoface-gcn (checkpoint, model, predictions) so
 * that a reader never sees a partial file and a job killed mid-write leaves
 * the previous file intact:
 *   - an existing symbolic link is followed (chain and all): its final target
 *     is what gets replaced;
 *   - an existing path that is not a regular file (directory, device, FIFO)
 *     is refused in one line, before anything is written;
 *   - the data goes to "TARGET.tmp.<pid>.XXXXXX" (mkstemp) in the target's
 *     own directory, is fsync'ed, then renamed over the target (atomic within
 *     one file system), and the directory is fsync'ed;
 *   - on any failure the temporary file is removed and the target is left as
 *     it was.
 * These are the rules of every twoface writer (format/tf_outpath.h), which
 * does the work; this module adapts it to writers that fill a file by name
 * (HDF5). */
#ifndef TF_GNN_OUTFILE_H
#define TF_GNN_OUTFILE_H

/* Writes the whole content to the file named tmp (which exists, empty);
 * returns a tf_status with the message recorded. */
typedef int (*tf_gnn_writer)(const char *tmp, void *arg);

/* Checks, without writing, that path could be written: not empty, not an
 * existing non-regular file (links followed), its directory exists. */
int tf_gnn_outfile_check(const char *path);

/* Runs write(tmp, arg) on a fresh temporary file next to path's target, then
 * renames it over the target. Serial: call on one rank. */
int tf_gnn_write_atomic(const char *path, tf_gnn_writer write, void *arg);

#endif
