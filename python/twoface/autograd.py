"""twoface.SpMM: C = A @ B as a torch.autograd.Function.

Forward: this rank's rows of C from this rank's rows of B, through the plan.
Backward: dB = A^T @ dC. For a plan whose matrix is symmetric (recorded at
plan time) the same plan serves A^T; otherwise the caller passes the plan of
A^T made by `twoface-plan --transpose --bands-from FORWARD.h5`, whose row
bands are the forward plan's B-row bands and vice versa, so dC (laid out like
C) is exactly its B and dB comes out laid out like B. Both are checked before
the first product, on every rank alike, so a wrong pairing is an exception
rather than a silently wrong gradient.
"""
import torch

from . import _lib
from ._lib import TwofaceError, lib
from .plan import Plan, spmm


def _backward_problem(fwd, bwd):
    """None when bwd can compute A^T products for fwd (bwd may be fwd), else
    why not. Local: plan headers are identical on every rank."""
    if bwd is None or bwd is fwd:
        sym = fwd.symmetric
        if sym is None:
            return ('twoface.SpMM: this libtwoface cannot tell whether the plan is symmetric '
                    '(no tf_get_symmetric); pass backward_plan= (a plan of A^T)')
        if not sym:
            return (f'twoface.SpMM: {fwd.path} is not symmetric, so its transpose needs its own '
                    'plan: make one with twoface-plan --transpose and pass it as backward_plan=')
        if fwd.rows != fwd.brows:
            return (f'twoface.SpMM: {fwd.path} is symmetric but its row bands differ from its '
                    'B-row bands, so it cannot serve the backward product')
        return None
    if not isinstance(bwd, Plan):
        return f'twoface.SpMM: backward_plan must be a twoface.Plan, got {type(bwd).__name__}'
    if _lib.has('tf_check_backward'):
        st = lib.tf_check_backward(fwd._handle(), bwd._handle())
        return _lib.last_error(st) if st else None
    # Older library: what the layouts need, without the matrix identity.
    if (bwd.m, bwd.n) != (fwd.n, fwd.m) or bwd.rows != fwd.brows or bwd.brows != fwd.rows:
        return (f'twoface.SpMM: {bwd.path} ({bwd.m}x{bwd.n}, rows {bwd.rows}, brows {bwd.brows}) '
                f'is not laid out as the transpose of {fwd.path} ({fwd.m}x{fwd.n}, '
                f'rows {fwd.rows}, brows {fwd.brows})')
    return None


class SpMM(torch.autograd.Function):
    """SpMM.apply(B_local, plan, backward_plan=None) -> C_local.

    B_local: this rank's rows of B, (plan.nbrows, K) float32. Differentiable
    in B_local; collective in both directions (every rank must run forward
    and backward together, as an SPMD training loop does)."""

    @staticmethod
    def forward(ctx, B, plan, backward_plan=None):
        if not isinstance(plan, Plan):
            raise TypeError(f'twoface.SpMM: expected a twoface.Plan, got {type(plan).__name__}')
        ctx.bwd = plan if backward_plan is None else backward_plan
        # Checked when a gradient will be asked for; agreed inside spmm's
        # single reduction, so a bad pairing raises on every rank.
        problem = _backward_problem(plan, backward_plan) if B.requires_grad else None
        return spmm(plan, B.detach(), _problem=problem)

    @staticmethod
    def backward(ctx, grad_c):
        if not ctx.needs_input_grad[0]:
            return None, None, None
        return spmm(ctx.bwd, grad_c.contiguous()), None, None


def spmm_autograd(B, plan, backward_plan=None):
    """The functional form of SpMM.apply."""
    return SpMM.apply(B, plan, backward_plan)


__all__ = ['SpMM', 'spmm_autograd', 'TwofaceError']
