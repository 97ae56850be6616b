/* Who should write the plan file under `mpirun -n Q twoface-plan`
 * (docs/plan-format.md, "Who runs the filters"): the way twoface does it,
 * or parallel HDF5. The same content both ways, ND chunked datasets of P
 * chunks of C elements (a chunk per plan rank, as in format 3), int32 like
 * a plan's column indices, the filters a plan declares (shuffle, zstd level
 * 3, Fletcher-32); each of the Q processes holds the chunks of P / Q parts.
 *
 *   root      what twoface-plan does: every process filters its own chunks
 *             (shuffle, zstd, Fletcher-32 over the compressed bytes, as
 *             HDF5's pipeline stores them), rank 0 gathers them, creates
 *             the file and its datasets alone (serial I/O) and places every
 *             chunk with H5Dwrite_chunk;
 *   parallel  parallel HDF5 (MPI-IO driver): the datasets are created
 *             collectively and every process writes its slice of each with
 *             a collective H5Dwrite, HDF5 running the filters in each
 *             process (filtered parallel writes, HDF5 1.10.2 and later).
 *
 * Rounds alternate the two (order rotated); each prints the wall time of
 * the write (the slowest process: from a barrier to the file closed and
 * synced) and the file size. After the last round, rank 0 reads both files
 * back through the filters and checks every element.
 *
 * Build (the MPI flavour of HDF5, Debian's libhdf5-openmpi-dev, which the
 * build does not install; twoface itself links the serial one, and one
 * process must never load both):
 *   apt-get install libhdf5-openmpi-dev
 *   mpicc -O2 -o h5_parallel bench/h5_parallel.c \
 *       $(pkg-config --cflags --libs hdf5-openmpi) -lzstd
 *   mpirun -n Q ./h5_parallel DIR ND P C [ROUNDS]
 */
#include <hdf5.h>
#include <mpi.h>
#include <zstd.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ZSTD_ID 32015
#define LEVEL 3

/* --- the zstd filter, as format/tf_h5zstd.c stores a chunk: one frame --- */
static size_t zstd_filter(unsigned int flags, size_t cd_nelmts, const unsigned int cd_values[],
                          size_t nbytes, size_t *buf_size, void **buf)
{
    int level = cd_nelmts > 0 ? (int)cd_values[0] : LEVEL;
    if (flags & H5Z_FLAG_REVERSE) {
        unsigned long long n = ZSTD_getFrameContentSize(*buf, nbytes);
        if (n == ZSTD_CONTENTSIZE_ERROR || n == ZSTD_CONTENTSIZE_UNKNOWN || n > UINT32_MAX)
            return 0;
        void *out = malloc(n ? n : 1);
        if (!out)
            return 0;
        size_t r = ZSTD_decompress(out, n, *buf, nbytes);
        if (ZSTD_isError(r) || r != n) {
            free(out);
            return 0;
        }
        free(*buf);
        *buf = out;
        *buf_size = n;
        return n;
    }
    size_t cap = ZSTD_compressBound(nbytes);
    void *out = malloc(cap);
    if (!out)
        return 0;
    size_t r = ZSTD_compress(out, cap, *buf, nbytes, level);
    if (ZSTD_isError(r)) {
        free(out);
        return 0;
    }
    free(*buf);
    *buf = out;
    *buf_size = cap;
    return r;
}

static const H5Z_class2_t zstd_class = {H5Z_CLASS_T_VERS, ZSTD_ID, 1, 1, "zstd", NULL, NULL,
                                        zstd_filter};

/* --- the encoding rank-side, a copy of format/tf_plan_write_encode.c's:
 * this program links the MPI flavour of HDF5 and so cannot link libtwoface,
 * which links the serial one --- */
static uint32_t fletcher32(const unsigned char *d, size_t n)
{
    size_t words = n / 2;
    uint32_t s1 = 0, s2 = 0;
    while (words) {
        size_t t = words > 360 ? 360 : words;
        words -= t;
        do {
            s1 += (uint32_t)((d[0] << 8) | d[1]);
            d += 2;
            s2 += s1;
        } while (--t);
        s1 = (s1 & 0xffff) + (s1 >> 16);
        s2 = (s2 & 0xffff) + (s2 >> 16);
    }
    if (n % 2) {
        s1 += (uint32_t)(d[0] << 8);
        s2 += s1;
        s1 = (s1 & 0xffff) + (s1 >> 16);
        s2 = (s2 & 0xffff) + (s2 >> 16);
    }
    s1 = (s1 & 0xffff) + (s1 >> 16);
    s2 = (s2 & 0xffff) + (s2 >> 16);
    return (s2 << 16) | s1;
}

