"""examples/gcn.py: training on twoface at 3 ranks follows, epoch by epoch,
the same model run in one process on torch.sparse.mm (an independent path:
the adjacency normalised by the script itself, PyTorch's own sparse products
and gradients). Dropout 0 makes both deterministic; the random features,
labels and split depend on node ids only, not on P. Graphs generated here:
a symmetric one (the plan serves the backward product) and a non-symmetric
one (--backward-plan), and a METIS plan that renumbers the rows. Bad input
fails on every rank, without a hang."""
import json
import os

import pytest

import tfutil

EXAMPLE = os.path.join(tfutil.SRC, 'examples', 'gcn.py')
ARGS = ['--random-features', '12', '--random-classes', '3', '--random-split', '--dropout', '0',
        '--epochs', '12', '--patience', '0', '--hidden', '8', '--json']


def pattern_mtx(path, A):
    idx = (A != 0).nonzero().tolist()
    with open(path, 'w') as f:
        f.write('%%MatrixMarket matrix coordinate pattern general\n')
        f.write(f'{A.shape[0]} {A.shape[1]} {len(idx)}\n')
        for i, j in idx:
            f.write(f'{i + 1} {j + 1}\n')


def losses(text):
    recs = [json.loads(l) for l in text.splitlines() if l.startswith('{')]
    return [r['train_loss'] for r in recs if 'epoch' in r], [r for r in recs if r.get('summary')]


def run_torch(mtx):
    import subprocess
    r = subprocess.run([tfutil.PYTHON, EXAMPLE, '--torch-sparse', mtx, *ARGS], capture_output=True,
                       text=True, env=tfutil.mpi_env(), timeout=tfutil.TIMEOUT)
    assert r.returncode == 0, r.stderr[-2000:]
    return losses(r.stdout)


def _has_metis():
    import subprocess
    r = subprocess.run([os.path.join(tfutil.BUILD, 'bin', 'twoface-plan'), '--help'],
                       capture_output=True, text=True)
    return '|metis' in r.stdout + r.stderr


VARIANTS = [(True, []), (False, []), (False, ['--partition', 'work'])]
IDS = ['symmetric', 'backward_plan', 'work_bands']
if _has_metis():  # rows renumbered: features, labels, split read through row_ids
    VARIANTS.append((True, ['--partition', 'metis']))
    IDS.append('metis')


@pytest.mark.parametrize('symmetric,partition', VARIANTS, ids=IDS)
def test_gcn_at_3_ranks_follows_torch_sparse(tmp_path, symmetric, partition):
    A = tfutil.random_sparse(45, 45, 0.08, seed=9, symmetric=symmetric)
    mtx = str(tmp_path / 'g.mtx')
    pattern_mtx(mtx, A)
    plan = tfutil.plan(mtx, 3, str(tmp_path / 'g.h5'), '--normalize', 'gcn', '-k', '8', *partition)
    extra = []
    if not symmetric:
        extra = ['--backward-plan', tfutil.plan(mtx, 3, str(tmp_path / 'gT.h5'), '--normalize',
                                                'gcn', '--transpose', '--bands-from', plan)]
    rc, out, err = tfutil.mpirun(3, EXAMPLE, plan, *ARGS, *extra)
    assert rc == 0, err[-2000:]
    got, summary = losses(out)
    want, _ = run_torch(mtx)
    assert len(got) == len(want) == 12 and summary and summary[0]['ranks'] == 3
    rel = max(abs(a - b) / abs(b) for a, b in zip(got, want))
    assert rel < 1e-4, f'train losses differ by {rel:.3g} (relative): {got} vs {want}'
    assert got[-1] < got[0], 'training did not lower the loss'


def test_gcn_bad_labels_fail_on_every_rank(tmp_path):
    A = tfutil.random_sparse(20, 20, 0.2, seed=2, symmetric=True)
    mtx = str(tmp_path / 'g.mtx')
    pattern_mtx(mtx, A)
    plan = tfutil.plan(mtx, 2, str(tmp_path / 'g.h5'), '--normalize', 'gcn')
    labels = tmp_path / 'labels.txt'
    labels.write_text('0\n1\n' * 9)  # 18 lines for 20 nodes
    rc, out, err = tfutil.mpirun(2, EXAMPLE, plan, '--random-features', '4', '--labels', labels,
                                 '--random-split')
    assert rc != 0
    assert err.count('18 lines, but the graph has 20 nodes') == 2, err[-2000:]


