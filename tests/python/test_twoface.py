"""pytest suite of the twoface Python module (python/twoface), run by
tests/run_tests.sh. Every MPI case runs in mpi_cases.py under mpirun at 1, 3
and 4 ranks (odd counts, and ranks with no rows at 4), with a timeout, against
a dense torch reference computed here from matrices generated here."""
import json
import os

import pytest
import torch

import tfutil

RANKS = (1, 3, 4)


def _has_partition(name):
    import subprocess
    r = subprocess.run([os.path.join(tfutil.BUILD, 'bin', 'twoface-plan'), '--help'],
                       capture_output=True, text=True)
    return f'|{name}' in r.stdout + r.stderr


def _matrices(d):
    """name -> dense matrix: symmetric, general, rectangular, tiny (fewer rows
    than ranks), and the transpose of the general one."""
    gen = tfutil.random_sparse(23, 23, 0.15, seed=3)
    return {
        'sym': tfutil.random_sparse(21, 21, 0.15, seed=1, symmetric=True),
        'gen': gen,
        'gen_t': gen.T.contiguous(),
        'rect': tfutil.random_sparse(17, 11, 0.25, seed=5),
        'tiny': torch.tensor([[1.0, 0, 0], [0, 0, 2], [3, 0, 4]]),
    }


@pytest.fixture(scope='module', params=RANKS, ids=[f'P{P}' for P in RANKS])
def results(request, tmp_path_factory):
    P = request.param
    d = tmp_path_factory.mktemp(f'py_P{P}')
    mtx, plans = {}, {}
    for name, A in _matrices(d).items():
        mtx[name] = str(d / f'{name}.mtx')
        tfutil.write_mtx(mtx[name], A)
        plans[name] = tfutil.plan(mtx[name], P, str(d / f'{name}.h5'))
    other = tfutil.plan(mtx['sym'], P + 1, str(d / 'sym_other.h5'))
    metis = _has_partition('metis')
    if metis:  # rows renumbered: inputs and outputs go through row_ids / brow_ids
        plans['sym_metis'] = tfutil.plan(mtx['sym'], P, str(d / 'sym_metis.h5'), '--partition',
                                         'metis')
    # bands of equal work (nonzeros plus a cost per row): the module reads only bands
    plans['gen_work'] = tfutil.plan(mtx['gen'], P, str(d / 'gen_work.h5'), '--partition', 'work')
    for name in ('gen', 'rect'):  # backward plans, as a user makes them
        plans[name + '_bwd'] = tfutil.plan(mtx[name], P, str(d / f'{name}_bwd.h5'), '--transpose',
                                           '--bands-from', plans[name])
    spec = [{'case': f'spmm_{n}', 'kind': 'spmm', 'plan': plans[n], 'mtx': mtx[n], 'k': k}
            for n, k in (('sym', 5), ('gen', 1), ('rect', 7), ('tiny', 3))]
    spec.append({'case': 'spmm_gen_work', 'kind': 'spmm', 'plan': plans['gen_work'],
                 'mtx': mtx['gen'], 'k': 4})
    if metis:
        spec.append({'case': 'spmm_sym_metis', 'kind': 'spmm', 'plan': plans['sym_metis'],
                     'mtx': mtx['sym'], 'k': 4, 'permuted': True})
    plans['sym_bf16'] = tfutil.plan(mtx['sym'], P, str(d / 'sym_bf16.h5'), '--comm', 'bf16')
    spec += [
        {'case': 'bf16', 'kind': 'bf16', 'plan': plans['sym'], 'plan_bf16': plans['sym_bf16'],
         'mtx': mtx['sym'], 'k': 6},
        {'case': 'bad_path', 'kind': 'bad_path', 'plan': str(d / 'no_such_plan.h5')},
        {'case': 'wrong_ranks', 'kind': 'wrong_ranks', 'plan': other},
        {'case': 'bad_b', 'kind': 'bad_b', 'plan': plans['rect']},
        {'case': 'gradcheck_sym', 'kind': 'gradcheck', 'plan': plans['sym'], 'mtx': mtx['sym'],
         'k': 3},
        {'case': 'gradcheck_backward_plan', 'kind': 'gradcheck', 'plan': plans['gen'],
         'backward': plans['gen_bwd'], 'mtx': mtx['gen'], 'k': 2},
        {'case': 'gradcheck_rect', 'kind': 'gradcheck', 'plan': plans['rect'],
         'backward': plans['rect_bwd'], 'mtx': mtx['rect'], 'k': 2},
        # the plan of A^T's matrix, not made by --transpose: the same layout,
        # so only the library's matrix identity check can refuse it
        {'case': 'needs_backward', 'kind': 'needs_backward', 'plan': plans['gen'],
         'wrong_backward': plans['gen_t']},
    ]
    if P not in (1, 3):  # see GRAD_RANKS
        spec = [c for c in spec if c['kind'] != 'gradcheck']
    spec_path = d / 'spec.json'
    spec_path.write_text(json.dumps(spec))
    rc, out, err = tfutil.mpirun(P, os.path.join(tfutil.HERE, 'mpi_cases.py'), spec_path)
    recs = tfutil.json_lines(out)
    return P, rc, recs, err


def _case(results, name):
    P, rc, recs, err = results
    assert rc == 0, f'mpi_cases.py at P={P} exited {rc}: {err[-2000:]}'
    assert name in recs, f'case {name} not reported at P={P}: {err[-2000:]}'
    rec = recs[name]
    assert rec['ok'], f'{name} at P={P}: ' + ' || '.join(rec['details'])
    return rec


def test_bf16_bounded_and_agreed(results):
    _case(results, 'bf16')


@pytest.mark.parametrize('name', ['sym', 'gen', 'rect', 'tiny', 'gen_work'])
def test_spmm_matches_dense_reference(results, name):
    _case(results, f'spmm_{name}')


@pytest.mark.skipif(not _has_partition('metis'), reason='this twoface-plan has no metis partition')
def test_spmm_metis_plan_through_row_ids(results):
    _case(results, 'spmm_sym_metis')


def test_bad_plan_path_raises_on_every_rank(results):
    _case(results, 'bad_path')


def test_plan_for_other_rank_count_raises(results):
    _case(results, 'wrong_ranks')


def test_bad_b_raises_on_every_rank(results):
    _case(results, 'bad_b')


# gradcheck is asked for at 1 and 3 ranks (at 4 it would add time, not cases)
GRAD_RANKS = pytest.mark.parametrize('results', (1, 3), indirect=True, ids=['P1', 'P3'])


@GRAD_RANKS
def test_gradcheck_symmetric_plan(results):
    _case(results, 'gradcheck_sym')


@GRAD_RANKS
def test_gradcheck_backward_plan(results):
    _case(results, 'gradcheck_backward_plan')


@GRAD_RANKS
def test_gradcheck_rectangular(results):
    _case(results, 'gradcheck_rect')


def test_non_symmetric_needs_backward_plan(results):
    _case(results, 'needs_backward')
