#!/usr/bin/python3
"""The standard GCN (Kipf & Welling, ICLR 2017; two layers, --layers L for
more) in plain PyTorch, its sparse products on twoface (twoface.SpMM), one
process per rank:

    mpirun -n P /usr/bin/python3 examples/gcn.py PLAN --features F --labels L --split S

PLAN is a plan of the normalised adjacency (twoface-plan GRAPH --normalize gcn
-n P -o PLAN); a non-symmetric matrix also needs --backward-plan (twoface-plan
GRAPH --normalize gcn --transpose --bands-from PLAN -o PLAN_T). With
--torch-sparse the first argument is the graph's Matrix Market file instead,
normalised here, and the same model runs in one process on torch.sparse.mm:
what a PyTorch user would run without twoface.

Model and recipe as twoface-gcn and ../shared/data/gnn/check_gcn.py:
Z = A_hat . drop(ReLU(A_hat . drop(X) . W0)) . W1 (L = 2), features row-normalised,
Glorot-uniform weights, no bias, softmax cross-entropy over the train nodes,
Adam (lr 0.01), weight decay 5e-4 on W0 only, dropout 0.5, at most 200 epochs,
stop when the validation loss exceeds the mean of the previous 10. X.W0 and
H.W1 come before each SpMM, so every SpMM runs at K = hidden or K = classes.
Each rank reads only its rows of the features, labels and split; weight
gradients are summed over ranks (one MPI_Allreduce per epoch), weights and
Adam state are replicated. Dropout masks are drawn per rank (unlike
twoface-gcn's, they depend on P). docs/python.md and docs/gnn.md.

--checkpoint FILE (every --checkpoint-every N epochs and at the end) is one
torch.save of the weights, the optimiser's state_dict, the epoch, the
stopping rule's history and every rank's dropout generator, written by rank 0
to a temporary file next to FILE and renamed over it; --resume FILE loads it
on every rank and continues: at the same P, the same run as without the
interruption.
"""
import argparse
import gzip
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F


# ---- inputs ---------------------------------------------------------------------

class InputError(Exception):
    pass


def read_text(path):
    try:
        if path.endswith('.zst'):
            with open(path, 'rb') as f:
                r = subprocess.run(['zstd', '-dcq'], stdin=f, capture_output=True)
            if r.returncode:
                raise InputError(f'{path}: zstd failed: {r.stderr.decode().strip()}')
            return r.stdout.decode()
        if path.endswith('.gz'):
            with gzip.open(path, 'rt') as f:
                return f.read()
        with open(path) as f:
            return f.read()
    except OSError as e:
        raise InputError(f'{path}: cannot read: {e.strerror}')
    except UnicodeDecodeError:
        raise InputError(f'{path}: not a text file')


def read_mm(path):
    """Matrix Market coordinate file -> (rows, cols, 0-based i, j, values
    float64, symmetry), the entries as stored."""
    text = read_text(path)
    lines = text.split('\n')
    head = lines[0].split()
    if len(head) < 5 or head[0] != '%%MatrixMarket' or head[2] != 'coordinate':
        raise InputError(f'{path}:1: expected a %%MatrixMarket matrix coordinate header')
    field, sym = head[3], head[4]
    k = 1
    while k < len(lines) and (lines[k].startswith('%') or not lines[k].strip()):
        k += 1
    try:
        m, n, nnz = map(int, lines[k].split())
    except (ValueError, IndexError):
        raise InputError(f'{path}:{k + 1}: expected "rows cols nnz"')
    body = ' '.join(lines[k + 1:]).split()
    per = 2 if field == 'pattern' else 3
    if len(body) != per * nnz:
        raise InputError(f'{path}: expected {nnz} entries of {per} numbers, '
                         f'found {len(body)} numbers')
    try:
        a = np.array(body, dtype=np.float64).reshape(nnz, per)
    except ValueError:
        raise InputError(f'{path}: non-numeric entry')
    i, j = a[:, 0].astype(np.int64) - 1, a[:, 1].astype(np.int64) - 1
    if nnz and (i.min() < 0 or j.min() < 0 or i.max() >= m or j.max() >= n):
        raise InputError(f'{path}: entry index outside {m} x {n}')
    v = a[:, 2] if per == 3 else np.ones(nnz)
    bad = np.flatnonzero(~np.isfinite(v))
    if len(bad):  # as twoface's reader: one NaN would make every loss NaN
        e = bad[0]
        raise InputError(f'{path}: entry {e + 1} (row {i[e] + 1}, column {j[e] + 1}): '
                         f'{v[e]} is not a finite number')
    return m, n, i, j, v, sym


