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
from ._lib import TwofaceError, lib  # noqa: F401  (re-exported)
from .plan import Plan, spmm


def _backward_problem(fwd, bwd):
    """None when bwd (None: fwd itself) can compute A^T products for fwd,
    else why not. Local: plan headers are identical on every rank, so every
    rank finds the same."""
    if bwd is not None and not isinstance(bwd, Plan):
        return f'twoface.SpMM: backward_plan must be a twoface.Plan, got {type(bwd).__name__}'
    same = bwd is None or bwd is fwd
    if _lib.has('tf_check_backward'):
        if same and not fwd.symmetric:
            return (f'twoface.SpMM: {fwd.path} is not symmetric, so the backward product needs '
                    'the plan of its transpose: make it with twoface-plan MATRIX --transpose '
                    '--bands-from FORWARD.h5 (same --normalize) and pass it as backward_plan=')
        st = lib.tf_check_backward(fwd._handle(), (fwd if same else bwd)._handle())
        return f'twoface.SpMM: {_lib.last_error(st)}' if st else None
    # A library without the symmetry attribute cannot vouch for a pairing.
    return ('twoface.SpMM: this libtwoface has no tf_check_backward, so it cannot tell whether '
            'a plan serves the backward product; rebuild it')


class SpMM(torch.autograd.Function):
    """SpMM.apply(B_local, plan, backward_plan=None, comm=None) -> C_local.

    B_local: this rank's rows of B, (plan.nbrows, K) float32. Differentiable
    in B_local; collective in both directions (every rank must run forward
    and backward together, as an SPMD training loop does). comm: what B rows
    (forward) and gradient rows (backward) travel as, as in spmm."""

    @staticmethod
    def forward(ctx, B, plan, backward_plan=None, comm=None):
        if not isinstance(plan, Plan):
            raise TypeError(f'twoface.SpMM: expected a twoface.Plan, got {type(plan).__name__}')
        ctx.bwd = plan if backward_plan is None else backward_plan
        ctx.comm = comm
        # Checked when a gradient will be asked for; agreed inside spmm's
        # single reduction, so a bad pairing raises on every rank.
        problem = _backward_problem(plan, backward_plan) if B.requires_grad else None
        return spmm(plan, B.detach(), comm=comm, _problem=problem)

    @staticmethod
    def backward(ctx, grad_c):
        if not ctx.needs_input_grad[0]:
            return None, None, None, None
        # Autograd hands over dC of C's shape and dtype on every rank, and the
        # pairing was checked in forward: nothing left to agree on. The
        # gradient's rows travel in the forward's precision.
        return spmm(ctx.bwd, grad_c, comm=ctx.comm, _trusted=True), None, None, None


def spmm_autograd(B, plan, backward_plan=None, comm=None):
    """The functional form of SpMM.apply."""
    return SpMM.apply(B, plan, backward_plan, comm)


__all__ = ['SpMM', 'spmm_autograd', 'TwofaceError']
