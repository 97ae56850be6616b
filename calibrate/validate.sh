#!/bin/sh
# The calibration experiments behind docs/calibration-results.md:
#  1. calibrate this machine: shared memory (default btl) and an emulated
#     network (OMPI_MCA_btl=self,tcp OMPI_MCA_osc=pt2pt: one-sided gets over
#     TCP as well), each also without the in-situ
#     scaling (--no-insitu: the microbenchmark fits alone);
#  2. validation: for every graph, plan at P=4, K=128 with each calibration
#     (twoface-plan --calibration; modes twoface, collective and fetch), run
#     the plans under their own transport with twoface-calibrate --validate
#     and collect the prediction error per half; all plans of a graph (the
#     sm- and tcp-calibrated twoface plans and the single-strategy plans) run
#     interleaved in one process under each transport, so their times
#     compare directly;
#  3. sensitivity: for a few graphs and two calibrations (with and without
#     the in-situ scaling), perturb each coefficient by -25% and +25%,
#     re-plan, and run all the plans interleaved in one process with the
#     unperturbed plan (twice: the difference between its two copies is the
#     noise floor).
# Results: $OUT/*.json (one line per plan), $OUT/*.log, and the tables in
# $OUT/tables.md. Total runtime on the 2-core development VM: about 5 min when
# the machine is otherwise idle (plus any waiting for it to be, see QUIET).
#
#   BUILD=build  OUT=$BUILD/validate  DATA=../shared/data
#   ITERS=20     timed SpMMs per plan (validation); SENS_ITERS=25 (sensitivity)
#   SENS="cora pubmed email-Enron"   graphs of the sensitivity experiment
#   SENS_CALIBS="sm smraw"           calibrations it perturbs
#   FULL=1       full calibration sweeps instead of --quick
#   SKIP_TCP=1   shared memory only
#   QUIET=70     before each measurement wait (up to QUIET_WAIT=240 s) until the
#                machine is at least this % idle over 3 s: on a shared machine other
#                programs' load is the largest error of all (QUIET=0: only log it)
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/validate}
DATA=${DATA:-../shared/data}
ITERS=${ITERS:-20}
SENS_ITERS=${SENS_ITERS:-25}
SENS=${SENS:-"cora pubmed email-Enron"}
SENS_CALIBS=${SENS_CALIBS:-"sm smraw"}
NP=4
K=128
BIN=$BUILD/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_osc=${OMPI_MCA_osc:-sm,rdma}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
export HDF5_PLUGIN_PATH=$BUILD/hdf5-plugins
unset OMPI_MCA_btl

for p in twoface-plan twoface-calibrate; do
    [ -x "$BIN/$p" ] || { echo "validate.sh: $BIN/$p missing: run make first" >&2; exit 1; }
done
mkdir -p "$OUT" || exit 1
: >"$OUT/load.log"
start=$(date +%s)
say() { echo "[$(( $(date +%s) - start ))s] $*"; }
# Idle % of all CPUs over 3 s, from /proc/stat.
idle_pct() {
    a=$(awk '/^cpu / { print $2+$3+$4+$5+$6+$7+$8, $5+$6 }' /proc/stat)
    sleep 3
    b=$(awk '/^cpu / { print $2+$3+$4+$5+$6+$7+$8, $5+$6 }' /proc/stat)
    echo "$a $b" | awk '{ t = $3 - $1; printf "%d", (t > 0 ? 100 * ($4 - $2) / t : 100) }'
}
QUIET=${QUIET:-70}
QUIET_WAIT=${QUIET_WAIT:-240}
# Waits for an idle machine; logs what it found to $OUT/load.log.
wait_quiet() { # label
    w0=$(date +%s)
    while :; do
        idle=$(idle_pct)
        [ "$idle" -ge "$QUIET" ] && break
        [ $(( $(date +%s) - w0 )) -ge "$QUIET_WAIT" ] && break
    done
    echo "$1: idle ${idle}% after waiting $(( $(date +%s) - w0 ))s (load $(cut -d' ' -f1-3 /proc/loadavg))" >>"$OUT/load.log"
}
run() { mpirun -n $NP --bind-to none "$@"; }
with_btl() { # transport, command...
    t=$1; shift
    # tcp: two-sided AND one-sided over TCP (osc pt2pt emulates gets with
    # messages, so the target must enter MPI; osc sm would keep gets on
    # shared memory whatever the btl, and osc rdma over tcp cannot create
    # windows here).
    if [ "$t" = tcp ]; then OMPI_MCA_btl=self,tcp OMPI_MCA_osc=pt2pt "$@"; else "$@"; fi
}
# A field of a one-line JSON object (top-level keys here are unique).
jget() { sed -n "s/.*\"$1\": \([^,}]*\).*/\1/p"; }
pct() { awk -v x="$1" 'BEGIN { if (x == "" || x == "null") print "-"; else printf "%+.0f%%", 100 * x }'; }
apct() { awk -v x="$1" 'BEGIN { if (x == "" || x == "null") print "-"; else printf "%.0f%%", 100 * x }'; }
ms() { awk -v x="$1" 'BEGIN { if (x == "" || x == "null") print "-"; else printf "%.3f", 1e3 * x }'; }
# Collective and fetch stripe counts and fetch requests from twoface-plan --explain.
split_counts() { awk '$1 ~ /^[0-9]+$/ && NF == 13 { c += $5; f += $6; q += $10 } END { printf "%d %d %d", c, f, q }'; }

