/* Cost-model coefficients (see docs/cost-model.md for every term).
 * All times in seconds; "byte" is a byte of B moved; "nnz-col" is one
 * nonzero multiplied into one column of B (one multiply and one add; the
 * kernels do not fuse them, tf_kern_loops.h). */
#ifndef TF_COEFFS_H
#define TF_COEFFS_H

typedef struct {
    double alpha_coll;  /* s per message of the collective (per peer, each side) */
    double beta_coll;   /* s per byte sent or received by the collective */
    double alpha_fetch; /* s per one-sided request (MPI_Rget of one run) */
    double beta_fetch;  /* s per byte fetched one-sidedly */
    double gamma_local; /* s per nnz-col in the local CSR kernel */
    double gamma_coll;  /* s per nnz-col in the collective CSR kernel */
    double gamma_fetch; /* s per nnz-col in the fetch CSC kernel */
    double alpha_sync;  /* s per fetch peer (owner fetched from, or rank
                           fetching from me) per SpMM: the B-protection
                           handshake and the wait for the other side */
    double beta_coll_max; /* s per byte of the larger of a rank's collective
                             sends and receives: a full-duplex network link
                             carries both directions at once, so its time
                             follows the busier one (0 on shared memory,
                             where both are copies and beta_coll adds them;
                             optional in files: older ones have 0) */
    double gamma_cached; /* s per nnz-col in either CSR kernel when the B row
                            is still in cache from an earlier use, where
                            gamma_local and gamma_coll are the price of a
                            row loaded from memory (optional in files) */
    double cache_bytes;  /* bytes of cache per core that keep B rows between
                            uses; 0 (files without it): every nonzero loads
                            its row, the model before the term existed */
    double gamma_row;    /* s per row of C per column that a CSR kernel
                            writes or updates: loading and storing the row
                            and the loop around it, paid however few
                            nonzeros the row has (optional in files: older
                            ones have 0, no cost per row) */
    double gamma_fetch_cached; /* s per nnz-col in the fetch CSC kernel when
                                  the row of C it adds into is in cache or
                                  streamed (tf_reuse_csc_misses), where
                                  gamma_fetch is the price of a row loaded
                                  from memory (optional in files: 0 charges
                                  every nonzero gamma_fetch) */
    double overlap_fetch; /* share (0-1) of one-sided gets' per-byte time
                             that proceeds while their one-thread rank
                             computes: 0 where a get is a copy by the caller
                             (shared memory) or needs the target inside MPI,
                             near 1 where the network carries it alone
                             (optional in files: older ones have 0) */
    int threads;        /* OpenMP threads per rank the executor will use */
    int elem_bytes;     /* bytes per element of B that travels: 4 (float32),
                           2 (bf16, twoface-plan --comm bf16); any other
                           value reads as 4.
                           A model input, not a measured coefficient: not in
                           tf_coeff_names, set from the plan's comm */
} tf_coeffs;

/* Documented defaults: the median of seven full twoface-calibrate runs on
 * the development machine (2-core VM, Open MPI 4.1 shared memory, 4 ranks),
 * each coefficient rounded to two digits (tf_coeffs.c). */
void tf_coeffs_default(tf_coeffs *c);

/* Number of coefficients and their names, for files and tables; threads is
 * the last one. */
#define TF_NCOEFFS 15
extern const char *const tf_coeff_names[TF_NCOEFFS];
extern const char *const tf_coeff_units[TF_NCOEFFS];
/* 1 for a coefficient added after files were written without it (a missing
 * one reads as 0, which is the model those files were made with). */
int tf_coeff_optional(int i);
double tf_coeffs_get(const tf_coeffs *c, int i);
void tf_coeffs_set(tf_coeffs *c, int i, double v);

#endif
