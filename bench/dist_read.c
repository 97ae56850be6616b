/* tf_dist_read against the serial tf_mm_read: wall time (max over ranks,
 * best of RUNS) and peak RSS per rank (max over ranks) for one file.
 *
 * Not part of the Makefile (it needs a data file a fresh clone lacks).
 * From the repository root, after make:
 *
 *   mpicc -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -O2 -Iformat -Iplanner \
 *       -o /tmp/dist_read bench/dist_read.c build/lib/libtwoface.a \
 *       $(pkg-config --cflags --libs hdf5-serial libzstd zlib) -lmetis -lm -fopenmp
 *   mpirun -n 4 --bind-to none /tmp/dist_read FILE [RUNS] [serial]
 *
 * With "serial", rank 0 reads the whole file with tf_mm_read instead (the
 * other ranks wait), which gives the single-process peak for comparison.
 * The timed runs read from the page cache: this measures parsing and the
 * exchange, not the disk. */
#include "tf_dist_read.h"
#include "tf_error.h"
#include "tf_mm_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, Q;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &Q);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: dist_read FILE [RUNS] [serial]\n");
        MPI_Finalize();
        return 2;
    }
    int runs = argc > 2 ? atoi(argv[2]) : 3;
    int serial = argc > 3 && strcmp(argv[3], "serial") == 0;
    double best = 1e30;
    int64_t nnz = 0;
    for (int r = 0; r < runs; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        int st = TF_OK;
        if (serial) {
            if (rank == 0) {
                tf_csr a;
                st = tf_mm_read(argv[1], &a, NULL);
                nnz = a.nnz;
                tf_csr_free(&a);
            }
        } else {
            tf_dcsr d;
            st = tf_dist_read(MPI_COMM_WORLD, argv[1], &d);
            nnz = d.nnz_total;
            tf_dcsr_free(&d);
        }
        double t = MPI_Wtime() - t0, tmax = 0;
        MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (st) {
            if (rank == 0)
                fprintf(stderr, "dist_read: %s\n", tf_error_message());
            MPI_Finalize();
            return 1;
        }
        if (tmax < best)
            best = tmax;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    long rss = ru.ru_maxrss, rss_max = 0;
    MPI_Reduce(&rss, &rss_max, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s Q=%d %s: %.3f s (best of %d), nnz %lld, peak RSS per rank %.1f MB\n", argv[1],
               Q, serial ? "tf_mm_read" : "tf_dist_read", best, runs, (long long)nnz,
               (double)rss_max / 1024.0);
    MPI_Finalize();
    return 0;
}
