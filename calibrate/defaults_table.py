#!/usr/bin/env python3
"""The median of several calibration files, and how it and the built-in set
predict measured pure plans (calibrate/defaults.sh writes the inputs).

usage: defaults_table.py --runs RUNS.log --plan TWOFACE-PLAN --dir DIR
                         --median OUT.txt [--also NAME=CALIB ...] CAL.txt [CAL.txt ...]
RUNS.log: '== graph load' lines, each followed by the JSON lines of
twoface-calibrate --validate for DIR/graph-collective.h5 and -fetch.h5.
Prints a markdown table and the C lines for tf_coeffs_default."""
import argparse
import json
import math
import re
import statistics
import subprocess
import sys

LINE = re.compile(r"(\w+)(\s*=\s*)([-0-9.eE+]+)(\s*#.*)?$")
EXACT = ("cache_bytes", "threads")  # not rounded


def read_cal(path):
    vals = {}
    for line in open(path):
        m = LINE.match(line.strip())
        if m and m.group(4):  # coefficients carry their unit, the header lines do not
            vals[m.group(1)] = float(m.group(3))
    return vals


def write_median(files, out):
    runs = [read_cal(f) for f in files]
    keys = [k for k in runs[0] if all(k in r for r in runs)]
    med = {}
    for k in keys:
        v = statistics.median(r[k] for r in runs)
        med[k] = v if k in EXACT else float(f"{v:.2g}")
    lines = []
    for line in open(files[0]):
        m = LINE.match(line.strip())
        if m and m.group(4) and m.group(1) in med:
            line = f"{m.group(1)}{m.group(2)}{med[m.group(1)]:e}{m.group(4)}\n"
        elif line.startswith("note ="):
            line = f"note = median of {len(files)} calibrations, each coefficient rounded to two digits\n"
        lines.append(line)
    with open(out, "w") as f:
        f.writelines(lines)
    spread = {k: (min(r[k] for r in runs), max(r[k] for r in runs)) for k in keys}
    return med, spread


def predict(plan, mtx, mode, calib):
    # The plan file itself is not needed, only --explain's prediction.
    args = [plan, mtx, "-n", "4", "-k", "128", "--mode", mode, "-o", f"{mtx}.{mode}.scratch.h5",
            "--explain"]
    if calib:
        args += ["--calibration", calib]
    out = subprocess.run(args, capture_output=True, text=True)
    m = re.search(r"predicted SpMM time ([0-9.]+) ms", out.stdout)
    if not m:
        sys.exit(f"defaults_table.py: no prediction from {' '.join(args)}: {out.stderr.strip()}")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--median", required=True)
    ap.add_argument("--also", action="append", default=[],
                    help="NAME=CALIB: another coefficient set to put beside the two")
    ap.add_argument("cals", nargs="+")
    a = ap.parse_args()
    med, spread = write_median(a.cals, a.median)

    meas, load, cur = {}, {}, None
    for line in open(a.runs):
        if line.startswith("=="):
            _, cur, ld = line.split()
            load[cur] = ld
        elif line.startswith("{"):
            d = json.loads(line)
            meas.setdefault(cur, {})[d["mode"]] = 1e3 * d["median_s"]
    sets = [("built-in", None), ("median", a.median)]
    for extra in a.also:
        name, _, path = extra.partition("=")
        if not name or not path:
            sys.exit(f"defaults_table.py: --also {extra}: expected NAME=CALIB")
        sets.append((name, path))
    print("| graph | load | collective ms | fetch ms | "
          + " | ".join(f"{n}: predicted coll / fetch (x measured), picks" for n, _ in sets) + " |")
    print("|---|---:|---:|---:|" + "---|" * len(sets))
    score = {n: [0, 0, []] for n, _ in sets}
    for g, m in meas.items():
        mc, mf = m["collective"], m["fetch"]
        row = f"| {g} | {load[g]} | {mc:.2f} | {mf:.2f} |"
        for n, cal in sets:
            mtx = f"{a.dir}/{g}.mtx"
            pc, pf = predict(a.plan, mtx, "collective", cal), predict(a.plan, mtx, "fetch", cal)
            pick = "collective" if pc <= pf else "fetch"
            right = (pc <= pf) == (mc <= mf)
            cost = (mc if pick == "collective" else mf) / min(mc, mf)
            s = score[n]
            s[0] += right
            s[1] += 1
            s[2] += [pc / mc, pf / mf]
            row += f" {pc:.2f} / {pf:.2f} ({pc / mc:.2f} / {pf / mf:.2f}), {pick}"
            row += "" if right else f" ({cost:.2f}x the faster)"
            row += " |"
        print(row)
    print()
    for n, (right, total, errs) in score.items():
        within = sum(1 for e in errs if 0.67 <= e <= 1.5)
        gm = math.exp(sum(abs(math.log(e)) for e in errs) / len(errs)) if errs else float("nan")
        print(f"- {n}: picks the faster pure plan on {right} of {total} graphs; predictions within "
              f"0.67-1.5x of measured: {within} of {len(errs)}; geometric mean error factor {gm:.2f}")
    print()
    print(f"Median of {len(a.cals)} calibrations (range over the runs), as C for tf_coeffs_default:")
    print()
    print("```c")
    for k, v in med.items():
        lo, hi = spread[k]
        val = f"{v:.0f}" if k in EXACT else f"{v:.2g}"
        print(f"    c->{k} = {val};  /* {lo:.3g} - {hi:.3g} */")
    print("```")


if __name__ == "__main__":
    main()
