#!/bin/sh
# bfloat16 communication (--comm bf16) against float32, for docs/benchmarks.md and
# docs/gnn.md.
#   sh bench/bf16.sh spmm      twoface-exec at P = 4, K = 128 on GRAPHS (plans made with
#                              the shared-memory calibration CALIB): the plan run in both
#                              precisions in one process (--comm f32,bf16: interleaved,
#                              the order rotating every round), ROUNDS processes; bytes
#                              received per SpMM (--json), median SpMM time (slowest rank)
#                              per process, the median over processes of each and of the
#                              per-process ratio, the owner's rounding (pack_s); and what
#                              twoface-plan --comm bf16 would plan instead (--explain);
#                              SELECT (-1: no start-up trial, so with four ranks on two
#                              cores both precisions copy; 4: the default, the trial
#                              picks each precision's transport)
#   sh bench/bf16.sh accuracy  twoface-gcn test accuracy on Cora and CiteSeer at P = 4,
#                              seeds 0..SEEDS-1, --comm f32 and bf16 alternating; mean,
#                              std, worst per-seed difference; then the P-agreement of the
#                              losses: 20 epochs (no early stop) at P = 1, 2, 4 with bf16,
#                              largest relative difference of train/val loss from P = 1;
#                              TWOFACE_COLL_SHM=copy, so that bf16 rows are rounded as
#                              between nodes (read in place they are float32)
#   sh bench/bf16.sh smpi      the simulated cluster of docs/scale.md (bench/smpi/run.sh,
#                              `make smpi` first) at P = 16 and 64, K = 128, its six graphs:
#                              twoface in both precisions in each simulated job (--comm
#                              f32,bf16), links of BW (default 12GBps, the harness's) per
#                              one-core node; table of simulated medians and bytes
# Environment: DATA (../shared/data), GNN ($DATA/gnn), BUILD (build), OUT (plans and raw
# JSON; ${TMPDIR:-/tmp}/twoface-bf16-bench), GRAPHS, ROUNDS (5), ITERS (30), SEEDS (10),
# CALIB (bench/results/calibration-sm-np4.txt), SELECT (-1).
# Output: one line per run, then Markdown tables; the date and `uptime` first.
BUILD=${BUILD:-build}
DATA=${DATA:-../shared/data}
GNN=${GNN:-$DATA/gnn}
OUT=${OUT:-${TMPDIR:-/tmp}/twoface-bf16-bench}
GRAPHS=${GRAPHS:-"cora citeseer pubmed email-Enron soc-Slashdot0902 cit-HepPh luxembourg_osm copter2"}
ROUNDS=${ROUNDS:-5}
ITERS=${ITERS:-30}
SEEDS=${SEEDS:-10}
CALIB=${CALIB:-bench/results/calibration-sm-np4.txt}
SELECT=${SELECT:--1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_osc=sm,rdma OMPI_MCA_osc_rdma_priority=1
export OMPI_MCA_mpi_yield_when_idle=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
mkdir -p "$OUT"
PLAN=$BUILD/bin/twoface-plan
EXEC=$BUILD/bin/twoface-exec
GCN=$BUILD/bin/twoface-gcn
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); uptime: $(uptime)"

