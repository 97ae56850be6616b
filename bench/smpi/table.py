#!/usr/bin/python3
"""docs/scale.md's table, its CSV and the ratio plot, from bench/smpi/run.sh's
output directory (OUT/runs/GRAPH-PP-KK.json: twoface-exec --json lines;
.stats.json: plan_stats lines for the twoface, fetch and collective plans).

    /usr/bin/python3 bench/smpi/table.py [--zero-copy] OUT[,OUT...] CSV PNG > table.md
    /usr/bin/python3 bench/smpi/table.py --plans STATS.jsonl > planner.md
    /usr/bin/python3 bench/smpi/table.py --jobs OUT1,OUT2,... > jobs.md

--zero-copy: the runs come from a build whose collective sends zero-copy
(TWOFACE_COLL_PACK=never or auto), so the summary adds the bound that
charges twoface's busiest sender the copy SMPI did not; `make smpi` packs
every send, and there the copy is in the twoface column already.

Per case: simulated median time per SpMM (ms) of every strategy; shift = the
best replication c; best baseline = the fastest of allgather, shift, p2p;
ratio = twoface / best baseline (< 1: twoface faster); the classes twoface
ran (after its start-up trial; * = the trial kept the runner-up), the
collective share of its remote sparse stripes, recipients per dense stripe
(collective recipients, and all ranks wanting the stripe), and the planner's
volumes for the plan twoface ran: B rows received per rank, max / mean.

--jobs: the same cases simulated in several jobs (one OUT each): a job's
ratios are of strategies interleaved in one simulation, and the same case
moves by 10-20 % between jobs (the compute blocks are timed on this
machine), so per case the median over jobs of each job's ratio, its range,
the count of graphs whose median is at most 1.0, and the model's error (the
prediction of the plan twoface ran over its simulated time), median over
jobs. Where the start-up trial kept dense shifting the job ran no plan and
has no prediction to compare: the model's error leaves it out."""
import json
import math
import os
import shutil
from statistics import median
import subprocess
import sys

BASE = ("allgather", "shift", "p2p")
# SMPI gathers a derived datatype outside simulated time, so zero-copy sends
# (hindexed from B) would cost nothing there, while p2p packs its rows on
# the simulated clock. `make smpi` therefore builds the collective to pack
# every send (TF_COLL_PACK_ALWAYS): the copy is a timed CPU
# burst and the twoface column pays it. For runs of a zero-copy build
# (--zero-copy), the bound below charges twoface's busiest sender a copy of every row it sends
# at this VM's single-core copy bandwidth (the STREAM-like copy of
# docs/benchmarks.md measured 14-35 GB/s; the low end); for runs of the
# packing build it would count the copy twice, and is left out.
PACK_BPS = 15e9


def load(outs):
    cases = []
    for out in outs.split(","):
        cases += load_one(out)
    order = {g: i for i, g in enumerate(dict.fromkeys(c[0] for c in cases))}
    cases.sort(key=lambda c: (order[c[0]], c[2], c[1]))
    return cases


def load_one(out):
    cases = []
    runs = os.path.join(out, "runs")
    for name in sorted(os.listdir(runs)):
        if not name.endswith(".json") or name.endswith(".stats.json"):
            continue
        tag = name[:-5]
        g, p, k = tag.rsplit("-", 2)
        objs = [json.loads(l) for l in open(os.path.join(runs, name)) if l.startswith("{")]
        if not objs:
            continue
        stats = [json.loads(l) for l in open(os.path.join(runs, tag + ".stats.json"))]
        cases.append((g, int(p[1:]), int(k[1:]), objs, stats))
    return cases


def summarise(g, P, K, objs, stats):
    t = {}
    shift_c = None
    check = all(o.get("check_passed", True) for o in objs)
    for o in objs:
        a, ms = o["algo"], 1e3 * o["median_s"]
        if a.startswith("shift"):
            if "shift" not in t or ms < t["shift"]:
                t["shift"], shift_c = ms, o.get("replication")
        else:
            t[a] = ms
    tw = next(o for o in objs if o["algo"] == "twoface")
    sel = tw.get("selection")
    # Pure plans not run on their own: their calls in twoface's start-up trial
    # (slowest rank per call, the median of SELECT_CALLS calls).
    trial = set()
    if sel:
        for cls, ts in zip((sel["planned"], sel["alternative"]), sel["trial_median_s"]):
            if cls in ("fetch", "collective") and cls not in t:
                t[cls] = 1e3 * ts
                trial.add(cls)
    chose_alt = bool(sel) and sel.get("chose") == "alternative"
    # Dense shifting kept by the trial is no plan of the file: the volumes
    # shown are the plan's, and there is no plan prediction of what ran.
    shifted = chose_alt and sel.get("alternative", "").startswith("shift")
    twoface_plan = os.path.basename(tw["plan"])
    st = [s for s in stats if os.path.basename(s["plan"]) == twoface_plan]
    which = "alternative" if chose_alt and not shifted else "planned"
    ran = next((s for s in st if s["which"] == which), st[0])
    best = min((b for b in BASE if b in t), key=lambda b: t[b])
    return {
        "graph": g, "P": P, "K": K, "t": t, "shift_c": shift_c, "best": best,
        "ratio": t["twoface"] / t[best],
        "vs_shift": t["shift"] / t["twoface"] if "shift" in t else None,
        "vs_pure": t["twoface"] / min(t.get("fetch", math.inf), t.get("collective", math.inf)),
        "classes": tw.get("classes", "-") + ("*" if chose_alt else ""), "ran": ran,
        "pred_ms": None if shifted else ran["pred_ms"],
        "planned": next(s for s in st if s["which"] == "planned"), "check": check,
        "trial": sel is not None, "from_trial": trial,
    }


