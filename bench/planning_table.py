#!/usr/bin/env python3
"""Tables of bench/planning.sh's results (docs/planning.md, "Measured"):
per graph and Q, the median over rounds of wall time, planning time without
I/O, largest peak RSS of a rank, summed peak RSS, summed CPU seconds, bytes
per nonzero (summed RSS less what the same number of processes take for
Cora, 10 k nonzeros: the MPI runtime's and the program's own memory, over
nnz), the same less the plan being written (the arrays of the plan and its
runner-up that the ranks hold for the file, plan_sum_mib; "-" for lines
without it), and the ratios to Q = 1 of the same graph.

    python3 bench/planning_table.py OUT/planning.jsonl"""
import json
import statistics
import sys

rows = {}
for line in open(sys.argv[1]):
    if not line.startswith('{'):  # a comment line
        continue
    r = json.loads(line)
    rows.setdefault((r['graph'], r['q']), []).append(r)

def med(rs, f):
    return statistics.median(f(r) for r in rs)

def noio(r):
    x = r['run']
    return x['prepare_s'] + x['partition_s'] + x['analyse_s'] + x['classify_s'] + x['build_s']

print('| graph | Q | nnz | wall s | planning s (no I/O) | read s | write s | peak RSS per rank MiB '
      '| RSS summed MiB | bytes/nnz summed | bytes/nnz without the plan | CPU summed s | RSS max / Q=1 | CPU sum / Q=1 | load |')
print('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
graphs = []
for g, _ in rows:
    if g not in graphs:
        graphs.append(g)
for g in graphs:
    base = rows.get((g, '1'))
    for q in ('serial', '1', '2', '4', '8'):
        rs = rows.get((g, q))
        if not rs:
            continue
        nnz = rs[0]['run']['nnz']
        nproc = 1 if q == 'serial' else int(q)
        rss_max = med(rs, lambda r: r['run']['rss_max_mib'])
        rss_sum = med(rs, lambda r: r['run']['rss_sum_mib'])
        cpu = med(rs, lambda r: r['run']['cpu_sum_s'])
        cora = rows.get(('cora', q))
        floor = med(cora, lambda r: r['run']['rss_sum_mib']) if cora else 0.0
        bpn = (rss_sum - floor) * 2**20 / nnz if nnz else 0.0
        noplan = '-'
        if g != 'cora' and all('plan_sum_mib' in r['run'] for r in rs) and nnz:
            noplan = '%.0f' % ((rss_sum - floor - med(rs, lambda r: r['run']['plan_sum_mib']))
                               * 2**20 / nnz)
        rr = rc = ''
        if base and q not in ('1', 'serial'):
            rr = '%.2f' % (rss_max / med(base, lambda r: r['run']['rss_max_mib']))
            rc = '%.2f' % (cpu / med(base, lambda r: r['run']['cpu_sum_s']))
        print('| %s | %s | %d | %.2f | %.2f | %.2f | %.2f | %.0f | %.0f | %.0f | %s | %.2f | %s | %s | %s |' % (
            g, q, nnz, med(rs, lambda r: r['run']['wall_s']), med(rs, noio),
            med(rs, lambda r: r['run']['read_s']), med(rs, lambda r: r['run']['write_s']),
            rss_max, rss_sum, bpn, noplan, cpu, rr, rc,
            '-'.join(sorted({'%.1f' % r['load'] for r in rs}))))
