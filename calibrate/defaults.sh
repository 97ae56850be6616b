#!/bin/sh
# How the built-in coefficients (format/tf_coeffs.c) are derived, and how a
# candidate set is checked before it replaces them (docs/cost-model.md,
# "The built-in coefficients"):
#  1. RUNS full calibrations (calibrate/run.sh: 4 ranks, 1 thread each,
#     shared memory, K = 128); each coefficient's median over the runs,
#     rounded to two digits, goes to $OUT/median.txt. One run is not enough
#     on a 2-core machine: the in-situ factors of single runs spread by 2x.
#  2. For every graph, both pure plans at P = 4, K = 128 (--mode collective,
#     --mode fetch), run interleaved in one process by twoface-calibrate
#     --validate; beside their measured times, what the built-in set and the
#     median set predict for each, and which of the two each set would pick.
# Output: $OUT/table.md (and the raw runs in $OUT); the C lines for
# tf_coeffs_default on stdout.
#
#   sh calibrate/defaults.sh               (after make; about 5 min on 2 cores)
#
# Environment: BUILD [build], DATA [../shared/data], OUT [$BUILD/defaults],
# RUNS [7], GRAPHS [every *.mtx.zst in DATA], ITERS [30] SpMMs per plan,
# SKIP_CAL=1 use the calibrations already in $OUT (cal-1.txt ... cal-$RUNS.txt),
# ALSO="NAME=CALIB ..." more coefficient sets to put beside the two.
BUILD=${BUILD:-build}
DATA=${DATA:-../shared/data}
OUT=${OUT:-$BUILD/defaults}
RUNS=${RUNS:-7}
ITERS=${ITERS:-30}
BIN=$BUILD/bin
HERE=$(dirname "$0")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_osc=${OMPI_MCA_osc:-sm,rdma}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
export HDF5_PLUGIN_PATH=$BUILD/hdf5-plugins
for p in twoface-plan twoface-calibrate; do
    [ -x "$BIN/$p" ] || { echo "defaults.sh: $BIN/$p missing: run make first" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "defaults.sh: python3 missing" >&2; exit 1; }
mkdir -p "$OUT" || exit 1
if [ -z "${GRAPHS:-}" ]; then
    GRAPHS=$(for f in "$DATA"/*.mtx.zst; do basename "$f" .mtx.zst; done)
fi

if [ "${SKIP_CAL:-0}" != 1 ]; then
    i=1
    while [ "$i" -le "$RUNS" ]; do
        echo "calibration $i of $RUNS, load $(cut -d' ' -f1 /proc/loadavg)" >&2
        FULL=1 OUT="$OUT/cal-$i.txt" BUILD=$BUILD sh "$HERE/run.sh" >"$OUT/cal-$i.log" 2>&1 ||
            { echo "defaults.sh: calibration $i failed, see $OUT/cal-$i.log" >&2; exit 1; }
        i=$((i + 1))
    done
fi

echo "# pure plans at P = 4, K = 128: $(date -u '+%Y-%m-%d %H:%M UTC')" >"$OUT/runs.log"
for g in $GRAPHS; do
    m=$OUT/$g.mtx
    [ -f "$m" ] || zstd -q -d "$DATA/$g.mtx.zst" -o "$m" || exit 1
    for mode in collective fetch; do
        "$BIN/twoface-plan" "$m" -n 4 -k 128 --mode $mode -o "$OUT/$g-$mode.h5" >/dev/null 2>&1 ||
            { echo "defaults.sh: planning $g ($mode) failed" >&2; exit 1; }
    done
    echo "== $g $(cut -d' ' -f1 /proc/loadavg)" >>"$OUT/runs.log"
    mpirun -n 4 --bind-to none "$BIN/twoface-calibrate" --validate "$OUT/$g-collective.h5" \
        "$OUT/$g-fetch.h5" -i "$ITERS" --json 2>/dev/null | grep '^{' >>"$OUT/runs.log" ||
        { echo "defaults.sh: running $g failed" >&2; exit 1; }
done
python3 "$HERE/defaults_table.py" --runs "$OUT/runs.log" --plan "$BIN/twoface-plan" \
    --dir "$OUT" --median "$OUT/median.txt" $(for a in ${ALSO:-}; do echo "--also $a"; done) $(i=1; while [ "$i" -le "$RUNS" ]; do
        echo "$OUT/cal-$i.txt"; i=$((i + 1)); done) >"$OUT/table.md" || exit 1
cat "$OUT/table.md" >&2
