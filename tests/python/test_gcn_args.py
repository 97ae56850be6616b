"""examples/gcn.py on bad arguments and odd inputs, against twoface-gcn: the
same ranges and the same one-line messages for every numeric option;
non-finite features refused naming the row and column; a non-finite loss
stops training with twoface-gcn's line; a split without validation or test
nodes shows n/a (JSON null) and says once that early stopping is off."""
import importlib.util
import json
import math
import os
import subprocess

import pytest

import tfutil

EXAMPLE = os.path.join(tfutil.SRC, 'examples', 'gcn.py')
GCN = os.path.join(tfutil.BUILD, 'bin', 'twoface-gcn')
RANDOM = ['--random-features', '4', '--random-classes', '3', '--random-split']


def load_example():
    spec = importlib.util.spec_from_file_location('gcn_example', EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope='module')
def plan1(tmp_path_factory):
    d = tmp_path_factory.mktemp('plan')
    A = tfutil.random_sparse(10, 10, 0.3, seed=4, symmetric=True)
    mtx = str(d / 'g.mtx')
    tfutil.write_mtx(mtx, A)
    return tfutil.plan(mtx, 1, str(d / 'g.h5'), '--normalize', 'gcn')


BAD = [
    ['--dropout', '1.0'], ['--dropout', '-0.1'], ['--epochs', '0'], ['--hidden', '0'], ['--layers', '1'],
    ['--hidden', '4097'], ['--hidden', 'abc'], ['--lr', '-1'], ['--lr', 'nan'],
    ['--weight-decay', 'inf'], ['--patience', '-1'], ['--seed', '-3'], ['--every', '1.5'],
    ['--threads', '2000'], ['--random-classes', '1'], ['--random-features', '0'],
]


@pytest.mark.parametrize('bad', BAD, ids=[' '.join(b) for b in BAD])
def test_bad_numbers_give_twoface_gcn_message(plan1, bad):
    args = [a for a in RANDOM]
    for i, opt in enumerate(args):  # a bad --random-* value replaces the good one
        if opt == bad[0]:
            del args[i:i + 2]
            break
    r = subprocess.run([tfutil.PYTHON, EXAMPLE, plan1, *args, *bad], capture_output=True,
                       text=True, env=tfutil.mpi_env(), timeout=tfutil.TIMEOUT)
    c = subprocess.run(['mpirun', '-n', '1', '--bind-to', 'none', GCN, plan1, *args, *bad],
                       capture_output=True, text=True, env=tfutil.mpi_env(),
                       timeout=tfutil.TIMEOUT)
    assert r.returncode == 1, r.stderr[-2000:]
    assert c.returncode != 0
    mine = r.stderr.strip().splitlines()
    theirs = [l for l in c.stderr.splitlines() if l.startswith('twoface-gcn: ')]
    assert len(mine) == 1 and 'Traceback' not in r.stderr, r.stderr[-2000:]
    assert len(theirs) == 1, c.stderr[-2000:]
    assert mine[0].startswith('gcn.py: ')
    assert mine[0][len('gcn.py: '):] == theirs[0][len('twoface-gcn: '):]


def test_check_args_accepts_the_defaults_and_the_bounds():
    gcn = load_example()
    import argparse
    a = argparse.Namespace(layers='32', hidden='4096', epochs='1', patience='0', seed='0', every='0',
                           threads=None, random_features=None, random_classes='2', lr='0',
                           weight_decay='1e6', dropout='0.999')
    assert gcn.check_args(a) is None
    assert (a.layers, a.hidden, a.epochs, a.random_classes, a.dropout) == (32, 4096, 1, 2, 0.999)


def test_finite_loss_message():
    gcn = load_example()
    assert gcn.finite_loss(4, 0.5) is None
    assert gcn.finite_loss(2, math.nan).startswith(
        'epoch 2: the training loss is not finite (nan); ')
    assert 'not finite (inf)' in gcn.finite_loss(9, math.inf)


def write_inputs(d, n, split_words, bad_value=None):
    feat = d / 'f.mtx'
    lines = [f'{i + 1} {i % 3 + 1} {bad_value if (bad_value and i == n - 2) else 1.0}'
             for i in range(n)]
    feat.write_text('%%MatrixMarket matrix coordinate real general\n'
                    f'{n} 3 {n}\n' + '\n'.join(lines) + '\n')
    labels = d / 'l.txt'
    labels.write_text(''.join(f'{i % 2}\n' for i in range(n)))
    split = d / 's.txt'
    split.write_text(''.join(f'{split_words[i % len(split_words)]}\n' for i in range(n)))
    return ['--features', str(feat), '--labels', str(labels), '--split', str(split)]


@pytest.mark.parametrize('value', ['nan', 'inf', '-inf'])
def test_non_finite_features_are_refused(tmp_path, value):
    A = tfutil.random_sparse(12, 12, 0.3, seed=5, symmetric=True)
    mtx = str(tmp_path / 'g.mtx')
    tfutil.write_mtx(mtx, A)
    inputs = write_inputs(tmp_path, 12, ['train', 'val', 'test'], bad_value=value)
    r = subprocess.run([tfutil.PYTHON, EXAMPLE, '--torch-sparse', mtx, *inputs],
                       capture_output=True, text=True, env=tfutil.mpi_env(),
                       timeout=tfutil.TIMEOUT)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr[-2000:]
    assert f'f.mtx: entry 11 (row 11, column 2): {value} is not a finite number' in lines[0]


def test_empty_validation_and_test_splits_say_na(tmp_path):
    A = tfutil.random_sparse(12, 12, 0.3, seed=6, symmetric=True)
    mtx = str(tmp_path / 'g.mtx')
    tfutil.write_mtx(mtx, A)
    inputs = write_inputs(tmp_path, 12, ['train', 'none'])
    base = [tfutil.PYTHON, EXAMPLE, '--torch-sparse', mtx, *inputs, '--epochs', '3']
    r = subprocess.run(base, capture_output=True, text=True, env=tfutil.mpi_env(),
                       timeout=tfutil.TIMEOUT)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stderr.count('gcn.py: note: no validation nodes: early stopping is off') == 1
    assert 'val loss n/a  val acc n/a' in r.stdout
    assert 'test accuracy n/a (val n/a, train ' in r.stdout
    assert ' 0.00 %' not in r.stdout
    r = subprocess.run(base + ['--json'], capture_output=True, text=True, env=tfutil.mpi_env(),
                       timeout=tfutil.TIMEOUT)
    assert r.returncode == 0, r.stderr[-2000:]
    recs = [json.loads(l) for l in r.stdout.splitlines() if l.startswith('{')]
    summary = [x for x in recs if x.get('summary')][0]
    assert summary['val_acc'] is None and summary['test_acc'] is None
    assert summary['train_acc'] is not None