jfield() { # FILE KEY: first numeric value of "KEY": in the first record
    sed -n "s/.*\"$2\": \([-0-9.e+]*\).*/\1/p" "$1" | head -1
}
bytes() { sed -n 's/.*"bytes_received": {[^}]*"total": \([0-9]*\).*/\1/p' "$1" | head -1; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

spmm() {
    cal=""
    [ -f "$CALIB" ] && cal="--calibration $CALIB"
    for g in $GRAPHS; do
        f=$OUT/$g-f32.h5
        [ -f "$f" ] || "$PLAN" "$DATA/$g.mtx.zst" -n 4 -k 128 $cal -o "$f" -q || exit 1
        # What --comm bf16 would change in the plan itself: its split and the model's saving.
        "$PLAN" "$DATA/$g.mtx.zst" -n 4 -k 128 $cal --comm bf16 -o "$OUT/x.h5" --explain -q |
            grep -E '^(comm|classes):' | sed "s/^/explain $g: /"
        # The same plan in both precisions in one process, interleaved in a rotating
        # order (twoface-exec --comm f32,bf16); by default no start-up trial, so
        # both run the planner's choice.
        for r in $(seq 1 "$ROUNDS"); do
            j=$OUT/$g-$r.json
            if [ $((r % 2)) = 1 ]; then cl=f32,bf16; else cl=bf16,f32; fi
            timeout 900 mpirun -n 4 --bind-to none "$EXEC" "$f" --comm $cl -k 128 -i "$ITERS" \
                --warmup 3 --select-calls "$SELECT" --json >"$j" 2>"$OUT/err.log" ||
                { echo "FAILED $g: $(head -3 "$OUT/err.log")"; continue; }
            for c in f32 bf16; do
                l=$(grep "\"algo\": \"twoface/$c\"" "$j")
                echo "$l" >"$OUT/line.json"
                echo "spmm $g $c round $r median_s $(jfield "$OUT/line.json" median_s) bytes $(bytes "$OUT/line.json") pack_s $(jfield "$OUT/line.json" pack_s) classes $(sed -n 's/.*"classes": "\([a-z]*\)".*/\1/p' "$OUT/line.json") load $(cut -d' ' -f1 /proc/loadavg) transport $(sed -n 's/.*"coll_transport": "\([a-z]*\)".*/\1/p' "$OUT/line.json")"
            done
        done
    done | tee "$OUT/spmm.log"
    echo
    echo "| graph (classes) | MiB/SpMM f32 | bf16 | bf16/f32 | median ms f32 | bf16 | bf16/f32 (median of rounds) | bf16 rounding ms | transports f32 / bf16 |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for g in $GRAPHS; do
        b32=$(awk -v g=$g '$2 == g && $3 == "f32" { print $9; exit }' "$OUT/spmm.log")
        b16=$(awk -v g=$g '$2 == g && $3 == "bf16" { print $9; exit }' "$OUT/spmm.log")
        cl=$(awk -v g=$g '$2 == g && $3 == "f32" { print $13; exit }' "$OUT/spmm.log")
        t32=$(awk -v g=$g '$2 == g && $3 == "f32" { print $7 }' "$OUT/spmm.log" | median)
        t16=$(awk -v g=$g '$2 == g && $3 == "bf16" { print $7 }' "$OUT/spmm.log" | median)
        pk=$(awk -v g=$g '$2 == g && $3 == "bf16" { print $11 }' "$OUT/spmm.log" | median)
        # The transports the rounds ran (docs/executor.md), each once.
        tr=$(for c in f32 bf16; do
            awk -v g=$g -v c=$c '$2 == g && $3 == c { print $17 }' "$OUT/spmm.log" | sort -u |
                paste -sd, -; done | paste -sd/ - | sed 's|/| / |')
        ratio=$(awk -v g=$g '$2 == g { t[$3, $5] = $7 } END { for (r = 1; (("f32", r) in t); r++)
            if (("bf16", r) in t) print t["bf16", r] / t["f32", r] }' "$OUT/spmm.log" | median)
        awk -v g="$g ($cl)" -v b32="$b32" -v b16="$b16" -v t32="$t32" -v t16="$t16" -v r="$ratio" \
            -v pk="$pk" -v tr="$tr" 'BEGIN {
            printf "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %.3f | %s |\n", g, b32 / 1048576,
                b16 / 1048576, (b32 > 0 ? b16 / b32 : 0), 1e3 * t32, 1e3 * t16, r, 1e3 * pk, tr }'
    done
}

