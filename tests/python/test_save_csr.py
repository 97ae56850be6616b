"""twoface.save_csr: files written from torch sparse tensors (COO with
duplicates, CSR), edge_index arrays and scipy-style matrices read back
through the C reader equal the input (save_csr_cases.py, one process); and
twoface-plan plans such a file like the same matrix in Matrix Market."""
import os
import subprocess

import pytest

import tfutil

CASES = ('torch_coo', 'torch_csr', 'edge_index', 'edge_index_default_n', 'scipy_like',
         'real_scipy', 'bad_inputs')


@pytest.fixture(scope='module')
def results(tmp_path_factory):
    d = tmp_path_factory.mktemp('save_csr')
    rc, out, err = tfutil.mpirun(1, os.path.join(tfutil.HERE, 'save_csr_cases.py'), d)
    assert rc == 0, err
    return tfutil.json_lines(out), d


@pytest.mark.parametrize('case', CASES)
def test_case(results, case):
    recs, _ = results
    assert case in recs, f'{case} did not report'
    assert recs[case]['ok'], recs[case]['detail']


def _explain(path, tmp):
    cmd = [os.path.join(tfutil.BUILD, 'bin', 'twoface-plan'), str(path), '-n', '2', '-k', '4',
           '-o', str(tmp), '--explain']
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=tfutil.TIMEOUT)
    return r.returncode, r.stdout, r.stderr


def test_twoface_plan_reads_it(results, tmp_path):
    _, d = results
    # edge_index.h5 is the 6 x 6 pattern matrix of save_csr_cases.edge_index.
    mtx = tmp_path / 'same.mtx'
    mtx.write_text('%%MatrixMarket matrix coordinate real general\n6 6 5\n'
                   '1 2 1\n2 1 1\n2 3 1\n4 4 1\n2 3 1\n')
    rc1, out1, err1 = _explain(d / 'edge_index.h5', tmp_path / 'a.h5')
    rc2, out2, err2 = _explain(mtx, tmp_path / 'b.h5')
    assert rc1 == 0 and rc2 == 0, err1 + err2
    assert 'rank' in out1, out1
    assert out1.replace(str(d / 'edge_index.h5'), 'X') == out2.replace(str(mtx), 'X')


def test_twoface_plan_rejects_a_truncated_file(results, tmp_path):
    _, d = results
    data = (d / 'torch_coo.h5').read_bytes()
    bad = tmp_path / 'cut.h5'
    bad.write_bytes(data[:len(data) // 2])
    rc, out, err = _explain(bad, tmp_path / 'c.h5')
    assert rc != 0
    assert err.count('\n') == 1 and 'cut.h5' in err, err
    assert not (tmp_path / 'c.h5').exists()


def test_twoface_plan_under_mpirun_reads_it(results, tmp_path):
    """Each of 3 planning ranks reads its slice of the file: the same
    --explain as one process."""
    _, d = results
    path = d / 'torch_coo.h5'
    rc1, out1, err1 = _explain(path, tmp_path / 'a.h5')
    cmd = ['mpirun', '-n', '3', '--bind-to', 'none', os.path.join(tfutil.BUILD, 'bin', 'twoface-plan'),
           str(path), '-n', '2', '-k', '4', '-o', str(tmp_path / 'b.h5'), '--explain']
    r = subprocess.run(cmd, capture_output=True, text=True, env=tfutil.mpi_env(),
                       timeout=tfutil.TIMEOUT)
    rc3, out3, err3 = r.returncode, r.stdout, r.stderr
    assert rc1 == 0 and rc3 == 0, err1 + err3
    assert 'rank' in out1 and out3 == out1
