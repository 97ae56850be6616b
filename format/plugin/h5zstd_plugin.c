/* The zstd filter as an HDF5 plugin, so that tools outside twoface (h5dump,
 * h5ls, h5py) can read plan datasets: HDF5 dlopens every library in
 * HDF5_PLUGIN_PATH and asks it these two questions. The filter itself lives
 * in format/tf_h5zstd.c, shared with libtwoface, so both always agree. */
#include <H5PLextern.h>

#include "tf_h5zstd.h"

H5PL_type_t H5PLget_plugin_type(void) { return H5PL_TYPE_FILTER; }

const void *H5PLget_plugin_info(void) { return &tf_h5zstd_class; }
