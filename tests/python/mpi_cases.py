"""Run under mpirun by test_twoface.py: mpi_cases.py SPEC.json.

SPEC is a list of cases ({"case": name, "kind": ..., paths ...}). Every rank
runs every case; rank 0 prints one JSON line per case with "ok" true only
when the case passed on every rank, and each rank's detail. A case that
hangs makes the whole run time out, which the test reports."""
import json
import sys
import traceback

import torch

import twoface
from twoface import MPI
from tfutil import read_mtx

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()


def global_b(n, k, seed=7):
    return torch.rand(n, k, generator=torch.Generator().manual_seed(seed)) - 0.5


def expect_error(fn, *needles):
    """fn() must raise TwofaceError whose text contains every needle."""
    try:
        fn()
    except twoface.TwofaceError as e:
        text = str(e)
        missing = [s for s in needles if s not in text]
        return (not missing), text
    return False, 'no exception'


def case_spmm(c):
    A = read_mtx(c['mtx'])
    k = c['k']
    with twoface.Plan(c['plan']) as p:
        assert (p.m, p.n, p.nnz) == (A.shape[0], A.shape[1], int((A != 0).sum())), 'getters'
        assert p.nranks == size and p.rank == rank, 'rank getters'
        nr, nb = p.nrows, p.nbrows
        rid, bid = p.row_ids, p.brow_ids  # original ids (permuted by a METIS plan)
        assert p.permuted == c.get('permuted', False), f'permuted {p.permuted}'
        assert len(rid) == nr and len(bid) == nb, 'id lengths'
        Bg = global_b(p.n, k)
        B = Bg[bid].contiguous()
        C = twoface.spmm(p, B)
        ref = (A @ Bg.double())[rid]
        err = (C.double() - ref).abs().max().item() if nr else 0.0
        scale = max(1.0, ref.abs().max().item() if nr else 1.0)
        # The same product through a context whose B buffer is filled in
        # place (no copy in spmm), into caller memory: bit-identical.
        with p.context(k) as ctx:
            ctx.b.copy_(B)
            out = torch.full((nr, k), float('nan'))
            C2 = twoface.spmm(ctx, out=out)
            # (not bit-identical: a plan with a runner-up alternates plans
            # in its first calls, which sum in different orders)
            same = C2.data_ptr() == out.data_ptr() and torch.allclose(C2, C, rtol=1e-5, atol=1e-6)
        # A non-contiguous B (a transposed view) is copied into the buffer.
        C3 = twoface.spmm(p, B.T.contiguous().T)
        ok = err <= 1e-5 * scale and same and torch.allclose(C3, C, rtol=1e-5, atol=1e-6)
        # every original row exactly once over the ranks
        ok = ok and sorted(sum(comm.allgather(rid.tolist()), [])) == list(range(p.m))
        return ok, f'rows {p.rows} brows {p.brows} max err {err:.3g} (scale {scale:.3g}) ' \
                   f'in-place same {same}'


def case_bad_path(c):
    return expect_error(lambda: twoface.Plan(c['plan']), 'cannot open')


def case_wrong_ranks(c):
    return expect_error(lambda: twoface.Plan(c['plan']), 'plan is for', f'{size} ranks')


def case_bad_b(c):
    k = 3
    with twoface.Plan(c['plan']) as p:
        nb = p.nbrows
        good = torch.ones(nb, k)
        last = size - 1
        results = []
        results.append(expect_error(
            lambda: twoface.spmm(p, good.double() if rank == last else good), 'float32'))
        results.append(expect_error(
            lambda: twoface.spmm(p, torch.ones(nb + 1, k) if rank == 0 else good), 'shape'))
        if size > 1:
            results.append(expect_error(
                lambda: twoface.spmm(p, torch.ones(nb, k + 1) if rank == last else good),
                'disagree on the dense width'))
        results.append(expect_error(
            lambda: twoface.spmm(p, [1.0] if rank == last else good), 'torch.Tensor'))
        with p.context(k) as ctx:
            results.append(expect_error(lambda: twoface.spmm(ctx, torch.ones(nb, k + 1)),
                                        f', {k}) (this rank'))
            results.append(expect_error(
                lambda: twoface.spmm(ctx, good, out=torch.ones(p.nrows + 1, k)), 'out has shape'))
        results.append(expect_error(lambda: p.context(0 if rank == last else 2), 'k must be'))
        # After all of that the plan still works.
        C = twoface.spmm(p, good)
        ok = all(r[0] for r in results) and C.shape == (p.nrows, k)
        return ok, ' | '.join(f'{r[0]}: {r[1]}' for r in results)


