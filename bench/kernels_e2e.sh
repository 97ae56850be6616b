#!/bin/sh
# What the kernels changed end to end: twoface-exec of two builds (OLD_BUILD:
# a build of an earlier commit; NEW_BUILD: this one) on the same plans
# (made by NEW_BUILD's twoface-plan), P ranks, alternating OLD NEW OLD NEW ...
# REPS times per case; each run reports its median per SpMM (--json); the
# table gives the median of each build's medians and old / new. The two
# builds cannot share a process, so the alternation is what keeps the
# machine's load comparable: treat ratios within +-10% as ties.
#
#   OLD_BUILD (required)  NEW_BUILD [build]  GRAPHS [every *.mtx.zst in DATA]
#   DATA [/work/shared/data, else ../shared/data]  P [4]  KS ["32 128"]
#   REPS [3]  TIME [1]: seconds of timed rounds per run
# Markdown on stdout.
NEW_BUILD=${NEW_BUILD:-build}
P=${P:-4}
KS=${KS:-"32 128"}
REPS=${REPS:-3}
TIME=${TIME:-1}
[ -n "$OLD_BUILD" ] && [ -x "$OLD_BUILD/bin/twoface-exec" ] ||
    { echo "bench/kernels_e2e.sh: OLD_BUILD must hold bin/twoface-exec" >&2; exit 1; }
if [ -z "$DATA" ]; then
    for d in /work/shared/data ../shared/data; do [ -d "$d" ] && { DATA=$d; break; }; done
fi
files=
for g in ${GRAPHS:-$(ls "$DATA" | sed -n 's/\.mtx\.zst$//p')}; do files="$files $DATA/$g.mtx.zst"; done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_osc=sm,rdma OMPI_MCA_osc_rdma_priority=1
export OMPI_MCA_mpi_yield_when_idle=1 OMP_NUM_THREADS=1
work=$(mktemp -d "${TMPDIR:-/tmp}/kernels_e2e.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
med() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
echo "_P = $P, 1 thread per rank, $REPS alternating runs per build of ${TIME} s of rounds; load average before $(cut -d' ' -f1-3 /proc/loadavg)._"
echo
echo "| graph | K | old ms | new ms | old / new | kernel (new) |"
echo "|---|---:|---:|---:|---:|---|"
for f in $files; do
    g=$(basename "$f" .mtx.zst)
    for k in $KS; do
        plan=$work/$g-$k.h5
        "$NEW_BUILD/bin/twoface-plan" "$f" -n "$P" -k "$k" -o "$plan" -q >/dev/null 2>&1 ||
            { echo "| $g | $k | plan failed | | | |"; continue; }
        : >"$work/old"; : >"$work/new"
        for r in $(seq "$REPS"); do
            for b in old new; do
                [ $b = old ] && bin=$OLD_BUILD || bin=$NEW_BUILD
                timeout 300 mpirun -n "$P" --bind-to none "$bin/bin/twoface-exec" "$plan" -k "$k" \
                    --time "$TIME" --json 2>/dev/null >"$work/out" || continue
                sed -n 's/.*"median_s": \([0-9.e+-]*\).*/\1/p' "$work/out" | head -1 >>"$work/$b"
                [ $b = new ] && sed -n 's/.*"kernel": "\([a-z0-9]*\)".*/\1/p' "$work/out" | head -1 >"$work/kern"
            done
        done
        o=$(med <"$work/old"); n=$(med <"$work/new")
        awk -v g="$g" -v k="$k" -v o="$o" -v n="$n" -v kn="$(cat "$work/kern" 2>/dev/null)" 'BEGIN {
            if (o == "" || n == "" || n <= 0) { printf "| %s | %s | failed | | | |\n", g, k; exit }
            printf "| %s | %s | %.3f | %.3f | %.2f | %s |\n", g, k, o * 1e3, n * 1e3, o / n, kn }'
    done
done
echo
echo "_Load average after $(cut -d' ' -f1-3 /proc/loadavg)._"
