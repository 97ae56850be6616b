#!/bin/sh
# GCN training benchmarks for docs/gnn.md (twoface-gcn).
#   sh bench/gcn.sh accuracy   test accuracy over seeds 0..SEEDS-1 (default 10) for Cora
#                              and CiteSeer at P = 1 and 4 (Kipf & Welling's recipe, 200
#                              epochs, early stopping); mean and std per graph and P.
#                              MODEL: twoface-gcn options of the model (e.g. "--layers 3
#                              --hidden 64"; default none: the recipe's two layers, 16
#                              wide), PS: the rank counts (default "1 4"); raw lines in
#                              $OUT/accuracy.txt, or accuracy-TAG.txt with TAG set
#   sh bench/gcn.sh time       time per epoch and its SpMM share with twoface, allgather,
#                              shift, p2p at P = 4 (EPOCHS, default 50, no early stopping):
#                              one process per graph and round trains the same model on the
#                              four side by side, epoch by epoch (--algo twoface,allgather,
#                              shift,p2p); ROUNDS (default 2) processes; per algorithm the
#                              median epoch time (slowest rank) of the median round and that
#                              round's mean split. Cora, CiteSeer (their features), PubMed
#                              (its labels and split, random features F = 128: its features
#                              file is missing), and the large graphs of DATA with random
#                              features F = 128, 16 random classes, random split.
#                              The plans are made afresh and their wall time (one
#                              twoface-plan process, forward and backward plan) is
#                              charged to twoface alone in the last column, time to 200
#                              epochs including planning (the baselines run on the same
#                              plans' bands and matrices, charged nothing for them).
#   sh bench/gcn.sh dense      dense ms per epoch of two builds of twoface-gcn, BEFORE (a
#                              binary, e.g. one built from an older commit) and this
#                              build's, at P = 4 with twoface on every graph of the time
#                              table (EPOCHS, ROUNDS): runs alternate BEFORE, this,
#                              BEFORE, ...; per build the median over rounds
#   sh bench/gcn.sh partition  epoch time with bands of equal nonzeros and of equal work
#                              (twoface-plan --partition nnz and work) at P = 4: per graph
#                              ROUNDS pairs of processes, one per plan, the plan that goes
#                              first alternating, each training with twoface and p2p side
#                              by side (EPOCHS, no early stopping); per partition and
#                              algorithm the median epoch, SpMM and dense ms over rounds,
#                              and the median (range) of the paired ratios work / nnz.
#                              GRAPHS default: pubmed soc-Slashdot0902 luxembourg_osm cnr-2000
# Environment: DATA (default ../shared/data), GNN (default $DATA/gnn), BUILD (build),
# OUT (plans and raw JSON; default /tmp/twoface-gcn-bench), GRAPHS (time: list of names).
# Output: one line per run on stdout, summary tables at the end (Markdown).
BUILD=${BUILD:-build}
DATA=${DATA:-../shared/data}
GNN=${GNN:-$DATA/gnn}
OUT=${OUT:-/tmp/twoface-gcn-bench}
SEEDS=${SEEDS:-10}
EPOCHS=${EPOCHS:-50}
ROUNDS=${ROUNDS:-2}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_osc=sm,rdma OMPI_MCA_osc_rdma_priority=1
export OMPI_MCA_mpi_yield_when_idle=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
mkdir -p "$OUT"
PLAN=$BUILD/bin/twoface-plan
GCN=$BUILD/bin/twoface-gcn

# plan NAME P [PARTITION]: normalised plan (and its transpose when not
# symmetric, on the same bands) in $OUT; twoface-plan's default partition
# unless one is named.
plan() {
    f=$OUT/$1-$2${3:+-$3}.h5
    # The planning time (forward plan, and backward plan where needed) goes
    # to $f.plan_s, for the time to a trained model in the time table.
    if [ ! -f "$f" ]; then
        t0=$(date +%s.%N)
        "$PLAN" "$DATA/$1.mtx.zst" -n "$2" -k 16 --normalize gcn ${3:+--partition $3} \
            -o "$f" -q || exit 1
        echo "$t0 $(date +%s.%N)" | awk '{ printf "%.3f\n", $2 - $1 }' >"$f.plan_s"
    fi
    if ! h5dump -a /symmetric "$f" 2>/dev/null | grep -q '(0): 1'; then
        t=$OUT/$1-$2${3:+-$3}-T.h5
        if [ ! -f "$t" ]; then
            t0=$(date +%s.%N)
            "$PLAN" "$DATA/$1.mtx.zst" --normalize gcn --transpose --bands-from "$f" \
                -o "$t" -q || exit 1
            echo "$t0 $(date +%s.%N) $(cat "$f.plan_s")" |
                awk '{ printf "%.3f\n", $2 - $1 + $3 }' >"$f.plan_s.new" &&
                mv "$f.plan_s.new" "$f.plan_s"
        fi
        echo "$f --backward-plan $t"
    else
        echo "$f"
    fi
}

