"""Plans, contexts and one SpMM, over the C API of include/twoface.h.

Collective calls (opening, context creation, freeing, spmm) must be made by
every rank of the plan's communicator in the same order, as in C. They never
run from the garbage collector (its timing differs between ranks): free with
close() / free() or a `with` block; what is still open at interpreter exit is
freed then, on every rank alike, before mpi4py finalises MPI.
"""
import atexit
import ctypes
import operator
import os
import sys
import time

import numpy as np
import torch
from mpi4py import MPI

from . import _lib
from ._lib import TF_ERR_ARG, TwofaceError, check, lib
from ._rows import guarded

# Raw handles still open, in creation order: freed newest first at exit.
_live = []


# Set when the program ends on an exception nobody caught (sys.excepthook,
# which Python calls before the exit handlers), and the status sys.exit was
# last called with: SystemExit never reaches the hook, and Python gives the
# exit handlers no status.
_uncaught = False
_exit_status = None
_excepthook = sys.excepthook
_sys_exit = sys.exit


def _note_uncaught(kind, value, tb):
    global _uncaught
    _uncaught = True
    _excepthook(kind, value, tb)


def _note_exit(status=None):
    global _exit_status
    _exit_status = status
    _sys_exit(status)


sys.excepthook = _note_uncaught
sys.exit = _note_exit


def _failure_status():
    """The status to abort with when the program is ending in failure, else
    None: an uncaught exception is 1, sys.exit(n) n (a message: 1)."""
    if _uncaught:
        return 1
    if _exit_status is None or _exit_status == 0:
        return None
    return _exit_status if isinstance(_exit_status, int) else 1


# How long a rank that calls sys.exit(n != 0) with plans open waits for the
# others to reach their exit too before it aborts the job (seconds).
EXIT_WAIT_S = 10.0


def _all_exiting(comm, wait_s):
    """True when every rank of comm reaches this point within wait_s: a
    nonblocking barrier, so that a rank whose peers wait for it elsewhere
    (in an SpMM) does not wait forever."""
    req = comm.Ibarrier()
    end = time.monotonic() + wait_s
    while not req.Test():
        if time.monotonic() > end:
            return False
        time.sleep(0.001)
    return True


def _free_live():
    if MPI.Is_finalized():  # the program finalised MPI itself: nothing can be freed
        return
    status = _failure_status()
    world = MPI.COMM_WORLD
    if status is not None and _live and world.Get_size() > 1:
        # The other ranks may not have failed, and may wait for this one in
        # an SpMM: freeing, which is collective, would wait for them in turn.
        # An exception is this rank's alone; sys.exit(n) is often called on
        # every rank at once after an error they agreed on (examples/gcn.py),
        # and then the ranks free together as on success.
        if _uncaught or not _all_exiting(world, EXIT_WAIT_S):
            why = ('an uncaught exception' if _uncaught else
                   f'sys.exit({_exit_status})' if isinstance(_exit_status, int) else
                   'sys.exit with a message')
            sys.stderr.write(f'twoface: rank {world.Get_rank()} ends on {why} '
                             'with plans open: aborting the job, as the other ranks '
                             'cannot know\n')
            sys.stderr.flush()
            world.Abort(status)
    while _live:
        obj = _live[-1]
        obj._release()


atexit.register(_free_live)


def agree(comm, message, same=None, same_comm=None):
    """Collective: every rank passes None or a one-line error message (and
    optionally an integer that must be equal on every rank, such as the dense
    width, and the code of what B rows travel as, _lib.COMM, which must be
    too); if any rank has a message, or the integers differ, every rank
    raises TwofaceError with the lowest failing rank's message, so a bad
    argument on one rank never leaves the others waiting in the library's
    collectives. One MPI_Allreduce when all is well."""
    s = 0 if same is None else int(same)
    c = 0 if same_comm is None else int(same_comm)
    low = np.iinfo(np.int64).min  # a failing rank's integer takes no part
    v = np.array([1, low, low, low, low] if message is not None else [0, s, -s, c, -c],
                 dtype=np.int64)
    comm.Allreduce(MPI.IN_PLACE, v, op=MPI.MAX)
    if not v[0] and v[1] == -v[2] and v[3] == -v[4]:
        return
    own = message is not None
    if not own and v[1] != -v[2]:
        message = f'twoface: ranks disagree on the dense width K (from {-v[2]} to {v[1]}); ' \
                  f'this rank has {s}'
    elif not own and v[3] != -v[4]:
        names = {code: name for name, code in _lib.COMM.items()}
        message = f'twoface: ranks disagree on comm (what B rows travel as); this rank asks ' \
                  f'{names.get(c, c)!r}'
    # A rank's own reason outranks the disagreement it causes elsewhere.
    msgs = comm.allgather((own, message))
    first = min((r for r, (o, m) in enumerate(msgs) if m is not None),
                key=lambda r: (not msgs[r][0], r))
    text = msgs[first][1]
    raise TwofaceError(text if first == comm.Get_rank() else f'rank {first}: {text}')