def local_index(ids, n):
    """Global id -> position among this rank's ids (-1 elsewhere)."""
    pos = np.full(n, -1, dtype=np.int64)
    pos[ids] = np.arange(len(ids))
    return pos


def row_normalise_coo(i, j, v, nrows):
    s = np.bincount(i, weights=v, minlength=nrows)
    return v / np.where(s != 0, s, 1.0)[i]  # an all-zero row stays zero


def read_features(path, ids, n):
    """This rank's rows (ids, in order) of the features, row-normalised, as a
    sparse COO tensor; and the number of features."""
    m, nf, i, j, v, _ = read_mm(path)
    if m != n:
        raise InputError(f'{path}: {m} rows, but the graph has {n} nodes')
    pos = local_index(ids, n)[i]
    keep = pos >= 0
    li, lj, lv = pos[keep], j[keep], v[keep]
    lv = row_normalise_coo(li, lj, lv, len(ids))
    X = torch.sparse_coo_tensor(np.vstack([li, lj]), lv.astype(np.float32), (len(ids), nf))
    return X.coalesce(), nf


def read_lines(path, n):
    words = read_text(path).split('\n')
    if words and words[-1] == '':
        words.pop()
    if len(words) != n:
        raise InputError(f'{path}: {len(words)} lines, but the graph has {n} nodes')
    return words


def read_labels(path, ids, n):
    words = read_lines(path, n)
    out = np.empty(len(ids), dtype=np.int64)
    for k, g in enumerate(ids):
        try:
            out[k] = int(words[g])
        except (ValueError, OverflowError):
            raise InputError(f'{path}:{g + 1}: expected an integer class, got {words[g]!r}')
        if out[k] < 0:
            raise InputError(f'{path}:{g + 1}: negative class {out[k]}')
    return torch.from_numpy(out)


SPLITS = ('train', 'val', 'test', 'none')


def read_split(path, ids, n):
    words = read_lines(path, n)
    code = {s: c for c, s in enumerate(SPLITS)}
    out = np.empty(len(ids), dtype=np.int64)
    for k, g in enumerate(ids):
        w = words[g].strip()
        if w not in code:
            raise InputError(f'{path}:{g + 1}: expected train, val, test or none, got {w!r}')
        out[k] = code[w]
    return torch.from_numpy(out)


CHUNK = 4096


