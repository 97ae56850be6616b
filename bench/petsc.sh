#!/bin/sh
# PETSc (MatMatMult, MPIAIJ x MPIDENSE, MAT_REUSE_MATRIX; double precision)
# against twoface and the p2p baseline. Run by `make bench-petsc` after it has
# built $BUILD/bench/petsc-spmm. PETSc cannot share a process with libtwoface
# (two HDF5 flavours), so the comparison is between processes: for each case
# twoface-exec (--algo twoface,p2p, interleaved) and petsc-spmm run one after
# the other, REPS times alternately, each for ~TARGET s of rounds; the table
# gives the median of each program's per-process medians.
#
#   BUILD [build]  DATA GRAPHS PS ["2 4"] KS ["32 128"] TARGET [1] REPS [2]
#   PARTITION [nnz, twoface-plan's default]   rows or nnz (both programs use the same bands)
#   CALIB [none: the built-in coefficients]   a calibration file for twoface-plan
#   DOC [1 for a full run]   rewrite the PETSc table in docs/benchmarks.md
#   RESULTS [bench/results, or $BUILD/bench when narrowed]
set -u
BUILD=${BUILD:-build}
BIN=$BUILD/bin
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.." || exit 1
narrowed=0
for v in GRAPHS PS KS PARTITION; do
    eval "val=\${$v:-}"
    [ -n "$val" ] && narrowed=1
done
if [ -z "${DATA:-}" ]; then
    if ls ../shared/data/*.mtx.zst >/dev/null 2>&1; then DATA=../shared/data; else DATA=examples/data; fi
fi
PS=${PS:-"2 4"}
KS=${KS:-"32 128"}
TARGET=${TARGET:-1}
REPS=${REPS:-2}
PARTITION=${PARTITION:-nnz}
CALIB=${CALIB:-}
if [ $narrowed = 1 ]; then DOC=${DOC:-0}; RESULTS=${RESULTS:-$BUILD/bench}
else DOC=${DOC:-1}; RESULTS=${RESULTS:-bench/results}; fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_osc=${OMPI_MCA_osc:-sm,rdma}
export OMPI_MCA_mpi_yield_when_idle=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
PETSC=$BUILD/bench/petsc-spmm
for p in "$BIN/twoface-plan" "$BIN/twoface-exec" "$PETSC"; do
    [ -x "$p" ] || { echo "bench/petsc.sh: $p missing (make bench-petsc builds it)" >&2; exit 1; }
done
mkdir -p "$RESULTS" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/twoface-petsc.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
start=$(date +%s)
say() { echo "[$(( $(date +%s) - start ))s] $*"; }
calib_opt=
if [ -n "$CALIB" ]; then
    [ -f "$CALIB" ] || { echo "bench/petsc.sh: CALIB=$CALIB: no such file" >&2; exit 1; }
    calib_opt="--calibration $CALIB"
fi
load_start=$(cut -d' ' -f1 /proc/loadavg)
if [ -n "${GRAPHS:-}" ]; then
    files=; for g in $GRAPHS; do if [ -f "$g" ]; then files="$files $g"; else files="$files $DATA/$g.mtx.zst"; fi; done
else
    files=$(ls "$DATA"/*.mtx.zst | tr '\n' ' ')
fi
jget() { sed -n "s/.*\"$1\": \([^,}]*\).*/\1/p" | head -1; }
csv=$RESULTS/petsc.csv
echo "graph,P,K,rep,algo,median_s,bytes_max,msgs_max,max_error,partition" >"$csv"
fails=0
for f in $files; do
    g=$(basename "$f" | sed 's/\.mtx.*$//')
    for P in $PS; do
        for K in $KS; do
            "$BIN/twoface-plan" "$f" -n "$P" -k "$K" --partition "$PARTITION" $calib_opt \
                -o "$work/plan.h5" -q || { fails=$((fails + 1)); continue; }
            rep=1
            while [ $rep -le "$REPS" ]; do
                if mpirun -n "$P" --bind-to none "$BIN/twoface-exec" "$work/plan.h5" --algo twoface,p2p \
                    -k "$K" -i 5 --time "$TARGET" --json >"$work/tf.json" 2>"$work/err"; then
                    while read -r line; do
                        a=$(echo "$line" | jget algo | tr -d '"')
                        b=$(echo "$line" | sed -n 's/.*"bytes_per_rank": {"max": \([0-9]*\).*/\1/p')
                        mm=$(echo "$line" | sed -n 's/.*"messages_per_rank": {"max": \([0-9]*\).*/\1/p')
                        echo "$g,$P,$K,$rep,$a,$(echo "$line" | jget median_s),$b,$mm,,$PARTITION" >>"$csv"
                    done <"$work/tf.json"
                else
                    say "FAILED twoface-exec $g P=$P K=$K: $(head -2 "$work/err")"; fails=$((fails + 1))
                fi
                if mpirun -n "$P" --bind-to none "$PETSC" "$f" -k "$K" -i 5 --time "$TARGET" \
                    --partition "$PARTITION" --json >"$work/pe.json" 2>"$work/err"; then
                    line=$(cat "$work/pe.json")
                    b=$(echo "$line" | sed -n 's/.*"bytes_per_rank": {"max": \([0-9]*\).*/\1/p')
                    mm=$(echo "$line" | sed -n 's/.*"messages_per_rank": {"max": \([0-9]*\).*/\1/p')
                    echo "$g,$P,$K,$rep,petsc,$(echo "$line" | jget median_s),$b,$mm,$(echo "$line" | jget max_error),$PARTITION" >>"$csv"
                else
                    say "FAILED petsc-spmm $g P=$P K=$K: $(head -2 "$work/err")"; fails=$((fails + 1))
                fi
                rep=$((rep + 1))
            done
            say "$g P=$P K=$K: $(awk -F, -v g="$g" -v P="$P" -v K="$K" '$1 == g && $2 == P && $3 == K { printf "%s %.2fms  ", $5, 1e3 * $6 }' "$csv")"
        done
    done
