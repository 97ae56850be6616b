/* What a fresh process pays HDF5 to write a small file the way the plan
 * writer does (format/tf_plan_write.c: the core driver, the 1.8 format
 * bound, chunked datasets with shuffle and Fletcher-32), before any of the
 * plan's own data: the fixed part of rank 0's write in docs/scale.md,
 * "Planning at scale". The plan's zstd filter is left out (it would need
 * the plugin); its cost per chunk is in the encoding, which every rank does
 * for its own parts.
 *
 *   cc -O2 -std=c11 $(pkg-config --cflags hdf5-serial) -o h5_floor bench/h5_floor.c \
 *      $(pkg-config --libs hdf5-serial)
 *   ./h5_floor DATASETS [INCREMENT_KIB]     one line of milliseconds
 *
 * Run it as a new process each time: the point is the cold cost (the
 * library's start-up, its code and metadata cache touched for the first
 * time), which a second file in the same process no longer pays. */
#define _POSIX_C_SOURCE 200809L
#include <hdf5.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s DATASETS [INCREMENT_KIB]\n", argv[0]);
        return 2;
    }
    int nd = atoi(argv[1]);
    size_t inc = (size_t)(argc > 2 ? atoi(argv[2]) : 64) << 10;
    if (nd < 0 || inc == 0) {
        fprintf(stderr, "%s: DATASETS >= 0 and INCREMENT_KIB > 0\n", argv[0]);
        return 2;
    }
    static long long buf[4096];
    for (int i = 0; i < 4096; i++)
        buf[i] = (long long)i * 2654435761LL;
    double t0 = now();
    if (H5open() < 0)
        return 1;
    double t1 = now();
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fapl_core(fapl, inc, 0) < 0 ||
        H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST) < 0)
        return 1;
    /* A name that exists nowhere: the core driver would read an existing file. */
    hid_t f = H5Fcreate("h5_floor.nonexistent.image", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (f < 0)
        return 1;
    double t2 = now();
    for (int i = 0; i < nd; i++) {
        char name[32];
        snprintf(name, sizeof name, "d%d", i);
        hsize_t n = 4096, c = 1024;
        hid_t sp = H5Screate_simple(1, &n, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
        if (sp < 0 || dcpl < 0 || H5Pset_chunk(dcpl, 1, &c) < 0 || H5Pset_shuffle(dcpl) < 0 ||
            H5Pset_fletcher32(dcpl) < 0)
            return 1;
        hid_t d = H5Dcreate2(f, name, H5T_STD_I64LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        if (d < 0 || H5Dwrite(d, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
            return 1;
        H5Dclose(d);
        H5Pclose(dcpl);
        H5Sclose(sp);
    }
    double t3 = now();
    if (H5Fclose(f) < 0)
        return 1;
    double t4 = now();
    printf("H5open %.3f  H5Fcreate %.3f  %d datasets %.3f  H5Fclose %.3f  total %.3f ms\n",
           (t1 - t0) * 1e3, (t2 - t1) * 1e3, nd, (t3 - t2) * 1e3, (t4 - t3) * 1e3,
           (t4 - t0) * 1e3);
    return 0;
}
