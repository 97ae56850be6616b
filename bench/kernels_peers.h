/* The kernels benchmark's peers, behind a C interface: Eigen (C++, compiled
 * -O3 -march=native by the Makefile's bench-kernels target) and librsb.
 * Each takes A as a 0-based CSR with 32-bit offsets (the peers' index type),
 * B and C row-major n x k and m x k floats; C = A B (overwritten). */
#ifndef KERNELS_PEERS_H
#define KERNELS_PEERS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kp_eigen kp_eigen;
kp_eigen *kp_eigen_new(int m, int n, int nnz, const int *rowptr, const int *col,
                       const float *val);
void kp_eigen_spmm(kp_eigen *e, const float *b, int k, float *c, int threads);
void kp_eigen_free(kp_eigen *e);
const char *kp_eigen_version(void);

typedef struct kp_rsb kp_rsb;
int kp_rsb_init(void); /* once per process; 0 on success */
kp_rsb *kp_rsb_new(int m, int n, int nnz, const int *rowptr, const int *col, const float *val,
                   int threads);
/* rsb_tune_spmm for this k (structure only, threads fixed); 0 on success. */
int kp_rsb_tune(kp_rsb *r, const float *b, int k, float *c, double *tune_s);
int kp_rsb_spmm(kp_rsb *r, const float *b, int k, float *c);
void kp_rsb_free(kp_rsb *r);
void kp_rsb_exit(void);
const char *kp_rsb_version(void);

#ifdef __cplusplus
}
#endif

#endif