accuracy() {
    # Rows through the copies, so bf16 rows are rounded as between nodes:
    # read in place (one node's default where it pays) they are float32.
    export TWOFACE_COLL_SHM=copy
    for g in cora citeseer; do
        f=$OUT/$g-gcn-4.h5
        [ -f "$f" ] || "$PLAN" "$DATA/$g.mtx.zst" -n 4 -k 16 --normalize gcn -o "$f" -q || exit 1
        in="--features $GNN/$g.features.mtx.zst --labels $GNN/$g.labels.txt --split $GNN/$g.split.txt"
        s=0
        while [ $s -lt "$SEEDS" ]; do
            if [ $((s % 2)) = 0 ]; then order="f32 bf16"; else order="bf16 f32"; fi
            for c in $order; do
                a=$(timeout 900 mpirun -n 4 --bind-to none "$GCN" "$f" $in --seed $s --json \
                    --every 0 --comm $c 2>"$OUT/err.log" |
                    sed -n 's/.*"summary".*"test_acc":\([0-9.]*\).*/\1/p')
                echo "accuracy $g $c seed=$s test_acc=$a"
            done
            s=$((s + 1))
        done
    done | tee "$OUT/acc.log"
    echo
    echo "| graph | f32 mean (std) | bf16 mean (std) | bf16 - f32 | worst seed |"
    echo "|---|---|---|---|---|"
    for g in cora citeseer; do
        awk -v g=$g '$2 == g { split($5, a, "="); split($4, s, "="); v = 100 * a[2]
                n[$3]++; sum[$3] += v; sq[$3] += v * v; by[$3, s[2]] = v }
            END { m32 = sum["f32"] / n["f32"]; m16 = sum["bf16"] / n["bf16"]
                s32 = sqrt(sq["f32"] / n["f32"] - m32 * m32); s16 = sqrt(sq["bf16"] / n["bf16"] - m16 * m16)
                w = 0; for (k = 0; k < n["f32"]; k++) { d = by["bf16", k] - by["f32", k]; if (d < 0) d = -d; if (d > w) w = d }
                printf "| %s | %.2f (%.2f) | %.2f (%.2f) | %+.2f points | %.1f points |\n", g, m32, s32, m16, s16, m16 - m32, w }' "$OUT/acc.log"
    done
    echo
    # P-agreement of the losses with bf16: 20 epochs, no early stop, seed 3, Cora.
    g=cora
    in="--features $GNN/$g.features.mtx.zst --labels $GNN/$g.labels.txt --split $GNN/$g.split.txt"
    for np in 1 2 4; do
        f=$OUT/$g-gcn-$np.h5
        [ -f "$f" ] || "$PLAN" "$DATA/$g.mtx.zst" -n $np -k 16 --normalize gcn -o "$f" -q || exit 1
        for c in f32 bf16; do
            mpirun -n $np --bind-to none "$GCN" "$f" $in --seed 3 --epochs 20 --patience 0 --json \
                --comm $c 2>/dev/null | grep '"epoch"' >"$OUT/p$np-$c.json"
        done
    done
    for c in f32 bf16; do
        for np in 2 4; do
            w=$(paste -d' ' "$OUT/p1-$c.json" "$OUT/p$np-$c.json" | awk '{
                n = split($0, x, /"train_loss":|"val_loss":|,/); a = ""; b = ""
                match($0, /"train_loss":[-0-9.e]+/); }
                { line = $0; split(line, h, "} {")
                  t1 = h[1]; sub(/.*"train_loss":/, "", t1); sub(/,.*/, "", t1)
                  t2 = h[2]; sub(/.*"train_loss":/, "", t2); sub(/,.*/, "", t2)
                  v1 = h[1]; sub(/.*"val_loss":/, "", v1); sub(/,.*/, "", v1)
                  v2 = h[2]; sub(/.*"val_loss":/, "", v2); sub(/,.*/, "", v2)
                  d = (t1 - t2) / t1; if (d < 0) d = -d; if (d > w) w = d
                  d = (v1 - v2) / v1; if (d < 0) d = -d; if (d > w) w = d }
                END { printf "%.3g", w }')
            echo "P-agreement $c: Cora seed 3, 20 epochs, P = $np vs P = 1: largest relative loss difference $w"
        done
    done
}

smpi() {
    PS="16 64" KS=128 ALGOS=twoface EXEC_ARGS="--comm f32,bf16" OUT=$OUT/smpi-${BW:-12GBps} \
        BW=${BW:-12GBps} sh bench/smpi/run.sh || exit 1
    python3 - "$OUT/smpi-${BW:-12GBps}/runs" <<'PY'
import glob, json, os, sys
print('| graph | P | classes | MiB received f32 | bf16 | simulated ms f32 | bf16 | bf16/f32 | rounding ms | max error bf16 |')
print('|---|---:|---|---:|---:|---:|---:|---:|---:|---:|')
rows = []
for f in glob.glob(os.path.join(sys.argv[1], '*-K128.json')):
    recs = {}
    for line in open(f):
        if line.startswith('{"algo"'):
            r = json.loads(line)
            recs[r['algo']] = r
    a, b = recs.get('twoface/f32'), recs.get('twoface/bf16')
    if not a or not b:
        continue
    g, p = os.path.basename(f).rsplit('-P', 1)
    rows.append((g, int(p.split('-')[0]), a, b))
for g, p, a, b in sorted(rows, key=lambda x: (x[1], x[0])):
    print('| %s | %d | %s | %.2f | %.2f | %.3f | %.3f | %.2f | %.3f | %.4f |' % (
        g, p, a['classes'], a['bytes_received']['total'] / 2**20,
        b['bytes_received']['total'] / 2**20, 1e3 * a['median_s'], 1e3 * b['median_s'],
        b['median_s'] / a['median_s'], 1e3 * b['breakdown']['pack_s'], b.get('max_error', -1)))
PY
}

case ${1:-} in
spmm) spmm ;;
smpi) smpi ;;
accuracy) accuracy ;;
*) echo "usage: sh bench/bf16.sh spmm|accuracy|smpi" >&2; exit 2 ;;
esac
