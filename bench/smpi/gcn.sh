#!/bin/sh
# Simulated GCN training at scale (docs/gnn.md, "Training at scale
# (simulated)"): the real twoface-gcn, built with smpicc (`make smpi`), on the
# simulated cluster of bench/smpi/run.sh (same platform, SMPI options and
# planner coefficients). For every graph, P and hidden width: plans the
# normalised adjacency for P ranks (twoface mode, K = the hidden width, and
# the transpose with the same bands when the graph is directed), then trains
# one 3-layer model per algorithm side by side in one simulated job
# (--algo twoface,allgather,shift,p2p: A B C D A B C D ...), on 128 random
# features, 16 random classes and the random split, without early stopping.
# Then bench/smpi/gcn_table.py makes the table.
#
#   sh bench/smpi/gcn.sh            (from the source tree; `make && make smpi` first)
#
# Environment (defaults in brackets):
#   GRAPHS   graph names in DATA [pubmed email-Enron cit-HepPh copter2
#            luxembourg_osm soc-Slashdot0902], smallest n first
#   DATA     [/work/shared/data, else ../shared/data]
#   PS [16 64]   HIDDEN [256 128]   LAYERS [3]   EPOCHS [20]
#   FEATURES [128]   CLASSES [16]
#   PARTITION [nnz] twoface-plan --partition of the forward plan (rows, nnz,
#            metis); the baselines run on the same bands
#   PLAN_ARGS [] more twoface-plan options for the forward plan (e.g.
#            --metis-balance nnz+rows). PARTITION and PLAN_ARGS are written
#            to OUT/partition for gcn_table.py: one OUT per partitioning
#   ALGOS [twoface,allgather,shift,p2p]   REPL [4] shift's replication
#            (the best c at P = 64 in docs/scale.md; one c per job here)
#   BW [12GBps] LAT [0.75us]   CALIB [bench/smpi/calibration-sim-2026-12-07.txt]
#   MAX_GB   [6] skip allgather where its copies of B would exceed this:
#            P n (H + C) 4 bytes, for the forward and the backward context
#            (all simulated ranks live in one process)
#   OUT      plans, logs, raw JSON [/tmp/twoface-smpi-gcn]
#   TIMEOUT  [3600] seconds per simulated job
# Simulated ranks run as threads of one process, one at a time: compute
# blocks (the SpMM kernels and the dense products alike) are timed on this
# machine and injected, one thread per rank; times are simulated seconds.
SRC=$(cd "$(dirname "$0")/../.." && pwd)
SMPI_BUILD=${SMPI_BUILD:-$SRC/build-smpi}
BUILD=${BUILD:-$SRC/build}
OUT=${OUT:-/tmp/twoface-smpi-gcn}
GRAPHS=${GRAPHS:-"pubmed email-Enron cit-HepPh copter2 luxembourg_osm soc-Slashdot0902"}
if [ -z "${DATA:-}" ]; then
    DATA=/work/shared/data
    [ -d "$DATA" ] || DATA=$SRC/../shared/data
fi
PS=${PS:-"16 64"}
HIDDEN=${HIDDEN:-"256 128"}
LAYERS=${LAYERS:-3}
EPOCHS=${EPOCHS:-20}
PARTITION=${PARTITION:-nnz}
PLAN_ARGS=${PLAN_ARGS:-}
BANDS=$PARTITION${PLAN_ARGS:+ $PLAN_ARGS}
FEATURES=${FEATURES:-128}
CLASSES=${CLASSES:-16}
ALGOS=${ALGOS:-twoface,allgather,shift,p2p}
REPL=${REPL:-4}
BW=${BW:-12GBps}
LAT=${LAT:-0.75us}
CALIB=${CALIB:-$SRC/bench/smpi/calibration-sim-2026-12-07.txt}
MAX_GB=${MAX_GB:-6}
TIMEOUT=${TIMEOUT:-3600}
GCN=$SMPI_BUILD/bin/twoface-gcn
PLAN=$BUILD/bin/twoface-plan

say() { echo "[$(date -u +%H:%M:%S)] $*"; }
for f in "$GCN" "$PLAN"; do
    [ -x "$f" ] || { echo "gcn.sh: $f is not built (make && make smpi)" >&2; exit 1; }
