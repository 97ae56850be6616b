/* The smallest complete use of libtwoface: open a plan, make a context for
 * one dense width, fill this rank's rows of B, multiply a few times.
 *
 *   twoface-plan examples/data/cora.mtx.zst -n 4 -o cora.h5
 *   mpirun -n 4 build/examples/spmm_example cora.h5
 *
 * Copy it, replace the B filling with your own data, keep the error
 * handling: a failing call returns the same status on every rank, so every
 * rank takes the same branch. */
#include <twoface.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    /* Two OpenMP thread groups call MPI at the same time: ask for
     * MPI_THREAD_MULTIPLE (with less, twoface uses one thread for MPI). */
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: %s PLAN.h5 [K]\n", argv[0]);
        MPI_Finalize();
        return 1;
    }
    int k = argc > 2 ? atoi(argv[2]) : 64;

    tf_handle *h;
    if (tf_open(argv[1], MPI_COMM_WORLD, &h) != TF_OK) {
        if (rank == 0)
            fprintf(stderr, "%s: %s\n", argv[1], tf_last_error());
        MPI_Finalize();
        return 1;
    }
    tf_ctx *ctx;
    if (tf_context_create(h, k, NULL, &ctx) != TF_OK) {
        if (rank == 0)
            fprintf(stderr, "%s\n", tf_last_error());
        tf_close(h);
        MPI_Finalize();
        return 1;
    }

    int64_t row_begin, nrows, brow_begin, nbrows;
    tf_get_rows(h, &row_begin, &nrows);
    float *c = malloc((size_t)(nrows > 0 ? nrows : 1) * (size_t)k * sizeof *c);
    float *b = tf_b_rows(ctx, &brow_begin, &nbrows); /* B lives inside the library */

    double checksum = 0.0;
    for (int iter = 0; iter < 5; iter++) {
        /* This rank's rows of B, global rows brow_begin .. brow_begin + nbrows - 1. */
        for (int64_t i = 0; i < nbrows; i++)
            for (int x = 0; x < k; x++)
                b[i * k + x] = (float)(((brow_begin + i) * 31 + x * 7 + iter) % 17) / 16.0f;
        if (tf_spmm(ctx, c) != TF_OK) {
            fprintf(stderr, "rank %d: %s\n", rank, tf_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1); /* other ranks may be inside the SpMM */
        }
        /* c holds rows row_begin .. row_begin + nrows - 1 of C = A * B. */
    }
    for (int64_t x = 0; x < nrows * k; x++)
        checksum += c[x];
    MPI_Allreduce(MPI_IN_PLACE, &checksum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

    tf_timing t;
    tf_timing_get(ctx, &t);
    if (rank == 0)
        printf("%s: %lld x %lld, %s plan, K = %d: sum of C = %.6g, %.3f ms per SpMM on rank 0\n",
               argv[1], (long long)tf_get_m(h), (long long)tf_get_n(h), tf_get_mode_name(h), k,
               checksum, 1e3 * t.total / (double)t.calls);

    free(c);
    tf_context_free(ctx);
    tf_close(h);
    MPI_Finalize();
    return 0;
}
