#!/usr/bin/env python3
"""Where a simulated twoface-plan job spends its time, rank by rank.

SimGrid's Paje trace (smpirun ... --cfg=tracing:yes --cfg=tracing/smpi:yes
--cfg=tracing/smpi/computing:yes --cfg=tracing/filename:T.paje) holds, for
every simulated rank, its compute blocks (the host time SMPI injected) and
its MPI calls. twoface-plan's --json line gives the phases' lengths; they
follow one another from the simulated time 0, so each block falls in a
phase. Per phase this prints the simulated length, the largest and the
median compute of a rank in it, rank 0's, and the number of MPI calls rank
0 made: a phase whose length is close to its largest compute is paced by
that rank's work, one close to its median by everybody's.

    trace_phases.py T.paje JOB.json                 per-phase table
    trace_phases.py T.paje JOB.json --phase write --ranks 0,1 [--min-us 20]
                                                     the blocks of those ranks
                                                     in that phase, with the
                                                     MPI calls around them

JOB.json: a file whose first line starting with '{' is the job's --json
line (twoface-plan's stdout). The encoding of the plans for the file, which
the line counts as writing (encode_s, inside write_s), is cut with the build,
where it runs. docs/scale.md, "Planning at scale", shows a run.
"""
import argparse
import json
import statistics
import sys

PHASES = ["start", "read", "prepare", "partition", "analyse", "classify", "build", "write"]


def read_trace(path):
    """{container: [(t0, t1, state)]} sorted by start, and container names."""
    values, names, events = {}, {}, {}
    with open(path) as f:
        for line in f:
            if line.startswith(("%", "#")):
                continue
            p = line.split()
            if not p:
                continue
            if p[0] == "5":  # PajeDefineEntityValue: alias, type, name
                values[p[1]] = p[3]
            elif p[0] == "6":  # PajeCreateContainer: time, alias, type, parent, name
                names[p[2]] = p[5].strip('"')
            elif p[0] == "12":  # PajePushState: time, type, container, value
                events.setdefault(p[3], []).append((float(p[1]), values.get(p[4], p[4])))
            elif p[0] == "13":  # PajePopState: time, type, container
                events.setdefault(p[3], []).append((float(p[1]), None))
    blocks = {}
    for c, evs in events.items():
        out, stack = [], []
        for t, v in evs:
            if v is not None:
                stack.append((t, v))
            elif stack:
                t0, v0 = stack.pop()
                out.append((t0, t, v0))
        out.sort()
        blocks[c] = out
    return blocks, names


def rank_of(name):
    return int(name.split("-")[-1]) if name.startswith("rank-") else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("job")
    ap.add_argument("--phase", choices=PHASES)
    ap.add_argument("--ranks", default="0")
    ap.add_argument("--min-us", type=float, default=20.0)
    a = ap.parse_args()
    job = None
    with open(a.job) as f:
        for line in f:
            if line.startswith("{"):
                job = json.loads(line)
                break
    if job is None:
        sys.exit(f"{a.job}: no --json line")
    edges = [0.0]
    # The ranks' encoding of the plans for the file (encode_s, the largest
    # rank's) counts as writing but runs as each candidate is built: in the
    # timeline it closes the build, so the cut between the two follows it.
    enc = job.get("encode_s", 0.0)
    for p in PHASES:
        d = job[p + "_s"] + (enc if p == "build" else -enc if p == "write" else 0.0)
        edges.append(edges[-1] + d)
    blocks, names = read_trace(a.trace)
    ranks = {rank_of(n): c for c, n in names.items() if rank_of(n) is not None}
    if not ranks:
        sys.exit(f"{a.trace}: no rank containers (was tracing/smpi on?)")

    if a.phase:
        i = PHASES.index(a.phase)
        lo, hi = edges[i], edges[i + 1]
        for r in (int(x) for x in a.ranks.split(",")):
            bl = blocks.get(ranks.get(r), [])
            print(f"rank {r}, {a.phase} ({lo * 1e3:.3f}-{hi * 1e3:.3f} ms):")
            prev, ncalls, total = "-", 0, 0.0
            for j, (t0, t1, v) in enumerate(bl):
                if v != "computing":
                    prev, ncalls = v, ncalls + 1
                    continue
                if t1 <= lo or t0 >= hi:
                    continue
                total += t1 - t0
                if (t1 - t0) * 1e6 >= a.min_us:
                    nxt = bl[j + 1][2] if j + 1 < len(bl) else "-"
                    print(f"  {t0 * 1e3:9.3f} ms  +{(t1 - t0) * 1e3:.3f} ms  after {prev} "
                          f"(call {ncalls}), before {nxt}")
            print(f"  compute in the phase: {total * 1e3:.3f} ms")
        return

    print("| phase | simulated ms | largest compute of a rank (rank) | median rank | rank 0 "
          "| rank 0's MPI calls |")
    print("|---|---:|---:|---:|---:|---:|")
    for i, p in enumerate(PHASES):
        lo, hi = edges[i], edges[i + 1]
        comp, calls0 = {}, 0
        for r, c in ranks.items():
            s = 0.0
            for t0, t1, v in blocks.get(c, []):
                if v == "computing":
                    s += max(0.0, min(t1, hi) - max(t0, lo))
                elif r == 0 and lo <= t0 < hi:
                    calls0 += 1
            comp[r] = s
        top = max(comp, key=comp.get)
        print(f"| {p} | {(hi - lo) * 1e3:.3f} | {comp[top] * 1e3:.3f} ({top}) | "
              f"{statistics.median(comp.values()) * 1e3:.3f} | {comp.get(0, 0) * 1e3:.3f} | "
              f"{calls0} |")


if __name__ == "__main__":
    main()
