#!/bin/sh
# Planning at scale by simulation (docs/scale.md, "Planning at scale"): the
# real twoface-plan, built with smpicc (`make smpi`), planning for P ranks on
# P simulated ranks of the cluster of run.sh (same platform, SMPI options and
# coefficients), REPS simulated jobs per (graph, P). Each job's --json line
# (per-phase times, the slowest rank's, simulated seconds) is added to
# OUT/runs/GRAPH-PP.json; bench/smpi/plan_table.py divides them by the
# simulated SpMM times of run.sh.
#
#   sh bench/smpi/plan.sh        (from the source tree; `make smpi` first)
#
# Environment (defaults in brackets):
#   GRAPHS   [pubmed luxembourg_osm email-Enron copter2 cit-HepPh
#            soc-Slashdot0902 rmat20], smallest first: a P = 64 job of a
#            large graph takes many minutes of host time
#   DATA     where GRAPH.mtx or GRAPH.mtx.zst is [/work/shared/data, else
#            ../shared/data]. A compressed file is decompressed into OUT/data
#            first: twoface-plan streams compressed input through one rank,
#            while a plain file is read in parallel, and that is the read to
#            measure. rmatN missing from DATA is generated (bench/rmat.c,
#            scale N, edge factor 16, seed 1)
#   PS [16 64]   K [128]   PARTITION [nnz]
#   BW [12GBps] LAT [0.75us]   CALIB [bench/smpi/calibration-sim-2026-12-07.txt]
#   REPS     [3] jobs per (graph, P): the injected compute blocks are timed
#            on this machine and vary from run to run (plan_table.py takes
#            the job of median total time)
#   OUT      [/tmp/twoface-smpi-plan]   TIMEOUT [3000] seconds per job
#   SIMCOLL  [--cfg=smpi/allgather:bruck --cfg=smpi/alltoall:bruck
#            --cfg=smpi/alltoallv:pair] SMPI's collective algorithms
#            (bench/smpi/sim.sh)
#   KEEP     [0] 1: keep the plans (OUT/plans); they are deleted after each
#            job otherwise (R-MAT 20's is 36 MB)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
SMPI_BUILD=${SMPI_BUILD:-$SRC/build-smpi}
OUT=${OUT:-/tmp/twoface-smpi-plan}
GRAPHS=${GRAPHS:-"pubmed luxembourg_osm email-Enron copter2 cit-HepPh soc-Slashdot0902 rmat20"}
if [ -z "${DATA:-}" ]; then
    DATA=/work/shared/data
    [ -d "$DATA" ] || DATA=$SRC/../shared/data
fi
PS=${PS:-"16 64"}
K=${K:-128}
PARTITION=${PARTITION:-nnz}
BW=${BW:-12GBps}
LAT=${LAT:-0.75us}
CALIB=${CALIB:-$SRC/bench/smpi/calibration-sim-2026-12-07.txt}
TIMEOUT=${TIMEOUT:-3000}
KEEP=${KEEP:-0}
REPS=${REPS:-3}
PLAN=$SMPI_BUILD/bin/twoface-plan

say() { echo "[$(date -u +%H:%M:%S)] $*"; }
[ -x "$PLAN" ] || { echo "plan.sh: $PLAN is not built (make smpi)" >&2; exit 1; }
command -v smpirun >/dev/null || { echo "plan.sh: smpirun not found (make smpi installs it)" >&2; exit 1; }
[ -s "$CALIB" ] || { echo "plan.sh: $CALIB: no such coefficients file" >&2; exit 1; }
mkdir -p "$OUT/data" "$OUT/plans" "$OUT/runs" || exit 1

maxp=16
for p in $PS; do [ "$p" -gt "$maxp" ] && maxp=$p; done
sh "$SRC/bench/smpi/platform.sh" "$maxp" "$BW" "$LAT" 1Gf >"$OUT/platform.xml" || exit 1
# Small all-to-alls and all-gathers as Open MPI runs them (bench/smpi/sim.sh).
SIMCOLL=${SIMCOLL:---cfg=smpi/allgather:bruck --cfg=smpi/alltoall:bruck --cfg=smpi/alltoallv:pair}
. "$SRC/bench/smpi/sim.sh"
say "platform: $maxp nodes, links $BW / $LAT; coefficients $CALIB; load: $(cut -d' ' -f1-3 /proc/loadavg)"

# The plain .mtx of a graph, made when missing; prints its path.
plain() {
    if [ -f "$DATA/$1.mtx" ]; then
        echo "$DATA/$1.mtx"
        return 0
    fi
    f=$OUT/data/$1.mtx
    if [ ! -s "$f" ]; then
        if [ -f "$DATA/$1.mtx.zst" ]; then
            zstd -qdc "$DATA/$1.mtx.zst" >"$f.part" && mv "$f.part" "$f" || return 1
        else
            case $1 in
                rmat[0-9]*)
                    cc -O2 -o "$OUT/rmat" "$SRC/bench/rmat.c" &&
                        "$OUT/rmat" "${1#rmat}" >"$f.part" && mv "$f.part" "$f" || return 1 ;;
                *) return 1 ;;
            esac
        fi
    fi
    echo "$f"
}

for g in $GRAPHS; do
    mtx=$(plain "$g") || { say "skip $g: no $DATA/$g.mtx or .mtx.zst"; rm -f "$OUT/data/$g.mtx.part"; continue; }
    for P in $PS; do
        tag=$g-P$P
        have=$(grep -c '^{' "$OUT/runs/$tag.json" 2>/dev/null)
        [ "${have:-0}" -ge "$REPS" ] && { say "$tag: done before"; continue; }
        rep=${have:-0}
        while [ "$rep" -lt "$REPS" ]; do
            rep=$((rep + 1))
            t0=$(date +%s)
            if sim "$P" "$PLAN" "$mtx" -n "$P" -k "$K" --partition "$PARTITION" \
                --calibration "$CALIB" -o "$OUT/plans/$tag.h5" --json -q \
                >"$OUT/runs/$tag.out" 2>"$OUT/runs/$tag.err"; then
                host=$(( $(date +%s) - t0 ))
                # The JSON line, with the graph and the host seconds the job took.
                grep '^{' "$OUT/runs/$tag.out" |
                    sed "s/^{/{\"graph\": \"$g\", \"host_s\": $host, /" >>"$OUT/runs/$tag.json"
                say "$tag ($rep/$REPS): $host s host time, load $(cut -d' ' -f1 /proc/loadavg)"
            else
                say "FAILED: $tag (see $OUT/runs/$tag.err)"
                break
            fi
        done
        [ "$KEEP" = 1 ] || rm -f "$OUT/plans/$tag.h5"
    done
done