/* shuffle + zstd + Fletcher-32 of c int32 values into dst; returns bytes. */
static size_t encode(unsigned char *dst, size_t cap, unsigned char *shuf, const int32_t *src,
                     size_t c)
{
    const unsigned char *b = (const unsigned char *)src;
    for (size_t j = 0; j < 4; j++)
        for (size_t e = 0; e < c; e++)
            shuf[j * c + e] = b[e * 4 + j];
    size_t n = ZSTD_compress(dst, cap - 4, shuf, c * 4, LEVEL);
    if (ZSTD_isError(n))
        return 0;
    /* HDF5 stores the checksum after the data, little-endian. */
    uint32_t f = fletcher32(dst, n);
    dst[n] = (unsigned char)f;
    dst[n + 1] = (unsigned char)(f >> 8);
    dst[n + 2] = (unsigned char)(f >> 16);
    dst[n + 3] = (unsigned char)(f >> 24);
    return n + 4;
}

/* Dataset d, chunk k: sorted column-like indices with a part-dependent
 * stride, the kind of data a plan stores. */
static void fill(int32_t *v, size_t c, int d, int k)
{
    uint32_t x = 2654435761u * (uint32_t)(d * 7919 + k + 1);
    int32_t at = (int32_t)(x % 1000);
    for (size_t e = 0; e < c; e++) {
        x = x * 1664525u + 1013904223u;
        at += 1 + (int32_t)((x >> 24) % (unsigned)(3 + d % 5));
        v[e] = at;
    }
}

static hid_t make_dcpl(hsize_t c)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    unsigned int level = LEVEL;
    if (dcpl < 0 || H5Pset_chunk(dcpl, 1, &c) < 0 || H5Pset_shuffle(dcpl) < 0 ||
        H5Pset_filter(dcpl, ZSTD_ID, H5Z_FLAG_MANDATORY, 1, &level) < 0 ||
        H5Pset_fletcher32(dcpl) < 0 || H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0 ||
        H5Pset_obj_track_times(dcpl, 0) < 0)
        return -1;
    return dcpl;
}

static int fsync_path(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    int r = fsync(fd);
    close(fd);
    return r;
}

typedef struct {
    int me, Q, nd, P;
    size_t c;
    int p0, p1; /* my parts */
} job;

