#!/bin/sh
# The cost model's prediction against measurement on this machine
# (docs/cost-model.md, "P = 4 on this machine"): for every graph and K, plans
# with each coefficient set, then runs each plan as planned (no start-up
# trial) and prints one line per plan:
#   graph K set classes predicted_ms measured_ms predicted/measured
# predicted: `twoface-plan --explain`, slowest rank; measured: median SpMM of
# `twoface-exec --select-calls -1 --json`, slowest rank.
#
#   sh bench/model_p4.sh            (from the source tree, after `make`)
#
# Environment (defaults in brackets):
#   GRAPHS  [the eight graphs of DATA]   DATA [../shared/data]   KS [128 32]
#   CALIBS  coefficient sets, NAME=FILE separated by spaces; NAME=builtin
#           plans without --calibration [builtin=builtin]
#   PLAN    the planner [build/bin/twoface-plan] (another build's planner
#           gives its model's predictions for the same runs)
#   NP [4]  ITER [15]  OUT [/tmp/twoface-model-p4]
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$SRC/build}
PLAN=${PLAN:-$BUILD/bin/twoface-plan}
EXEC=$BUILD/bin/twoface-exec
DATA=${DATA:-$SRC/../shared/data}
GRAPHS=${GRAPHS:-"cit-HepPh citeseer cnr-2000 copter2 cora email-Enron luxembourg_osm pubmed soc-Slashdot0902"}
KS=${KS:-"128 32"}
CALIBS=${CALIBS:-builtin=builtin}
NP=${NP:-4}
ITER=${ITER:-15}
OUT=${OUT:-/tmp/twoface-model-p4}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_osc=${OMPI_MCA_osc:-sm,rdma}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
mkdir -p "$OUT" || exit 1
for tool in "$PLAN" "$EXEC"; do
    [ -x "$tool" ] || { echo "model_p4.sh: $tool missing (run make)" >&2; exit 1; }
done
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-18s %4s %-10s %-22s %12s %12s %8s\n' graph K set classes predicted_ms measured_ms ratio
status=0
for g in $GRAPHS; do
    mtx=$DATA/$g.mtx.zst
    [ -f "$mtx" ] || mtx=$DATA/$g.mtx
    [ -f "$mtx" ] || { echo "model_p4.sh: no $g in $DATA" >&2; status=1; continue; }
    for k in $KS; do
        for set in $CALIBS; do
            name=${set%%=*} file=${set#*=}
            cal=
            [ "$file" = builtin ] || cal="--calibration $file"
            plan=$OUT/$g-$k-$name.h5
            # shellcheck disable=SC2086
            if ! "$PLAN" "$mtx" -n "$NP" -k "$k" -o "$plan" --explain $cal >"$OUT/$g-$k-$name.explain" 2>&1; then
                echo "model_p4.sh: planning $g at K = $k with $name failed:" >&2
                tail -n 3 "$OUT/$g-$k-$name.explain" >&2
                status=1
                continue
            fi
            pred=$(sed -n 's/.*predicted SpMM time \([0-9.]*\) ms.*/\1/p' "$OUT/$g-$k-$name.explain" | head -n 1)
            if ! mpirun -n "$NP" --bind-to none "$EXEC" "$plan" -k "$k" -i "$ITER" --select-calls -1 \
                --json >"$OUT/$g-$k-$name.json" 2>"$OUT/$g-$k-$name.err"; then
                echo "model_p4.sh: running $g at K = $k with $name failed:" >&2
                tail -n 3 "$OUT/$g-$k-$name.err" >&2
                status=1
                continue
            fi
            python3 - "$OUT/$g-$k-$name.json" "$g" "$k" "$name" "$pred" <<'EOF'
import json, sys
path, g, k, name, pred = sys.argv[1:]
run = json.loads(open(path).read().strip().splitlines()[-1])
meas = 1e3 * run["median_s"]
pred = float(pred)
print(f"{g:<18} {k:>4} {name:<10} {run['classes']:<22} {pred:12.3f} {meas:12.3f} {pred / meas:8.2f}")
EOF
        done
    done
done
echo "# end $(date -u '+%H:%M UTC'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
