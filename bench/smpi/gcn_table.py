#!/usr/bin/python3
"""docs/gnn.md's "Training at scale (simulated)" tables and plot, from
bench/smpi/gcn.sh's output directories (OUT/runs/GRAPH-PP-HH.json:
twoface-gcn --json lines of one simulated job training the same model with
twoface and the baselines side by side).

    /usr/bin/python3 bench/smpi/gcn_table.py OUT[,OUT...] PLANNING [PNG] > tables.md
    /usr/bin/python3 bench/smpi/gcn_table.py --jobs OUT1,OUT2,... > jobs.md
    /usr/bin/python3 bench/smpi/gcn_table.py --plot RAW DIR[,DIR...] PNG

--plot: the plot alone, from the raw lines that bench/results/smpi-gcn.txt
keeps (sections "## DIR GRAPH-PP-HH (... bands)"), for the directories
named; the tables need the plans as well, which the raw file does not hold.

--jobs: the same cases trained in several simulated jobs (one OUT each): per
case the median over jobs of each job's twoface / best baseline epoch (and
SpMM) time, with the range, since a case moves by 10-15 % between jobs.

PLANNING: bench/results/smpi-planning.txt (the distributed planner's
simulated times for nnz bands, column "with I/O (total)": "sim"). A directed
graph needs a second plan, of the transpose (twoface-gcn --backward-plan);
it was not simulated, so it is counted at the forward plan's time ("sim
x2"). Other bands (rows, METIS) were not simulated: their planning time is
the single-process planner's wall time on this machine, both plans, that
gcn.sh wrote to OUT/plans/TAG.plan_s ("real").

Per case and algorithm: the simulated epoch time (median over epochs 2 and
later of the slowest rank, what twoface-gcn's summary calls epoch_ms_median)
and its split into SpMM, dense and Allreduce (means over ranks and epochs 2
and later); ratio = twoface / the fastest baseline (allgather, shift, p2p);
time to 200 epochs = the first epoch (it carries the start-up: first
touches, twoface's start-up trial) + 199 medians, plus planning for twoface
(the baselines run on the plan's rows without planning)."""
import json
import os
import shutil
from statistics import median
import subprocess
import sys

BASE = ("allgather", "shift", "p2p")
EPOCHS = 200


def fail(msg):
    sys.exit("gcn_table.py: " + msg)


def planning_times(path):
    """(graph, P) -> simulated planning ms with I/O, from smpi-planning.txt."""
    t = {}
    head = None
    for line in open(path):
        if not line.startswith("|") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if head is None:
            head = cells
            continue
        try:
            t[(cells[0], int(cells[head.index("P")]))] = float(cells[head.index("with I/O (total)")])
        except (ValueError, IndexError) as e:
            fail(f"{path}: row '{line.strip()}': {e}")
    if not t:
        fail(f"{path}: no planning table found")
    return t


def load(outs):
    cases = []
    for out in outs.split(","):
        part = os.path.join(out, "partition")
        part = open(part).read().strip() if os.path.exists(part) else "nnz"
        runs = os.path.join(out, "runs")
        for name in sorted(os.listdir(runs)):
            if not name.endswith(".json"):
                continue
            g, p, h = name[:-5].rsplit("-", 2)
            objs = [json.loads(l) for l in open(os.path.join(runs, name)) if l.startswith("{")]
            # gcn.sh plans the transpose (TAG-T.h5) only for a directed graph.
            directed = os.path.exists(os.path.join(out, "plans", name[:-5] + "-T.h5"))
            imb = row_imbalance(os.path.join(out, "plans", name[:-5] + ".h5"))
            ps = os.path.join(out, "plans", name[:-5] + ".plan_s")
            real = float(open(ps).read()) * 1e3 if os.path.exists(ps) else None
            if objs:
                cases.append((g, int(p[1:]), int(h[1:]), part, directed, (objs, imb, real)))
    return cases