def pack_ms(r):
    return 1e3 * r["ran"].get("sent_max", 0) * r["K"] * 4 / PACK_BPS


def fmt(x, mark=False):
    if x is None:
        return "-"
    return ("%.3f" % x if x < 10 else "%.1f" % x) + ("'" if mark else "")


def planner_table(path):
    """The planner's view at any P (plan_stats lines of twoface plans, the
    runner-up after its plan): no simulation, the model's own numbers."""
    lines = [json.loads(l) for l in open(path) if l.startswith("{")]
    print("| graph | K | P | classes (coll. share) | runner-up | recipients per stripe: coll. "
          "mean / max, wanting mean / max | B rows received max / mean | minimum max / mean | "
          "predicted ms: plan / runner-up |")
    print("|---|---:|---:|---|---|---|---|---|---|")
    for s in lines:
        if s["which"] != "planned":
            continue
        alt = next((a for a in lines if a["plan"] == s["plan"] and a["which"] == "alternative"),
                   None)
        g = os.path.basename(s["plan"]).rsplit("-", 3)[0]
        print("| %s | %d | %d | %s (%.0f%%) | %s | %.1f / %d, %.1f / %d | %d / %.0f | %d / %.0f | "
              "%s / %s |" % (g, s["k_planned"], s["ranks"], s["classes"], 100 * s["coll_share"],
                             alt["classes"] if alt else "-", s["recip_mean"], s["recip_max"],
                             s["want_mean"], s["want_max"], s["rows_max"], s["rows_mean"],
                             s["min_max"], s["min_mean"], fmt(s["pred_ms"]),
                             fmt(alt["pred_ms"]) if alt else "-"))


