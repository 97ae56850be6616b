"""Helpers of the Python tests: matrices written in the test, plans made with
the build's twoface-plan, scripts launched under mpirun with a timeout (a
hang is a failure, not a stuck test run)."""
import json
import os
import subprocess

import torch

SRC = os.environ.get('TF_SRCDIR') or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BUILD = os.environ.get('TF_BUILD', 'build')
BUILD = BUILD if os.path.isabs(BUILD) else os.path.join(SRC, BUILD)
PYTHON = '/usr/bin/python3'
HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = int(os.environ.get('TF_PY_TIMEOUT', '300'))


def write_mtx(path, A):
    """A dense torch matrix as Matrix Market coordinate real general (its
    nonzeros, 1-based, values with 9 significant digits: exact in float32)."""
    idx = A.nonzero().tolist()
    with open(path, 'w') as f:
        f.write('%%MatrixMarket matrix coordinate real general\n')
        f.write(f'{A.shape[0]} {A.shape[1]} {len(idx)}\n')
        for i, j in idx:
            f.write(f'{i + 1} {j + 1} {float(A[i, j]):.9g}\n')


def random_sparse(m, n, density, seed, symmetric=False):
    g = torch.Generator().manual_seed(seed)
    A = torch.rand(m, n, generator=g) * (torch.rand(m, n, generator=g) < density)
    A = A.to(torch.float32)
    if symmetric:
        A = A + A.T
    return A


def plan(mtx, P, out, *extra):
    cmd = [os.path.join(BUILD, 'bin', 'twoface-plan'), mtx, '-n', str(P), '-o', out, '-q', *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    if r.returncode != 0:
        raise RuntimeError(f'{" ".join(cmd)} failed: {r.stderr.strip()}')
    return out


def mpi_env():
    env = dict(os.environ)
    env.update({
        'OMPI_ALLOW_RUN_AS_ROOT': '1', 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1',
        'OMPI_MCA_rmaps_base_oversubscribe': '1', 'OMPI_MCA_osc': 'sm,rdma',
        'OMPI_MCA_osc_rdma_priority': '1', 'OMPI_MCA_mpi_yield_when_idle': '1',
        'OMP_NUM_THREADS': env.get('OMP_NUM_THREADS', '1'),
        'TF_BUILD': BUILD,
    })
    env['PYTHONPATH'] = os.path.join(SRC, 'python') + (
        os.pathsep + env['PYTHONPATH'] if env.get('PYTHONPATH') else '')
    return env


def mpirun(P, script, *args):
    """Runs `mpirun -n P python3 script args...`; returns (returncode, stdout, stderr)."""
    cmd = ['mpirun', '-n', str(P), '--bind-to', 'none', PYTHON, script, *map(str, args)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=mpi_env(), timeout=TIMEOUT)
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f'{" ".join(cmd)} did not finish in {TIMEOUT} s (a hang)') from e
    return r.returncode, r.stdout, r.stderr


def json_lines(text):
    out = {}
    for line in text.splitlines():
        if line.startswith('{'):
            rec = json.loads(line)
            out[rec['case']] = rec
    return out


def read_mtx(path):
    """The test's own reader of what write_mtx wrote: a dense float64 matrix."""
    with open(path) as f:
        lines = [l for l in f if not l.startswith('%')]
    m, n, _ = map(int, lines[0].split())
    A = torch.zeros(m, n, dtype=torch.float64)
    for l in lines[1:]:
        i, j, v = l.split()
        A[int(i) - 1, int(j) - 1] = float(v)
    return A
