#!/bin/sh
# --partition metis at Q = 1 (serial METIS) against Q > 1 (PT-Scotch) for
# the same P: the partition phase's seconds (slowest rank, as twoface-plan
# reports it), the wall time, every rank's peak RSS (/usr/bin/time), the B
# rows all ranks receive per SpMM and the nonzero balance (--explain).
#
#   BUILD=build P=16 QS="1 2 4" sh bench/ptscotch.sh GRAPH...
# Markdown on stdout; plans and raw output in $OUT (default /tmp/tf_ptscotch).
BUILD=${BUILD:-build}
P=${P:-16}
QS=${QS:-1 2 4}
OUT=${OUT:-/tmp/tf_ptscotch}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
mkdir -p "$OUT"
echo "| graph | Q | partition s | wall s | peak RSS per rank MB | received MiB/SpMM | nnz max/mean |"
echo "|---|---:|---:|---:|---|---:|---:|"
for g in "$@"; do
    name=$(basename "$g" .mtx.zst)
    for q in $QS; do
        base=$OUT/$name-q$q
        rm -f "$base".rss.*
        # shellcheck disable=SC2016
        if ! mpirun -n "$q" --bind-to none sh -c \
            '/usr/bin/time -f "%M %e" -o "$0.rss.$OMPI_COMM_WORLD_RANK" "$@"' "$base" \
            "$BUILD/bin/twoface-plan" "$g" -n "$P" --partition metis --explain \
            -o "$base.h5" >"$base.out" 2>"$base.err"; then
            echo "| $name | $q | failed: $(head -1 "$base.err") | | | | |"
            continue
        fi
        part=$(sed -n 's/.*partition \([0-9.]*\) s.*/\1/p' "$base.err")
        wall=$(sed -n 's/.*(wall \([0-9.]*\) s).*/\1/p' "$base.err")
        rss=$(for f in "$base".rss.*; do awk 'NR == 1 { printf "%.0f\n", $1 / 1000 }' "$f"; done |
              tr '\n' ' ' | sed 's/ $//; s/ /, /g')
        recv=$(sed -n 's/^totals: .* received \([0-9.]*\) MiB vs.*/\1/p' "$base.out")
        bal=$(sed -n 's/^balance .* nonzeros \([0-9.]*\),.*/\1/p' "$base.out")
        echo "| $name | $q | $part | $wall | $rss | $recv | $bal |"
    done
done
