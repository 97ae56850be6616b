"""twoface.save_csr: a sparse matrix as an HDF5 CSR file, the binary input of
twoface-plan (docs/planning.md, "Input").

The file is written by libtwoface (tf_h5csr_write, through ctypes), not by
h5py: the module then needs nothing beyond torch, and the file is exactly the
layout the C reader checks. h5py users can write the same layout themselves
(the three lines in docs/planning.md).
"""
import ctypes

import torch

from . import _lib
from ._lib import TwofaceError, check, lib


def _as_tensor(x):
    return x if isinstance(x, torch.Tensor) else torch.as_tensor(x)


def _from_coo(rows, cols, vals, m):
    """CSR arrays from coordinates, keeping the order of entries within a row
    (duplicates stay, the reader sums them in double in that order)."""
    order = torch.sort(rows, stable=True).indices
    counts = torch.bincount(rows, minlength=m) if rows.numel() else torch.zeros(m, dtype=torch.int64)
    indptr = torch.zeros(m + 1, dtype=torch.int64)
    indptr[1:] = torch.cumsum(counts, 0)
    return indptr, cols[order], (None if vals is None else vals[order])


def _csr_arrays(matrix, n):
    """(m, n, indptr, indices, data or None) of a scipy.sparse matrix, a torch
    sparse tensor (COO or CSR), or an edge_index (2 x E) with a node count."""
    if hasattr(matrix, 'tocsr') and hasattr(matrix, 'shape'):  # scipy.sparse, duck-typed
        c = matrix.tocsr()
        m, nc = (int(d) for d in c.shape)
        return (m, nc, _as_tensor(c.indptr), _as_tensor(c.indices), _as_tensor(c.data))
    t = _as_tensor(matrix)
    if t.layout == torch.sparse_csr:
        m, nc = t.shape
        return m, nc, t.crow_indices(), t.col_indices(), t.values()
    if t.layout == torch.sparse_coo:
        if t.dim() != 2:
            raise TwofaceError(f'save_csr: a sparse tensor of {t.dim()} dimensions, expected 2')
        m, nc = t.shape
        idx = t._indices()
        indptr, indices, data = _from_coo(idx[0], idx[1], t._values(), m)
        return m, nc, indptr, indices, data
    # edge_index, PyG's convention: row = edge_index[0], column = edge_index[1]
    if t.dim() != 2 or t.shape[0] != 2 or t.dtype.is_floating_point or t.dtype == torch.bool:
        raise TwofaceError('save_csr: expected a scipy.sparse matrix, a torch sparse tensor or '
                           f'an integer edge_index of shape 2 x E, got {t.dtype} of shape '
                           f'{tuple(t.shape)}')
    t = t.to(torch.int64)
    if t.numel() and int(t.min()) < 0:
        raise TwofaceError(f'save_csr: edge_index has a negative node id {int(t.min())}')
    top = int(t.max()) + 1 if t.numel() else 0
    if n is None:
        n = top
    if top > n:
        raise TwofaceError(f'save_csr: edge_index names node {top - 1}, but n = {n}')
    indptr, indices, _ = _from_coo(t[0], t[1], None, n)
    return n, n, indptr, indices, None


def save_csr(path, matrix, n=None):
    """Writes `matrix` to `path` as an HDF5 CSR file (indptr int64, indices
    int32 or int64, data float32 or float64 as given, shape attribute),
    replacing the file atomically.

    matrix: a scipy.sparse matrix or array (any format; converted with
    tocsr()), a torch sparse tensor (COO, uncoalesced entries are kept and
    summed by the reader, or CSR), or a PyG-style edge_index (2 x E integer
    tensor or array; edge (edge_index[0][e], edge_index[1][e]) has value 1,
    repeated edges sum) with n nodes (default: the largest id + 1).
    Integer or boolean values are written as float64.
    """
    if not _lib.has('tf_h5csr_write'):
        raise TwofaceError(f'save_csr: {_lib.path} has no tf_h5csr_write (rebuild it with make)')
    m, nc, indptr, indices, data = _csr_arrays(matrix, n)
    indptr = _as_tensor(indptr).to(torch.int64).contiguous()
    indices = _as_tensor(indices)
    if indices.dtype not in (torch.int32, torch.int64):
        indices = indices.to(torch.int64)
    indices = indices.contiguous()
    vbytes, dptr = 0, None
    if data is not None:
        data = _as_tensor(data)
        if data.dtype not in (torch.float32, torch.float64):
            data = data.to(torch.float64)
        data = data.contiguous()
        vbytes, dptr = data.element_size(), ctypes.c_void_p(data.data_ptr())
    if indptr.numel() != m + 1:
        raise TwofaceError(f'save_csr: indptr has {indptr.numel()} entries, expected {m + 1}')
    check(lib.tf_h5csr_write(str(path).encode(), m, nc, ctypes.c_void_p(indptr.data_ptr()),
                             ctypes.c_void_p(indices.data_ptr()), indices.element_size(), dptr,
                             vbytes))
