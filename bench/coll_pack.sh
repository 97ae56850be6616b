#!/bin/sh
# The collective's send side packed against zero-copy (docs/executor.md,
# TWOFACE_COLL_PACK): per graph and K, one collective plan, then ROUNDS pairs
# of twoface-exec processes, one with TWOFACE_COLL_PACK=$BASE and one with
# TWOFACE_COLL_PACK=$MODE, in alternating order, each
# running the plan and p2p interleaved on the same B. Prints per process the
# collective plan's median, its collective wait and its ratio to p2p of the
# same process, and the 1-minute load average.
#
#   GRAPHS="cnr-2000 pubmed" KS="32 128" sh bench/coll_pack.sh
#
# Environment: BUILD [build], DATA [../shared/data], GRAPHS [cnr-2000],
# KS [32 128 512], P [4], ROUNDS [3], ITER [15], BASE [never], MODE [always].
set -u
BUILD=${BUILD:-build}
DATA=${DATA:-../shared/data}
GRAPHS=${GRAPHS:-cnr-2000}
KS=${KS:-"32 128 512"}
P=${P:-4}
ROUNDS=${ROUNDS:-3}
ITER=${ITER:-15}
MODE=${MODE:-always}
BASE=${BASE:-never}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_osc=sm,rdma OMPI_MCA_mpi_yield_when_idle=1
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
work=$(mktemp -d "${TMPDIR:-/tmp}/coll_pack.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
echo "coll_pack.sh: P=$P BASE=$BASE MODE=$MODE ROUNDS=$ROUNDS ITER=$ITER, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "graph K pack twoface_ms coll_wait_ms p2p_ms twoface/p2p load1"
for g in $GRAPHS; do
    for K in $KS; do
        plan=$work/$g-$K.h5
        "$BUILD/bin/twoface-plan" "$DATA/$g.mtx.zst" -n "$P" -k "$K" --mode collective -o "$plan" \
            -q >"$work/plan.log" 2>&1 || { echo "coll_pack.sh: planning $g K=$K failed" >&2; exit 1; }
        for r in $(seq 1 "$ROUNDS"); do
            order="$BASE $MODE"
            [ $((r % 2)) -eq 0 ] && order="$MODE $BASE"
            for m in $order; do
                TWOFACE_COLL_PACK=$m mpirun -n "$P" --bind-to none -x TWOFACE_COLL_PACK \
                    "$BUILD/bin/twoface-exec" "$plan" --algo collective,p2p -k "$K" -i "$ITER" \
                    --json >"$work/out.json" 2>"$work/err.log" ||
                    { echo "coll_pack.sh: $g K=$K $m failed: $(head -1 "$work/err.log")" >&2; exit 1; }
                /usr/bin/python3 -c '
import json, sys
t = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    t[d["algo"]] = d
c, p = t["collective"], t["p2p"]
print(sys.argv[2], sys.argv[3], sys.argv[4], "%.2f %.2f %.2f %.3f" % (1e3 * c["median_s"],
      1e3 * c["breakdown"]["coll_wait_s"], 1e3 * p["median_s"], c["median_s"] / p["median_s"]),
      open("/proc/loadavg").read().split()[0])' "$work/out.json" "$g" "$K" "$m"
            done
        done
    done
done
