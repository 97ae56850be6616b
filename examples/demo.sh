#!/bin/sh
# make demo: plan the shipped Cora graph for 4 ranks, run repeated SpMMs with
# every strategy, check the result against the serial reference, summarise;
# then train a GCN on Cora's features, labels and split (test accuracy).
set -e
BUILD=${BUILD:-build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_osc=${OMPI_MCA_osc:-sm,rdma} OMPI_MCA_osc_rdma_priority=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
MATRIX=examples/data/cora.mtx.zst
OUT=${TMPDIR:-/tmp}/twoface-demo
mkdir -p "$OUT"
echo "== files (plans, plan picture) go to $OUT"
echo "== twoface demo: $MATRIX (Cora citation graph, Planetoid/GCN distribution, MIT licence)"
echo "== plan for 4 ranks, K = 64"
"$BUILD/bin/twoface-plan" "$MATRIX" -n 4 -k 64 -o "$OUT/cora.h5" --svg "$OUT/cora.svg" --explain
for mode in fetch collective; do
    "$BUILD/bin/twoface-plan" "$MATRIX" -n 4 -k 64 -o "$OUT/cora-$mode.h5" --mode $mode -q
done
echo
echo "== run 50 SpMMs on 4 ranks with each plan, checked against the serial reference"
for plan in cora cora-fetch cora-collective; do
    mpirun -n 4 --bind-to none "$BUILD/bin/twoface-exec" "$OUT/$plan.h5" -k 64 -i 50 --warmup 5 --check
done
echo
echo "== train a two-layer GCN on Cora at 4 ranks (twoface-gcn, docs/gnn.md); its plan is made"
echo "   by the job's own 4 ranks (the same plan as one process makes, docs/planning.md)"
mpirun -n 4 --bind-to none "$BUILD/bin/twoface-plan" "$MATRIX" -k 16 --normalize gcn \
    -o "$OUT/cora-gcn.h5" -q
mpirun -n 4 --bind-to none "$BUILD/bin/twoface-gcn" "$OUT/cora-gcn.h5" \
    --features examples/data/cora.features.mtx.zst --labels examples/data/cora.labels.txt \
    --split examples/data/cora.split.txt --every 50
echo
echo "== done: plan picture in $OUT/cora.svg"
