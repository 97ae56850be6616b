/* The zstd HDF5 filter (registered filter id 32015, cd_values[0] = level).
 *
 * The same code serves two users: libtwoface registers it in-process before
 * writing or reading a plan, and format/plugin/h5zstd_plugin.c wraps it as a
 * dynamically loaded plugin so that h5dump, h5ls and h5py can read plans
 * (HDF5_PLUGIN_PATH=build/hdf5-plugins). Debian ships no zstd filter, and the
 * id is the one registered with The HDF Group, so files are readable by any
 * other zstd plugin (hdf5plugin, HDF5-UDF ...) and vice versa. */
#ifndef TF_H5ZSTD_H
#define TF_H5ZSTD_H

#include <hdf5.h>

#define TF_H5Z_FILTER_ZSTD 32015

/* Level used when a dataset's cd_values carry none. */
#define TF_H5ZSTD_DEFAULT_LEVEL 3

/* The filter class, for H5Zregister and H5PLget_plugin_info. */
extern const H5Z_class2_t tf_h5zstd_class;

/* The filter's compression step on its own: one zstd frame of src[n] in
 * dst[cap] (cap >= ZSTD_compressBound(n)), recording its size, exactly as
 * the filter writes a chunk. For writers that filter chunks themselves and
 * hand them to H5Dwrite_chunk. Returns the frame size, or a zstd error code
 * (ZSTD_isError). Thread-safe. */
size_t tf_h5zstd_compress(void *dst, size_t cap, const void *src, size_t n, int level);

/* Makes this filter available in this process (in preference to any plugin
 * in HDF5_PLUGIN_PATH). Idempotent, safe to call from several threads, and
 * cheap after the first call; registers again if HDF5 was closed and
 * reopened (H5close forgets filters). Returns TF_OK or TF_ERR_HDF5 with a
 * message. */
int tf_h5zstd_register(void);

#endif
