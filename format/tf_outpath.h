/* Output files: where every twoface writer puts what it writes (plans, SVG
 * pictures, calibration files, C matrices, and any later writer such as
 * training checkpoints or models).
 *
 * The rules (docs/reliability.md, "Output paths"):
 *   - an existing symbolic link is followed, chain and all: its final target
 *     is what gets replaced, and a dangling link's target is created;
 *   - an existing path that is not a regular file (device, FIFO, directory,
 *     socket) is refused before any work starts, in one line:
 *       "FILE: not a regular file (character device); twoface writes only
 *        regular files";
 *   - the data goes to a temporary file with a unique name
 *     ("TARGET.tmp.<pid>.XXXXXX", mkstemp) in the target's own directory,
 *     so concurrent writers never share it and the final rename never
 *     crosses file systems;
 *   - the rename only ever replaces a regular file (or creates the target):
 *     if the target became something else meanwhile, the write fails and the
 *     temporary file is removed.
 *
 * How a writer uses it:
 *
 *     tf_outpath o;
 *     int st = tf_outpath_open(&o, path);     // checks, creates o.tmp (o.fd)
 *     if (st) return st;
 *     FILE *f = tf_outpath_stream(&o);         // optional: stdio over o.fd
 *     ... write to o.fd, f, or o.tmp by name (HDF5) ...
 *     if (failed) { tf_outpath_abort(&o); return st; }
 *     return tf_outpath_commit(&o);            // flush, fsync, rename, fsync dir
 *
 * After open, exactly one of commit or abort must be called; both release
 * everything, and commit removes the temporary file itself when it fails.
 * Programs call tf_outpath_check on each output path while parsing their
 * command line, so that a bad path is reported before minutes of work. */
#ifndef TF_OUTPATH_H
#define TF_OUTPATH_H

#include <limits.h>
#include <stdio.h>

typedef struct {
    char path[PATH_MAX];        /* as given: messages name it */
    char target[PATH_MAX];      /* what will be replaced: path with links followed */
    char tmp[PATH_MAX + 32];    /* the temporary file, in target's directory */
    int fd;                     /* open on tmp for writing; -1 once a stream owns it */
    FILE *stream;               /* set by tf_outpath_stream */
} tf_outpath;

/* Checks, without touching anything, that `path` can be written: not empty,
 * not an existing non-regular file (after following links), its directory
 * exists and is writable. TF_OK, or TF_ERR_ARG / TF_ERR_IO with a one-line
 * message naming the path. */
int tf_outpath_check(const char *path);

/* Refuses an output path that names the same file as `other`: a file the
 * run reads, or another of its outputs. Replacing an input would destroy
 * it (the run may even read it after the write), and two outputs on one
 * path keep only the last. Links are followed: the same existing file
 * (device and inode), or, where neither exists yet, the same directory
 * entry. TF_OK when they differ or `other` is NULL; else TF_ERR_ARG with a
 * one-line message naming both options:
 *   "--predictions lab.txt: the same file as --labels lab.txt; an output
 *    must not replace an input or another output" */
int tf_outpath_distinct(const char *out_opt, const char *out, const char *other_opt,
                        const char *other);

/* tf_outpath_check, then creates the temporary file (mode 0666 less the
 * umask, as a plain creation would give). On failure nothing is left and
 * `o` needs no commit or abort. */
int tf_outpath_open(tf_outpath *o, const char *path);

/* A stdio stream over the temporary file (made once; the same stream on
 * every call). NULL, with a message recorded, if fdopen fails. */
FILE *tf_outpath_stream(tf_outpath *o);

/* Flushes and checks the stream (if any), fsyncs and closes the file,
 * checks that the target is still absent or a regular file, renames the
 * temporary file over it and fsyncs the directory. On failure the temporary
 * file is removed and the target is left as it was. */
int tf_outpath_commit(tf_outpath *o);

/* Closes and removes the temporary file; the target is left as it was. */
void tf_outpath_abort(tf_outpath *o);

#endif