def jobs_table(outs):
    """Per case found in every job: twoface / best baseline and twoface /
    p2p, each the median over jobs of that job's ratio."""
    jobs = [{(r["graph"], r["P"], r["K"]): r for r in (summarise(*c) for c in load_one(o))}
            for o in outs.split(",")]
    keys = [k for k in jobs[0] if all(k in j for j in jobs)]
    order = {g: i for i, g in enumerate(dict.fromkeys(k[0] for k in keys))}
    keys.sort(key=lambda k: (k[2], k[1], order[k[0]]))

    print("| graph | K | P | jobs | twoface ms (median) | best baseline ms (median; best per job) "
          "| twoface / best baseline: median (range) | per job | twoface / p2p: median (range) "
          "| model / twoface: median (range) |")
    print("|---|---:|---:|---:|---:|---|---|---|---|---|")
    meds, model = {}, {}
    for key in keys:
        rs = [j[key] for j in jobs]
        ratio = [r["ratio"] for r in rs]
        p2p = [r["t"]["twoface"] / r["t"]["p2p"] for r in rs if "p2p" in r["t"]]
        best = [r["t"][r["best"]] for r in rs]
        names = [r["best"] + ("(%s)" % r["shift_c"] if r["best"] == "shift" else "") for r in rs]
        # The prediction of the plan twoface ran in that job (its trial may
        # keep the runner-up in one job and not in another), where it ran one.
        err = [r["pred_ms"] / r["t"]["twoface"] for r in rs if r["pred_ms"] is not None]
        meds[key] = median(ratio)
        if err:
            model[key] = median(err)
            shifted = len(rs) - len(err)
            model_cell = "%.2f (%.2f-%.2f)%s" % (
                model[key], min(err), max(err),
                ", shifting in %d job%s" % (shifted, "s" * (shifted > 1)) if shifted else "")
        else:
            model_cell = "- (shifting in every job)"
        print("| %s | %d | %d | %d | %s | %s (%s) | **%.2f** (%.2f-%.2f) | %s | %s | %s |" % (
                  key[0], key[2], key[1], len(rs), fmt(median([r["t"]["twoface"] for r in rs])),
                  fmt(median(best)), " ".join(names), meds[key], min(ratio), max(ratio),
                  " ".join("%.2f" % x for x in ratio),
                  "%.2f (%.2f-%.2f)" % (median(p2p), min(p2p), max(p2p)) if p2p else "-",
                  model_cell))
    print()
    inside = [k for k in model if 0.67 <= model[k] <= 1.5]
    if model:
        print("- the model (the planner's predicted time of the plan twoface ran) over the "
              "simulated twoface time, median over the jobs that ran a plan: within 0.67-1.5x "
              "in %d of %d cases (%.2f-%.2f); outside: %s%s" % (
                  len(inside), len(model), min(model.values()), max(model.values()),
                  ", ".join("%s P=%d K=%d %.2f" % (k[0], k[1], k[2], model[k])
                            for k in keys if k in model and k not in inside) or "none",
                  "; no plan ran (shifting kept in every job): " +
                  ", ".join("%s P=%d K=%d" % (k[0], k[1], k[2]) for k in keys if k not in model)
                  if len(model) < len(keys) else ""))
    for K in sorted({k[2] for k in keys}):
        for P in sorted({k[1] for k in keys}):
            sel = [k for k in keys if k[1] == P and k[2] == K]
            if not sel:
                continue
            m = [meds[k] for k in sel]
            single = [j[k]["ratio"] for j in jobs for k in sel]
            print("- K = %d, P = %d, %d jobs: median twoface / best baseline <= 1.0 on %d of %d "
                  "graphs (geometric mean of the medians %.2f, worst %.2f); in single jobs "
                  "<= 1.0 in %d of %d cases" % (
                      K, P, len(jobs), sum(x <= 1.0 for x in m), len(m),
                      math.exp(sum(math.log(x) for x in m) / len(m)), max(m),
                      sum(x <= 1.0 for x in single), len(single)))
    bad = [(k, i) for k in keys for i, j in enumerate(jobs) if not j[k]["check"]]
    print("- --check: %s" % ("every C of every job matched the serial reference (1e-5)" if not bad
                             else "FAILED in " + ", ".join("%s P=%d K=%d job %d" % (
                                 k[0], k[1], k[2], i + 1) for k, i in bad)))


ZERO_COPY = False