graphs=""
if [ -d "$DATA" ] && ls "$DATA"/*.mtx.zst >/dev/null 2>&1; then
    graphs=$(ls "$DATA"/*.mtx.zst)
else
    DATA=examples/data
    graphs=examples/data/cora.mtx.zst
    SENS=cora
fi
transports="sm tcp"
[ "${SKIP_TCP:-0}" = 1 ] && transports=sm
mode=--quick
[ "${FULL:-0}" = 1 ] && mode=

# 1. Calibrations; "smraw" and "tcpraw" are the same without the in-situ
# scaling (--no-insitu): the microbenchmark fits alone, for comparison.
raws=""
for t in $transports; do raws="$raws ${t}raw"; done
for t in $transports $raws; do
    tr=${t%raw}; extra=
    [ "$tr" != "$t" ] && extra=--no-insitu
    wait_quiet "calibration $t"
    say "calibrating ($t)"
    with_btl $tr run "$BIN/twoface-calibrate" -o "$OUT/calib_$t.txt" -k $K $mode $extra \
        >"$OUT/calib_$t.log" 2>&1 || { cat "$OUT/calib_$t.log"; exit 1; }
done

# 2. Validation.
: >"$OUT/validate.json"
for g in $graphs; do
    name=$(basename "$g" .mtx.zst)
    # The twoface plan of each calibration, and the single-strategy plans
    # (--mode collective / fetch, same calibration): the collective-only plan
    # is what exercises the collective coefficients when twoface fetches
    # everything, and the three together show whether the model ranks the
    # strategies as the machine does.
    for t in $transports; do
        for m in twoface collective fetch; do
            case $m in twoface) sfx=$t ;; collective) sfx=$t.coll ;; *) sfx=$t.fetch ;; esac
            "$BIN/twoface-plan" "$g" -n $NP -k $K -o "$OUT/$name.$sfx.h5" --mode $m \
                --calibration "$OUT/calib_$t.txt" -q --explain >"$OUT/$name.$sfx.explain" || exit 1
        done
    done
    for t in $raws; do
        "$BIN/twoface-plan" "$g" -n $NP -k $K -o "$OUT/$name.$t.h5" \
            --calibration "$OUT/calib_$t.txt" -q --explain >"$OUT/$name.$t.explain" || exit 1
    done
    for t in $transports; do
        plans="$OUT/$name.$t.coll.h5 $OUT/$name.$t.fetch.h5"
        for t2 in $transports; do plans="$plans $OUT/$name.$t2.h5"; done
        plans="$plans $OUT/$name.${t}raw.h5"
        wait_quiet "validation $name $t"
        say "validating $name under $t"
        with_btl $t run "$BIN/twoface-calibrate" --validate $plans -i $ITERS --json \
            >"$OUT/$name.run_$t.json" 2>"$OUT/$name.run_$t.err" || { cat "$OUT/$name.run_$t.err"; exit 1; }
        sed "s/^{/{\"graph\": \"$name\", \"transport\": \"$t\", /" "$OUT/$name.run_$t.json" >>"$OUT/validate.json"
    done
done

# 3. Sensitivity (shared memory), around each calibration in SENS_CALIBS: a
# coefficient only matters where it moves the split, and an all-fetch plan
# (what the in-situ scaled coefficients give on this machine) hardly moves.
coeffs="alpha_coll beta_coll alpha_fetch beta_fetch gamma_local gamma_coll gamma_fetch alpha_sync"
for cal in $SENS_CALIBS; do
    for name in $SENS; do
        g=$DATA/$name.mtx.zst
        [ -f "$g" ] || continue
        base=$OUT/$name.$cal.h5
        plans="$base $base"
        for c in $coeffs; do
            for f in 0.75 1.25; do
                cf=$OUT/calib_$cal.$c.$f.txt
                awk -v c="$c" -v f="$f" '$1 == c && $2 == "=" { $3 = sprintf("%.6e", $3 * f) } { print }' \
                    "$OUT/calib_$cal.txt" >"$cf"
                "$BIN/twoface-plan" "$g" -n $NP -k $K -o "$OUT/$name.$cal.$c.$f.h5" --calibration "$cf" \
                    -q --explain >"$OUT/$name.$cal.$c.$f.explain" || exit 1
                plans="$plans $OUT/$name.$cal.$c.$f.h5"
            done
        done
        wait_quiet "sensitivity $cal $name"
        say "sensitivity: $name around $cal, $(echo $plans | wc -w) plans interleaved"
        run "$BIN/twoface-calibrate" --validate $plans -i $SENS_ITERS --json \
            >"$OUT/$name.$cal.sens.json" 2>"$OUT/$name.$cal.sens.err" ||
            { cat "$OUT/$name.$cal.sens.err"; exit 1; }
    done
done

# 4. Tables.
{
    echo "## Coefficients"
    echo
    printf "| coefficient |"; for t in $transports $raws; do printf " %s |" "$t"; done; echo
    printf "|---|"; for t in $transports $raws; do printf "%s" "---:|"; done; echo
    for c in $coeffs threads; do
        printf "| \`%s\` |" "$c"
        for t in $transports $raws; do
            printf " %s |" "$(awk -v c="$c" '$1 == c && $2 == "=" { print $3 }' "$OUT/calib_$t.txt")"
        done
        echo
    done
    for t in $transports $raws; do
        printf "\n%s: " "$t"; grep -E '^(note|transport) =' "$OUT/calib_$t.txt" | tr '\n' ' '; echo
    done
    echo
    for t in $transports; do
        echo "## Prediction vs measurement ($t transport, $t calibration)"
        echo
        echo "| graph | nnz | split coll / fetch / requests | predicted ms | measured ms | error | mean abs err coll half | mean abs err fetch half | mean abs err rank total | max final sync ms | max other ms |"
        echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        for g in $graphs; do
            name=$(basename "$g" .mtx.zst)
            line=$(grep "\"plan\": \"$OUT/$name.$t.h5\"" "$OUT/$name.run_$t.json")
            set -- $(split_counts <"$OUT/$name.$t.explain")
            nnz=$(sed -n 's/^plan: [0-9]* x [0-9]*, \([0-9]*\) nonzeros.*/\1/p' "$OUT/$name.$t.explain")
            echo "| $name | $nnz | $1 / $2 / $3 | $(ms "$(echo "$line" | jget pred_s)") | $(ms "$(echo "$line" | jget median_s)") | $(pct "$(echo "$line" | jget err)") | $(apct "$(echo "$line" | jget mae_coll_half)") | $(apct "$(echo "$line" | jget mae_fetch_half)") | $(apct "$(echo "$line" | jget mae_total)") | $(ms "$(echo "$line" | jget meas_sync_max_s)") | $(ms "$(echo "$line" | jget meas_other_max_s)") |"
        done
        echo
    done
    for t in $transports; do
        echo "## Strategies ($t transport, $t calibration): predicted / measured ms, interleaved in one process"
        echo
        echo "| graph | twoface | collective only | fetch only | error coll-only | fastest predicted | fastest measured |"
        echo "|---|---:|---:|---:|---:|---:|---:|"
        for g in $graphs; do
            name=$(basename "$g" .mtx.zst)
            row="| $name |"
            bp=""; bm=""; vp=1e30; vm=1e30
            for m in twoface coll fetch; do
                case $m in twoface) pf=$OUT/$name.$t.h5 ;; *) pf=$OUT/$name.$t.$m.h5 ;; esac
                line=$(grep "\"plan\": \"$pf\"" "$OUT/$name.run_$t.json")
                p=$(echo "$line" | jget pred_s); v=$(echo "$line" | jget median_s)
                row="$row $(ms "$p") / $(ms "$v") |"
                [ $m = coll ] && ce=$(echo "$line" | jget err)
                # Ties (twoface identical to fetch only) go to the first listed.
                if awk -v a="$p" -v b="$vp" 'BEGIN { exit !(a < b * 0.999) }'; then vp=$p; bp=$m; fi
                if awk -v a="$v" -v b="$vm" 'BEGIN { exit !(a < b) }'; then vm=$v; bm=$m; fi
            done
            echo "$row $(pct "$ce") | $bp | $bm |"
        done
        echo
    done
    for t in $transports; do
        echo "## In-situ scaling vs microbenchmark fits alone ($t transport): predicted / measured ms"
        echo
        echo "| graph | split (fits alone) | split (in-situ scaled) | fits alone | in-situ scaled | error fits alone | error in-situ |"
        echo "|---|---:|---:|---:|---:|---:|---:|"
        for g in $graphs; do
            name=$(basename "$g" .mtx.zst)
            l1=$(grep "\"plan\": \"$OUT/$name.${t}raw.h5\"" "$OUT/$name.run_$t.json")
            l2=$(grep "\"plan\": \"$OUT/$name.$t.h5\"" "$OUT/$name.run_$t.json")
            echo "| $name | $(split_counts <"$OUT/$name.${t}raw.explain" | tr ' ' /) | $(split_counts <"$OUT/$name.$t.explain" | tr ' ' /) | $(ms "$(echo "$l1" | jget pred_s)") / $(ms "$(echo "$l1" | jget median_s)") | $(ms "$(echo "$l2" | jget pred_s)") / $(ms "$(echo "$l2" | jget median_s)") | $(pct "$(echo "$l1" | jget err)") | $(pct "$(echo "$l2" | jget err)") |"
        done
        echo
    done
    if [ "$transports" = "sm tcp" ]; then
        echo "## Split and time: sm-calibrated vs tcp-calibrated plans, both run under each transport"
        echo
        echo "| graph | split (sm calib) | split (tcp calib) | under sm: sm plan ms | tcp plan ms | under tcp: sm plan ms | tcp plan ms |"
        echo "|---|---:|---:|---:|---:|---:|---:|"
        for g in $graphs; do
            name=$(basename "$g" .mtx.zst)
            row="| $name | $(split_counts <"$OUT/$name.sm.explain" | tr ' ' /) | $(split_counts <"$OUT/$name.tcp.explain" | tr ' ' /) |"
            for t in sm tcp; do
                for p in sm tcp; do
                    v=$(grep "\"plan\": \"$OUT/$name.$p.h5\"" "$OUT/$name.run_$t.json" | jget median_s)
                    row="$row $(ms "$v") |"
                done
            done
            echo "$row"
        done
        echo
    fi
    for cal in $SENS_CALIBS; do
    echo "## Sensitivity around the $cal calibration: each coefficient x0.75 and x1.25, re-planned, run interleaved with the unperturbed plan"
    echo
    echo "Split = collective stripes / fetch stripes / fetch requests (\"same\" = as unperturbed)."
    echo "Time change = median(perturbed) / mean of the two unperturbed copies' medians - 1; the"
    echo "unperturbed plan runs twice in the same process, and the difference between its copies"
    echo "is the noise floor."
    echo
    for name in $SENS; do
        f=$OUT/$name.$cal.sens.json
        [ -f "$f" ] || continue
        b1=$(sed -n 1p "$f" | jget median_s)
        b2=$(sed -n 2p "$f" | jget median_s)
        base=$(split_counts <"$OUT/$name.$cal.explain")
        echo "### $name ($cal): unperturbed split $(echo "$base" | tr ' ' /), $(ms "$b1") ms and $(ms "$b2") ms (noise $(awk -v a="$b1" -v b="$b2" 'BEGIN { printf "%.1f%%", 100 * (b > a ? b / a - 1 : a / b - 1) }'))"
        echo
        echo "| coefficient | x0.75 split | time | x1.25 split | time |"
        echo "|---|---:|---:|---:|---:|"
        for c in $coeffs; do
            row="| \`$c\` |"
            for x in 0.75 1.25; do
                v=$(grep "\"plan\": \"$OUT/$name.$cal.$c.$x.h5\"" "$f" | jget median_s)
                sp=$(split_counts <"$OUT/$name.$cal.$c.$x.explain")
                [ "$sp" = "$base" ] && sp=same || sp=$(echo "$sp" | tr ' ' /)
                row="$row $sp | $(awk -v a="$b1" -v b="$b2" -v v="$v" 'BEGIN { printf "%+.1f%%", 100 * (v / ((a + b) / 2) - 1) }') |"
            done
            echo "$row"
        done
        echo
    done
    done
    echo "## Conditions"
    echo
    echo "Idle share of the CPUs measured over 3 s before each step (QUIET=$QUIET, waiting at most"
    echo "${QUIET_WAIT}s); a step that ran on a busy machine is less trustworthy than the others."
    echo
    sed 's/^/    /' "$OUT/load.log"
    echo
} >"$OUT/tables.md"
say "done: $OUT/tables.md"
cat "$OUT/tables.md"
