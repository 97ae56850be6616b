#include "tf_h5zstd.h"
#include "tf_error.h"

#include <pthread.h>
#include <stdint.h>
#include <zstd.h>

/* HDF5 reports a filter failure only as "filter returned failure"; pushing
 * our own entry first lets callers (tf_plan_io, h5dump) say what zstd
 * actually objected to. */
#define ZSTD_FILTER_ERROR(...)                                                              \
    H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_PLINE,            \
             H5E_CANTFILTER, __VA_ARGS__)

/* An HDF5 chunk is at most 4 GiB - 1 bytes, so a frame claiming more is
 * corrupt or hostile; refusing it before allocating keeps a flipped header
 * byte from turning into a multi-gigabyte malloc. */
#define MAX_CHUNK_BYTES ((unsigned long long)UINT32_MAX)

/* One compression and one decompression context for the process, reused:
 * ZSTD_compress and ZSTD_decompress would create and wipe a fresh context
 * (hundreds of KiB of tables) for every chunk, which cost more than the
 * compression itself on the small chunks of a plan with many ranks. HDF5
 * may run filters from several threads (the thread-safe build serialises
 * its API, but a plugin copy could be used without that), hence the locks.
 * The contexts live until the library is unloaded. */
static pthread_mutex_t cctx_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t dctx_lock = PTHREAD_MUTEX_INITIALIZER;
static ZSTD_CCtx *cctx;
static ZSTD_DCtx *dctx;

/* The plugin build of this file is unloaded by H5close (dlclose), which
 * would orphan its contexts: they are freed when the library is unloaded,
 * and at exit. */
__attribute__((destructor)) static void free_contexts(void)
{
    ZSTD_freeCCtx(cctx);
    ZSTD_freeDCtx(dctx);
    cctx = NULL;
    dctx = NULL;
}

static int level_of(size_t cd_nelmts, const unsigned int cd_values[])
{
    /* Other writers store negative (fast) levels as two's complement. */
    int level = cd_nelmts >= 1 ? (int)cd_values[0] : TF_H5ZSTD_DEFAULT_LEVEL;
    if (level < ZSTD_minCLevel())
        level = ZSTD_minCLevel();
    if (level > ZSTD_maxCLevel())
        level = ZSTD_maxCLevel();
    return level;
}

size_t tf_h5zstd_compress(void *dst, size_t cap, const void *src, size_t n, int level)
{
    pthread_mutex_lock(&cctx_lock);
    if (!cctx)
        cctx = ZSTD_createCCtx();
    size_t r = cctx ? ZSTD_compressCCtx(cctx, dst, cap, src, n, level)
                    : ZSTD_compress(dst, cap, src, n, level);
    pthread_mutex_unlock(&cctx_lock);
    return r;
}

static size_t zstd_compress(size_t cd_nelmts, const unsigned int cd_values[], size_t nbytes,
                            size_t *buf_size, void **buf)
{
    size_t cap = ZSTD_compressBound(nbytes);
    if (ZSTD_isError(cap)) {
        ZSTD_FILTER_ERROR("zstd: chunk of %zu bytes too large to compress", nbytes);
        return 0;
    }
    void *out = H5allocate_memory(cap, 0);
    if (!out) {
        ZSTD_FILTER_ERROR("zstd: cannot allocate %zu bytes", cap);
        return 0;
    }
    size_t r = tf_h5zstd_compress(out, cap, *buf, nbytes, level_of(cd_nelmts, cd_values));
    if (ZSTD_isError(r)) {
        ZSTD_FILTER_ERROR("zstd compression failed: %s", ZSTD_getErrorName(r));
        H5free_memory(out);
        return 0;
    }
    H5free_memory(*buf);
    *buf = out;
    *buf_size = cap;
    return r;
}

static size_t zstd_decompress(size_t nbytes, size_t *buf_size, void **buf)
{
    unsigned long long size = ZSTD_getFrameContentSize(*buf, nbytes);
    if (size == ZSTD_CONTENTSIZE_ERROR) {
        ZSTD_FILTER_ERROR("zstd: chunk is not a zstd frame (corrupted data)");
        return 0;
    }
    if (size == ZSTD_CONTENTSIZE_UNKNOWN) {
        /* ZSTD_compress always records the size; streaming writers may not,
         * and guessing an output size would mean unbounded retries. */
        ZSTD_FILTER_ERROR("zstd: frame does not record its decompressed size");
        return 0;
    }
    if (size == 0 || size > MAX_CHUNK_BYTES) {
        /* 0 cannot be returned either: HDF5 reads it as failure. */
        ZSTD_FILTER_ERROR("zstd: implausible decompressed chunk size %llu", size);
        return 0;
    }
    void *out = H5allocate_memory((size_t)size, 0);
    if (!out) {
        ZSTD_FILTER_ERROR("zstd: cannot allocate %llu bytes", size);
        return 0;
    }
    pthread_mutex_lock(&dctx_lock);
    if (!dctx)
        dctx = ZSTD_createDCtx();
    size_t r = dctx ? ZSTD_decompressDCtx(dctx, out, (size_t)size, *buf, nbytes)
                    : ZSTD_decompress(out, (size_t)size, *buf, nbytes);
    pthread_mutex_unlock(&dctx_lock);
    if (ZSTD_isError(r) || r != size) {
        ZSTD_FILTER_ERROR("zstd decompression failed: %s",
                          ZSTD_isError(r) ? ZSTD_getErrorName(r) : "size mismatch");
        H5free_memory(out);
        return 0;
    }
    H5free_memory(*buf);
    *buf = out;
    *buf_size = (size_t)size;
    return r;
}

static size_t zstd_filter(unsigned int flags, size_t cd_nelmts, const unsigned int cd_values[],
                          size_t nbytes, size_t *buf_size, void **buf)
{
    if (flags & H5Z_FLAG_REVERSE)
        return zstd_decompress(nbytes, buf_size, buf);
    return zstd_compress(cd_nelmts, cd_values, nbytes, buf_size, buf);
}

const H5Z_class2_t tf_h5zstd_class = {
    .version = H5Z_CLASS_T_VERS,
    .id = TF_H5Z_FILTER_ZSTD,
    .encoder_present = 1,
    .decoder_present = 1,
    .name = "zstd",
    .can_apply = NULL,
    .set_local = NULL,
    .filter = zstd_filter,
};

static pthread_mutex_t register_lock = PTHREAD_MUTEX_INITIALIZER;
static int registered;

int tf_h5zstd_register(void)
{
    int status = TF_OK;
    pthread_mutex_lock(&register_lock);
    /* The first call registers our own class without asking HDF5 first:
     * H5Zfilter_avail would search HDF5_PLUGIN_PATH and could load some
     * other build of the filter (or one linked against another HDF5).
     * Later calls only check that it is still there: H5close forgets every
     * registered filter. */
    if (!registered || H5Zfilter_avail(TF_H5Z_FILTER_ZSTD) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        if (H5Zregister(&tf_h5zstd_class) < 0)
            status = tf_fail(TF_ERR_HDF5, "cannot register the zstd HDF5 filter (id %d)",
                             TF_H5Z_FILTER_ZSTD);
        else
            registered = 1;
    }
    pthread_mutex_unlock(&register_lock);
    return status;
}
