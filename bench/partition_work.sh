#!/bin/sh
# Bands of equal nonzeros against bands of equal work (--partition nnz and
# work, docs/partition.md) at one P (default 4) on this machine, with the
# built-in coefficients.
#
# Per graph and K: both plans (twoface-plan defaults otherwise), then ROUNDS
# pairs of twoface-exec processes, one per plan, each running twoface and p2p
# interleaved on the same B (p2p runs on the plan's bands); the plan that
# goes first alternates from one pair to the next, and so does the order of
# --algo. Each pair gives a paired ratio work / nnz per algorithm. The table
# shows the max / mean over ranks of rows and of nonzeros of each plan (from
# --explain's balance line), twoface's measured compute time of the slowest
# rank over the mean rank (median over rounds), the median times, the median
# of the paired ratios with their range, and the 1-minute load average when
# the case started.
#
#   sh bench/partition_work.sh                     # the four graphs below, K 32 128 512
#   GRAPHS=cnr-2000 KS=128 ROUNDS=5 sh bench/partition_work.sh
#
# Environment (defaults in brackets): BUILD [build], DATA [../shared/data],
# GRAPHS [cnr-2000 luxembourg_osm soc-Slashdot0902 pubmed], KS [32 128 512],
# P [4], ROUNDS [3], ITER [15] timed rounds per process, OUT [a temporary
# directory; the raw JSON stays there when given].
# The last lines are the markdown table on stdout; progress goes to stderr.
set -u
BUILD=${BUILD:-build}
DATA=${DATA:-../shared/data}
GRAPHS=${GRAPHS:-"cnr-2000 luxembourg_osm soc-Slashdot0902 pubmed"}
KS=${KS:-"32 128 512"}
P=${P:-4}
ROUNDS=${ROUNDS:-3}
ITER=${ITER:-15}
. "$(dirname "$0")/lib_bench.sh"
bench_mpi_env
# measure: plans and runs every case into $work.
measure() {
    bench_work partition_work
    bench_need partition_work.sh "$BUILD/bin/twoface-plan" "$BUILD/bin/twoface-exec"

    echo "partition_work.sh: P=$P KS=\"$KS\" ROUNDS=$ROUNDS ITER=$ITER, $(date -u '+%Y-%m-%d %H:%M UTC')" >&2
    for g in $GRAPHS; do
        mtx=$DATA/$g.mtx.zst
        [ -f "$mtx" ] || { echo "partition_work.sh: $mtx missing" >&2; exit 1; }
        for K in $KS; do
            tag=$g-P$P-K$K
            for part in nnz work; do
                "$BUILD/bin/twoface-plan" "$mtx" -n "$P" -k "$K" --partition "$part" \
                    -o "$work/$tag-$part.h5" --explain >"$work/$tag-$part.plan.log" 2>&1 ||
                    { echo "partition_work.sh: planning $tag $part failed: $(tail -1 "$work/$tag-$part.plan.log")" >&2; exit 1; }
            done
            echo "$tag load $(load1)" >"$work/$tag.load"
            for r in $(seq 0 $((ROUNDS - 1))); do
                if [ $((r % 2)) = 0 ]; then order="nnz work"; algos=twoface,p2p
                else order="work nnz"; algos=p2p,twoface; fi
                for part in $order; do
                    mpirun -n "$P" --bind-to none "$BUILD/bin/twoface-exec" "$work/$tag-$part.h5" \
                        --algo "$algos" -k "$K" -i "$ITER" --json >"$work/$tag-$part.r$r.json" \
                        2>"$work/$tag-$part.r$r.err" ||
                        { echo "partition_work.sh: $tag $part round $r failed: $(head -1 "$work/$tag-$part.r$r.err")" >&2; exit 1; }
                done
            done
            echo "$tag done, load $(load1)" >&2
        done
    done
}

if [ -n "${SUMMARY_ONLY:-}" ]; then
    work=$SUMMARY_ONLY # the table again from a kept OUT
else
    measure
fi

/usr/bin/python3 - "$work" "$P" "$GRAPHS" "$KS" "$ROUNDS" <<'EOF'
import json, re, statistics, sys
work, P, graphs, ks, rounds = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split(), int(sys.argv[5])

def balance(tag, part):
    for line in open("%s/%s-%s.plan.log" % (work, tag, part)):
        m = re.search(r"nonzeros ([0-9.]+), rows ([0-9.]+)", line)
        if line.startswith("balance") and m:
            return float(m.group(1)), float(m.group(2))
    return float("nan"), float("nan")

def medians(tag, part, r):
    t = {}
    for line in open("%s/%s-%s.r%d.json" % (work, tag, part, r)):
        d = json.loads(line)
        t[d["algo"]] = d["median_s"]
        # twoface's compute (local and collective kernels) of the slowest
        # rank over the mean rank: the imbalance the bands leave.
        if d["algo"] == "twoface":
            t["imb"] = d["breakdown"]["compute_s"] / d["breakdown_mean"]["compute_s"]
    return t

print("| graph | K | load | rows max/mean nnz; work | nonzeros max/mean nnz; work | twoface compute max/mean nnz; work | twoface ms nnz; work | work / nnz twoface, median (range) | p2p ms nnz; work | work / nnz p2p, median (range) |")
print("|---|---:|---:|---|---|---|---|---|---|---|")
for g in graphs:
    for K in ks:
        tag = "%s-P%s-K%s" % (g, P, K)
        load = open("%s/%s.load" % (work, tag)).read().split()[-1]
        zn, rn = balance(tag, "nnz")
        zw, rw = balance(tag, "work")
        imb = ["%.2f" % statistics.median(medians(tag, part, r)["imb"] for r in range(rounds))
               for part in ("nnz", "work")]
        cells = ["; ".join(imb)]
        for algo in ("twoface", "p2p"):
            tn = [medians(tag, "nnz", r)[algo] for r in range(rounds)]
            tw = [medians(tag, "work", r)[algo] for r in range(rounds)]
            q = [b / a for a, b in zip(tn, tw)]
            cells.append("%.2f; %.2f" % (1e3 * statistics.median(tn), 1e3 * statistics.median(tw)))
            cells.append("%.2f (%.2f-%.2f)" % (statistics.median(q), min(q), max(q)))
        print("| %s | %s | %s | %.2f; %.2f | %.2f; %.2f | %s |" % (
            g, K, load, rn, rw, zn, zw, " | ".join(cells)))
EOF