done

# Table: median over the repetitions of each program's median.
awk -F, -v reps="$REPS" '
NR == 1 { next }
{
    key = $1 SUBSEP $2 SUBSEP $3
    if (!(key in seen)) { seen[key] = 1; order[++n] = key; G[key] = $1; PP[key] = $2; KK[key] = $3 }
    c = ++cnt[key, $5]; v[key, $5, c] = $6; B[key, $5] = $7; M[key, $5] = $8
    if ($5 == "petsc" && $9 + 0 > maxerr) maxerr = $9 + 0
}
function med(key, a,    c, i, j, t, x) {
    c = cnt[key, a]
    if (!c) return ""
    for (i = 1; i <= c; i++) x[i] = v[key, a, i]
    for (i = 2; i <= c; i++) for (j = i; j > 1 && x[j - 1] > x[j]; j--) { t = x[j]; x[j] = x[j - 1]; x[j - 1] = t }
    return c % 2 ? x[(c + 1) / 2] : 0.5 * (x[c / 2] + x[c / 2 + 1])
}
END {
    printf "| graph | P | K | twoface ms | p2p ms | PETSc ms | PETSc / twoface | PETSc / p2p | PETSc MB/rank (double) | p2p MB/rank (float) |\n"
    printf "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    for (i = 1; i <= n; i++) {
        k = order[i]
        t = med(k, "twoface"); p = med(k, "p2p"); e = med(k, "petsc")
        if (t == "" || e == "") continue
        printf "| %s | %s | %s | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f | %.2f |\n", G[k], PP[k], KK[k], 1e3 * t, 1e3 * p, 1e3 * e, e / t, e / p, B[k, "petsc"] / 1e6, B[k, "p2p"] / 1e6
        s1 += log(e / t); s2 += log(e / p); ns++
        if (KK[k] == 128) { s3 += log(e / t); n3++ }
    }
    if (ns) printf "\nGeometric mean over %d cases: PETSc / twoface %.2f, PETSc / p2p %.2f%s. Largest scaled error of PETSc against a double reference: %.2g.\n", ns, exp(s1 / ns), exp(s2 / ns), n3 ? sprintf(" (K = 128 only: PETSc / twoface %.2f)", exp(s3 / n3)) : "", maxerr
}' "$csv" >"$RESULTS/petsc.md"
cat "$RESULTS/petsc.md"
if [ "$DOC" = 1 ] && grep -q '<!-- bench:petsc:begin -->' docs/benchmarks.md; then
    {
        echo "_Generated by \`make bench-petsc\` ($(getconf _NPROCESSORS_ONLN) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC'), $PARTITION partition, ${CALIB:-built-in} coefficients, $REPS alternating runs of ~${TARGET}s each per program and case; 1-minute load average $load_start at the start, $(cut -d' ' -f1 /proc/loadavg) at the end)._"
        echo
        # The page keeps the means; every case stays in RESULTS.
        echo "Per case (graph, P = 2 and 4, K = 32 and 128: ms of twoface, p2p and PETSc, their ratios, MB per rank): \`$RESULTS/petsc.md\`."
        echo
        grep '^Geometric mean' "$RESULTS/petsc.md"
    } >"$work/t.md"
    awk -v f="$work/t.md" '
        $0 == "<!-- bench:petsc:begin -->" { print; while ((getline l < f) > 0) print l; skip = 1; next }
        $0 == "<!-- bench:petsc:end -->" { skip = 0 }
        !skip' docs/benchmarks.md >"$work/doc.md" && cat "$work/doc.md" >docs/benchmarks.md
fi
say "done: $csv ($fails failure(s))"
[ "$fails" -eq 0 ]
