"""Run under mpirun by test_freeing.py: mpi_local_exception.py PLAN [HOW].

Rank 1 raises an exception no other rank knows of (HOW = raise, the
default), or calls sys.exit(3) (HOW = exit), with a context open, while
rank 0 goes on into an SpMM. Freeing is collective, so rank 1 must not
wait at exit for ranks that wait for it: the job must end, non-zero."""
import sys

import twoface
from twoface import MPI

comm = MPI.COMM_WORLD
plan = twoface.Plan(sys.argv[1])
ctx = plan.context(4)
if comm.Get_rank() == 1:
    if len(sys.argv) > 2 and sys.argv[2] == 'exit':
        sys.exit(3)
    raise RuntimeError('a failure on rank 1 only')
ctx.b.fill_(1.0)
for _ in range(3):
    twoface.spmm(ctx)
plan.close()
print('rank 0 done', flush=True)