field() { sed -n "s/.*\"summary\".*\"$1\":\([-0-9.e+a-z]*\).*/\1/p"; }

inputs() { # NAME: the input options of a graph
    case $1 in
    cora | citeseer)
        echo "--features $GNN/$1.features.mtx.zst --labels $GNN/$1.labels.txt --split $GNN/$1.split.txt" ;;
    pubmed)
        echo "--random-features 128 --labels $GNN/$1.labels.txt --split $GNN/$1.split.txt" ;;
    *) echo "--random-features 128 --random-classes 16 --random-split" ;;
    esac
}

accuracy() {
    raw=$OUT/accuracy${TAG:+-$TAG}.txt
    for g in cora citeseer; do
        for np in ${PS:-1 4}; do
            p=$(plan $g $np) || exit 1
            s=0
            while [ $s -lt "$SEEDS" ]; do
                a=$(mpirun -n $np --bind-to none $GCN $p $(inputs $g) $MODEL --seed $s --json \
                    --every 0 | field test_acc)
                echo "accuracy $g P=$np seed=$s test_acc=$a"
                s=$((s + 1))
            done
        done
    done | tee "$raw"
    echo
    echo "| graph | P | test accuracy over $SEEDS seeds (mean ± std, %) |"
    echo "|---|---:|---|"
    awk '{ split($3, p, "="); split($5, a, "="); k = $2 " | " p[2]; n[k]++; s[k] += a[2];
           q[k] += a[2] * a[2] } END { for (k in n) { m = s[k] / n[k];
           v = q[k] / n[k] - m * m; printf "| %s | %.1f ± %.1f |\n", k, 100 * m,
           100 * sqrt(v > 0 ? v : 0) } }' "$raw" | sort
}

timing() {
    graphs=${GRAPHS:-cora citeseer pubmed cit-HepPh email-Enron soc-Slashdot0902 copter2 luxembourg_osm}
    for g in $graphs; do
        rm -f "$OUT/$g-4.h5" "$OUT/$g-4-T.h5" # planned afresh: its time is in the table
        p=$(plan $g 4) || exit 1
        r=0
        while [ $r -lt "$ROUNDS" ]; do
            # One process trains the same model on the four SpMMs side by side,
            # epoch by epoch (A B C D A B C D ...), so they share the machine's load.
            mpirun -n 4 --bind-to none $GCN $p $(inputs $g) --algo twoface,allgather,shift,p2p \
                --epochs "$EPOCHS" --patience 0 --json --every 0 | grep '"summary"' |
                while read -r line; do
                    a=$(echo "$line" | sed -n 's/.*"algo":"\([^"]*\)".*/\1/p' | sed 's/(c=1)//')
                    echo "time $g $a round=$r median_ms=$(echo "$line" | field epoch_ms_median)" \
                        "epoch_ms=$(echo "$line" | field epoch_ms)" \
                        "spmm_ms=$(echo "$line" | field spmm_ms)" \
                        "dense_ms=$(echo "$line" | field dense_ms)" \
                        "allreduce_ms=$(echo "$line" | field allreduce_ms)"
                done
            r=$((r + 1))
        done
    done | tee "$OUT/time.txt"
    echo
    echo "| graph | algo | median ms / epoch | vs twoface | mean ms / epoch | SpMM ms | SpMM share | dense ms | allreduce ms | planning s | 200 epochs + planning, s |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for g in $graphs; do
        ps=$(cat "$OUT/$g-4.h5.plan_s" 2>/dev/null || echo 0)
        tw=$(grep "^time $g twoface " "$OUT/time.txt" | sed 's/[a-z_]*=//g' | sort -n -k5 |
            awk '{ v[NR] = $5 } END { print v[int((NR + 1) / 2)] }')
        for a in twoface allgather shift p2p; do
            # The round with the median of the per-run medians; its mean split.
            grep "^time $g $a " "$OUT/time.txt" | sed 's/[a-z_]*=//g' | sort -n -k5 |
                awk -v g=$g -v a=$a -v tw="$tw" -v ps="$ps" '{ m[NR] = $5; e[NR] = $6; s[NR] = $7; d[NR] = $8; r[NR] = $9 }
                END { k = int((NR + 1) / 2); pl = a == "twoface" ? ps : 0
                printf "| %s | %s | %.2f | %.2f | %.2f | %.2f | %.0f %% | %.2f | %.2f | %.2f | %.2f |\n",
                g, a, m[k], m[k] / tw, e[k], s[k], 100 * s[k] / e[k], d[k], r[k], pl, pl + 0.2 * m[k] }'
        done
    done
}

