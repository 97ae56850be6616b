#!/bin/sh
# twoface against allgather, shift and p2p at one P (default 4) on this
# machine, with the built-in coefficients and no calibration file
# (docs/benchmarks.md, "twoface against the baselines at P = 4").
#
# Per graph and K: one twoface plan (twoface-plan defaults), then ROUNDS
# twoface-exec processes, each running twoface, allgather, shift (every
# replication dividing P up to 4) and p2p interleaved on the same B (the
# executor rotates their order every round), with the order of --algo itself
# changing from one process to the next: even processes rotate the list, odd
# ones rotate it reversed, so that twoface is created before p2p in two of
# every four processes (which one allocates first must not decide the
# table, docs/benchmarks.md). Each process gives a paired ratio: twoface's median
# over the median of the fastest baseline of that same process. The table
# shows the median of those ratios, their range, and the 1-minute load
# average when the case started. "twoface ran": the classes
# and the transport of the plan kept ("direct": read in place, "mpi": the
# MPI exchange, "shm": the collective's copies; docs/executor.md), * where
# the start-up trial kept its runner-up.
#
#   sh bench/p4_table.sh                         # every graph of DATA, K 32 128 512
#   GRAPHS="cnr-2000 pubmed" KS=128 sh bench/p4_table.sh
#
# Environment (defaults in brackets): BUILD [build], DATA [../shared/data],
# GRAPHS [every *.mtx.zst in DATA], KS [32 128 512], P [4], PLAN_ARGS [none]
# more twoface-plan options (e.g. "--partition work"), ROUNDS [4]
# processes per case (a multiple of 4 balances the order), ITER [15] timed
# rounds per process, OUT [a temporary directory; the raw JSON stays there
# when given].
# The last lines are the markdown table on stdout; progress goes to stderr.
set -u
BUILD=${BUILD:-build}
DATA=${DATA:-../shared/data}
KS=${KS:-"32 128 512"}
P=${P:-4}
ROUNDS=${ROUNDS:-4}
ITER=${ITER:-15}
. "$(dirname "$0")/lib_bench.sh"
bench_graphs
bench_mpi_env
bench_work p4_table
bench_need p4_table.sh "$BUILD/bin/twoface-plan" "$BUILD/bin/twoface-exec"
ALGOS="twoface allgather shift p2p"
# The order of process r, comma separated: the (r / 2)-th rotation of ALGOS,
# reversed when r is odd.
rotated() {
    echo $ALGOS | awk -v r="$1" '{ q = int(r / 2); s = ""
        for (i = 0; i < NF; i++) { j = (i + q) % NF; if (r % 2) j = NF - 1 - j; s = s (i ? "," : "") $(j + 1) }
        print s }'
}

echo "p4_table.sh: P=$P KS=\"$KS\" PLAN_ARGS=\"${PLAN_ARGS:-}\" ROUNDS=$ROUNDS ITER=$ITER, $(date -u '+%Y-%m-%d %H:%M UTC')" >&2
for g in $GRAPHS; do
    mtx=$DATA/$g.mtx.zst
    [ -f "$mtx" ] || { echo "p4_table.sh: $mtx missing" >&2; exit 1; }
    for K in $KS; do
        tag=$g-P$P-K$K
        plan=$work/$tag.h5
        # shellcheck disable=SC2086
        "$BUILD/bin/twoface-plan" "$mtx" -n "$P" -k "$K" ${PLAN_ARGS:-} -o "$plan" -q \
            >"$work/$tag.plan.log" 2>&1 ||
            { echo "p4_table.sh: planning $tag failed: $(head -1 "$work/$tag.plan.log")" >&2; exit 1; }
        echo "$tag load $(load1)" >"$work/$tag.load"
        for r in $(seq 0 $((ROUNDS - 1))); do
            mpirun -n "$P" --bind-to none "$BUILD/bin/twoface-exec" "$plan" --algo "$(rotated "$r")" \
                -k "$K" -i "$ITER" --check --json >"$work/$tag.r$r.json" 2>"$work/$tag.r$r.err" ||
                { echo "p4_table.sh: $tag round $r failed: $(head -1 "$work/$tag.r$r.err")" >&2; exit 1; }
        done
        echo "$tag done, load $(load1)" >&2
    done
done

/usr/bin/python3 - "$work" "$P" "$GRAPHS" "$KS" "$ROUNDS" <<'EOF'
import json, statistics, sys
work, P, graphs, ks, rounds = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split(), int(sys.argv[5])
print("| graph | K | load | twoface ms | twoface ran | allgather | shift (best c) | p2p | fastest other | twoface / fastest, median (range) over %d processes |" % rounds)
print("|---|---:|---:|---:|---|---:|---:|---:|---|---|")
worst = []
for g in graphs:
    for K in ks:
        tag = "%s-P%s-K%s" % (g, P, K)
        load = open("%s/%s.load" % (work, tag)).read().split()[-1]
        ratios, times, ran = [], {}, set()
        for r in range(rounds):
            t = {}
            for line in open("%s/%s.r%d.json" % (work, tag, r)):
                d = json.loads(line)
                a = "shift" if d["algo"].startswith("shift") else d["algo"]
                t[a] = min(t.get(a, float("inf")), d["median_s"])
                if a == "twoface":
                    ran.add(d.get("classes", "-") + " " + d.get("coll_transport", "-") +
                            ("*" if (d.get("selection") or {}).get("chose") == "alternative" else ""))
            best = min((v, a) for a, v in t.items() if a != "twoface")
            ratios.append(t["twoface"] / best[0])
            for a, v in t.items():
                times.setdefault(a, []).append(v)
        med = {a: statistics.median(v) for a, v in times.items()}
        fastest = min((v, a) for a, v in med.items() if a != "twoface")[1]
        q = statistics.median(ratios)
        worst.append(q)
        ms = lambda a: "%.2f" % (1e3 * med[a]) if a in med else "-"
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.2f (%.2f-%.2f) |" % (
            g, K, load, ms("twoface"), ",".join(sorted(ran)), ms("allgather"), ms("shift"), ms("p2p"),
            fastest, q, min(ratios), max(ratios)))
if worst:
    print("\nWorst median ratio %.2f; geometric mean %.2f over %d cases." % (
        max(worst), statistics.geometric_mean(worst), len(worst)))
EOF
