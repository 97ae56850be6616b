/* SpMM times of plans with different partitions, interleaved in one process
 * (METIS partitioning): twoface-exec refuses to interleave plans that place B
 * differently, but through the public API each plan has its own context and
 * B window, and the B rows of each are filled in original ids
 * (tf_get_brow_ids), so every plan computes the same C. Rounds rotate the
 * order (a b c, b c a, ...); each call is timed on its slowest rank after a
 * barrier; the first W rounds (covering the start-up trial of a plan that
 * carries a runner-up) are not timed.
 *
 *   mpirun -n P partition_spmm [-k K] [-i ROUNDS] [-w WARMUP] PLAN.h5...
 * prints per plan: median, min and max ms, and the median over the fastest
 * plan's median. */
#include "tf_dense.h"
#include "tf_median.h"
#include "twoface.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PLANS 8

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int k = 128, rounds = 20, warm = 12, np = 0;
    const char *paths[MAX_PLANS];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-k") && i + 1 < argc)
            k = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-i") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-w") && i + 1 < argc)
            warm = atoi(argv[++i]);
        else if (argv[i][0] != '-' && np < MAX_PLANS)
            paths[np++] = argv[i];
        else {
            if (rank == 0)
                fprintf(stderr, "usage: partition_spmm [-k K] [-i ROUNDS] [-w WARMUP] PLAN...\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (np < 1 || k < 1 || rounds < 1 || warm < 0) {
        if (rank == 0)
            fprintf(stderr, "partition_spmm: no plan, or a bad -k / -i / -w\n");
        MPI_Finalize();
        return 2;
    }
    tf_handle *h[MAX_PLANS] = {NULL};
    tf_ctx *ctx[MAX_PLANS] = {NULL};
    float *c[MAX_PLANS] = {NULL};
    for (int x = 0; x < np; x++) {
        if (tf_open(paths[x], MPI_COMM_WORLD, &h[x]) || tf_context_create(h[x], k, NULL, &ctx[x])) {
            if (rank == 0)
                fprintf(stderr, "partition_spmm: %s: %s\n", paths[x], tf_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        int64_t b0, nb, nr;
        float *b = tf_b_rows(ctx[x], &b0, &nb);
        const int64_t *ids = tf_get_brow_ids(h[x]);
        for (int64_t i = 0; i < nb; i++)
            tf_dense_fill(b + i * k, 1, ids[i], 1, k);
        tf_get_rows(h[x], NULL, &nr);
        c[x] = calloc((size_t)(nr > 0 ? nr : 1) * (size_t)k, sizeof *c[x]);
        if (!c[x])
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double *t = calloc((size_t)np * (size_t)rounds, sizeof *t);
    for (int r = 0; r < warm + rounds; r++)
        for (int y = 0; y < np; y++) {
            int x = (y + r) % np;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (tf_spmm(ctx[x], c[x])) {
                fprintf(stderr, "partition_spmm: %s: SpMM failed: %s\n", paths[x], tf_last_error());
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            double dt = MPI_Wtime() - t0, mx;
            MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (r >= warm)
                t[(size_t)x * rounds + (r - warm)] = mx;
        }
    if (rank == 0) {
        double med[MAX_PLANS], best = 0;
        for (int x = 0; x < np; x++) {
            med[x] = tf_median(t + (size_t)x * rounds, rounds); /* sorts */
            if (x == 0 || med[x] < best)
                best = med[x];
        }
        for (int x = 0; x < np; x++)
            printf("%s median_ms %.4f min_ms %.4f max_ms %.4f vs_best %.3f\n", paths[x],
                   med[x] * 1e3, t[(size_t)x * rounds] * 1e3,
                   t[(size_t)x * rounds + rounds - 1] * 1e3, med[x] / best);
    }
    for (int x = 0; x < np; x++) {
        tf_context_free(ctx[x]);
        tf_close(h[x]);
        free(c[x]);
    }
    free(t);
    MPI_Finalize();
    return 0;
}
