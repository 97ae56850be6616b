"""Loading libtwoface.so and declaring the C prototypes of include/twoface.h.

Only declarations live here: every computation is the library's. Getters that
newer libraries add (normalisation, symmetry, permutation) are declared when
the loaded library exports them, so the module also runs on older builds and
reports what it cannot know instead of guessing.
"""
import ctypes
import os

from ctypes import POINTER, c_char_p, c_int, c_int64, c_uint64, c_void_p

_LIB_NAME = 'libtwoface.so'


TF_ERR_ARG = 1  # format/tf_error.h: bad argument or option


class TwofaceError(RuntimeError):
    """A libtwoface call failed. `status` is the TF_ERR_* code of
    format/tf_error.h (TF_ERR_ARG for what the Python layer itself refuses:
    bad arguments, use after free), `str(e)` the one-line message."""

    def __init__(self, message, status=TF_ERR_ARG):
        super().__init__(message)
        self.status = status


TwofaceError.__module__ = 'twoface'  # how tracebacks name it


def _candidates():
    env = os.environ.get('TWOFACE_LIB')
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    out = []
    try:  # written by `make install`: the library installed beside the module
        from . import _install
        out.append(_install.LIBRARY)
    except ImportError:
        pass
    # the build tree: python/twoface -> ../../$BUILD/lib
    build = os.environ.get('TF_BUILD', 'build')
    root = os.path.dirname(os.path.dirname(here))
    out.append(os.path.join(build if os.path.isabs(build) else os.path.join(root, build),
                            'lib', _LIB_NAME))
    out.append(_LIB_NAME)  # the dynamic loader's search path
    return out


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + ' (missing)')
            continue
        try:
            # RTLD_GLOBAL: Open MPI's components, dlopened later by libmpi,
            # resolve libmpi's symbols globally; mpi4py has already promoted
            # libmpi itself, this keeps libtwoface's copy of the link visible.
            return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL), path
        except OSError as e:
            tried.append(f'{path} ({e})')
    raise ImportError('twoface: cannot load ' + _LIB_NAME + ': ' + '; '.join(tried) +
                      ' (build it with make, or set TWOFACE_LIB)')


lib, path = _load()

_h = c_void_p
_i64p = POINTER(c_int64)


class ExecOptions(ctypes.Structure):
    """tf_exec_options of include/twoface.h, field for field."""
    _fields_ = [('threads', c_int), ('threads_fetch', c_int), ('max_requests', c_int),
                ('baseline', c_int), ('select_calls', c_int), ('comm', c_int)]


# tf_exec_options.comm: what B rows travel as.
COMM = {'plan': 0, 'f32': 1, 'bf16': 2}

_PROTOTYPES = {
    'tf_open_fcomm': (c_int, [c_char_p, c_int64, POINTER(c_void_p)]),
    'tf_close': (c_int, [_h]),
    'tf_get_nranks': (c_int, [_h]),
    'tf_get_rank': (c_int, [_h]),
    'tf_get_m': (c_int64, [_h]),
    'tf_get_n': (c_int64, [_h]),
    'tf_get_nnz': (c_int64, [_h]),
    'tf_get_rows': (None, [_h, _i64p, _i64p]),
    'tf_get_brows': (None, [_h, _i64p, _i64p]),
    'tf_get_k_planned': (c_int, [_h]),
    'tf_get_mode_name': (c_char_p, [_h]),
    'tf_context_create': (c_int, [_h, c_int, c_void_p, POINTER(c_void_p)]),
    'tf_context_free': (c_int, [c_void_p]),
    'tf_b_rows': (c_void_p, [c_void_p, _i64p, _i64p]),
    'tf_spmm': (c_int, [c_void_p, c_void_p]),
    'tf_ctx_k': (c_int, [c_void_p]),
    'tf_status_string': (c_char_p, [c_int]),
    'tf_last_error': (c_char_p, []),
}

# Added by later branches; declared only when present (see has()).
_OPTIONAL = {
    'tf_get_normalization': (c_char_p, [_h]),
    'tf_get_symmetric': (c_int, [_h]),
    'tf_get_transposed': (c_int, [_h]),
    'tf_get_fingerprint': (c_uint64, [_h]),
    'tf_check_backward': (c_int, [_h, _h]),
    'tf_get_permuted': (c_int, [_h]),
    'tf_get_row_ids': (_i64p, [_h]),
    'tf_get_brow_ids': (_i64p, [_h]),
    'tf_exec_options_default': (None, [POINTER(ExecOptions)]),
    'tf_get_comm_precision': (c_int, [_h]),
    'tf_ctx_comm_precision': (c_int, [c_void_p]),
    'tf_h5csr_write': (c_int, [c_char_p, c_int64, c_int64, c_void_p, c_void_p, c_int, c_void_p,
                               c_int]),
}


def _declare(table, required):
    for name, (res, args) in table.items():
        if not hasattr(lib, name):
            if required:
                raise ImportError(f'twoface: {path} has no {name} (rebuild it with make)')
            continue
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args


_declare(_PROTOTYPES, True)
_declare(_OPTIONAL, False)


def has(name):
    """True when the loaded library exports the C function `name`."""
    return hasattr(lib, name)


def last_error(status):
    msg = lib.tf_last_error()
    msg = msg.decode(errors='replace') if msg else ''
    if not msg:
        msg = lib.tf_status_string(status).decode(errors='replace')
    return msg


def check(status):
    """Raise TwofaceError carrying tf_last_error() when status is not TF_OK."""
    if status:
        raise TwofaceError(last_error(status), status)