def random_rows(ids, seed, kind, width, draw):
    """Random per-node rows that depend on the node's global id only (not on
    P): nodes are drawn in chunks of CHUNK ids, each from its own generator."""
    out = torch.empty((len(ids), width) if width else (len(ids),))
    ids_t = torch.as_tensor(ids)
    for c in torch.unique(ids_t // CHUNK).tolist():
        g = torch.Generator().manual_seed(((seed * 1000003 + kind) * 1000003 + c) % 2 ** 63)
        block = draw(g, (CHUNK, width) if width else (CHUNK,))
        sel = (ids_t // CHUNK) == c
        out[sel] = block[ids_t[sel] % CHUNK]
    return out


def random_inputs(a, ids, n):
    X = y = split = None
    nf = ncls = None
    if a.random_features:
        nf = a.random_features
        X = random_rows(ids, a.seed, 1, nf, lambda g, s: torch.rand(s, generator=g))
        X = X / X.sum(1, keepdim=True)
    if a.random_classes:
        ncls = a.random_classes
        y = random_rows(ids, a.seed, 2, 0,
                        lambda g, s: torch.randint(0, ncls, s, generator=g).float()).long()
    if a.random_split:  # 10 % train, 10 % val, 20 % test, the rest none
        u = random_rows(ids, a.seed, 3, 0, lambda g, s: torch.rand(s, generator=g))
        split = torch.full((len(ids),), 3, dtype=torch.int64)
        split[u < 0.4] = 2
        split[u < 0.2] = 1
        split[u < 0.1] = 0
    return X, nf, y, ncls, split


# ---- communication --------------------------------------------------------------

class Serial:
    """The one-process stand-in of the communicator (--torch-sparse)."""
    rank, size = 0, 1

    def sum(self, t):
        return t

    def max(self, x):
        return x

    def agree(self, msg):
        if msg:
            raise InputError(msg)


class Ranks:
    def __init__(self, comm):
        from mpi4py import MPI
        self.MPI, self.comm = MPI, comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()

    def sum(self, t):
        """Sum a float tensor over ranks, in place (one MPI_Allreduce)."""
        t = t.contiguous()
        self.comm.Allreduce(self.MPI.IN_PLACE, t.numpy(), op=self.MPI.SUM)
        return t

    def max(self, x):
        return self.comm.allreduce(x, op=self.MPI.MAX)

    def agree(self, msg):
        import twoface
        twoface.agree(self.comm, msg)


# ---- the adjacency --------------------------------------------------------------

def gcn_normalise(path):
    """D^-1/2 (A + I) D^-1/2 as twoface-plan --normalize gcn makes it (self
    loops added where missing; out-degree left, in-degree right), as a torch
    sparse COO float32 tensor."""
    m, n, i, j, v, sym = read_mm(path)
    if m != n:
        raise InputError(f'{path}: a GCN adjacency must be square, got {m} x {n}')
    if sym in ('symmetric', 'skew-symmetric'):
        off = i != j
        i, j = np.r_[i, j[off]], np.r_[j, i[off]]
        v = np.r_[v, (-1 if sym == 'skew-symmetric' else 1) * v[off]]
    A = torch.sparse_coo_tensor(np.vstack([i, j]), v, (n, n)).coalesce()  # sums duplicates
    (i, j), v = A.indices().numpy(), A.values().numpy()
    has = np.zeros(n, dtype=bool)
    has[i[i == j]] = True
    miss = np.flatnonzero(~has)
    i, j, v = np.r_[i, miss], np.r_[j, miss], np.r_[v, np.ones(len(miss))]
    dout = np.bincount(i, weights=v, minlength=n)
    din = np.bincount(j, weights=v, minlength=n)
    inv = lambda d: np.where(d > 0, 1 / np.sqrt(np.where(d > 0, d, 1)), 0.0)  # noqa: E731
    v = inv(dout)[i] * v * inv(din)[j]
    return torch.sparse_coo_tensor(np.vstack([i, j]), v.astype(np.float32), (n, n)).coalesce()


# ---- the model ------------------------------------------------------------------

_M64 = (1 << 64) - 1


def _mix(z):
    """splitmix64's finaliser on uint64 arrays (gnn/tf_gnn_rng.h, wrapping arithmetic)."""
    with np.errstate(over='ignore'):
        z = z + np.uint64(0x9e3779b97f4a7c15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xbf58476d1ce4e5b9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94d049bb133111eb)
    return z ^ (z >> np.uint64(31))


def glorot(seed, layer, fan_in, fan_out):
    """Glorot-uniform weights drawn exactly as twoface-gcn draws them (gnn/tf_gnn_init.c:
    weight (i, j) from the counter-based generator keyed by (seed, layer, INIT, row i,
    column j)), so that the same seed starts both trainers from the same weights."""
    init_stream = 2  # TF_GNN_RNG_INIT
    key = _mix(_mix(_mix(np.array([seed & _M64], dtype=np.uint64)) ^ np.uint64(layer))
               ^ np.uint64(init_stream))
    rows = _mix(key ^ np.arange(fan_in, dtype=np.uint64))
    bits = _mix(rows[:, None] ^ np.arange(fan_out, dtype=np.uint64)[None, :])
    u = (bits >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    r = math.sqrt(6.0 / (fan_in + fan_out))
    return torch.from_numpy((2 * u - 1) * r).float()


def dropout(X, p, g):
    if p <= 0:
        return X
    if X.is_sparse:  # on the stored entries, as Kipf's sparse_dropout
        keep = (torch.rand(X._nnz(), generator=g) >= p).float() / (1 - p)
        return torch.sparse_coo_tensor(X.indices(), X.values() * keep, X.shape)
    return X * ((torch.rand(X.shape, generator=g) >= p).float() / (1 - p))


def matmul(X, W):
    return torch.sparse.mm(X, W) if X.is_sparse else X @ W


# The ranges and messages of twoface-gcn's options (cli/tf_gnn_cli.c,
# cli/tf_cli.c): whole numbers, and numbers with their bounds.
MAX_WIDTH = 4096    # TF_GNN_MAX_WIDTH
MAX_CLASSES = 4096  # TF_GNN_MAX_CLASSES
INT_RANGES = {'layers': (2, 32), 'hidden': (1, MAX_WIDTH), 'epochs': (1, 1000000000), 'patience': (0, 1000000),
              'seed': (0, 2 ** 63 - 1), 'every': (0, 2 ** 63 - 1), 'threads': (0, 1024),
              'random_features': (1, 1 << 20), 'random_classes': (2, MAX_CLASSES)}
FLOAT_RANGES = {'lr': (0, 1e6), 'weight_decay': (0, 1e6), 'dropout': (0, 1)}


def check_args(a):
    """Converts the numeric options of `a` in place; the first bad one's
    message (twoface-gcn's words), or None."""
    for name, (lo, hi) in INT_RANGES.items():
        s = getattr(a, name)
        if s is None or isinstance(s, int):
            continue
        try:
            v = int(s, 10)
        except ValueError:
            v = None
        if v is None or not lo <= v <= hi:
            return f"--{name.replace('_', '-')} '{s}': expected a whole number in {lo}..{hi}"
        setattr(a, name, v)
    for name, (lo, hi) in FLOAT_RANGES.items():
        s = getattr(a, name)
        if isinstance(s, float):
            continue
        try:
            v = float(s)
        except ValueError:
            v = math.nan
        if not (math.isfinite(v) and lo <= v <= hi):
            return f"--{name.replace('_', '-')} '{s}': expected a number in {lo:.15g}..{hi:.15g}"
        if name == 'dropout' and v >= 1:  # a keep probability of 0 divides by zero
            return f"--dropout '{s}': expected a number in 0..1, below 1"
        setattr(a, name, v)
    return None


def finite_loss(epoch, loss):
    """None, or twoface-gcn's line when the (rank-summed) loss is NaN or Inf."""
    if math.isfinite(loss):
        return None
    return (f'epoch {epoch}: the training loss is not finite ({loss}); check the features for '
            f'NaN or Inf, or lower --lr')


def pct(x):
    """An accuracy, or n/a for a split without nodes (never a fake 0)."""
    return 'n/a' if math.isnan(x) else f'{100 * x:.2f} %'


def none_if_nan(x):
    """JSON has no NaN: an empty split's value is null."""
    return None if math.isnan(x) else x


# ---- checkpoints ----------------------------------------------------------------

CKPT_FORMAT = 'examples/gcn.py checkpoint'
# What a checkpoint must share with the run that resumes it.
CKPT_ID = ('nodes', 'fingerprint', 'features', 'layers', 'hidden', 'classes', 'seed', 'dropout',
           'lr', 'weight_decay', 'patience')


def output_target(path):
    """The file an output path names (links followed), refused unless it is a
    regular file or absent, in a directory that exists."""
    target = os.path.realpath(path)
    if os.path.exists(target) and not os.path.isfile(target):
        raise InputError(f'{path}: not a regular file; gcn.py writes only regular files')
    if not os.path.isdir(os.path.dirname(target)):
        raise InputError(f'{path}: directory {os.path.dirname(target)} does not exist')
    return target


def save_atomic(path, obj):
    """torch.save to a temporary file next to path's target, fsync, rename: a
    job killed while writing leaves the previous file whole."""
    target = output_target(path)
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(target) + '.tmp.',
                               dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, 'wb') as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise


def _umask():
    m = os.umask(0)
    os.umask(m)
    return m


def load_checkpoint(path, ident):
    """The state saved at path, or InputError naming what differs from ident."""
    try:
        st = torch.load(path, map_location='cpu')
    except Exception as e:  # torch raises many kinds for a file that is not its own
        raise InputError(f'--resume {path}: not a gcn.py checkpoint ({type(e).__name__})')
    if not isinstance(st, dict) or st.get('format') != CKPT_FORMAT:
        raise InputError(f'--resume {path}: not a gcn.py checkpoint')
    diff = [f'{k} {st.get(k)!r} (this run: {ident[k]!r})' for k in CKPT_ID if st.get(k) != ident[k]]
    if diff:
        raise InputError(f'--resume {path}: the checkpoint was made with another ' + ', '.join(diff))
    return st


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('plan', help='plan of the normalised adjacency (with --torch-sparse: the '
                                 'graph as Matrix Market)')
    ap.add_argument('--features')
    ap.add_argument('--labels')
    ap.add_argument('--split')
    ap.add_argument('--random-features', metavar='F')
    ap.add_argument('--random-classes', metavar='C')
    ap.add_argument('--random-split', action='store_true')
    # Numbers are checked by check_args, in twoface-gcn's words.
    ap.add_argument('--layers', default=2, help='graph convolutions, at least 2')
    ap.add_argument('--hidden', default=16)
    ap.add_argument('--epochs', default=200)
    ap.add_argument('--lr', default=0.01)
    ap.add_argument('--weight-decay', default=5e-4)
    ap.add_argument('--dropout', default=0.5)
    ap.add_argument('--patience', default=10, help='0 = never stop early')
    ap.add_argument('--seed', default=0)
    ap.add_argument('--backward-plan', help='plan of A^T, for a non-symmetric matrix')
    ap.add_argument('--torch-sparse', action='store_true',
                    help='one process, torch.sparse.mm on the graph PLAN (Matrix Market)')
    ap.add_argument('--threads', help='torch threads per process')
    ap.add_argument('--every', default=1, help='print every N epochs (0 = summary)')
    ap.add_argument('--json', action='store_true')
    ap.add_argument('--checkpoint', metavar='FILE', help='torch.save of the training state')
    ap.add_argument('--checkpoint-every', type=int, metavar='N',
                    help='epochs between checkpoints (default 10)')
    ap.add_argument('--resume', metavar='FILE', help='continue from this checkpoint')
    ap.add_argument('--comm', choices=('f32', 'bf16', 'plan'), default=None,
                    help="what the SpMMs' B rows (activations, gradients) travel as "
                         "(default: the plan's choice)")
    a = ap.parse_args(argv)
    msg = check_args(a)
    if msg:
        sys.exit(f'gcn.py: {msg}')
    if a.checkpoint_every is not None and (a.checkpoint_every < 1 or not a.checkpoint):
        ap.error('--checkpoint-every N needs N >= 1 and --checkpoint FILE')
    a.checkpoint_every = a.checkpoint_every or 10
    if a.checkpoint:
        try:
            output_target(a.checkpoint)
        except InputError as e:
            ap.error(f'--checkpoint: {e}')
    for opt, rnd in (('features', 'random_features'), ('labels', 'random_classes'),
                     ('split', 'random_split')):
        if (getattr(a, opt) is None) == (not getattr(a, rnd)):
            ap.error(f'give exactly one of --{opt} and --{rnd.replace("_", "-")}')
    if a.threads:
        torch.set_num_threads(a.threads)

    plan = bplan = None
    if a.torch_sparse:
        comm = Serial()
        try:
            A = gcn_normalise(a.plan)
        except InputError as e:
            sys.exit(f'gcn.py: {e}')
        n = A.shape[0]
        ids = np.arange(n)
        prop = lambda H: torch.sparse.mm(A, H)  # noqa: E731
        algo = 'torch.sparse'
    else:
        import twoface
        from twoface import MPI
        comm = Ranks(MPI.COMM_WORLD)
        # The options that shape the training must be alike on every rank
        # (a wrapper or an MPMD launch may give one rank others): the ranks
        # would otherwise stop at other epochs and wait in different calls.
        # Paths and threads may differ (each node its own copies).
        shape = {k: v for k, v in vars(a).items()
                 if k not in ('plan', 'backward_plan', 'features', 'labels', 'split',
                              'checkpoint', 'resume', 'threads')}
        shape.update({k: getattr(a, k) is not None
                      for k in ('backward_plan', 'features', 'labels', 'split', 'checkpoint',
                                'resume')})
        digest = int.from_bytes(hashlib.sha256(repr(sorted(shape.items())).encode())
                                .digest()[:7], 'little')
        first = MPI.COMM_WORLD.bcast(digest, root=0)
        try:
            comm.agree(None if digest == first else
                       'given other options than rank 0: every rank must get the same '
                       '(paths and --threads may differ)')
        except twoface.TwofaceError as e:
            sys.exit(f'gcn.py: {e}')
        try:
            plan = twoface.Plan(a.plan)
            if a.backward_plan:
                bplan = twoface.Plan(a.backward_plan)
        except twoface.TwofaceError as e:
            sys.exit(f'gcn.py: {e}')
        n = plan.m
        ids = plan.row_ids.numpy()
        msg = None
        if plan.m != plan.n or not torch.equal(plan.row_ids, plan.brow_ids):
            msg = f'{a.plan}: the GCN needs a square plan whose row and B-row bands agree'
        elif plan.normalization not in (None, 'gcn'):
            msg = f'{a.plan}: normalised {plan.normalization!r}, the GCN expects --normalize gcn'
        try:
            comm.agree(msg)
        except twoface.TwofaceError as e:
            sys.exit(f'gcn.py: {e}')
        prop = lambda H: twoface.SpMM.apply(H, plan, bplan, a.comm)  # noqa: E731
        algo = 'twoface'

    # Inputs: this rank's rows only; any bad input fails on every rank alike.
    msg = None
    X = y = split = None
    nf = ncls = None
    try:
        X, nf, y, ncls, split = random_inputs(a, ids, n)
        if a.features:
            X, nf = read_features(a.features, ids, n)
        if a.labels:
            y = read_labels(a.labels, ids, n)
        if a.split:
            split = read_split(a.split, ids, n)
    except InputError as e:
        msg = str(e)
    except Exception as e:  # MemoryError and the like: the other ranks wait below
        msg = f'rank {comm.rank}: reading the inputs: {type(e).__name__}: {e}'
    try:
        comm.agree(msg)
    except Exception as e:
        sys.exit(f'gcn.py: {e}')
    if ncls is None:  # classes = 1 + the largest label over all ranks
        ncls = comm.max(int(y.max()) if len(y) else -1) + 1
    # Both are sums or maxima over ranks, so every rank exits alike.
    if ncls < 2:
        sys.exit(f'gcn.py: {ncls} classes in {a.labels}; need at least 2')
    counts = comm.sum(torch.tensor([float((split == s).sum()) for s in range(3)]))
    if counts[0] == 0:
        sys.exit('gcn.py: no train nodes in the split')
    if counts[1] == 0 and a.patience > 0 and comm.rank == 0:
        print('gcn.py: note: no validation nodes: early stopping is off', file=sys.stderr)

    L = a.layers
    widths = [nf] + [a.hidden] * (L - 1) + [ncls]
    Ws = [glorot(a.seed, l, widths[l], widths[l + 1]).requires_grad_() for l in range(L)]
    W0 = Ws[0]
    opt = torch.optim.Adam([{'params': [W0], 'weight_decay': a.weight_decay},
                            {'params': Ws[1:], 'weight_decay': 0.0}], lr=a.lr)
    drop_g = torch.Generator().manual_seed(a.seed * 7919 + 1 + comm.rank)
    masks = [split == s for s in range(3)]

    def forward(train):
        H = X
        for l, W in enumerate(Ws):
            if l > 0:
                H = torch.relu(H)
            Hd = dropout(H, a.dropout, drop_g) if train else H
            H = prop(matmul(Hd, W))
        return H

    def evaluate():
        with torch.no_grad():
            Z = forward(False)
            logp = F.log_softmax(Z, 1)
            stats = []
            for s in range(3):
                mk = masks[s]
                stats += [float(-logp[mk, y[mk]].sum()), float((Z[mk].argmax(1) == y[mk]).sum())]
            stats = comm.sum(torch.tensor(stats, dtype=torch.float64)).tolist()
        reg = 0.5 * a.weight_decay * float((W0.detach().double() ** 2).sum())
        # A split without nodes has no loss or accuracy: NaN (n/a), and
        # early stopping on a NaN validation loss never fires.
        loss = [stats[2 * s] / counts[s].item() + reg if counts[s] else math.nan
                for s in range(3)]
        acc = [stats[2 * s + 1] / counts[s].item() if counts[s] else math.nan for s in range(3)]
        return loss, acc

    def out(rec):
        if comm.rank == 0:
            text = rec.pop('text')
            print(json.dumps(rec) if a.json else text, flush=True)

    spmm_s = lambda: sum(p.spmm_seconds[0] for p in (plan, bplan) if p)  # noqa: E731
    val_hist, t_sum, s_sum, timed = [], 0.0, 0.0, 0
    stopped = False
    start = 0
    ident = {'nodes': n, 'fingerprint': plan.fingerprint if plan else None, 'features': nf,
             'layers': L, 'hidden': a.hidden, 'classes': ncls, 'seed': a.seed,
             'dropout': a.dropout, 'lr': a.lr, 'weight_decay': a.weight_decay,
             'patience': a.patience}

    def rng_states():
        """Every rank's dropout generator state, on rank 0 (None elsewhere)."""
        s = drop_g.get_state()
        return [s] if comm.size == 1 else comm.comm.gather(s, root=0)

    def checkpoint(epochs, stopped):
        states = rng_states()
        msg = None
        if comm.rank == 0:
            # Any failure here (a full disk is a RuntimeError of torch.save)
            # must reach the agreement below, which the other ranks wait in.
            try:
                st = dict(ident, format=CKPT_FORMAT, version=1, epoch=epochs, stopped=stopped,
                          ranks=comm.size, weights=[W.detach().clone() for W in Ws],
                          optimizer=opt.state_dict(), val_hist=list(val_hist),
                          dropout_rng=states)
                save_atomic(a.checkpoint, st)
            except (OSError, InputError) as e:
                msg = f'--checkpoint {a.checkpoint}: {e}'
            except Exception as e:
                msg = f'--checkpoint {a.checkpoint}: {type(e).__name__}: {e}'
        comm.agree(msg)

    if a.resume:
        msg, st = None, None
        try:
            st = load_checkpoint(a.resume, ident)
        except InputError as e:
            msg = str(e)
        try:
            comm.agree(msg)
        except Exception as e:
            sys.exit(f'gcn.py: {e}')
        with torch.no_grad():
            for W, w in zip(Ws, st['weights']):
                W.copy_(w)
        opt.load_state_dict(st['optimizer'])
        val_hist = list(st['val_hist'])
        start, stopped = st['epoch'], st['stopped']
        if st['ranks'] == comm.size:
            drop_g.set_state(st['dropout_rng'][comm.rank])
        else:  # the masks depend on P anyway: a fresh stream per rank and epoch
            drop_g.manual_seed((a.seed * 7919 + 1 + comm.rank) * 1000003 + start)
        loss_ev, acc_ev = evaluate()  # the result, should no epoch be left to run
    epochs = start
    for epoch in range(start, a.epochs if not stopped else start):
        t0, s0 = time.perf_counter(), spmm_s()
        opt.zero_grad()
        Z = forward(True)
        tm = masks[0]
        loss = F.cross_entropy(Z[tm], y[tm], reduction='sum') / counts[0]
        loss.backward()
        flat = comm.sum(torch.cat([W.grad.flatten() for W in Ws] + [loss.detach()[None]]))
        off = 0
        for W in Ws:
            W.grad.copy_(flat[off:off + W.numel()].view_as(W))
            off += W.numel()
        opt.step()
        loss_ev, acc_ev = evaluate()
        dt = time.perf_counter() - t0
        epochs = epoch + 1
        if epoch > start:  # the first epoch pays one-off costs (contexts, trial)
            t_sum += dt
            s_sum += spmm_s() - s0
            timed += 1
        train_loss = float(flat[-1]) + 0.5 * a.weight_decay * float((W0.detach() ** 2).sum())
        msg = finite_loss(epochs, train_loss)  # summed over ranks: all stop alike
        if msg:
            if comm.rank == 0:
                print(f'gcn.py: {msg}', file=sys.stderr, flush=True)
            sys.exit(1)
        if a.every and (epochs == 1 or epochs % a.every == 0):
            vl = 'n/a' if math.isnan(loss_ev[1]) else f'{loss_ev[1]:.6f}'
            va = 'n/a' if math.isnan(acc_ev[1]) else f'{100 * acc_ev[1]:6.2f} %'
            out({'epoch': epochs, 'train_loss': train_loss, 'val_loss': none_if_nan(loss_ev[1]),
                 'val_acc': none_if_nan(acc_ev[1]), 'time_ms': 1e3 * dt,
                 'text': f'epoch {epochs:4d}  train loss {train_loss:.6f}  val loss '
                         f'{vl}  val acc {va}  {1e3 * dt:8.3f} ms'})
        val_hist.append(loss_ev[1])
        if a.patience > 0 and epoch > a.patience and \
                loss_ev[1] > np.mean(val_hist[-(a.patience + 1):-1]):
            stopped = True
        # Every rank must stop at the same epoch: the losses are sums over
        # ranks, but the regularisation term is summed by each rank's torch.
        stopped = bool(comm.max(int(stopped)))
        if a.checkpoint and (epochs % a.checkpoint_every == 0 or stopped or epochs == a.epochs):
            try:
                checkpoint(epochs, stopped)
            except Exception as e:
                sys.exit(f'gcn.py: {e}')
        if stopped:
            break
    per = comm.sum(torch.tensor([t_sum / max(timed, 1), s_sum / max(timed, 1)],
                                dtype=torch.float64)) / comm.size
    ep_ms, sp_ms = 1e3 * per[0].item(), 1e3 * per[1].item()
    share = sp_ms / ep_ms if ep_ms > 0 else 0.0
    out({'summary': True, 'algo': algo, 'ranks': comm.size, 'epochs': epochs,
         'stopped_early': stopped, 'train_acc': none_if_nan(acc_ev[0]),
         'val_acc': none_if_nan(acc_ev[1]), 'test_acc': none_if_nan(acc_ev[2]),
         'test_loss': none_if_nan(loss_ev[2]), 'epoch_ms': ep_ms, 'spmm_ms': sp_ms,
         'spmm_share': share, **({'checkpoint': a.checkpoint} if a.checkpoint else {}),
         'text': f'test accuracy {pct(acc_ev[2])} (val {pct(acc_ev[1])}, train '
                 f'{pct(acc_ev[0])}) after {epochs} epochs'
                 f'{" (early stop)" if stopped else ""}\n'
                 f'time per epoch {ep_ms:.3f} ms = spmm {sp_ms:.3f} ms ({100 * share:.1f} %) '
                 f'+ the rest  [{algo}, {comm.size} ranks, mean over ranks]'})
    for p in (bplan, plan):
        if p:
            p.close()


if __name__ == '__main__':
    main()
