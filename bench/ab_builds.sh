#!/bin/sh
# Two builds of the executor on one plan: each process runs twoface and p2p
# interleaved (twoface-exec rotates their order every round), and its
# twoface / p2p ratio is the figure, so the drift of this shared machine
# between processes cancels; processes of the two builds alternate, the
# first build going first in odd pairs and second in even ones
# (docs/benchmarks.md, "The fused pass").
#
#   NEW=build OLD=../old/build PLAN=cnr.h5 P=2 K=128 PAIRS=6 sh bench/ab_builds.sh
#
# Prints one line per build: the median ratio, every pair's ratio and the
# median milliseconds of each strategy, and
# the 1-minute load average before the first and after the last process.
set -u
NEW=${NEW:-build}
OLD=${OLD:?OLD=the other build directory}
PLAN=${PLAN:?PLAN=a twoface plan}
P=${P:-4}
K=${K:-128}
PAIRS=${PAIRS:-6}
ITER=${ITER:-15}
. "$(dirname "$0")/lib_bench.sh"
bench_mpi_env
for b in "$NEW" "$OLD"; do
    [ -x "$b/bin/twoface-exec" ] || { echo "ab_builds.sh: $b/bin/twoface-exec is not built" >&2; exit 1; }
done
[ -f "$PLAN" ] || { echo "ab_builds.sh: $PLAN: no such plan" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ab_builds.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
load0=$(cut -d' ' -f1 /proc/loadavg)
for r in $(seq 1 "$PAIRS"); do
    if [ $((r % 2)) = 1 ]; then order="new old"; algos=twoface,p2p; else order="old new"; algos=p2p,twoface; fi
    for which in $order; do
        if [ "$which" = new ]; then b=$NEW; else b=$OLD; fi
        mpirun -n "$P" --bind-to none "$b/bin/twoface-exec" "$PLAN" --algo "$algos" -k "$K" \
            -i "$ITER" --check --json >"$work/$which.$r.json" 2>"$work/$which.$r.err" ||
            { echo "ab_builds.sh: $b, pair $r failed: $(head -1 "$work/$which.$r.err")" >&2; exit 1; }
    done
done
echo "load $load0 before, $(cut -d' ' -f1 /proc/loadavg) after; P=$P K=$K PAIRS=$PAIRS $(date -u '+%Y-%m-%d %H:%M UTC')"
/usr/bin/python3 - "$work" "$PAIRS" "$NEW" "$OLD" <<'PY'
import json, statistics, sys
work, pairs, names = sys.argv[1], int(sys.argv[2]), {"new": sys.argv[3], "old": sys.argv[4]}
for which in ("new", "old"):
    rs, tw, pp = [], [], []
    for r in range(1, pairs + 1):
        t = {}
        for line in open("%s/%s.%d.json" % (work, which, r)):
            d = json.loads(line)
            t[d["algo"]] = d["median_s"]
        rs.append(t["twoface"] / t["p2p"])
        tw.append(t["twoface"] * 1e3)
        pp.append(t["p2p"] * 1e3)
    print("%s (%s): twoface / p2p median %.3f, pairs %s; median ms twoface %.2f, p2p %.2f" % (
        which, names[which], statistics.median(rs), " ".join("%.3f" % x for x in rs),
        statistics.median(tw), statistics.median(pp)))
PY
