#!/bin/sh
# Non-temporal stores of C against ordinary ones (docs/executor.md, "Stores
# of C"): the same plan run with TWOFACE_STREAM=off and =on in alternate
# processes, each process running twoface and p2p interleaved on the same B
# (order rotated from one pair of processes to the next), so both algorithms
# get each kind of store. Per graph and K: one plan (twoface-plan defaults,
# -n P -k K), then ROUNDS processes per setting.
#
# The table gives, per graph and K, the C a rank writes (MiB, the mean rank;
# the default, TWOFACE_STREAM=auto, streams from 32 MiB on), and per algorithm
# the median over processes of its median time with ordinary stores and the
# median and range of the paired ratio on / off (process r with streaming
# over process r without), and the 1-minute load average when the case
# started.
#
#   sh bench/stream.sh                         # every graph of DATA, P 4, K 32 128 512
#   P=1 KS=128 GRAPHS=cnr-2000 ROUNDS=6 sh bench/stream.sh
#
# Environment (defaults in brackets): BUILD [build], DATA [../shared/data],
# GRAPHS [every *.mtx.zst in DATA], P [4], KS ["32 128 512"], ROUNDS [2]
# processes per setting, ITER [15] timed rounds per process, OUT [a temporary
# directory; the raw JSON stays there when given].
set -u
BUILD=${BUILD:-build}
DATA=${DATA:-../shared/data}
P=${P:-4}
KS=${KS:-"32 128 512"}
ROUNDS=${ROUNDS:-2}
ITER=${ITER:-15}
. "$(dirname "$0")/lib_bench.sh"
bench_graphs
bench_mpi_env
bench_need stream.sh "$BUILD/bin/twoface-plan" "$BUILD/bin/twoface-exec"
bench_work stream

echo "stream.sh: P=$P KS=$KS ROUNDS=$ROUNDS ITER=$ITER, $(date -u '+%Y-%m-%d %H:%M UTC'), $(getconf _NPROCESSORS_ONLN) processors" >&2
for g in $GRAPHS; do
    mtx=$DATA/$g.mtx.zst
    [ -f "$mtx" ] || { echo "stream.sh: $mtx missing" >&2; exit 1; }
    for k in $KS; do
        plan=$work/$g.$k.h5
        "$BUILD/bin/twoface-plan" "$mtx" -n "$P" -k "$k" -o "$plan" -q >"$work/$g.plan.log" 2>&1 ||
            { echo "stream.sh: planning $g failed: $(head -1 "$work/$g.plan.log")" >&2; exit 1; }
        echo "$(load1)" >"$work/$g.$k.load"
        for r in $(seq 0 $((ROUNDS - 1))); do
            flip=$r
            for s in off on; do
                algos=twoface,p2p
                [ $((flip % 2)) -eq 1 ] && algos=p2p,twoface
                flip=$((flip + 1))
                TWOFACE_STREAM=$s mpirun -n "$P" --bind-to none -x TWOFACE_STREAM \
                    "$BUILD/bin/twoface-exec" "$plan" --algo "$algos" -k "$k" -i "$ITER" \
                    --json >"$work/$g.$k.$s.r$r.json" 2>"$work/$g.$k.$s.r$r.err" ||
                    { echo "stream.sh: $g K=$k $s round $r failed: $(head -1 "$work/$g.$k.$s.r$r.err")" >&2; exit 1; }
            done
        done
        echo "$g K=$k done, load $(load1)" >&2
    done
done

/usr/bin/python3 - "$work" "$GRAPHS" "$KS" "$ROUNDS" "$P" <<'EOF'
import json, statistics, sys
work, graphs, ks, rounds, P = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), int(sys.argv[4]), int(sys.argv[5])
print("| graph | P | K | C per rank, MiB | load | twoface ms, off | twoface on / off | p2p ms, off | p2p on / off |")
print("|---|---:|---:|---:|---:|---:|---|---:|---|")
def cell(v):
    return "%.3f (%.3f-%.3f)" % (statistics.median(v), min(v), max(v))
for g in graphs:
    for k in ks:
        load = open("%s/%s.%s.load" % (work, g, k)).read().strip()
        t = {s: {} for s in ("off", "on")}
        m = None
        for s in ("off", "on"):
            for r in range(rounds):
                for line in open("%s/%s.%s.%s.r%d.json" % (work, g, k, s, r)):
                    j = json.loads(line)
                    t[s].setdefault(j["algo"], []).append(j["median_s"] * 1e3)
                    m = j["m"]
        cmib = m / P * int(k) * 4 / 2**20
        row = [g, str(P), k, "%.1f" % cmib, load]
        for a in ("twoface", "p2p"):
            off, on = t["off"][a], t["on"][a]
            row += ["%.2f" % statistics.median(off), cell([x / y for x, y in zip(on, off)])]
        print("| " + " | ".join(row) + " |")
EOF