def case_gradcheck(c):
    """gradcheck of B -> A @ B over the global B: every rank holds the same
    global B and gets the same global C, so gradcheck's many calls are made
    by all ranks alike; the rank's rows go through twoface.SpMM."""
    with twoface.Plan(c['plan']) as p, \
            (twoface.Plan(c['backward']) if c.get('backward') else _null()) as q:
        nr, (b0, nb) = p.nrows, p.brows
        counts = comm.allgather(nr)

        class Rows(torch.autograd.Function):  # global B -> this rank's rows
            @staticmethod
            def forward(ctx, Bg):
                return Bg[b0:b0 + nb].contiguous()

            @staticmethod
            def backward(ctx, g):
                return torch.cat(comm.allgather(g))  # B-row bands tile B

        class Gather(torch.autograd.Function):  # this rank's rows of C -> global C
            @staticmethod
            def forward(ctx, C):
                return torch.cat(comm.allgather(C))

            @staticmethod
            def backward(ctx, g):
                return g[sum(counts[:rank]):sum(counts[:rank]) + nr].contiguous()

        def f(Bg):
            return Gather.apply(twoface.SpMM.apply(Rows.apply(Bg), p, q))

        Bg = global_b(p.n, c['k']).requires_grad_()
        ok = torch.autograd.gradcheck(f, (Bg,), eps=1e-2, atol=1e-3, rtol=1e-3,
                                      raise_exception=False)
        # and against the dense transpose product
        A = read_mtx(c['mtx'])
        G = global_b(p.m, c['k'], seed=11)
        f(Bg).backward(G)
        err = (Bg.grad.double() - A.T @ G.double()).abs().max().item()
        return ok and err < 1e-4, f'gradcheck {ok}, |dB - A^T dC| {err:.3g}'


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        pass


def case_needs_backward(c):
    """A non-symmetric plan without a backward plan, or with the plan of a
    matrix that is not its transpose plan: an error on every rank, before
    any product."""
    with twoface.Plan(c['plan']) as p:
        assert p.symmetric is False, 'plan of a non-symmetric matrix reported symmetric'
        B = torch.ones(p.nbrows, 2).requires_grad_()
        r1 = expect_error(lambda: twoface.SpMM.apply(B, p), '--transpose')
        with twoface.Plan(c['wrong_backward']) as w:
            r2 = expect_error(lambda: twoface.SpMM.apply(B, p, w), 'twoface.SpMM: ')
        # without a gradient the forward product needs no backward plan
        C = twoface.SpMM.apply(torch.ones(p.nbrows, 2), p)
        return r1[0] and r2[0] and C.shape == (p.nrows, 2), r1[1] + ' | ' + r2[1]


