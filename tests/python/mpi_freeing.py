"""Run under mpirun by test_freeing.py: mpi_freeing.py PLAN MISSING_PATH.

Every rank runs every case; rank 0 prints one JSON line per case ("ok" only
when the case passed on every rank). Use after free must raise
TwofaceError: a segfault would end the run with status 139, which the test
reports."""
import json
import sys
import traceback

import torch

import twoface
from twoface import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
PLAN, MISSING = sys.argv[1], sys.argv[2]
USED_AFTER_FREE = 'used after ctx.free() or plan.close()'


def raises(fn, needle, status=1):
    try:
        fn()
    except twoface.TwofaceError as e:
        assert needle in str(e), f'{str(e)!r} lacks {needle!r}'
        assert e.status == status, f'status {e.status}, expected {status}: {e}'
        return
    raise AssertionError(f'no TwofaceError (expected {needle!r})')


def case_free_then_fill():
    """Use after free: b = ctx.b; ctx.free(); b.fill_(1.0)."""
    with twoface.Plan(PLAN) as plan:
        ctx = plan.context(4)
        b = ctx.b
        ctx.free()
        raises(lambda: b.fill_(1.0), USED_AFTER_FREE)
        raises(lambda: ctx.b, 'the context has been freed')


def case_close_then_sum():
    """Use after close: b.sum() after plan.close()."""
    plan = twoface.Plan(PLAN)
    b = plan.context(3).b
    plan.close()
    raises(lambda: b.sum(), USED_AFTER_FREE)


def case_views_and_copies():
    """Views share the fate of b; copies and results are plain tensors."""
    with twoface.Plan(PLAN) as plan:
        ctx = plan.context(4)
        ctx.b.fill_(2.0)
        views = [ctx.b[1:], ctx.b.t(), ctx.b.view(-1), ctx.b[:, 1], torch.narrow(ctx.b, 1, 0, 2)]
        kept, total = ctx.b.clone(), ctx.b.sum()
        assert type(kept) is torch.Tensor and type(total) is torch.Tensor, 'plain results'
        raises(lambda: ctx.b.numpy(), 'copy first')
        assert kept.numpy().shape == tuple(ctx.b.shape), 'a copy converts to numpy'
        ctx.free()
        for v in views:
            raises(lambda: v.sum(), USED_AFTER_FREE)
            raises(lambda: v.add_(1), USED_AFTER_FREE)
            raises(lambda: repr(v), USED_AFTER_FREE)
            raises(lambda: torch.zeros(v.shape).copy_(v), USED_AFTER_FREE)
        assert float(kept.sum()) == 2.0 * kept.numel() == float(total), 'copies survive'


def case_spmm_in_place_still_works():
    """The guarded b is still the library's buffer: filled in place, spmm(ctx)
    computes what spmm(plan, B) does."""
    with twoface.Plan(PLAN) as plan:
        B = torch.rand(plan.nbrows, 3, generator=torch.Generator().manual_seed(rank))
        C = twoface.spmm(plan, B)
        with plan.context(3) as ctx:
            ctx.b.copy_(B)
            C2 = twoface.spmm(ctx)
            C3 = twoface.spmm(ctx, ctx.b)
        assert torch.allclose(C, C2, rtol=1e-5, atol=1e-6), 'in place'
        assert torch.allclose(C, C3, rtol=1e-5, atol=1e-6), 'B is ctx.b'


def case_bad_plan_arguments():
    raises(lambda: twoface.Plan(PLAN, 42), 'comm must be an mpi4py communicator (MPI.Comm), '
           'got int')
    raises(lambda: twoface.Plan(42), 'the plan path must be a str, bytes or os.PathLike, got int')
    with twoface.Plan(PLAN) as plan:
        raises(lambda: twoface.spmm(plan, torch.zeros(plan.nbrows, 2, dtype=torch.float64)),
               'must be torch.float32')
        raises(lambda: plan.context(0), 'context width k must be an integer >= 1')
    raises(lambda: twoface.Plan(MISSING), MISSING, status=2)  # TF_ERR_IO, from the library


CASES = [case_free_then_fill, case_close_then_sum, case_views_and_copies,
         case_spmm_in_place_still_works, case_bad_plan_arguments]


def main():
    for fn in CASES:
        try:
            fn()
            ok, detail = True, ''
        except Exception:
            ok, detail = False, traceback.format_exc(limit=3).strip().replace('\n', ' / ')
        res = comm.gather((ok, detail), root=0)
        if rank == 0:
            print(json.dumps({'case': fn.__name__[5:], 'ok': all(r[0] for r in res),
                              'details': [r[1] for r in res if r[1]]}), flush=True)


if __name__ == '__main__':
    main()