static int write_root(const job *j, const char *path, long long *bytes)
{
    size_t cap = ZSTD_compressBound(j->c * 4) + 4;
    int mine = j->p1 - j->p0;
    unsigned char *enc = malloc((size_t)(mine ? mine : 1) * j->nd * cap);
    unsigned char *shuf = malloc(j->c * 4);
    int32_t *v = malloc(j->c * 4);
    int *len = malloc((size_t)(mine ? mine : 1) * j->nd * sizeof *len);
    if (!enc || !shuf || !v || !len)
        return 1;
    /* Every process filters its own chunks, dataset by dataset. */
    long long at = 0;
    for (int d = 0; d < j->nd; d++)
        for (int k = j->p0; k < j->p1; k++) {
            fill(v, j->c, d, k);
            size_t n = encode(enc + at, cap, shuf, v, j->c);
            if (!n)
                return 1;
            len[d * mine + (k - j->p0)] = (int)n;
            at += (long long)n;
        }
    /* Rank 0 gathers the lengths and the bytes. */
    int *rc = NULL, *rd = NULL, *lc = NULL, *ld = NULL, *all_len = NULL;
    unsigned char *all = NULL;
    int nbytes = (int)at, nlen = mine * j->nd;
    if (j->me == 0) {
        rc = malloc((size_t)j->Q * sizeof *rc);
        rd = malloc((size_t)j->Q * sizeof *rd);
        lc = malloc((size_t)j->Q * sizeof *lc);
        ld = malloc((size_t)j->Q * sizeof *ld);
    }
    MPI_Gather(&nbytes, 1, MPI_INT, rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gather(&nlen, 1, MPI_INT, lc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (j->me == 0) {
        long long tb = 0, tl = 0;
        for (int q = 0; q < j->Q; q++) {
            rd[q] = (int)tb;
            ld[q] = (int)tl;
            tb += rc[q];
            tl += lc[q];
        }
        all = malloc((size_t)(tb ? tb : 1));
        all_len = malloc((size_t)(tl ? tl : 1) * sizeof *all_len);
        if (!all || !all_len)
            return 1;
    }
    MPI_Gatherv(enc, nbytes, MPI_BYTE, all, rc, rd, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Gatherv(len, nlen, MPI_INT, all_len, lc, ld, MPI_INT, 0, MPI_COMM_WORLD);
    int st = 0;
    if (j->me == 0) {
        hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        hsize_t dims = (hsize_t)j->P * j->c;
        hid_t sp = H5Screate_simple(1, &dims, NULL), dcpl = make_dcpl(j->c);
        hid_t *ds = calloc((size_t)j->nd, sizeof *ds);
        st = f < 0 || sp < 0 || dcpl < 0 || !ds;
        for (int d = 0; d < j->nd && !st; d++) {
            char name[32];
            snprintf(name, sizeof name, "d%d", d);
            if ((ds[d] = H5Dcreate2(f, name, H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl,
                                    H5P_DEFAULT)) < 0)
                st = 1;
        }
        /* Process q's bytes are its parts' chunks, dataset-major. */
        for (int q = 0; q < j->Q && !st; q++) {
            int p0 = (int)((long long)j->P * q / j->Q), p1 = (int)((long long)j->P * (q + 1) / j->Q);
            const unsigned char *b = all + rd[q];
            const int *l = all_len + ld[q];
            for (int d = 0; d < j->nd && !st; d++)
                for (int k = p0; k < p1 && !st; k++) {
                    hsize_t off = (hsize_t)k * j->c;
                    size_t n = (size_t)*l++;
                    if (H5Dwrite_chunk(ds[d], H5P_DEFAULT, 0, &off, n, b) < 0)
                        st = 1;
                    b += n;
                }
        }
        for (int d = 0; ds && d < j->nd; d++)
            if (ds[d] > 0)
                H5Dclose(ds[d]);
        free(ds);
        H5Pclose(dcpl);
        H5Sclose(sp);
        if (f < 0 || H5Fclose(f) < 0 || fsync_path(path) < 0)
            st = 1;
        FILE *fp = fopen(path, "rb");
        if (fp && fseek(fp, 0, SEEK_END) == 0)
            *bytes = ftell(fp);
        if (fp)
            fclose(fp);
    }
    free(enc);
    free(shuf);
    free(v);
    free(len);
    free(rc);
    free(rd);
    free(lc);
    free(ld);
    free(all);
    free(all_len);
    MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return st;
}

static int write_parallel(const job *j, const char *path, long long *bytes)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) < 0)
        return 1;
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    hsize_t dims = (hsize_t)j->P * j->c;
    hid_t sp = H5Screate_simple(1, &dims, NULL), dcpl = make_dcpl(j->c);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (f < 0 || sp < 0 || dcpl < 0 || dxpl < 0 || H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) < 0)
        return 1;
    int mine = j->p1 - j->p0, st = 0;
    int32_t *v = malloc(((size_t)(mine ? mine : 1)) * j->c * 4);
    if (!v)
        return 1;
    for (int d = 0; d < j->nd && !st; d++) {
        char name[32];
        snprintf(name, sizeof name, "d%d", d);
        hid_t ds = H5Dcreate2(f, name, H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        if (ds < 0) {
            st = 1;
            break;
        }
        for (int k = j->p0; k < j->p1; k++)
            fill(v + (size_t)(k - j->p0) * j->c, j->c, d, k);
        hsize_t off = (hsize_t)j->p0 * j->c, cnt = (hsize_t)mine * j->c;
        hid_t fs = H5Dget_space(ds), ms = H5Screate_simple(1, &cnt, NULL);
        if (mine > 0)
            H5Sselect_hyperslab(fs, H5S_SELECT_SET, &off, NULL, &cnt, NULL);
        else {
            H5Sselect_none(fs);
            H5Sselect_none(ms);
        }
        if (H5Dwrite(ds, H5T_NATIVE_INT32, ms, fs, dxpl, v) < 0)
            st = 1;
        H5Sclose(ms);
        H5Sclose(fs);
        H5Dclose(ds);
    }
    free(v);
    H5Pclose(dxpl);
    H5Pclose(dcpl);
    H5Sclose(sp);
    if (H5Fclose(f) < 0)
        st = 1;
    if (j->me == 0) {
        if (fsync_path(path) < 0)
            st = 1;
        FILE *fp = fopen(path, "rb");
        if (fp && fseek(fp, 0, SEEK_END) == 0)
            *bytes = ftell(fp);
        if (fp)
            fclose(fp);
    }
    MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return st;
}