def case_bf16(c):
    """comm='bf16': B rows travel as bfloat16. C matches a dense reference
    whose remote rows (those this rank does not own) are rounded to bf16, and
    the float32 one within the bound (2^-8 relative per product); the
    gradient of SpMM.apply(..., comm='bf16') likewise; the plan's choice and
    bad or mismatched values."""
    A = read_mtx(c['mtx']).double()
    k = c['k']
    details = []
    with twoface.Plan(c['plan']) as p:
        rid, bid = p.row_ids, p.brow_ids
        Bg = global_b(p.n, k)
        B = Bg[bid].contiguous()
        own = torch.zeros(p.n, dtype=torch.bool)
        own[bid] = True
        Br = Bg.clone()
        Br[~own] = Bg[~own].to(torch.bfloat16).float()
        C = twoface.spmm(p, B, comm='bf16')
        ref_r = (A @ Br.double())[rid]
        ref_f = (A @ Bg.double())[rid]
        absrow = A.abs().sum(1)[rid]
        bmax = Bg.abs().max().item()
        scale = (absrow * bmax + 1e-30).unsqueeze(1)
        e_r = ((C.double() - ref_r).abs() / scale).max().item() if p.nrows else 0.0
        e_f = ((C.double() - ref_f).abs() / scale).max().item() if p.nrows else 0.0
        ok = e_r <= 1e-5 and e_f <= 2 ** -8 + 1e-5
        details.append(f'rounded {e_r:.3g}, float32 {e_f:.3g}')
        with p.context(k, comm='bf16') as ctx:
            ok = ok and ctx.comm_precision == 'bf16'
            ctx.b.copy_(B)
            ok = ok and torch.allclose(twoface.spmm(ctx), C, rtol=1e-5, atol=1e-6)
            r = expect_error(lambda: twoface.spmm(ctx, comm='f32'), 'moves B rows as bf16')
            ok = ok and r[0]
            details.append(r[1])
        with p.context(k) as ctx:
            ok = ok and ctx.comm_precision == p.comm_precision == 'f32'
        r = expect_error(lambda: p.context(k, comm='fp8' if rank == size - 1 else 'bf16'),
                         "comm must be 'f32', 'bf16'")
        ok = ok and r[0]
        details.append(r[1])
        if size > 1:
            r = expect_error(lambda: twoface.spmm(p, B, comm='bf16' if rank == 0 else 'f32'),
                             'disagree on comm')
            ok = ok and r[0]
            details.append(r[1])
            r = expect_error(lambda: p.context(k, comm='bf16' if rank == 0 else 'f32'),
                             'differs over the ranks')
            ok = ok and r[0]
            details.append(r[1])
        # The gradient travels in bf16 too: dB = A^T dC with dC's remote rows rounded.
        Bq = B.clone().requires_grad_()
        Cq = twoface.SpMM.apply(Bq, p, None, 'bf16')
        G = global_b(p.m, k, seed=11)
        Cq.backward(G[rid].contiguous())
        own_c = torch.zeros(p.m, dtype=torch.bool)
        own_c[rid] = True  # square symmetric plan: this rank's rows of dC are its rows of B
        Gr = G.clone()
        Gr[~own_c] = G[~own_c].to(torch.bfloat16).float()
        gref = (A.T @ Gr.double())[bid]
        ge = (Bq.grad.double() - gref).abs().max().item() if p.nbrows else 0.0
        ok = ok and ge <= 1e-5 * max(1.0, gref.abs().max().item() if p.nbrows else 1.0)
        details.append(f'gradient {ge:.3g}')
    with twoface.Plan(c['plan_bf16']) as p:
        ok = ok and p.comm_precision == 'bf16'
        with p.context(k) as ctx:
            ok = ok and ctx.comm_precision == 'bf16'
    return ok, ' | '.join(details)


CASES = {'bf16': case_bf16, 'spmm': case_spmm, 'bad_path': case_bad_path, 'wrong_ranks': case_wrong_ranks,
         'bad_b': case_bad_b, 'gradcheck': case_gradcheck, 'needs_backward': case_needs_backward}


def main():
    spec = json.load(open(sys.argv[1]))
    for c in spec:
        try:
            ok, detail = CASES[c['kind']](c)
        except Exception:  # a failed case, reported; the other ranks raise too or hang-> timeout
            ok, detail = False, traceback.format_exc(limit=3).strip().replace('\n', ' / ')
        res = comm.gather((bool(ok), detail), root=0)
        if rank == 0:
            print(json.dumps({'case': c['case'], 'ok': all(r[0] for r in res),
                              'details': [r[1] for r in res]}), flush=True)


if __name__ == '__main__':
    main()
