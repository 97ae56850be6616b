#!/bin/sh
# One node's transports against each other (docs/executor.md, "One node: B
# read in place"): peers' rows read in place (TWOFACE_COLL_SHM=direct),
# copied by the collective's receivers (copy), and the default (auto: in
# place, or where ranks share processors the start-up trial's choice), each
# beside p2p in the same twoface-exec process (--algo twoface,p2p, order
# rotated from one process to the next), the transports' processes in turn.
#
# Per graph: one plan (twoface-plan defaults, -n P -k K), then ROUNDS
# processes per transport. Per transport the table gives the transports
# twoface ran and in how many processes (auto: what the trials kept), the
# median over its processes of twoface's median time, of p2p's, and of the
# paired ratio twoface / p2p, with the ratio's range, and the 1-minute load
# average when the graph started.
#
#   sh bench/one_node.sh                       # every graph of DATA, P 2, K 128
#   P=4 GRAPHS="cnr-2000 soc-Slashdot0902" sh bench/one_node.sh
#   P=4 COMM=bf16 TRANSPORTS=auto ROUNDS=8 sh bench/one_node.sh
#
# Environment (defaults in brackets): BUILD [build], DATA [../shared/data],
# GRAPHS [every *.mtx.zst in DATA], P [2], K [128], ROUNDS [4] processes per
# transport, ITER [20] timed rounds per process, TRANSPORTS [auto direct copy],
# COMM [f32] the precision rows travel in (--comm, both algorithms), OUT [a
# temporary directory; the raw JSON stays there when given].
set -u
BUILD=${BUILD:-build}
DATA=${DATA:-../shared/data}
P=${P:-2}
K=${K:-128}
ROUNDS=${ROUNDS:-4}
ITER=${ITER:-20}
TRANSPORTS=${TRANSPORTS:-"auto direct copy"}
COMM=${COMM:-f32}
. "$(dirname "$0")/lib_bench.sh"
bench_graphs
bench_mpi_env
bench_need one_node.sh "$BUILD/bin/twoface-plan" "$BUILD/bin/twoface-exec"
bench_work one_node

echo "one_node.sh: P=$P K=$K COMM=$COMM ROUNDS=$ROUNDS ITER=$ITER, $(date -u '+%Y-%m-%d %H:%M UTC'), $(getconf _NPROCESSORS_ONLN) processors" >&2
for g in $GRAPHS; do
    mtx=$DATA/$g.mtx.zst
    [ -f "$mtx" ] || { echo "one_node.sh: $mtx missing" >&2; exit 1; }
    plan=$work/$g.h5
    "$BUILD/bin/twoface-plan" "$mtx" -n "$P" -k "$K" -o "$plan" -q >"$work/$g.plan.log" 2>&1 ||
        { echo "one_node.sh: planning $g failed: $(head -1 "$work/$g.plan.log")" >&2; exit 1; }
    echo "$(load1)" >"$work/$g.load"
    for r in $(seq 0 $((ROUNDS - 1))); do
        algos=twoface,p2p
        [ $((r % 2)) -eq 1 ] && algos=p2p,twoface
        for t in $TRANSPORTS; do
            TWOFACE_COLL_SHM=$t mpirun -n "$P" --bind-to none -x TWOFACE_COLL_SHM \
                "$BUILD/bin/twoface-exec" "$plan" --algo "$algos" -k "$K" -i "$ITER" \
                --comm "$COMM" --check --json >"$work/$g.$t.r$r.json" 2>"$work/$g.$t.r$r.err" ||
                { echo "one_node.sh: $g $t round $r failed: $(head -1 "$work/$g.$t.r$r.err")" >&2; exit 1; }
        done
    done
    echo "$g done, load $(load1)" >&2
done

/usr/bin/python3 - "$work" "$GRAPHS" "$ROUNDS" "$P" "$K" "$TRANSPORTS" <<'EOF'
import json, statistics, sys
work, graphs, rounds, P, K = sys.argv[1], sys.argv[2].split(), int(sys.argv[3]), sys.argv[4], sys.argv[5]
transports = sys.argv[6].split()
print("| graph | P | K | load | TWOFACE_COLL_SHM (transports used) | twoface ms | p2p ms | twoface / p2p, median (range) over %d processes |" % rounds)
print("|---|---:|---:|---:|---|---:|---:|---|")
for g in graphs:
    load = open("%s/%s.load" % (work, g)).read().strip()
    for t in transports:
        tf, p2p, ratio, used = [], [], [], {}
        for r in range(rounds):
            rec = {}
            for line in open("%s/%s.%s.r%d.json" % (work, g, t, r)):
                j = json.loads(line)
                rec[j["algo"]] = j
            tf.append(rec["twoface"]["median_s"] * 1e3)
            p2p.append(rec["p2p"]["median_s"] * 1e3)
            ratio.append(tf[-1] / p2p[-1])
            u = rec["twoface"].get("coll_transport", "?")
            used[u] = used.get(u, 0) + 1
        print("| %s | %s | %s | %s | %s (%s) | %.2f | %.2f | %.3f (%.3f-%.3f) |" % (
            g, P, K, load, t, ", ".join("%s %d" % (u, used[u]) for u in sorted(used)),
            statistics.median(tf),
            statistics.median(p2p), statistics.median(ratio), min(ratio), max(ratio)))
EOF