done
command -v smpirun >/dev/null || { echo "gcn.sh: smpirun not found (make smpi installs it)" >&2; exit 1; }
[ -s "$CALIB" ] || { echo "gcn.sh: $CALIB: no planner coefficients" >&2; exit 1; }
mkdir -p "$OUT/plans" "$OUT/runs" || exit 1
if [ -s "$OUT/partition" ] && [ "$(cat "$OUT/partition")" != "$BANDS" ]; then
    echo "gcn.sh: $OUT holds plans with --partition $(cat "$OUT/partition"), not $BANDS" >&2
    exit 1
fi
echo "$BANDS" >"$OUT/partition" || exit 1

maxp=16
for p in $PS; do [ "$p" -gt "$maxp" ] && maxp=$p; done
sh "$SRC/bench/smpi/platform.sh" "$maxp" "$BW" "$LAT" 1Gf >"$OUT/platform.xml" || exit 1
. "$SRC/bench/smpi/sim.sh"
say "platform: $maxp nodes, links $BW / $LAT; coefficients $CALIB; $EPOCHS epochs"

# plan TAG MTX P K: prints the plan options of twoface-gcn for TAG (the
# forward plan, and --backward-plan with its transpose when not symmetric).
# The planner's wall time on this machine (both plans, seconds) goes to
# OUT/plans/TAG.plan_s: gcn_table.py uses it where no simulated planning
# time exists.
plan() {
    f=$OUT/plans/$1.h5
    t=$OUT/plans/$1-T.h5
    t0=$(date +%s.%N)
    planned=0
    if [ ! -s "$f" ]; then
        planned=1
        "$PLAN" "$2" -n "$3" -k "$4" --partition "$PARTITION" $PLAN_ARGS --normalize gcn \
            --calibration "$CALIB" -o "$f" -q >"$OUT/plans/$1.log" 2>&1 || return 1
    fi
    if ! h5dump -a /symmetric "$f" 2>/dev/null | grep -q '(0): 1' && [ ! -s "$t" ]; then
        planned=1
        "$PLAN" "$2" -k "$4" --normalize gcn --transpose --bands-from "$f" \
            --calibration "$CALIB" -o "$t" -q >"$OUT/plans/$1-T.log" 2>&1 || return 1
    fi
    [ $planned = 1 ] &&
        echo "$(date +%s.%N) $t0" | awk '{ print $1 - $2 }' >"$OUT/plans/$1.plan_s"
    if [ -s "$t" ]; then echo "$f --backward-plan $t"; else echo "$f"; fi
}

for g in $GRAPHS; do
    mtx=$DATA/$g.mtx.zst
    [ -f "$mtx" ] || { say "skip $g: $mtx missing"; continue; }
    n=$(zstd -dc "$mtx" | awk '!/^%/ { print $1; exit }')
    for P in $PS; do
        for H in $HIDDEN; do
            tag=$g-P$P-H$H
            [ -s "$OUT/runs/$tag.json" ] && { say "$tag: done before"; continue; }
            plans=$(plan "$tag" "$mtx" "$P" "$H") || { say "FAILED: plan $tag"; continue; }
            algo=$ALGOS
            gb=$(awk -v p="$P" -v n="$n" -v h="$H" -v c="$CLASSES" \
                'BEGIN { printf "%d", 2 * p * n * (h + c) * 4 / 1e9 }')
            if [ "$gb" -ge "$MAX_GB" ]; then
                algo=$(echo "$algo" | sed 's/allgather,//; s/,allgather//')
                say "$tag: allgather left out (its copies of B: $gb GB >= MAX_GB $MAX_GB)"
            fi
            case ",$algo," in *,shift,*) repopt="--replication $REPL" ;; *) repopt="" ;; esac
            t0=$(date +%s)
            # shellcheck disable=SC2086 # $plans and $repopt are option lists
            if sim "$P" "$GCN" $plans --random-features "$FEATURES" --random-classes "$CLASSES" \
                --random-split --layers "$LAYERS" --hidden "$H" --epochs "$EPOCHS" --patience 0 \
                --algo "$algo" $repopt --json >"$OUT/runs/$tag.part" 2>"$OUT/runs/$tag.err"; then
                mv "$OUT/runs/$tag.part" "$OUT/runs/$tag.json"
                say "$tag: $(( $(date +%s) - t0 )) s wall ($algo), load $(cut -d' ' -f1 /proc/loadavg)"
            else
                say "FAILED: $tag (see $OUT/runs/$tag.err)"
            fi
        done
    done
done
