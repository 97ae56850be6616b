#!/bin/sh
# How well the start-up trial ranks a plan against its runner-up: for each
# case, plans twoface / fetch / collective with the shared-memory calibration
# of RESULTS for that P (calibration-sm-npP.txt), then REPS times runs the
# three interleaved in one twoface-exec process and prints the trial's
# decision and medians beside the fetch and collective medians of the timed
# rounds (docs/executor.md, "Start-up trial"; docs/benchmarks.md, "Shared
# memory").
#
#   sh bench/trial_check.sh                       # five cases
#   CASES="pubmed:4:32 cora:4:512" REPS=5 sh bench/trial_check.sh
#
# Environment: BUILD [build], DATA [../shared/data], RESULTS [bench/results],
# CASES [graph:P:K ...], REPS [3], ROUNDS [15].
set -u
BUILD=${BUILD:-build}
DATA=${DATA:-../shared/data}
RESULTS=${RESULTS:-bench/results}
CASES=${CASES:-"copter2:4:512 luxembourg_osm:4:128 pubmed:4:32 cora:4:512 email-Enron:2:32"}
REPS=${REPS:-3}
ROUNDS=${ROUNDS:-15}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_osc=sm,rdma OMPI_MCA_mpi_yield_when_idle=1
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
work=$(mktemp -d "${TMPDIR:-/tmp}/trial_check.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
# First value of "key": in a JSON line (the record's keys come before the
# selection's, docs/executor.md).
val() { sed -n "s/.*\"$2\": \"\{0,1\}\([^\",}]*\).*/\1/p" "$1"; }
for c in $CASES; do
    g=${c%%:*}; rest=${c#*:}; P=${rest%%:*}; K=${rest#*:}
    cal=$RESULTS/calibration-sm-np$P.txt
    [ -f "$cal" ] || { echo "trial_check: no $cal" >&2; exit 1; }
    for m in twoface fetch collective; do
        "$BUILD/bin/twoface-plan" "$DATA/$g.mtx.zst" -n "$P" -k "$K" --mode $m \
            --calibration "$cal" -o "$work/$m.h5" -q || exit 1
    done
    r=1
    while [ $r -le "$REPS" ]; do
        mpirun -n "$P" --bind-to none "$BUILD/bin/twoface-exec" "$work/twoface.h5" \
            "$work/fetch.h5" "$work/collective.h5" --algo twoface,fetch,collective -k "$K" \
            -i "$ROUNDS" --json >"$work/out.json" 2>"$work/err.log" ||
            { echo "trial_check: $g P=$P K=$K failed: $(head -3 "$work/err.log")" >&2; exit 1; }
        grep '"algo": "twoface"' "$work/out.json" >"$work/t"
        grep '"algo": "fetch"' "$work/out.json" >"$work/f"
        grep '"algo": "collective"' "$work/out.json" >"$work/c"
        tm=$(sed -n 's/.*"trial_median_s": \[\([^]]*\)\].*/\1/p' "$work/t")
        echo "$g P=$P K=$K run $r: planned $(val "$work/t" planned), kept the $(val "$work/t" chose)" \
            "(trial medians s: $tm); timed medians s: fetch $(val "$work/f" median_s)" \
            "collective $(val "$work/c" median_s) twoface $(val "$work/t" median_s)"
        r=$((r + 1))
    done
done
