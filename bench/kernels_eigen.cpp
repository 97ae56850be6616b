// Eigen 3 as a peer of the kernels benchmark: a row-major SparseMatrix view
// of the CSR times a row-major dense B (Eigen's own sparse x dense kernel,
// which processes one row of C at a time and runs rows in parallel with
// OpenMP when Eigen::setNbThreads > 1).
#include "kernels_peers.h"

#include <Eigen/Core>
#include <Eigen/SparseCore>

typedef Eigen::Map<const Eigen::SparseMatrix<float, Eigen::RowMajor, int>> SpMap;
typedef Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> Dense;

struct kp_eigen {
    SpMap a;
    kp_eigen(int m, int n, int nnz, const int *rowptr, const int *col, const float *val)
        : a(m, n, nnz, rowptr, col, val)
    {
    }
};

extern "C" kp_eigen *kp_eigen_new(int m, int n, int nnz, const int *rowptr, const int *col,
                                  const float *val)
{
    return new kp_eigen(m, n, nnz, rowptr, col, val);
}

extern "C" void kp_eigen_spmm(kp_eigen *e, const float *b, int k, float *c, int threads)
{
    Eigen::setNbThreads(threads);
    Eigen::Map<const Dense> bm(b, e->a.cols(), k);
    Eigen::Map<Dense> cm(c, e->a.rows(), k);
    cm.noalias() = e->a * bm;
}

extern "C" void kp_eigen_free(kp_eigen *e) { delete e; }

extern "C" const char *kp_eigen_version(void)
{
#define KP_STR2(x) #x
#define KP_STR(x) KP_STR2(x)
    return KP_STR(EIGEN_WORLD_VERSION) "." KP_STR(EIGEN_MAJOR_VERSION) "." KP_STR(
        EIGEN_MINOR_VERSION);
}
