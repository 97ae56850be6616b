"""ctx.b: a view of the library's B buffer that cannot outlive it.

The buffer is MPI window memory, freed by the collective tf_context_free;
it cannot be kept alive for a Python reference (the garbage collector must
not run collective calls). So ctx.b and every view made from it (b[1:],
b.t(), b.view(-1), ...) are _Rows tensors that check, on every torch
operation, that their context is still open, and raise TwofaceError once it
is freed, instead of touching freed memory. Results that do not share the
buffer (b.sum(), b.clone(), b + 1) are plain tensors, valid forever. What
would hand out the raw memory beyond torch's reach (numpy(), __array__,
__dlpack__, storage()) is refused: copy first (ctx.b.clone().numpy())."""
import torch

from ._lib import TwofaceError

_ESCAPES = {getattr(torch.Tensor, n) for n in
            ('numpy', '__array__', '__dlpack__', 'storage', 'untyped_storage', '_storage')
            if hasattr(torch.Tensor, n)}


def _tensors(args, kwargs):
    stack = [args, tuple(kwargs.values())]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, torch.Tensor):
            yield x


class _Rows(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        owner = None
        for t in _tensors(args, kwargs):
            if type(t) is _Rows:
                o = t.__dict__.get('_tf_owner')
                if o is None or not o.alive():
                    raise TwofaceError('twoface: ctx.b (or a view of it) used after ctx.free() '
                                       'or plan.close(): the library\'s B buffer is gone; copy '
                                       'what you need first (ctx.b.clone())')
                owner = o
        if func in _ESCAPES:
            raise TwofaceError(f'twoface: {getattr(func, "__name__", func)}() of ctx.b would '
                               'outlive ctx.free(); copy first (ctx.b.clone())')
        with torch._C.DisableTorchFunction():
            ret = func(*args, **kwargs)
        return _tag(ret, owner)


def _tag(ret, owner):
    """Views into the buffer stay _Rows of `owner`; everything else is plain."""
    if isinstance(ret, (list, tuple)):
        return type(ret)(_tag(r, owner) for r in ret)
    if not isinstance(ret, torch.Tensor) or owner is None:
        return ret
    with torch._C.DisableTorchFunction():
        p, empty = ret.data_ptr(), ret.numel() == 0
    # A new tensor cannot lie inside the live buffer: only views do (an
    # empty view may point just past its end).
    if owner.lo <= p < owner.hi or (empty and p == owner.hi):
        v = ret if type(ret) is _Rows else ret.as_subclass(_Rows)
        v._tf_owner = owner
        return v
    return ret.as_subclass(torch.Tensor) if type(ret) is _Rows else ret


class Owner:
    """What the views of one context's buffer check: the context is open."""

    def __init__(self, ctx, raw):
        self.ctx = ctx
        self.lo = raw.data_ptr()
        self.hi = self.lo + raw.numel() * raw.element_size()

    def alive(self):
        return self.ctx._ctx is not None


def guarded(ctx, raw):
    """The _Rows view of `raw` (the plain tensor over the buffer) for ctx."""
    v = raw.as_subclass(_Rows)
    v._tf_owner = Owner(ctx, raw)
    return v