def test_gcn_starts_from_twoface_gcn_weights(tmp_path):
    """Same seed, same Glorot weights as twoface-gcn (both draw them from the
    counter-based generator of gnn/tf_gnn_rng.h): with dropout 0 the two
    trainers give the same validation losses on the shipped Cora. (Their
    train_loss differs: twoface-gcn's includes the weight-decay term.)"""
    data = os.path.join(tfutil.SRC, 'examples', 'data')
    plan = tfutil.plan(os.path.join(data, 'cora.mtx.zst'), 2, str(tmp_path / 'cora.h5'),
                       '--normalize', 'gcn', '-k', '16')
    args = ['--features', os.path.join(data, 'cora.features.mtx.zst'),
            '--labels', os.path.join(data, 'cora.labels.txt'),
            '--split', os.path.join(data, 'cora.split.txt'),
            '--dropout', '0', '--epochs', '4', '--patience', '0', '--seed', '5', '--json']
    def val_losses(text):
        recs = [json.loads(l) for l in text.splitlines() if l.startswith('{')]
        return [r['val_loss'] for r in recs if 'epoch' in r]

    rc, out, err = tfutil.mpirun(2, EXAMPLE, plan, *args)
    assert rc == 0, err[-2000:]
    mine = val_losses(out)
    import subprocess
    gcn = os.path.join(tfutil.BUILD, 'bin', 'twoface-gcn')
    r = subprocess.run(['mpirun', '-n', '2', '--bind-to', 'none', gcn, plan, *args],
                       capture_output=True, text=True, env=tfutil.mpi_env(),
                       timeout=tfutil.TIMEOUT)
    assert r.returncode == 0, r.stderr[-2000:]
    theirs = val_losses(r.stdout)
    assert len(mine) == len(theirs) == 4
    rel = max(abs(a - b) / abs(b) for a, b in zip(mine, theirs))
    assert rel < 1e-5, f'validation losses differ by {rel:.3g}: {mine} vs {theirs}'


def _epoch_lines(text, first):
    recs = [json.loads(l) for l in text.splitlines() if l.startswith('{')]
    return [(r['epoch'], r['train_loss'], r['val_loss']) for r in recs
            if 'epoch' in r and r['epoch'] >= first]


def test_gcn_resume_gives_the_same_loss_lines(tmp_path):
    """--checkpoint after 5 epochs, --resume to 12: with dropout on (each
    rank's generator is in the checkpoint) and 3 layers, the loss lines of
    epochs 6-12 equal those of the uninterrupted run at the same P."""
    A = tfutil.random_sparse(45, 45, 0.08, seed=9, symmetric=True)
    mtx = str(tmp_path / 'g.mtx')
    pattern_mtx(mtx, A)
    plan = tfutil.plan(mtx, 2, str(tmp_path / 'g.h5'), '--normalize', 'gcn', '-k', '8',
                       '--mode', 'collective')
    args = ['--random-features', '12', '--random-classes', '3', '--random-split',
            '--patience', '0', '--hidden', '8', '--layers', '3', '--seed', '3', '--json']
    ck = str(tmp_path / 'ck.pt')
    rc, full, err = tfutil.mpirun(2, EXAMPLE, plan, *args, '--epochs', '12')
    assert rc == 0, err[-2000:]
    rc, first, err = tfutil.mpirun(2, EXAMPLE, plan, *args, '--epochs', '5', '--checkpoint', ck)
    assert rc == 0, err[-2000:]
    assert json.loads(first.splitlines()[-1])['checkpoint'] == ck
    rc, rest, err = tfutil.mpirun(2, EXAMPLE, plan, *args, '--epochs', '12', '--resume', ck)
    assert rc == 0, err[-2000:]
    want, got = _epoch_lines(full, 6), _epoch_lines(rest, 1)
    assert len(want) == 7 and got == want, f'{got} vs {want}'
    # Another model shape: refused on every rank, in one line.
    rc, out, err = tfutil.mpirun(2, EXAMPLE, plan, *args[:-5], '--layers', '2', '--seed', '3',
                                 '--epochs', '12', '--resume', ck)
    assert rc != 0
    assert err.count('the checkpoint was made with another layers 3 (this run: 2)') == 2, err


def test_gcn_other_options_on_one_rank_stop_every_rank(tmp_path):
    """--epochs 5 on rank 1 only (a wrapper or an MPMD launch): the ranks would
    stop at other epochs and wait in different calls; every rank stops at once
    with the reason instead (a hang fails in tfutil)."""
    A = tfutil.random_sparse(45, 45, 0.08, seed=9, symmetric=True)
    mtx = str(tmp_path / 'g.mtx')
    pattern_mtx(mtx, A)
    plan = tfutil.plan(mtx, 2, str(tmp_path / 'g.h5'), '--normalize', 'gcn')
    wrapper = tmp_path / 'rank1_epochs.py'
    wrapper.write_text('import os, runpy, sys\n'
                       'if os.environ.get("OMPI_COMM_WORLD_RANK") == "1":\n'
                       '    sys.argv += ["--epochs", "5"]\n'
                       f'sys.argv[0] = {EXAMPLE!r}\n'
                       f'runpy.run_path({EXAMPLE!r}, run_name="__main__")\n')
    rc, out, err = tfutil.mpirun(2, str(wrapper), plan, *ARGS)
    assert rc != 0, f'the job exited 0: {err[-2000:]}'
    assert 'gcn.py: rank 1: given other options than rank 0: every rank must get the same' \
        in err, err[-2000:]
    assert '"summary"' not in out