def _range(getter, handle):
    b, n = ctypes.c_int64(), ctypes.c_int64()
    getter(handle, ctypes.byref(b), ctypes.byref(n))
    return b.value, n.value


def _ids(getter_name, handle, begin, count):
    """Original (input-file) ids of local rows: the library's permutation
    when it has one, else the identity begin + i (a library without the
    permutation getters cannot make permuted plans)."""
    if count == 0:
        return torch.empty(0, dtype=torch.int64)
    if _lib.has(getter_name):
        p = getattr(lib, getter_name)(handle)
        if p:
            return torch.from_numpy(np.ctypeslib.as_array(p, shape=(count,)).copy())
    return torch.arange(begin, begin + count, dtype=torch.int64)


class Plan:
    """A plan opened on every rank of `comm` (collective, like tf_open).

    Raises TwofaceError on every rank when any rank fails (missing file, a
    plan for another number of ranks, a corrupt part)."""

    def __init__(self, path, comm=None):
        self._h = None
        comm = MPI.COMM_WORLD if comm is None else comm
        if not isinstance(comm, MPI.Comm):  # nothing to agree over: every rank says it
            raise TwofaceError(f'twoface: comm must be an mpi4py communicator (MPI.Comm), got '
                               f'{type(comm).__name__}', TF_ERR_ARG)
        msg = None
        if not isinstance(path, (str, bytes, os.PathLike)):
            msg = f'twoface: the plan path must be a str, bytes or os.PathLike, got ' \
                  f'{type(path).__name__}'
        agree(comm, msg)
        h = ctypes.c_void_p()
        check(lib.tf_open_fcomm(os.fsencode(path), comm.py2f(), ctypes.byref(h)))
        self._h = h
        self.path = str(path)
        # Our own agreement traffic stays off the caller's communicator.
        self.comm = comm.Dup()
        self._contexts = {}
        self._seconds = 0.0
        self._calls = 0
        _live.append(self)
        self.row_begin, self.nrows = _range(lib.tf_get_rows, h)
        self.brow_begin, self.nbrows = _range(lib.tf_get_brows, h)

    # ---- getters (local) ----
    def _handle(self):
        if self._h is None:
            raise TwofaceError('twoface: the plan is closed')
        return self._h

    @property
    def nranks(self):
        return lib.tf_get_nranks(self._handle())

    @property
    def rank(self):
        return lib.tf_get_rank(self._handle())

    @property
    def m(self):
        return lib.tf_get_m(self._handle())

    @property
    def n(self):
        return lib.tf_get_n(self._handle())

    @property
    def nnz(self):
        return lib.tf_get_nnz(self._handle())

    @property
    def rows(self):
        """(first global row, count) of this rank's rows of A and C."""
        return self.row_begin, self.nrows

    @property
    def brows(self):
        """(first global row, count) of this rank's rows of B."""
        return self.brow_begin, self.nbrows

    @property
    def k_planned(self):
        return lib.tf_get_k_planned(self._handle())

    @property
    def mode(self):
        return lib.tf_get_mode_name(self._handle()).decode()

    def _optional(self, name):
        return getattr(lib, name)(self._handle()) if _lib.has(name) else None

    @property
    def normalization(self):
        """'none', 'gcn' or 'mean'; None when the library predates the getter."""
        v = self._optional('tf_get_normalization')
        return v.decode() if v is not None else None

    normalisation = normalization

    @property
    def symmetric(self):
        """True/False as recorded at plan time; None when the library cannot say."""
        v = self._optional('tf_get_symmetric')
        return None if v is None else bool(v)

    @property
    def transposed(self):
        v = self._optional('tf_get_transposed')
        return None if v is None else bool(v)

    @property
    def fingerprint(self):
        return self._optional('tf_get_fingerprint')

    @property
    def permuted(self):
        """True when the plan renumbers rows; False also when the library has
        no permutation support (such a library cannot make permuted plans)."""
        v = self._optional('tf_get_permuted')
        return bool(v) if v is not None else False

    @property
    def row_ids(self):
        """Original ids of this rank's rows of A/C, in local order (int64)."""
        return _ids('tf_get_row_ids', self._handle(), self.row_begin, self.nrows)

    @property
    def brow_ids(self):
        """Original ids of this rank's rows of B, in local order (int64)."""
        return _ids('tf_get_brow_ids', self._handle(), self.brow_begin, self.nbrows)

    @property
    def spmm_seconds(self):
        """Wall time spent in twoface.spmm on this plan's contexts (B copy-in
        included), and the number of calls."""
        return self._seconds, self._calls

    # ---- contexts (collective) ----
    @property
    def comm_precision(self):
        """What the plan was made for B rows to travel as (twoface-plan --comm):
        'f32' or 'bf16'; contexts use it unless told otherwise."""
        if not _lib.has('tf_get_comm_precision'):
            return 'f32'
        return 'bf16' if lib.tf_get_comm_precision(self._handle()) == _lib.COMM['bf16'] else 'f32'

    def context(self, k, comm=None):
        """A new context for dense width k (collective, like tf_context_create).
        comm: what B rows travel as, 'f32' or 'bf16' (None or 'plan': the
        plan's choice); the same on every rank (docs/python.md)."""
        return Context(self, k, comm)

    def _context_for(self, k, comm=None):
        """The context of width k (and precision comm) that spmm(plan, B)
        reuses (created on first use)."""
        key = (k, comm or 'plan')
        c = self._contexts.get(key)
        if c is None or c._ctx is None:
            c = self._contexts[key] = Context(self, k, comm)
        return c

    # ---- freeing (collective) ----
    def _release(self):
        # Contexts first (they belong to this handle), newest first.
        for obj in [o for o in reversed(_live) if isinstance(o, Context) and o.plan is self]:
            obj._release()
        if self._h is not None:
            lib.tf_close(self._h)
            self._h = None
            self.comm.Free()
        if self in _live:
            _live.remove(self)

    def close(self):
        """Collective: frees the plan and every context made from it."""
        self._release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = 'closed' if self._h is None else f'{self.m}x{self.n} nnz {self.nnz}, ' \
            f'rank {self.rank}/{self.nranks} rows {self.rows} brows {self.brows}'
        return f'twoface.Plan({self.path!r}: {state})'


