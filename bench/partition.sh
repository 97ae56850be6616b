#!/bin/sh
# SpMM medians at P ranks for the three partitions (issue 17): one plan per
# graph and partition (rows, nnz, metis; twoface mode, the calibration
# given), then twoface-exec runs them in alternating processes - rows, nnz,
# metis, rows, ... ROUNDS times - because plans of different partitions
# place B differently and cannot be interleaved inside one process. Per run
# the median of ITERS timed SpMMs (slowest rank) after the start-up trial;
# reported: the median over the rounds of those medians, and the wall time
# of twoface-plan (reading the matrix, planning with METIS for metis,
# writing the plan), also as a multiple of the metis plan's SpMM median.
#
#   BUILD=build P=4 K=128 ROUNDS=3 ITERS=20 CALIB=FILE sh bench/partition.sh GRAPH...
# Markdown on stdout; the raw runs in $OUT (default /tmp/tf_partition_spmm).
BUILD=${BUILD:-build}
P=${P:-4}
K=${K:-128}
ROUNDS=${ROUNDS:-3}
ITERS=${ITERS:-20}
OUT=${OUT:-/tmp/tf_partition_spmm}
CALIB=${CALIB:+--calibration $CALIB}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_osc=sm,rdma OMPI_MCA_osc_rdma_priority=1
export OMPI_MCA_mpi_yield_when_idle=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
mkdir -p "$OUT"
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "| graph | rows: SpMM ms / twoface-plan s | nnz | metis | metis vs best band | twoface-plan (metis) in SpMMs |"
echo "|---|---:|---:|---:|---:|---:|"
for g in "$@"; do
    name=$(basename "$g" .mtx.zst)
    for part in rows nnz metis; do
        t0=$(date +%s.%N)
        "$BUILD/bin/twoface-plan" "$g" -n "$P" -k "$K" $CALIB --partition $part \
            -o "$OUT/$name-$part.h5" 2>"$OUT/$name-$part.plan.txt" || {
            echo "plan failed: $name $part" >&2
            continue
        }
        echo "$t0 $(date +%s.%N)" | awk '{ printf "%.3f\n", $2 - $1 }' >"$OUT/$name-$part.wall"
        sed -n 's/.*partition \([0-9.]*\) s,.*/\1/p' "$OUT/$name-$part.plan.txt" \
            >"$OUT/$name-$part.part"
    done
    r=1
    while [ $r -le "$ROUNDS" ]; do
        for part in rows nnz metis; do
            mpirun -n "$P" --bind-to none "$BUILD/bin/twoface-exec" "$OUT/$name-$part.h5" \
                -k "$K" -i "$ITERS" --warmup 2 --json 2>/dev/null |
                sed -n 's/.*"median_s": \([0-9.e+-]*\).*/\1/p' >>"$OUT/$name-$part.med"
        done
        r=$((r + 1))
    done
    line="| $name"
    best_band=
    for part in rows nnz metis; do
        med=$(median <"$OUT/$name-$part.med")
        plan_s=$(cat "$OUT/$name-$part.wall")
        eval "med_$part=$med plan_$part=$plan_s"
        line="$line | $(awk -v m="$med" 'BEGIN { printf "%.3f", m * 1e3 }') / $plan_s"
    done
    best_band=$(awk -v a="$med_rows" -v b="$med_nnz" 'BEGIN { print (a < b ? a : b) }')
    line="$line | $(awk -v m="$med_metis" -v b="$best_band" 'BEGIN { printf "%.2fx", m / b }')"
    line="$line | $(awk -v p="$plan_metis" -v m="$med_metis" 'BEGIN { printf "%.1f", p / m }') |"
    echo "$line"
    rm -f "$OUT/$name-"*.med
done
