"""Planning time in SpMMs of the same simulation (docs/scale.md, "Planning at
scale"): the twoface-plan --json lines of bench/smpi/plan.sh divided by
twoface's simulated SpMM time at the same P and K.

    /usr/bin/python3 bench/smpi/plan_table.py PLAN_OUT [--spmm-csv CSV]
        [--spmm-runs RUN_OUT ...] [--k K] > table.md

PLAN_OUT: plan.sh's output directory (runs/GRAPH-PP.json). SpMM times: the
twoface_ms column of bench/results/scale.csv (run.sh's table) or the median of
the twoface lines of run.sh output directories (runs/GRAPH-PP-KK.json, one job
each), the latter first.
Planning without I/O = prepare + partition + analyse + classify + build; with
I/O = total (every phase, start, read and write included)."""
import argparse
import csv
import glob
import json
import statistics
import os
import sys

NO_IO = ("prepare", "partition", "analyse", "classify", "build")
PHASES = ("start", "read") + NO_IO + ("write",)
TARGET_NO_IO, TARGET_IO, TARGET_GROWTH = 5.0, 20.0, 1.5


def spmm_times(csv_path, run_dirs, k):
    """(graph, P) -> twoface's simulated median ms per SpMM at K = k: from
    the CSV, or the median over the run directories' jobs (one job each),
    which replace the CSV's value where they have one."""
    t = {}
    if csv_path:
        for r in csv.DictReader(open(csv_path)):
            if int(r["K"]) == k and r["twoface_ms"]:
                t[(r["graph"], int(r["P"]))] = float(r["twoface_ms"])
    runs = {}
    for d in run_dirs:
        for f in glob.glob(os.path.join(d, "runs", "*-P*-K%d.json" % k)):
            g, p = os.path.basename(f)[: -len("-K%d.json" % k)].rsplit("-P", 1)
            for line in open(f):
                if line.startswith("{"):
                    o = json.loads(line)
                    if o.get("algo") == "twoface":
                        runs.setdefault((g, int(p)), []).append(1e3 * o["median_s"])
    for key, v in runs.items():
        t[key] = statistics.median(v)
    return t


def load_plans(out):
    """Per (graph, P): the job of median total time (phases of one job add
    up to its total; per-phase medians would not), and the jobs' totals."""
    rows = []
    for f in sorted(glob.glob(os.path.join(out, "runs", "*.json"))):
        jobs = [json.loads(line) for line in open(f) if line.startswith("{")]
        if not jobs:
            continue
        jobs.sort(key=lambda o: o["total_s"])
        o = dict(jobs[(len(jobs) - 1) // 2])
        o["totals"] = [j["total_s"] for j in jobs]
        rows.append(o)
    return rows


def ms(x):
    return "%.1f" % x if x >= 10 else "%.2f" % x if x >= 0.1 else "%.3f" % x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("plan_out")
    ap.add_argument("--spmm-csv", default=None)
    ap.add_argument("--spmm-runs", nargs="*", default=[])
    ap.add_argument("--k", type=int, default=128)
    a = ap.parse_args()
    spmm = spmm_times(a.spmm_csv, a.spmm_runs, a.k)
    plans = load_plans(a.plan_out)
    if not plans:
        sys.exit("plan_table.py: no plan.sh results in %s/runs" % a.plan_out)
    # Smallest graph first, then P.
    plans.sort(key=lambda o: (o["nnz"], o["nranks"]))
    print("| graph | nnz | P | " + " | ".join(PHASES) + " | without I/O | with I/O (total) "
          "| SpMM | SpMMs without I/O | SpMMs with I/O | jobs: total min-max | host s |")
    print("|---|---:|---:|" + "---:|" * (len(PHASES) + 7))
    ratio = {}
    for o in plans:
        g, P = o["graph"], o["nranks"]
        no_io = sum(o[p + "_s"] for p in NO_IO)
        tot = o["total_s"]
        t = spmm.get((g, P))
        r = (1e3 * no_io / t, 1e3 * tot / t) if t else None
        if r:
            ratio[(g, P)] = r
        print("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %d: %s-%s | %d |" % (
            g, o["nnz"], P, " | ".join(ms(1e3 * o[p + "_s"]) for p in PHASES), ms(1e3 * no_io),
            ms(1e3 * tot), "%.3f" % t if t else "-", "%.1f" % r[0] if r else "-",
            "%.0f" % r[1] if r else "-", len(o["totals"]), ms(1e3 * o["totals"][0]),
            ms(1e3 * o["totals"][-1]), o.get("host_s", -1)))
    print()
    print("Times in simulated ms (slowest rank per phase) of the job of median total time; "
          "SpMM: twoface's simulated time per SpMM at K = %d; host s: that job's host time."
          % a.k)
    print()
    ps = sorted({P for _, P in ratio})
    if not ps:
        return
    lo, hi = ps[0], ps[-1]
    for g in dict.fromkeys(o["graph"] for o in plans):
        if (g, hi) not in ratio:
            continue
        r = ratio[(g, hi)]
        o = next(x for x in plans if x["graph"] == g and x["nranks"] == hi)
        top = max(NO_IO, key=lambda p: o[p + "_s"])
        top_all = max(PHASES, key=lambda p: o[p + "_s"])
        line = "- %s, P = %d: %.1f SpMMs without I/O (%s, target %g), %.0f with (%s, target %g)" % (
            g, hi, r[0], "met" if r[0] <= TARGET_NO_IO else "missed %.1fx" % (r[0] / TARGET_NO_IO),
            TARGET_NO_IO, r[1],
            "met" if r[1] <= TARGET_IO else "missed %.1fx" % (r[1] / TARGET_IO), TARGET_IO)
        line += "; largest phase without I/O: %s (%.0f%%), overall: %s (%.0f%%)" % (
            top, 100 * o[top + "_s"] / sum(o[p + "_s"] for p in NO_IO), top_all,
            100 * o[top_all + "_s"] / o["total_s"])
        if (g, lo) in ratio and lo != hi:
            q = ratio[(g, lo)]
            gw = (r[0] / q[0], r[1] / q[1])
            line += "; P = %d / P = %d: %.2fx without I/O, %.2fx with (target <= %g: %s)" % (
                hi, lo, gw[0], gw[1], TARGET_GROWTH,
                "met" if max(gw) <= TARGET_GROWTH else "missed")
        print(line)


if __name__ == "__main__":
    main()