/* Rank 0: every element of every dataset, read back through the filters. */
static int check(const job *j, const char *path)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return 1;
    int32_t *got = malloc((size_t)j->P * j->c * 4), *want = malloc(j->c * 4);
    int bad = !got || !want;
    for (int d = 0; d < j->nd && !bad; d++) {
        char name[32];
        snprintf(name, sizeof name, "d%d", d);
        hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
        if (ds < 0 || H5Dread(ds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) < 0)
            bad = 1;
        for (int k = 0; k < j->P && !bad; k++) {
            fill(want, j->c, d, k);
            bad = memcmp(want, got + (size_t)k * j->c, j->c * 4) != 0;
        }
        if (ds >= 0)
            H5Dclose(ds);
    }
    free(got);
    free(want);
    H5Fclose(f);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    job j;
    MPI_Comm_rank(MPI_COMM_WORLD, &j.me);
    MPI_Comm_size(MPI_COMM_WORLD, &j.Q);
    if (argc < 5) {
        if (j.me == 0)
            fprintf(stderr, "usage: %s DIR DATASETS PARTS CHUNK_LEN [ROUNDS]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    j.nd = atoi(argv[2]);
    j.P = atoi(argv[3]);
    long long cl = atoll(argv[4]);
    int rounds = argc > 5 ? atoi(argv[5]) : 5;
    if (j.nd < 1 || j.P < j.Q || cl < 1 || cl > (1 << 24) || rounds < 1) {
        if (j.me == 0)
            fprintf(stderr, "%s: need DATASETS >= 1, PARTS >= processes, 1 <= CHUNK_LEN <= 2^24\n",
                    argv[0]);
        MPI_Finalize();
        return 2;
    }
    j.c = (size_t)cl;
    j.p0 = (int)((long long)j.P * j.me / j.Q);
    j.p1 = (int)((long long)j.P * (j.me + 1) / j.Q);
    if (H5Zregister(&zstd_class) < 0) {
        fprintf(stderr, "cannot register the zstd filter\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    char path[2][4096];
    snprintf(path[0], sizeof path[0], "%s/h5_parallel_root.h5", argv[1]);
    snprintf(path[1], sizeof path[1], "%s/h5_parallel_mpio.h5", argv[1]);
    static const char *name[2] = {"root", "parallel"};
    int fail = 0;
    for (int r = 0; r < rounds && !fail; r++)
        for (int t = 0; t < 2 && !fail; t++) {
            int s = (t + r) % 2;
            long long bytes = 0;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            fail = s == 0 ? write_root(&j, path[0], &bytes) : write_parallel(&j, path[1], &bytes);
            double dt = MPI_Wtime() - t0, mx;
            MPI_Reduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (j.me == 0 && !fail)
                printf("Q %d datasets %d parts %d chunk %zu round %d %s %.3f ms %lld bytes\n", j.Q,
                       j.nd, j.P, j.c, r, name[s], mx * 1e3, bytes);
        }
    if (j.me == 0 && !fail)
        for (int s = 0; s < 2; s++)
            if (check(&j, path[s])) {
                fprintf(stderr, "%s: %s holds other data than written\n", argv[0], path[s]);
                fail = 1;
            }
    if (j.me == 0 && fail)
        fprintf(stderr, "%s: failed\n", argv[0]);
    MPI_Finalize();
    return fail;
}
