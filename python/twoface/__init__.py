"""twoface for PyTorch: distributed SpMM (C = A @ B) over libtwoface.

    from mpi4py import MPI
    import twoface
    plan = twoface.Plan('graph.h5', MPI.COMM_WORLD)      # collective
    C = twoface.spmm(plan, B_local)                      # this rank's rows of C
    C = twoface.SpMM.apply(B_local, plan)                # differentiable in B_local

Run under mpirun, one process per rank of the plan. A thin binding: every
computation is libtwoface's (ctypes over build/lib/libtwoface.so, or the
installed one; TWOFACE_LIB overrides). docs/python.md has the whole API.
"""
import os
import sys
import warnings

# Open MPI reads OMPI_MCA_osc at MPI_Init, which importing mpi4py.MPI does:
# the ucx one-sided component returned corrupted data (README.md), so choose
# sm,rdma as twoface-exec does, unless the caller chose.
if 'mpi4py.MPI' not in sys.modules:
    os.environ.setdefault('OMPI_MCA_osc', 'sm,rdma')
elif 'OMPI_MCA_osc' not in os.environ:
    warnings.warn('twoface: mpi4py.MPI was imported before twoface with OMPI_MCA_osc unset; '
                  'set OMPI_MCA_osc=sm,rdma (Open MPI\'s ucx one-sided component can return '
                  'corrupted data)')

from mpi4py import MPI  # noqa: E402  (initialises MPI, thread level "multiple")

from ._lib import TwofaceError, path as library_path  # noqa: E402
from .plan import Context, Plan, agree, spmm  # noqa: E402
from .autograd import SpMM, spmm_autograd  # noqa: E402
from .csr_file import save_csr  # noqa: E402

__all__ = ['Plan', 'Context', 'spmm', 'SpMM', 'spmm_autograd', 'TwofaceError', 'agree',
           'library_path', 'MPI', 'save_csr']