class Context:
    """Buffers and communicators of one dense width k (tf_context_create).

    `b` is a float32 tensor of shape (nbrows, k) over the library's B buffer
    (the memory other ranks read): writing into it and calling spmm(ctx) with
    no B moves nothing in Python. After free() (or the plan's close()), `b`
    and every view made from it raise TwofaceError when used (_rows.py).
    `comm_precision` is what B rows travel as, 'f32' or 'bf16'."""

    def __init__(self, plan, k, comm=None):
        self._ctx = None
        self.plan = plan
        h = plan._handle()
        msg = None
        try:  # Python and numpy integers; not floats, not bools
            k = k if isinstance(k, bool) else operator.index(k)
        except TypeError:
            pass
        if not isinstance(k, int) or isinstance(k, bool) or k < 1 or k > 2 ** 31 - 1:
            msg = f'twoface: context width k must be an integer >= 1, got {k!r}'
        code = _lib.COMM.get('plan' if comm is None else comm) if isinstance(
            comm, (str, type(None))) else None
        if msg is None and code is None:
            msg = f"twoface: comm must be 'f32', 'bf16' or 'plan' (or None), got {comm!r}"
        if msg is None and code and not _lib.has('tf_ctx_comm_precision'):
            msg = 'twoface: this libtwoface cannot move B rows as bf16; rebuild it'
        agree(plan.comm, msg, same=k if msg is None else 0)
        c = ctypes.c_void_p()
        opt = None
        if code:  # the library resolves 0 (the plan's) itself; agreed over the ranks there
            opt = _lib.ExecOptions()
            lib.tf_exec_options_default(ctypes.byref(opt))
            opt.comm = code
        check(lib.tf_context_create(h, k, ctypes.byref(opt) if opt is not None else None,
                                    ctypes.byref(c)))
        self._ctx = c
        self.k = k
        self.comm_precision = 'f32'
        if _lib.has('tf_ctx_comm_precision'):
            self.comm_precision = 'bf16' if lib.tf_ctx_comm_precision(c) == _lib.COMM['bf16'] else 'f32'
        _live.append(self)
        b0, nb = ctypes.c_int64(), ctypes.c_int64()
        p = lib.tf_b_rows(c, ctypes.byref(b0), ctypes.byref(nb))
        if nb.value == 0 or not p:
            self._b = torch.empty((0, k), dtype=torch.float32)
        else:
            buf = (ctypes.c_float * (nb.value * k)).from_address(p)
            self._b = torch.frombuffer(buf, dtype=torch.float32).view(nb.value, k)
        self._b_view = guarded(self, self._b)

    @property
    def b(self):
        """This rank's rows of B, in the library's buffer (see the class)."""
        if self._ctx is None:
            raise TwofaceError('twoface: the context has been freed, and its b with it')
        return self._b_view

    def free(self):
        """Collective (tf_context_free)."""
        self._release()

    def _release(self):
        if self._ctx is not None:
            lib.tf_context_free(self._ctx)
            self._ctx = None
            self._b = None
        if self in _live:
            _live.remove(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()


def _check_b(B, nrows, k, what):
    """None when B can serve as this rank's B (nrows x k float32 on the CPU),
    else the one-line reason."""
    if not isinstance(B, torch.Tensor):
        return f'twoface: {what} must be a torch.Tensor, got {type(B).__name__}'
    if B.dtype != torch.float32:
        return f'twoface: {what} must be torch.float32 (the library computes in float32), ' \
               f'got {B.dtype}'
    if B.device.type != 'cpu':
        return f'twoface: {what} must be on the CPU, got {B.device}'
    if B.dim() != 2 or B.shape[0] != nrows or (k is not None and B.shape[1] != k):
        want = f'({nrows}, {k})' if k is not None else f'({nrows}, K)'
        rows = 'C' if what == 'out' else 'B'
        return f'twoface: {what} has shape {tuple(B.shape)}, expected {want} ' \
               f'(this rank\'s rows of {rows})'
    if k is None and B.shape[1] < 1:
        return f'twoface: {what} has no columns'
    return None


def spmm(target, B=None, out=None, comm=None, _problem=None, _trusted=False):
    """Collective. This rank's rows of C = A @ B, a (nrows, K) float32 tensor.

    target: a Plan (its context of width B.shape[1] is made on first use and
    reused) or a Context. B: this rank's rows of B, (nbrows, K) float32; it is
    copied straight into the library's B buffer, or not at all when it is the
    context's own `b`. B=None (Context only) uses what `b` holds. out: an
    optional (nrows, K) float32 contiguous tensor to write C into. comm: what
    B rows travel as, 'f32' or 'bf16' (None: the plan's choice with a Plan,
    the context's own with a Context, which it must then equal).

    Shape, dtype and width are checked on every rank and agreed before any
    communication of the library: a bad B on one rank raises TwofaceError on
    all of them."""
    if isinstance(target, Plan):
        plan, ctx = target, None
    elif isinstance(target, Context):
        plan, ctx = target.plan, target
    else:
        raise TypeError(f'twoface.spmm: expected a Plan or a Context, got {type(target).__name__}')
    plan._handle()
    if _trusted:  # SpMM's backward: dC has C's shape and dtype, K agreed in forward
        return _multiply(plan, target if ctx else plan._context_for(B.shape[1], comm), B, out)
    msg = None
    if ctx is not None and ctx._ctx is None:
        msg = 'twoface: the context has been freed'
    elif comm is not None and comm not in _lib.COMM:
        msg = f"twoface: comm must be 'f32', 'bf16' or 'plan' (or None), got {comm!r}"
    elif ctx is not None and comm not in (None, ctx.comm_precision):
        msg = f'twoface: the context moves B rows as {ctx.comm_precision}, but comm={comm!r} was asked'
    elif B is None and ctx is None:
        msg = 'twoface: spmm(plan, B) needs B'
    elif B is not None:
        msg = _check_b(B, plan.nbrows, ctx.k if ctx is not None else None, 'B')
    k = ctx.k if ctx is not None else (B.shape[1] if msg is None else 0)
    if msg is None and out is not None:
        msg = _check_b(out, plan.nrows, k, 'out')
        if msg is None and not out.is_contiguous():
            msg = 'twoface: out must be contiguous'
    # _problem: a caller's own precondition (SpMM's backward pairing), agreed
    # in the same reduction.
    code = _lib.COMM[ctx.comm_precision] if ctx is not None and ctx._ctx is not None \
        else _lib.COMM.get(comm or 'plan', 0)
    agree(plan.comm, msg or _problem, same=k, same_comm=code)
    if ctx is None:
        ctx = plan._context_for(k, comm)
    return _multiply(plan, ctx, B, out)


def _multiply(plan, ctx, B, out):
    k = ctx.k
    t0 = time.perf_counter()
    if B is not None and (ctx._b.numel() == 0 or B.data_ptr() != ctx._b.data_ptr()):
        ctx._b.copy_(B)
    if out is None:
        out = torch.empty((plan.nrows, k), dtype=torch.float32)
    st = lib.tf_spmm(ctx._ctx, out.data_ptr() if out.numel() else None)
    if st:
        # Other ranks may be blocked inside the SpMM: no agreement can follow
        # (twoface.h), so this rank ends the job, as the C programs do.
        sys.stderr.write(f'twoface: rank {plan.comm.Get_rank()}: SpMM failed: '
                         f'{_lib.last_error(st)}\n')
        sys.stderr.flush()
        plan.comm.Abort(1)
        raise TwofaceError(_lib.last_error(st), st)
    plan._seconds += time.perf_counter() - t0
    plan._calls += 1
    return out
