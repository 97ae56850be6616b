#!/bin/sh
# examples/gcn.py benchmarks for docs/gnn.md ("PyTorch").
#   sh bench/torch_gcn.sh accuracy  test accuracy of examples/gcn.py over seeds 0..SEEDS-1
#                                   (default 10) on Cora and CiteSeer at P = PS (default
#                                   "1 4"), and of twoface-gcn (TFGCN) at P = 1 when given;
#                                   one line per run, then mean and std per graph and P
#   sh bench/torch_gcn.sh time      time per epoch (EPOCHS, default 30, no early stopping)
#                                   of examples/gcn.py at P = 1, 2, 4, of the same model on
#                                   torch.sparse.mm in one process (1 and 2 threads), and of twoface-gcn
#                                   (TFGCN) at the same P when given, interleaved over
#                                   ROUNDS (default 3); GRAPHS (default pubmed and the larger
#                                   graphs of DATA): PubMed with its labels and split and F =
#                                   500 random features, the others F = 128 random
#                                   features, 16 random classes, random split
# Environment: DATA (default ../shared/data), GNN ($DATA/gnn), BUILD (build), OUT (plans,
# default /tmp/twoface-torch-bench), TFGCN (a twoface-gcn binary; optional).
# Each run prints one JSON summary line (gcn.py --json / twoface-gcn --json) prefixed
# with "graph P impl seed|round".
BUILD=${BUILD:-build}
DATA=${DATA:-../shared/data}
GNN=${GNN:-$DATA/gnn}
OUT=${OUT:-/tmp/twoface-torch-bench}
SEEDS=${SEEDS:-10}
EPOCHS=${EPOCHS:-30}
ROUNDS=${ROUNDS:-3}
PS=${PS:-"1 4"}
PY=/usr/bin/python3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_osc=sm,rdma OMPI_MCA_osc_rdma_priority=1
export OMPI_MCA_mpi_yield_when_idle=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
export PYTHONPATH=$(pwd)/python${PYTHONPATH:+:$PYTHONPATH} PYTHONDONTWRITEBYTECODE=1
mkdir -p "$OUT"

plan() { # NAME P -> plan path (normalised; symmetric graphs need no backward plan)
    f=$OUT/$1-$2.h5
    [ -f "$f" ] || "$BUILD/bin/twoface-plan" "$DATA/$1.mtx.zst" -n "$2" -k 16 --normalize gcn \
        -o "$f" -q || exit 1
    if ! h5dump -a /symmetric "$f" 2>/dev/null | grep -q '(0): 1'; then
        t=$OUT/$1-$2-T.h5
        [ -f "$t" ] || "$BUILD/bin/twoface-plan" "$DATA/$1.mtx.zst" --normalize gcn --transpose \
            --bands-from "$f" -o "$t" -q || exit 1
        echo "$f --backward-plan $t"
    else
        echo "$f"
    fi
}

inputs() {
    case $1 in
    cora | citeseer)
        echo "--features $GNN/$1.features.mtx.zst --labels $GNN/$1.labels.txt --split $GNN/$1.split.txt" ;;
    pubmed) echo "--random-features 500 --labels $GNN/$1.labels.txt --split $GNN/$1.split.txt" ;;
    *) echo "--random-features 128 --random-classes 16 --random-split" ;;
    esac
}

summary() { grep '"summary"' | tail -n 1; }

run_py() { # NAME P extra...
    g=$1; np=$2; shift 2
    # shellcheck disable=SC2046
    mpirun -n "$np" --bind-to none $PY examples/gcn.py $(plan "$g" "$np") $(inputs "$g") \
        --json --every 0 "$@" | summary
}
run_torch() { g=$1; shift; $PY examples/gcn.py --torch-sparse "$DATA/$g.mtx.zst" $(inputs "$g") \
    --json --every 0 "$@" | summary; }
run_tf() { g=$1; np=$2; shift 2
    # shellcheck disable=SC2046
    HDF5_PLUGIN_PATH=$BUILD/hdf5-plugins mpirun -n "$np" --bind-to none "$TFGCN" \
        $(plan "$g" "$np") $(inputs "$g") --json --every 0 "$@" | summary; }

stats() { # reads "graph P impl seed {json}" lines; mean and std of test_acc per graph/P/impl
    awk '{ k = $1 " P=" $2 " " $3; match($0, /"test_acc": *[0-9.]+/);
           v = substr($0, RSTART, RLENGTH); sub(/.*: */, "", v); v *= 100;
           n[k]++; s[k] += v; q[k] += v * v }
         END { for (k in n) { m = s[k] / n[k]; sd = q[k] / n[k] - m * m;
                 printf "%s: %.1f +- %.1f over %d seeds\n", k, m, sqrt(sd > 0 ? sd : 0), n[k] } }' |
        sort
}

case ${1:-accuracy} in
accuracy)
    log=$OUT/accuracy.txt; : >"$log"
    for g in cora citeseer; do
        for s in $(seq 0 $((SEEDS - 1))); do
            for np in $PS; do
                echo "$g $np gcn.py $s $(run_py $g $np --seed $s)" | tee -a "$log"
            done
            [ -n "$TFGCN" ] && echo "$g 1 twoface-gcn $s $(run_tf $g 1 --seed $s)" | tee -a "$log"
        done
    done
    stats <"$log" ;;
time)
    GRAPHS=${GRAPHS:-"pubmed cit-HepPh email-Enron soc-Slashdot0902"}
    log=$OUT/time.txt; : >"$log"
    for r in $(seq 1 "$ROUNDS"); do
        for g in $GRAPHS; do
            o="--epochs $EPOCHS --patience 0"
            echo "$g 1 torch.sparse $r $(run_torch $g $o)" | tee -a "$log"
            echo "$g 1 torch.sparse-2threads $r $(OMP_NUM_THREADS=2 run_torch $g $o --threads 2)" |
                tee -a "$log"
            for np in 1 2 4; do
                echo "$g $np gcn.py $r $(run_py $g $np $o)" | tee -a "$log"
                [ -n "$TFGCN" ] && echo "$g $np twoface-gcn $r $(run_tf $g $np $o)" | tee -a "$log"
            done
        done
    done
    # median epoch_ms (and spmm_share) per graph, P, implementation
    awk '{ k = $1 " " $2 " " $3; match($0, /"epoch_ms": *[0-9.]+/);
           v = substr($0, RSTART, RLENGTH); sub(/.*: */, "", v); print k, v }' "$log" |
        sort -k1,1 -k2,2n -k3,3 -k4,4g |
        awk '{ k = $1 " P=" $2 " " $3; a[k] = a[k] " " $4; n[k]++ }
             END { for (k in a) { split(substr(a[k], 2), x, " "); printf "%s: median %.1f ms over %d\n", k, x[int((n[k] + 1) / 2)], n[k] } }' |
        sort ;;
*) echo "usage: sh bench/torch_gcn.sh accuracy|time" >&2; exit 2 ;;
esac
