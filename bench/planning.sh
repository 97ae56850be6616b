#!/bin/sh
# Planning on the job's own ranks (docs/planning.md, "Measured"): twoface-plan
# at Q = 1, 2 and 4 planning ranks, and as one process without MPI, on the
# graphs of DATA (decompressed to plain .mtx, which every rank reads in
# parallel) and R-MAT graphs (bench/rmat.c). One JSON line per run
# (twoface-plan --json: phases, wall time, largest and summed peak RSS and
# CPU seconds over the ranks) goes to OUT/planning.jsonl with the graph, Q,
# the round and the 1-minute load average; the Q order rotates from round
# to round. OMP_NUM_THREADS=1 in every run.
#
#   sh bench/planning.sh        (from the source tree, after `make`)
#
# Environment (defaults in brackets):
#   DATA    [/work/shared/data, else ../shared/data]
#   GRAPHS  [cora citeseer pubmed cit-HepPh email-Enron soc-Slashdot0902 copter2
#            luxembourg_osm cnr-2000]
#   RMAT    ["20 21 22"] R-MAT scales (edge factor 16)
#   QS      ["1 2 4"]   ROUNDS [1]   P [16] plan ranks   K [128]
#   OUT     [${TMPDIR:-/tmp}/twoface-planning]  scratch (plain .mtx copies) and results
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$SRC/build}
case $BUILD in /*) ;; *) BUILD=$SRC/$BUILD ;; esac
if [ -z "${DATA:-}" ]; then
    DATA=/work/shared/data
    [ -d "$DATA" ] || DATA=$SRC/../shared/data
fi
GRAPHS=${GRAPHS:-"cora citeseer pubmed cit-HepPh email-Enron soc-Slashdot0902 copter2 luxembourg_osm cnr-2000"}
RMAT=${RMAT-"20 21 22"}
QS=${QS:-"1 2 4"}
ROUNDS=${ROUNDS:-1}
P=${P:-16}
K=${K:-128}
OUT=${OUT:-${TMPDIR:-/tmp}/twoface-planning}
PLAN=$BUILD/bin/twoface-plan
mkdir -p "$OUT" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
export OMP_NUM_THREADS=1
[ -x "$PLAN" ] || { echo "bench/planning.sh: $PLAN is not built (make)" >&2; exit 1; }

files=""
for g in $GRAPHS; do
    [ -f "$OUT/$g.mtx" ] || zstd -qdc "$DATA/$g.mtx.zst" >"$OUT/$g.mtx" || exit 1
    files="$files $g"
done
for s in $RMAT; do
    if [ ! -f "$OUT/rmat$s.mtx" ]; then
        [ -x "$OUT/rmat" ] || cc -O2 -o "$OUT/rmat" "$SRC/bench/rmat.c" || exit 1
        "$OUT/rmat" "$s" >"$OUT/rmat$s.mtx" || exit 1
    fi
    files="$files rmat$s"
done

res=$OUT/planning.jsonl
: >"$res"
load() { cut -d' ' -f1 /proc/loadavg; }
for r in $(seq 1 "$ROUNDS"); do
    for g in $files; do
        # The Q order rotates by round; "serial" is one process without mpirun.
        set -- serial $QS
        n=$#
        i=0
        order=""
        while [ $i -lt $n ]; do
            j=$(( (i + r - 1) % n + 1 ))
            eval "q=\${$j}"
            order="$order $q"
            i=$((i + 1))
        done
        for q in $order; do
            l0=$(load)
            if [ "$q" = serial ]; then
                line=$("$PLAN" "$OUT/$g.mtx" -n "$P" -k "$K" -o "$OUT/plan.h5" -q --json)
            else
                line=$(mpirun -n "$q" --bind-to none "$PLAN" "$OUT/$g.mtx" -n "$P" -k "$K" \
                       -o "$OUT/plan.h5" -q --json)
            fi
            rc=$?
            [ $rc -eq 0 ] || { echo "bench/planning.sh: $g at Q = $q failed ($rc)" >&2; continue; }
            echo "{\"graph\": \"$g\", \"q\": \"$q\", \"round\": $r, \"load\": $l0, \"plan_bytes\": $(stat -c %s "$OUT/plan.h5"), \"run\": $line}" | tee -a "$res"
        done
    done
done
echo "results: $res"