dense() {
    [ -x "${BEFORE:-}" ] || { echo "bench/gcn.sh dense: set BEFORE to a twoface-gcn binary" >&2; exit 2; }
    graphs=${GRAPHS:-cora citeseer pubmed cit-HepPh email-Enron soc-Slashdot0902 copter2 luxembourg_osm}
    for g in $graphs; do
        p=$(plan $g 4) || exit 1
        r=0
        while [ $r -lt "$ROUNDS" ]; do
            for b in before after; do
                bin=$GCN
                [ $b = before ] && bin=$BEFORE
                line=$(mpirun -n 4 --bind-to none "$bin" $p $(inputs $g) --epochs "$EPOCHS" \
                    --patience 0 --json --every 0 | grep '"summary"')
                echo "dense $g $b round=$r dense_ms=$(echo "$line" | field dense_ms)" \
                    "epoch_ms=$(echo "$line" | field epoch_ms)"
            done
            r=$((r + 1))
        done
    done | tee "$OUT/dense.txt"
    echo
    echo "| graph | dense ms / epoch, before | after | before / after | epoch ms, before | after |"
    echo "|---|---:|---:|---:|---:|---:|"
    for g in $graphs; do
        med() { grep "^dense $g $1 " "$OUT/dense.txt" | sed 's/[a-z_]*=//g' | sort -n -k"$2" |
            awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'; }
        echo "$g $(med before 5) $(med after 5) $(med before 6) $(med after 6)" |
            awk '{ printf "| %s | %.1f | %.1f | %.1f | %.1f | %.1f |\n", $1, $2, $3, $2 / $3, $4, $5 }'
    done
}

partition() {
    graphs=${GRAPHS:-pubmed soc-Slashdot0902 luxembourg_osm cnr-2000}
    for g in $graphs; do
        pn=$(plan $g 4 nnz) || exit 1
        pw=$(plan $g 4 work) || exit 1
        r=0
        while [ $r -lt "$ROUNDS" ]; do
            order="nnz work"
            [ $((r % 2)) = 1 ] && order="work nnz"
            for part in $order; do
                p=$pn
                [ $part = work ] && p=$pw
                mpirun -n 4 --bind-to none $GCN $p $(inputs $g) --algo twoface,p2p \
                    --epochs "$EPOCHS" --patience 0 --json --every 0 | grep '"summary"' |
                    while read -r line; do
                        a=$(echo "$line" | sed -n 's/.*"algo":"\([^"]*\)".*/\1/p')
                        echo "part $g $part $a round=$r median_ms=$(echo "$line" | field epoch_ms_median)" \
                            "spmm_ms=$(echo "$line" | field spmm_ms)" \
                            "dense_ms=$(echo "$line" | field dense_ms)"
                    done
            done
            r=$((r + 1))
        done
    done | tee "$OUT/partition.txt"
    echo
    echo "| graph | algo | epoch ms nnz; work | work / nnz, median (range) over $ROUNDS pairs | SpMM ms nnz; work | dense ms nnz; work |"
    echo "|---|---|---|---|---|---|"
    for g in $graphs; do
        for a in twoface p2p; do
            /usr/bin/python3 - "$OUT/partition.txt" "$g" "$a" <<'EOF'
import statistics, sys
path, g, a = sys.argv[1:]
v = {}
for line in open(path):
    f = line.split()
    if f[0] != "part" or f[1] != g or f[3] != a:
        continue
    d = dict(x.split("=") for x in f[4:])
    v.setdefault(f[2], {})[int(d["round"])] = (float(d["median_ms"]), float(d["spmm_ms"]), float(d["dense_ms"]))
n, w = v.get("nnz", {}), v.get("work", {})
rs = sorted(set(n) & set(w))
if rs:
    q = [w[r][0] / n[r][0] for r in rs]
    med = lambda s, i: statistics.median(s[r][i] for r in rs)
    print("| %s | %s | %.2f; %.2f | %.2f (%.2f-%.2f) | %.2f; %.2f | %.2f; %.2f |" % (
        g, a, med(n, 0), med(w, 0), statistics.median(q), min(q), max(q),
        med(n, 1), med(w, 1), med(n, 2), med(w, 2)))
EOF
        done
    done
}

case ${1:-} in
accuracy) accuracy ;;
time) timing ;;
dense) dense ;;
partition) partition ;;
*) echo "usage: sh bench/gcn.sh accuracy|time|dense|partition" >&2; exit 2 ;;
esac
