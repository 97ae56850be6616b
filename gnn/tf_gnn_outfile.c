#include "tf_gnn_outfile.h"
#include "tf_outpath.h"

int tf_gnn_outfile_check(const char *path) { return tf_outpath_check(path); }

int tf_gnn_write_atomic(const char *path, tf_gnn_writer write, void *arg)
{
    tf_outpath o;
    int st = tf_outpath_open(&o, path);
    if (st)
        return st;
    /* The writer opens the temporary file by name (HDF5 does); the commit's
     * fsync through our descriptor covers what it wrote. */
    if ((st = write(o.tmp, arg)) != 0) {
        tf_outpath_abort(&o);
        return st;
    }
    return tf_outpath_commit(&o);
}
