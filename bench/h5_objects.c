/* What a plan file's objects cost HDF5 (docs/plan-format.md, "Who runs the
 * filters: the writer"): ND datasets of NC chunks of C int32 each, created in
 * an in-memory file (core driver) with Fletcher-32 and filled by
 * H5Dwrite_chunk, as the plan writer does; prints the CPU time, and on a
 * second line what the library's start-up (H5open) and the file's creation
 * (H5Fcreate, included in the first line) took, which a fresh process pays
 * once: run it as a new process per measurement (docs/scale.md, "Planning at
 * scale": the write's part that does not depend on the plan).
 *
 *   cc -O2 -o h5_objects bench/h5_objects.c $(pkg-config --cflags --libs hdf5-serial)
 *   ./h5_objects 42 64 1000      one dataset per array kind, a chunk per part
 *   ./h5_objects 2688 1 1000     a dataset per array per part (64 x 42)
 *   ./h5_objects 0 1 1           an empty file
 *   ./h5_objects ND NC C v110    the same with H5Pset_libver_bounds(V110, LATEST)
 * H5_OBJECTS_INCREMENT_KIB: the core driver's increment (default 4096). */
#include <hdf5.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s DATASETS CHUNKS CHUNK_LEN [v110]\n", argv[0]);
        return 2;
    }
    int nd = atoi(argv[1]), nc = atoi(argv[2]), c = atoi(argv[3]), v110 = argc > 4;
    if (nd < 0 || nc < 1 || c < 1) {
        fprintf(stderr, "%s: DATASETS >= 0, CHUNKS and CHUNK_LEN positive\n", argv[0]);
        return 2;
    }
    double t_open = cpu_s();
    if (H5open() < 0)
        return 1;
    t_open = cpu_s() - t_open;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    /* The core driver's increment, zero-filled as the file grows: the plan
     * writer sizes it from the parts (about 768 KiB for pubmed at P = 64). */
    const char *inc_env = getenv("H5_OBJECTS_INCREMENT_KIB");
    size_t inc = (size_t)(inc_env && atoi(inc_env) > 0 ? atoi(inc_env) : 4096) << 10;
    if (fapl < 0 || H5Pset_fapl_core(fapl, inc, 0) < 0 ||
        H5Pset_libver_bounds(fapl, v110 ? H5F_LIBVER_V110 : H5F_LIBVER_V18, H5F_LIBVER_LATEST) < 0)
        return 1;
    /* A chunk's stored bytes: the data and its Fletcher-32 (contents do not
     * matter to HDF5's bookkeeping). */
    unsigned char *buf = calloc((size_t)c * 4 + 4, 1);
    if (!buf)
        return 1;
    double t0 = cpu_s();
    hid_t f = H5Fcreate("h5_objects.image", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (f < 0)
        return 1;
    double t_create = cpu_s() - t0;
    for (int d = 0; d < nd; d++) {
        char name[32];
        snprintf(name, sizeof name, "d%d", d);
        hsize_t dims = (hsize_t)nc * (hsize_t)c, ch = (hsize_t)c;
        hid_t sp = H5Screate_simple(1, &dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
        if (sp < 0 || dcpl < 0 || H5Pset_chunk(dcpl, 1, &ch) < 0 ||
            H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0 || H5Pset_fletcher32(dcpl) < 0 ||
            H5Pset_obj_track_times(dcpl, 0) < 0)
            return 1;
        hid_t ds = H5Dcreate2(f, name, H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        if (ds < 0)
            return 1;
        for (int k = 0; k < nc; k++) {
            hsize_t off = (hsize_t)k * (hsize_t)c;
            if (H5Dwrite_chunk(ds, H5P_DEFAULT, 0, &off, (size_t)c * 4 + 4, buf) < 0)
                return 1;
        }
        H5Dclose(ds);
        H5Pclose(dcpl);
        H5Sclose(sp);
    }
    double t1 = cpu_s();
    if (H5Fclose(f) < 0)
        return 1;
    double t2 = cpu_s();
    printf("%d datasets x %d chunks of %d (%s): %.2f ms creating and writing, %.2f ms closing\n",
           nd, nc, c, v110 ? "v110" : "v18", (t1 - t0) * 1e3, (t2 - t1) * 1e3);
    printf("H5open %.2f ms, H5Fcreate %.2f ms\n", t_open * 1e3, t_create * 1e3);
    H5Pclose(fapl);
    free(buf);
    return 0;
}