def row_imbalance(plan):
    """Largest band over the mean band (rows per rank) of a plan, from h5dump:
    the dense work of an epoch is proportional to a rank's rows."""
    r = subprocess.run(["h5dump", "-d", "/brow_offsets", plan], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    data = r.stdout.split("DATA {", 1)[-1].split("}", 1)[0]
    v = [int(x.split(":")[-1]) for x in data.replace("\n", " ").split(",")]
    bands = [b - a for a, b in zip(v, v[1:])]
    return max(bands) / (sum(bands) / len(bands))


def family(algo):
    return algo.split("(")[0]


def summarise(objs):
    """algo family -> dict of the summary fields, first epoch, epochs run."""
    r = {}
    for o in objs:
        if o.get("summary"):
            r.setdefault(family(o["algo"]), {}).update(o)
    for o in objs:
        if not o.get("summary") and o["epoch"] == 1:
            r[family(o["algo"])]["first_ms"] = o["time_ms"]
    return r


def fmt(x):
    return "-" if x is None else (f"{x:.1f}" if x >= 10 else f"{x:.2f}")


def jobs_table(outs):
    jobs = []
    for out in outs.split(","):
        jobs.append({(g, P, H, part): summarise(data[0])
                     for g, P, H, part, _, data in load(out)})
    keys = [k for k in jobs[0] if all(k in j for j in jobs)]
    keys.sort(key=lambda k: (k[1], -k[2], k[3], k[0]))

    print("| graph | P | H | bands | jobs | twoface epoch ms (median) | best baseline per job | "
          "epoch ratio: median (range) | per job | SpMM ratio: median (range) |")
    print("|---|---:|---:|---|---:|---:|---|---|---|---|")
    meds = []
    for k in keys:
        ratio, spmm, names, tf = [], [], [], []
        for j in jobs:
            s = j[k]
            base = [s[a] for a in BASE if a in s]
            best = min(base, key=lambda o: o["epoch_ms_median"])
            ratio.append(s["twoface"]["epoch_ms_median"] / best["epoch_ms_median"])
            spmm.append(s["twoface"]["spmm_ms"] / min(o["spmm_ms"] for o in base))
            names.append(best["algo"])
            tf.append(s["twoface"]["epoch_ms_median"])
        meds.append(median(ratio))
        print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {len(jobs)} | {fmt(median(tf))} | "
              f"{' '.join(names)} | **{meds[-1]:.2f}** ({min(ratio):.2f}-{max(ratio):.2f}) | "
              f"{' '.join(f'{x:.2f}' for x in ratio)} | {median(spmm):.2f} "
              f"({min(spmm):.2f}-{max(spmm):.2f}) |")
    print()
    print(f"- median epoch ratio <= 1.0 on {sum(x <= 1.0 for x in meds)} of {len(meds)} cases, "
          f"<= 0.75 on {sum(x <= 0.75 for x in meds)}; worst {max(meds):.2f}")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--jobs":
        jobs_table(sys.argv[2])
        return
    if len(sys.argv) == 5 and sys.argv[1] == "--plot":
        plot_raw(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    if len(sys.argv) not in (3, 4):
        fail("usage: gcn_table.py OUT[,OUT...] PLANNING.txt [PNG]")
    plan = planning_times(sys.argv[2])
    cases = load(sys.argv[1])
    if not cases:
        fail(f"{sys.argv[1]}: no finished runs")
    order = {g: i for i, g in enumerate(["pubmed", "email-Enron", "cit-HepPh", "copter2",
                                         "luxembourg_osm", "soc-Slashdot0902"])}
    cases.sort(key=lambda c: (c[1], -c[2], c[3] != "nnz", c[3], order.get(c[0], 99), c[0]))
    print("| graph | P | H | bands | epochs | algo | epoch ms | SpMM | dense | Allreduce | SpMM share |")
    print("|---|---:|---:|---|---:|---|---:|---:|---:|---:|---:|")
    rows = []
    for g, P, H, part, directed, (objs, imb, real) in cases:
        s = summarise(objs)
        if "twoface" not in s:
            fail(f"{g} P={P} H={H}: no twoface summary")
        for a in ("twoface",) + BASE:
            if a not in s:
                print(f"| {g} | {P} | {H} | {part} | | {a} | not run | | | | |")
                continue
            o = s[a]
            print(f"| {g} | {P} | {H} | {part} | {o['epochs']} | {o['algo']} | {fmt(o['epoch_ms_median'])} | "
                  f"{fmt(o['spmm_ms'])} | {fmt(o['dense_ms'])} | {fmt(o['allreduce_ms'])} | "
                  f"{o['spmm_share']:.2f} |")
        rows.append((g, P, H, part, directed, imb, real, s))
    print()
    print("| graph | P | H | bands | rows max / mean | twoface epoch ms | best baseline | ratio | SpMM ratio | planning ms | "
          "twoface 200 epochs + planning (s) | best baseline 200 epochs (s) | ratio |")
    print("|---|---:|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    plot = []
    for g, P, H, part, directed, imb, real, s in rows:
        tf = s["twoface"]
        base = [s[a] for a in BASE if a in s]
        best = min(base, key=lambda o: o["epoch_ms_median"])
        pl = plan.get((g, P)) if part.split(",")[0] == "nnz" else None
        mark = " sim"
        if pl is not None and directed:
            pl, mark = 2 * pl, " sim x2"
        if pl is None and real is not None:
            pl, mark = real, " real"

        def total(o, extra):
            return (o["first_ms"] + (EPOCHS - 1) * o["epoch_ms_median"] + extra) / 1e3

        t_tf = total(tf, pl or 0.0)
        t_best = min(total(o, 0.0) for o in base)
        ratio, spmm_ratio = ratios(s)
        print(f"| {g} | {P} | {H} | {part} | {'-' if imb is None else f'{imb:.2f}'} | {fmt(tf['epoch_ms_median'])} | {best['algo']} "
              f"{fmt(best['epoch_ms_median'])} | **{ratio:.2f}** | {spmm_ratio:.2f} | "
              f"{fmt(pl) + mark if pl is not None else 'unknown'} | {t_tf:.2f} | {t_best:.2f} | "
              f"{t_tf / t_best:.2f} |")
        plot.append((f"{g} P{P} H{H} {part}", ratio, spmm_ratio))
    if len(sys.argv) == 4:
        draw(plot, sys.argv[3])


def ratios(s):
    """twoface / the fastest baseline: epoch (median) and SpMM time."""
    tf = s["twoface"]
    base = [s[a] for a in BASE if a in s]
    best = min(o["epoch_ms_median"] for o in base)
    return tf["epoch_ms_median"] / best, tf["spmm_ms"] / min(o["spmm_ms"] for o in base)


def draw(plot, png):
    if not shutil.which("gnuplot"):
        print("\ngnuplot is not installed: no plot.", file=sys.stderr)
        return
    data = "\n".join(f'"{n}" {r:.4f} {q:.4f}' for n, r, q in plot)
    # The lines: parity, and the per-epoch target of docs/gnn.md at P = 64, H = 256.
    gp = (f"set terminal pngcairo size 1100,620 noenhanced\nset output '{png}'\n"
          "set style data histograms\nset style fill solid\nset xtics rotate by -50\n"
          "set bmargin 13\nset rmargin 19\nset key top left horizontal\n"
          "set ylabel 'twoface / best baseline (simulated)'\nset yrange [0:1.6]\n"
          "set arrow from graph 0, first 1 to graph 1, first 1 nohead lc rgb 'black'\n"
          "set arrow from graph 0, first 0.75 to graph 1, first 0.75 nohead dt 2 lc rgb 'red'\n"
          "set label 'dashed: the per-epoch target at P 64, H 256' at graph 0.40, graph 0.95 tc rgb 'red'\n"
          "plot '-' using 2:xtic(1) title 'epoch', '' using 3 title 'SpMM'\n"
          f"{data}\ne\n{data}\ne\n")
    subprocess.run(["gnuplot"], input=gp.encode(), check=True)


def plot_raw(raw, dirs, png):
    """The plot from the raw file's sections of the directories named."""
    want = dirs.split(",")
    sections, cur = {}, None
    for line in open(raw):
        if line.startswith("## "):
            f = line.split()
            cur = None
            if len(f) >= 3 and f[1] in want and f[2].count("-") >= 2:
                g, p, h = f[2].rsplit("-", 2)
                bands = "metis" if "METIS" in line else "nnz"
                cur = (want.index(f[1]), g, int(p[1:]), int(h[1:]), bands)
                sections[cur] = []
        elif cur is not None and line.startswith("{"):
            sections[cur].append(json.loads(line))
    if not sections:
        fail(f"{raw}: no sections of {dirs}")
    plot = []
    for (_, g, P, H, bands), objs in sorted(sections.items()):
        s = summarise(objs)
        if "twoface" not in s or not any(a in s for a in BASE):
            fail(f"{raw}: {g} P={P} H={H}: no twoface or no baseline summary")
        r, q = ratios(s)
        plot.append((f"{g} P{P} H{H} {bands}", r, q))
    draw(plot, png)


main()
