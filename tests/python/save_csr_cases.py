"""Cases of twoface.save_csr, run by test_save_csr.py under mpirun -n 1
(importing twoface initialises MPI). Each case writes a file with save_csr,
reads it back through the C reader (tf_h5csr_read, over ctypes) and prints
one JSON line: {"case", "ok", "detail"}. Argument: a scratch directory."""
import ctypes
import json
import os
import sys

import numpy as np
import torch

import twoface
from twoface._lib import TwofaceError, lib

out_dir = sys.argv[1]


class Csr(ctypes.Structure):
    _fields_ = [('nrows', ctypes.c_int64), ('ncols', ctypes.c_int64), ('nnz', ctypes.c_int64),
                ('rowptr', ctypes.POINTER(ctypes.c_int64)),
                ('col', ctypes.POINTER(ctypes.c_int32)), ('val', ctypes.POINTER(ctypes.c_float))]


lib.tf_h5csr_read.argtypes = [ctypes.c_char_p, ctypes.POINTER(Csr)]
lib.tf_h5csr_read.restype = ctypes.c_int
lib.tf_csr_free.argtypes = [ctypes.POINTER(Csr)]
lib.tf_csr_free.restype = None


def read_back(path):
    """The file as the C reader sees it: a dense float32 tensor, and whether
    its rows are sorted and unique (the reader's CSR invariant)."""
    a = Csr()
    st = lib.tf_h5csr_read(path.encode(), ctypes.byref(a))
    if st:
        raise TwofaceError(lib.tf_last_error().decode(), st)
    try:
        D = torch.zeros(a.nrows, a.ncols, dtype=torch.float32)
        for i in range(a.nrows):
            cols = [a.col[k] for k in range(a.rowptr[i], a.rowptr[i + 1])]
            assert cols == sorted(set(cols)), f'row {i} not sorted and unique: {cols}'
            for k in range(a.rowptr[i], a.rowptr[i + 1]):
                D[i, a.col[k]] = a.val[k]
        return D
    finally:
        lib.tf_csr_free(ctypes.byref(a))


def dense(rows, cols, vals, m, n):
    """Reference: entries summed in float64, rounded once (as the reader)."""
    D = torch.zeros(m, n, dtype=torch.float64)
    for r, c, v in zip(rows, cols, vals):
        D[r, c] += float(v)
    return D.to(torch.float32)


class FakeScipy:
    """What save_csr uses of a scipy.sparse matrix: shape and tocsr() giving
    indptr, indices (int32, as scipy makes them) and data arrays."""

    def __init__(self, indptr, indices, data, shape):
        self.indptr = np.asarray(indptr, dtype=np.int32)
        self.indices = np.asarray(indices, dtype=np.int32)
        self.data = np.asarray(data)
        self.shape = shape

    def tocsr(self):
        return self


def case(name, fn):
    try:
        fn(os.path.join(out_dir, name + '.h5'))
        rec = {'case': name, 'ok': True, 'detail': ''}
    except Exception as e:  # reported to pytest, which names the case
        rec = {'case': name, 'ok': False, 'detail': f'{type(e).__name__}: {e}'}
    print(json.dumps(rec), flush=True)


rows, cols = [0, 2, 2, 1, 2, 0], [3, 1, 1, 0, 0, 3]
vals = [0.5, 1.25, 2.0, -3.0, 4.0, 0.1]


def torch_coo(path):  # uncoalesced, duplicates in (2, 1) and (0, 3)
    A = torch.sparse_coo_tensor(torch.tensor([rows, cols]), torch.tensor(vals), (3, 5))
    twoface.save_csr(path, A)
    assert torch.equal(read_back(path), dense(rows, cols, torch.tensor(vals), 3, 5))


def torch_csr(path):
    A = torch.sparse_coo_tensor(torch.tensor([rows, cols]), torch.tensor(vals, dtype=torch.float64),
                                (4, 5)).coalesce().to_sparse_csr()
    twoface.save_csr(path, A)
    assert torch.equal(read_back(path), dense(rows, cols, vals, 4, 5))


def edge_index(path):  # numpy, with a repeated edge and isolated nodes 4, 5
    ei = np.array([[0, 1, 1, 3, 1], [1, 0, 2, 3, 2]])
    twoface.save_csr(path, ei, n=6)
    assert torch.equal(read_back(path), dense(ei[0], ei[1], [1.0] * 5, 6, 6))


def edge_index_default_n(path):
    ei = torch.tensor([[2, 0], [0, 2]], dtype=torch.int32)
    twoface.save_csr(path, ei)
    assert read_back(path).shape == (3, 3)


def scipy_like(path):
    twoface.save_csr(path, FakeScipy([0, 2, 2, 3], [4, 1, 1], [1.5, 2.5, 3.0], (3, 6)))
    assert torch.equal(read_back(path), dense([0, 0, 2], [4, 1, 1], [1.5, 2.5, 3.0], 3, 6))


def real_scipy(path):
    try:
        import scipy.sparse as sp
    except ImportError:
        return  # python3-scipy is not a dependency; the duck-typed case covers the path
    A = sp.random(20, 15, density=0.2, format='coo', random_state=1, dtype=np.float64)
    twoface.save_csr(path, A)
    assert torch.equal(read_back(path), torch.from_numpy(A.toarray()).to(torch.float32))


def expect_error(fn, what):
    try:
        fn()
    except TwofaceError as e:
        assert what in str(e), f'message {e!s} should contain {what!r}'
        return
    raise AssertionError(f'no error (expected {what!r})')


def bad_inputs(path):
    expect_error(lambda: twoface.save_csr(path, torch.zeros(3, 3)), 'edge_index of shape 2 x E')
    expect_error(lambda: twoface.save_csr(path, np.array([[0, -1], [1, 1]])), 'negative node id')
    expect_error(lambda: twoface.save_csr(path, np.array([[0, 5], [1, 1]]), n=3),
                 'names node 5, but n = 3')
    expect_error(lambda: twoface.save_csr(path, FakeScipy([0, 2, 1], [0, 0], [1, 1], (2, 2))),
                 'indptr decreases at row 1')
    expect_error(lambda: twoface.save_csr(os.path.join(out_dir, 'no', 'dir.h5'),
                                          np.array([[0], [0]])), 'cannot create')
    assert not os.path.exists(path)


for name, fn in [('torch_coo', torch_coo), ('torch_csr', torch_csr), ('edge_index', edge_index),
                 ('edge_index_default_n', edge_index_default_n), ('scipy_like', scipy_like),
                 ('real_scipy', real_scipy), ('bad_inputs', bad_inputs)]:
    case(name, fn)