def main():
    global ZERO_COPY
    if len(sys.argv) > 1 and sys.argv[1] == "--zero-copy":
        ZERO_COPY = True
        del sys.argv[1]
    if sys.argv[1] == "--plans":
        planner_table(sys.argv[2])
        return
    if sys.argv[1] == "--jobs":
        jobs_table(sys.argv[2])
        return
    out, csv_path, png = sys.argv[1], sys.argv[2], sys.argv[3]
    rows = [summarise(*c) for c in load(out)]
    algos = ("twoface", "fetch", "collective", "allgather", "shift", "p2p")
    with open(csv_path, "w") as f:
        f.write("graph,P,K," + ",".join(a + "_ms" for a in algos) +
                ",shift_c,best_baseline,twoface_over_best,shift_over_twoface,classes,coll_share,"
                "recip_mean,recip_max,want_mean,want_max,rows_max,rows_mean,min_rows_max,"
                "min_rows_mean,pred_ms,sent_max,pack_ms,check_passed\n")
        for r in rows:
            s = r["ran"]
            f.write("%s,%d,%d,%s,%s,%s,%.4f,%s,%s,%.4f,%.2f,%d,%.2f,%d,%d,%.1f,%d,%.1f,%s,%s,%.4f,%s\n" % (
                r["graph"], r["P"], r["K"],
                ",".join("%.5f" % r["t"][a] if a in r["t"] else "" for a in algos),
                r["shift_c"] or "", r["best"], r["ratio"],
                "%.4f" % r["vs_shift"] if r["vs_shift"] else "", r["classes"],
                s["coll_share"], s["recip_mean"], s["recip_max"], s["want_mean"], s["want_max"],
                s["rows_max"], s["rows_mean"], s["min_max"], s["min_mean"],
                "%.4f" % r["pred_ms"] if r["pred_ms"] is not None else "",
                "%d" % s["sent_max"] if "sent_max" in s else "", pack_ms(r),
                "yes" if r["check"] else "NO"))

    print("| graph | K | P | twoface | model | fetch | collective | allgather | shift (c) | p2p | "
          "twoface / best baseline | shift / twoface | classes (coll. share) | recipients "
          "per stripe: coll. mean / max, wanting mean / max | B rows received max / mean "
          "(minimum max / mean) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|")
    for r in rows:
        t, s = r["t"], r["ran"]
        print("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | **%.2f** (%s) | %s | %s (%.0f%%) | "
              "%.1f / %d, %.1f / %d | %d / %.0f (%d / %.0f) |" % (
                  r["graph"], r["K"], r["P"], fmt(t["twoface"]), fmt(r["pred_ms"]),
                  fmt(t.get("fetch"), "fetch" in r["from_trial"]),
                  fmt(t.get("collective"), "collective" in r["from_trial"]),
                  fmt(t.get("allgather")),
                  "%s (%s)" % (fmt(t["shift"]), r["shift_c"]) if "shift" in t else "-",
                  fmt(t.get("p2p")), r["ratio"], r["best"],
                  "%.2f" % r["vs_shift"] if r["vs_shift"] else "-",
                  r["classes"], 100 * s["coll_share"], s["recip_mean"], s["recip_max"],
                  s["want_mean"], s["want_max"], s["rows_max"], s["rows_mean"], s["min_max"],
                  s["min_mean"]))
    print()
    for K in sorted({r["K"] for r in rows}):
        for P in sorted({r["P"] for r in rows}):
            sel = [r for r in rows if r["K"] == K and r["P"] == P and r["vs_shift"]]
            if not sel:
                continue
            gm = math.exp(sum(math.log(r["vs_shift"]) for r in sel) / len(sel))
            worst = max(sel, key=lambda r: r["ratio"])
            print("- K = %d, P = %d: twoface is %.2fx faster than shift(best c), geometric mean "
                  "over %d graphs; twoface / best baseline <= 1.0 on %d of %d (worst %.2f, %s)" % (
                      K, P, gm, len(sel), sum(r["ratio"] <= 1.0 for r in sel), len(sel),
                      worst["ratio"], worst["graph"]))
    packed = [(r["t"]["twoface"] + pack_ms(r)) / r["t"]["p2p"] for r in rows
              if ZERO_COPY and "sent_max" in r["ran"] and "p2p" in r["t"]]
    if not ZERO_COPY:
        print("- the collective packed every send (`make smpi`): the copy SMPI does not charge "
              "to a derived datatype is in the twoface column, as p2p's is in its own")
    elif packed:
        print("- twoface with its busiest sender's gathering charged (every row it sends copied "
              "at %.0f GB/s, which SMPI does not charge) over p2p: geometric mean %.2f, worst "
              "%.2f over %d cases" % (PACK_BPS / 1e9, math.exp(sum(math.log(x) for x in packed) /
                                                              len(packed)), max(packed),
                                       len(packed)))
    err = [r["pred_ms"] / r["t"]["twoface"] for r in rows if r["pred_ms"] is not None]
    if err:
        print("- the model (column `model`: the planner's predicted time of the plan twoface ran) "
              "over the simulated twoface time: geometric mean %.2f, from %.2f to %.2f over %d "
              "cases" % (math.exp(sum(math.log(e) for e in err) / len(err)), min(err), max(err),
                         len(err)))
    bad = [r for r in rows if not r["check"]]
    print("- --check: %s" % ("every C matched the serial reference (1e-5)" if not bad else
                             "FAILED in " + ", ".join("%s P=%d K=%d" % (r["graph"], r["P"], r["K"])
                                                      for r in bad)))

    # ratio vs P, one line per graph and K
    dat = png + ".dat"
    graphs = list(dict.fromkeys(r["graph"] for r in rows))
    Ks = sorted({r["K"] for r in rows})
    with open(dat, "w") as f:
        for g in graphs:
            for K in Ks:
                f.write('"%s K=%d"\n' % (g, K))
                for r in sorted((r for r in rows if r["graph"] == g and r["K"] == K),
                                key=lambda r: r["P"]):
                    f.write("%d %.4f\n" % (r["P"], r["ratio"]))
                f.write("\n\n")
    n = len(graphs) * len(Ks)
    gp = """set terminal pngcairo size 1000,600 noenhanced font ",10"
set output "%s"
set title "SIMULATED (SimGrid SMPI; 12 GB/s links, 1.5 us, non-blocking switch): twoface / best baseline (< 1: twoface faster)"
set logscale x 2
set logscale y 2
set xtics (16, 64, 256)
set xrange [11:360]
set yrange [0.125:2]
set xlabel "P (simulated one-core nodes)"
set ylabel "time of twoface / time of best of allgather, shift(best c), p2p"
set grid
set key outside right
set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 2 dt 2
plot for [i=0:%d] "%s" index i using 1:2 with linespoints lw 2 title columnheader(1)
""" % (png, n - 1, dat)
    if shutil.which("gnuplot"):
        subprocess.run(["gnuplot"], input=gp.encode(), check=True)
    else:
        print("table.py: gnuplot not installed, %s not drawn" % png, file=sys.stderr)
    os.remove(dat)


if __name__ == "__main__":
    main()
