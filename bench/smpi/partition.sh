#!/bin/sh
# Bands of equal nonzeros against bands of equal work (--partition nnz and
# work, docs/partition.md) on the simulated cluster of docs/scale.md, where
# each rank has its own core, so the slowest rank's compute sets the time.
#
# Per graph and P: both plans, made with the simulated cluster's calibration
# (which has the reuse term: gamma_cached, cache_bytes), then ROUNDS pairs of
# simulated jobs, one per plan, each running twoface and p2p interleaved
# (p2p runs on the plan's bands); which plan's job goes first alternates.
# The default plan (--partition auto) is made too, not run: it is one of the
# two, and its --explain says which (the table's "auto" columns).
# bench/smpi/partition_table.py OUT makes the table.
#
#   GRAPHS="cnr-2000 pubmed" PS="16 64" ROUNDS=2 OUT=/tmp/sp sh bench/smpi/partition.sh
#
# Environment (defaults in brackets): GRAPHS [cnr-2000 pubmed email-Enron
# soc-Slashdot0902 copter2 cit-HepPh luxembourg_osm], DATA [../shared/data],
# PS [16 64], K [128], ROUNDS [2], ITER [3] timed rounds after 1 untimed,
# CALIB [bench/smpi/calibration-sim-2026-12-06.txt], OUT [/tmp/twoface-smpi-part],
# TIMEOUT [900] seconds per simulated job. `make && make smpi` first.
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp/twoface-smpi-part}
GRAPHS=${GRAPHS:-"cnr-2000 pubmed email-Enron soc-Slashdot0902 copter2 cit-HepPh luxembourg_osm"}
if [ -z "${DATA:-}" ]; then
    DATA=/work/shared/data
    [ -d "$DATA" ] || DATA=$SRC/../shared/data
fi
PS=${PS:-"16 64"}
K=${K:-128}
ROUNDS=${ROUNDS:-2}
ITER=${ITER:-3}
CALIB=${CALIB:-$SRC/bench/smpi/calibration-sim-2026-12-06.txt}
TIMEOUT=${TIMEOUT:-900}
PLAN=$SRC/build/bin/twoface-plan
EXEC=$SRC/build-smpi/bin/twoface-exec
for f in "$PLAN" "$EXEC"; do
    [ -x "$f" ] || { echo "partition.sh: $f is not built (make && make smpi)" >&2; exit 1; }
done
mkdir -p "$OUT/plans" "$OUT/runs" || exit 1
maxp=16
for p in $PS; do [ "$p" -gt "$maxp" ] && maxp=$p; done
sh "$SRC/bench/smpi/platform.sh" "$maxp" 12GBps 0.75us 1Gf >"$OUT/platform.xml" || exit 1
. "$SRC/bench/smpi/sim.sh"
say() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }
for g in $GRAPHS; do
    mtx=$DATA/$g.mtx.zst
    [ -f "$mtx" ] || { say "skip $g: $mtx missing"; continue; }
    for P in $PS; do
        for part in nnz work auto; do
            f=$OUT/plans/$g-P$P-K$K-$part.h5
            [ -s "$f" ] || "$PLAN" "$mtx" -n "$P" -k "$K" --partition "$part" \
                --calibration "$CALIB" -o "$f" -q --explain >"$OUT/plans/$g-P$P-K$K-$part.txt" ||
                { say "FAILED: plan $g P=$P $part"; continue 2; }
        done
        r=1
        while [ "$r" -le "$ROUNDS" ]; do
            if [ $((r % 2)) -eq 1 ]; then order="nnz work"; else order="work nnz"; fi
            for part in $order; do
                o=$OUT/runs/$g-P$P-K$K-$part-$r
                echo "load $(cut -d' ' -f1 /proc/loadavg)" >"$o.load"
                sim "$P" "$EXEC" "$OUT/plans/$g-P$P-K$K-$part.h5" --algo twoface,p2p -k "$K" \
                    -i "$ITER" --warmup 1 --json >"$o.json" 2>"$o.err" ||
                    say "FAILED: $g P=$P $part round $r (see $o.err)"
            done
            say "$g P=$P round $r done"
            r=$((r + 1))
        done
    done
done
