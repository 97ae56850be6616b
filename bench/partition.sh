#!/bin/sh
# SpMM medians at P ranks for the three partitions (docs/partition.md): one plan per
# graph and partition (rows, nnz, metis; twoface mode, the calibration
# given), then bench/partition_spmm runs the three interleaved in one
# process (each with its own context and B in original ids; the order
# rotates every round; the slowest rank's time per call), ITERS timed rounds
# after WARMUP untimed ones (which cover the start-up trial). Also the wall
# time of each twoface-plan run (reading the matrix, planning - METIS
# included for metis - and writing), and that time as a multiple of the
# metis plan's SpMM median.
#
#   BUILD=build P=4 K=128 ITERS=30 WARMUP=12 CALIB=FILE sh bench/partition.sh GRAPH...
# Markdown on stdout; plans and raw output in $OUT (default /tmp/tf_partition_spmm).
BUILD=${BUILD:-build}
P=${P:-4}
K=${K:-128}
ITERS=${ITERS:-30}
WARMUP=${WARMUP:-12}
OUT=${OUT:-/tmp/tf_partition_spmm}
CALIB=${CALIB:+--calibration $CALIB}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_osc=sm,rdma OMPI_MCA_osc_rdma_priority=1
export OMPI_MCA_mpi_yield_when_idle=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
BIN=$BUILD/bench/partition_spmm
if [ ! -x "$BIN" ] || [ bench/partition_spmm.c -nt "$BIN" ] || [ "$BUILD/lib/libtwoface.a" -nt "$BIN" ]; then
    mkdir -p "$BUILD/bench"
    mpicc -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -O2 -fopenmp -Iinclude -Iformat \
        -Iplanner -Iexecutor $(pkg-config --cflags hdf5-serial libzstd zlib) -o "$BIN" \
        bench/partition_spmm.c "$BUILD/lib/libtwoface.a" \
        $(pkg-config --libs hdf5-serial libzstd zlib) -lmetis -lm || exit 1
fi
mkdir -p "$OUT"
echo "| graph | SpMM median ms: rows / nnz / metis | metis vs best band | twoface-plan s: rows / nnz / metis | twoface-plan (metis) in metis SpMMs |"
echo "|---|---|---:|---|---:|"
for g in "$@"; do
    name=$(basename "$g" .mtx.zst)
    for part in rows nnz metis; do
        t0=$(date +%s.%N)
        "$BUILD/bin/twoface-plan" "$g" -n "$P" -k "$K" $CALIB --partition $part \
            -o "$OUT/$name-$part.h5" 2>"$OUT/$name-$part.plan.txt" || {
            echo "plan failed: $name $part" >&2
            continue 2
        }
        echo "$t0 $(date +%s.%N)" | awk '{ printf "%.3f\n", $2 - $1 }' >"$OUT/$name-$part.wall"
    done
    mpirun -n "$P" --bind-to none "$BIN" -k "$K" -i "$ITERS" -w "$WARMUP" \
        "$OUT/$name-rows.h5" "$OUT/$name-nnz.h5" "$OUT/$name-metis.h5" >"$OUT/$name.spmm" 2>&1 ||
        { echo "run failed: $name" >&2; continue; }
    awk -v name="$name" -v wr="$(cat "$OUT/$name-rows.wall")" -v wn="$(cat "$OUT/$name-nnz.wall")" \
        -v wm="$(cat "$OUT/$name-metis.wall")" '
        / median_ms / { m[++i] = $3 }
        END {
            best = m[1] < m[2] ? m[1] : m[2]
            printf "| %s | %.3f / %.3f / %.3f | %.2fx | %s / %s / %s | %.1f |\n", name, m[1], m[2],
                   m[3], m[3] / best, wr, wn, wm, wm / (m[3] / 1e3)
        }' "$OUT/$name.spmm"
done
