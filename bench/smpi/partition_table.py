#!/usr/bin/env python3
"""The table of bench/smpi/partition.sh: per graph, P and algorithm, the
simulated SpMM time (median over rounds of each job's median) on nnz and on
work bands, and work / nnz; then twoface on work bands over p2p on nnz bands.
The balance columns (max / mean over ranks of the predicted time, and of
nonzeros) come from each plan's --explain; "auto" is what the default
(--partition auto) chose and its kernel-work ratio, and twoface on those
bands over p2p on nnz bands.

    python3 bench/smpi/partition_table.py OUT
"""
import glob
import json
import os
import re
import statistics
import sys
from collections import defaultdict


def balance(path):
    try:
        text = open(path).read()
    except OSError:
        return None
    m = re.search(r"^balance \(max / mean over ranks\): predicted time ([0-9.]+).*?nonzeros ([0-9.]+)",
                  text, re.M)
    p = re.search(r"predicted SpMM time ([0-9.]+) ms", text)
    return (float(m.group(1)), float(m.group(2)), float(p.group(1)) if p else None) if m else None


def auto_choice(path):
    try:
        text = open(path).read()
    except OSError:
        return None
    m = re.search(r"^partition auto: (nnz|work); .*? ([0-9.]+)x the kernel work", text, re.M)
    return (m.group(1), float(m.group(2))) if m else None


def main(out):
    t = defaultdict(list)
    loads = []
    for f in sorted(glob.glob(os.path.join(out, "runs", "*.json"))):
        m = re.match(r"(.*)-P(\d+)-K(\d+)-(nnz|work)-(\d+)\.json$", os.path.basename(f))
        if not m:
            continue
        g, P, K, part, _ = m.groups()
        for line in open(f):
            line = line.strip()
            if line.startswith("{"):
                j = json.loads(line)
                if "median_s" in j:
                    t[(g, int(P), int(K), j["algo"], part)].append(j["median_s"] * 1e3)
        lf = f[:-5] + ".load"
        if os.path.exists(lf):
            loads.append(float(open(lf).read().split()[1]))
    cases = sorted({k[:3] for k in t}, key=lambda c: (c[0], c[1]))
    print("| graph | P | K | predicted max/mean, nonzeros max/mean: nnz; work | model ms nnz; work "
          "| twoface ms nnz; work | work / nnz | p2p ms nnz; work | work / nnz "
          "| twoface (work) / p2p (nnz) | twoface / p2p, both on work bands "
          "| auto (kernel work nnz / work) | twoface (auto) / p2p (nnz) |")
    print("|---|---:|---:|---|---|---|---:|---|---:|---:|---:|---|---:|")
    for g, P, K in cases:
        med = {}
        runs = {}
        for a in ("twoface", "p2p"):
            for part in ("nnz", "work"):
                v = t.get((g, P, K, a, part), [])
                med[(a, part)] = statistics.median(v) if v else None
                runs[(a, part)] = v
        if None in med.values():
            continue
        b = {part: balance(os.path.join(out, "plans", f"{g}-P{P}-K{K}-{part}.txt"))
             for part in ("nnz", "work")}
        bal = "; ".join(f"{b[p][0]:.2f}, {b[p][1]:.2f}" if b[p] else "-" for p in ("nnz", "work"))
        model = "; ".join(f"{b[p][2]:.3f}" if b[p] and b[p][2] else "-" for p in ("nnz", "work"))

        def cell(a):
            return (f"{med[(a, 'nnz')]:.3f}; {med[(a, 'work')]:.3f}",
                    f"{med[(a, 'work')] / med[(a, 'nnz')]:.2f}")
        tw, tr = cell("twoface")
        pw, pr = cell("p2p")
        ac = auto_choice(os.path.join(out, "plans", f"{g}-P{P}-K{K}-auto.txt"))
        auto = (f"{ac[0]} ({ac[1]:.2f})", f"{med[('twoface', ac[0])] / med[('p2p', 'nnz')]:.2f}") \
            if ac else ("-", "-")
        print(f"| {g} | {P} | {K} | {bal} | {model} | {tw} | {tr} | {pw} | {pr} "
              f"| {med[('twoface', 'work')] / med[('p2p', 'nnz')]:.2f} "
              f"| {med[('twoface', 'work')] / med[('p2p', 'work')]:.2f} | {auto[0]} | {auto[1]} |")
    if loads:
        print(f"\n1-minute load average at the jobs' starts: {min(loads):.1f}-{max(loads):.1f}; "
              f"rounds per case: {max(len(v) for v in t.values())}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
