"""Freeing in Python (docs/python.md, "Freeing"): ctx.b and its views raise
TwofaceError after ctx.free() or plan.close(), never touch freed memory (the
use-after-free and use-after-close sequences, at 1 and 3 ranks: a segfault
would be exit status 139); argument errors carry TF_ERR_ARG, library errors their own code;
an uncaught exception or sys.exit(n != 0) on one rank ends the job instead of
freeing collectively."""
import os

import pytest

import tfutil


@pytest.fixture(scope='module', params=[1, 3])
def results(request, tmp_path_factory):
    P = request.param
    d = tmp_path_factory.mktemp(f'free{P}')
    A = tfutil.random_sparse(14, 14, 0.3, seed=3, symmetric=True)
    mtx = str(d / 'a.mtx')
    tfutil.write_mtx(mtx, A)
    plan = tfutil.plan(mtx, P, str(d / 'a.h5'))
    rc, out, err = tfutil.mpirun(P, os.path.join(tfutil.HERE, 'mpi_freeing.py'), plan,
                                 str(d / 'missing.h5'))
    return P, rc, tfutil.json_lines(out), err


@pytest.mark.parametrize('name', ['free_then_fill', 'close_then_sum', 'views_and_copies',
                                  'spmm_in_place_still_works', 'bad_plan_arguments'])
def test_freeing(results, name):
    P, rc, recs, err = results
    assert rc == 0, f'mpi_freeing.py at P={P} exited {rc}: {err[-2000:]}'
    assert name in recs, f'{name} not reported at P={P}: {err[-2000:]}'
    assert recs[name]['ok'], f'{name} at P={P}: ' + ' || '.join(recs[name]['details'])


def test_uncaught_exception_on_one_rank(tmp_path):
    """An exception on rank 1 only, with a context open, while rank 0 runs an
    SpMM: rank 1 must not wait at exit to free collectively; the job ends
    with a non-zero status and the reason on stderr (a hang fails in tfutil)."""
    A = tfutil.random_sparse(14, 14, 0.3, seed=3, symmetric=True)
    mtx = str(tmp_path / 'a.mtx')
    tfutil.write_mtx(mtx, A)
    plan = tfutil.plan(mtx, 2, str(tmp_path / 'a.h5'))
    rc, out, err = tfutil.mpirun(2, os.path.join(tfutil.HERE, 'mpi_local_exception.py'), plan)
    assert rc != 0, f'the job exited 0: {err[-2000:]}'
    assert 'RuntimeError: a failure on rank 1 only' in err, err[-2000:]
    assert 'twoface: rank 1 ends on an uncaught exception with plans open' in err, err[-2000:]
    assert 'rank 0 done' not in out


def test_sys_exit_on_one_rank(tmp_path):
    """The same with sys.exit(3) on rank 1, which Python's exception hook
    never sees: the job ends with a non-zero status and the reason."""
    A = tfutil.random_sparse(14, 14, 0.3, seed=3, symmetric=True)
    mtx = str(tmp_path / 'a.mtx')
    tfutil.write_mtx(mtx, A)
    plan = tfutil.plan(mtx, 2, str(tmp_path / 'a.h5'))
    rc, out, err = tfutil.mpirun(2, os.path.join(tfutil.HERE, 'mpi_local_exception.py'), plan,
                                 'exit')
    assert rc != 0, f'the job exited 0: {err[-2000:]}'
    assert 'twoface: rank 1 ends on sys.exit(3) with plans open' in err, err[-2000:]
    assert 'rank 0 done' not in out
