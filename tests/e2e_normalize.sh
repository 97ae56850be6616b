#!/bin/sh
# End to end: twoface-plan --normalize, --transpose and --bands-from through
# the real programs (docs/normalization.md). Normalised and transposed plans
# at 1-4 ranks (a rank without rows at 4) pass twoface-exec --check, which
# compares with the plan's own (normalised, transposed) matrix; --explain and
# h5dump show the attributes; a backward plan names its forward plan's
# fingerprint; every bad use ends with one line on stderr, a non-zero exit
# and no output file.
# Environment (tests/run_tests.sh sets both): TF_SRCDIR, TF_BUILD.
# Last line: "e2e_normalize: N passed, M failed"; exit status 1 if M > 0.
E2E_NAME=e2e_normalize
. "${TF_SRCDIR:-.}/tests/lib_e2e.sh"
e2e_mpi_env
e2e_cora_tools
CORA=$MATRIX

# ---- matrices made here -------------------------------------------------------
# dir.mtx: 150 x 150, directed (not symmetric), weights 1..4, a few self
# loops; pat.mtx: the same pattern as pattern; tiny.mtx: 3 x 3 (a rank
# without rows at 4 ranks); rect.mtx: 40 x 25; neg.mtx: a negative degree.
awk 'BEGIN {
    n = 150; k = 0
    for (i = 0; i < n; i++) { r[k] = i; c[k] = (7 * i + 3) % n; k++
                              r[k] = i; c[k] = (i * i + 1) % n; k++ }
    for (i = 0; i < n; i += 10) { r[k] = i; c[k] = i; k++ }
    print "%%MatrixMarket matrix coordinate real general" > "'"$work"'/dir.mtx"
    print "%%MatrixMarket matrix coordinate pattern general" > "'"$work"'/pat.mtx"
    print n, n, k > "'"$work"'/dir.mtx"; print n, n, k > "'"$work"'/pat.mtx"
    for (e = 0; e < k; e++) {
        print r[e] + 1, c[e] + 1, 1 + e % 4 > "'"$work"'/dir.mtx"
        print r[e] + 1, c[e] + 1 > "'"$work"'/pat.mtx"
    }
    m = 40; nc = 25
    print "%%MatrixMarket matrix coordinate real general" > "'"$work"'/rect.mtx"
    print m, nc, 2 * m > "'"$work"'/rect.mtx"
    for (i = 0; i < m; i++) {
        print i + 1, (3 * i) % nc + 1, 0.5 + i % 3 > "'"$work"'/rect.mtx"
        print i + 1, (5 * i + 2) % nc + 1, 1 > "'"$work"'/rect.mtx"
    }
}' || { bad "awk failed"; finish; }
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 1\n2 3 2\n3 1 1\n' \
    >"$work/tiny.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 -5\n2 1 1\n' >"$work/neg.mtx"

run() { # ranks, args...
    np=$1; shift
    timeout 300 mpirun -n "$np" --bind-to none "$EXEC" "$@"
}
mpi_err() { grep -v '^-\|^ \|^$\|Primary\|mpirun\|Process\|Exit code\|a non-zero' "$1" | head -3; }

# plan_ok NAME ARGS...: twoface-plan succeeds (stdout to $work/out).
plan_ok() {
    name=$1; shift
    if "$PLAN" "$@" >"$work/out" 2>"$work/err"; then
        ok "$name"
        return 0
    fi
    bad "$name: $(head -3 "$work/err")"
    return 1
}
# check_ok NAME NP PLAN: twoface-exec --check passes.
check_ok() {
    if run "$2" "$3" -k 8 -i 2 --warmup 1 --check >"$work/exec.out" 2>"$work/exec.err" &&
        grep -q 'check .*passed' "$work/exec.out"; then
        ok "$1: --check passed at $2 ranks"
    else
        bad "$1: --check at $2 ranks: $(mpi_err "$work/exec.err") $(grep check "$work/exec.out")"
    fi
}
# plan_fails NAME PATTERN OUT ARGS...: one stderr line with PATTERN, exit
# non-zero, no OUT (nor its temporaries) left.
plan_fails() {
    name=$1 pattern=$2 out=$3
    shift 3
    "$PLAN" "$@" -o "$out" -q >"$work/out" 2>"$work/err"
    rc=$?
    left=$(ls -d "$out" "$out".tmp.* 2>/dev/null)
    if [ $rc -eq 0 ]; then
        bad "$name: twoface-plan succeeded"
    elif [ "$(grep -c . "$work/err")" -ne 1 ]; then
        bad "$name: expected one line on stderr, got: $(head -c 600 "$work/err")"
    elif ! grep -q -- "$pattern" "$work/err"; then
        bad "$name: '$pattern' not in: $(cat "$work/err")"
    elif [ -n "$left" ]; then
        bad "$name: left $left behind"
    else
        ok "$name (exit $rc): $(cat "$work/err")"
    fi
}
# fingerprint FILE: the forward fingerprint --explain printed (last field).
fingerprint() { sed -n 's/^matrix: .*; fingerprint \([0-9a-f]*\)$/\1/p' "$1"; }
backward_of() { sed -n 's/^matrix: .*the backward plan of the plan with fingerprint \([0-9a-f]*\);.*/\1/p' "$1"; }

# ---- normalised and transposed plans at 1-4 ranks -------------------------------
for np in 1 2 3 4; do
    for norm in gcn mean; do
        f=$work/f$np$norm.h5 t=$work/t$np$norm.h5
        plan_ok "$np ranks: --normalize $norm" "$work/dir.mtx" -n $np -k 8 --partition nnz \
            --normalize $norm -o "$f" --explain -q || continue
        cp "$work/out" "$work/f.explain"
        grep -q "^matrix: normalize $norm; not symmetric" "$work/f.explain" &&
            ok "$np ranks, $norm: --explain shows the normalisation and no symmetry" ||
            bad "$np ranks, $norm: --explain: $(grep '^matrix:' "$work/f.explain")"
        check_ok "$norm forward" $np "$f"
        plan_ok "$np ranks: --normalize $norm --transpose --bands-from" "$work/dir.mtx" \
            --normalize $norm --transpose --bands-from "$f" -k 8 -o "$t" --explain -q || continue
        fp=$(fingerprint "$work/f.explain") of=$(backward_of "$work/out")
        [ -n "$fp" ] && [ "$fp" = "$of" ] &&
            ok "$np ranks, $norm: the backward plan names its forward plan's fingerprint" ||
            bad "$np ranks, $norm: forward '$fp', backward of '$of'"
        check_ok "$norm transposed" $np "$t"
    done
done

# Pattern input counts entries as 1: the same plan as weights of 1 would give.
awk 'NR <= 2 { print; next } { print $1, $2, 1 }' "$work/dir.mtx" >"$work/ones.mtx"
plan_ok "pattern input" "$work/pat.mtx" -n 2 --normalize gcn -o "$work/pat.h5" --explain -q &&
    cp "$work/out" "$work/pat.explain"
plan_ok "weights of 1" "$work/ones.mtx" -n 2 --normalize gcn -o "$work/ones.h5" --explain -q &&
    cp "$work/out" "$work/ones.explain"
[ -n "$(fingerprint "$work/pat.explain")" ] &&
    [ "$(fingerprint "$work/pat.explain")" = "$(fingerprint "$work/ones.explain")" ] &&
    ok "pattern input normalises like weights of 1 (same fingerprint)" ||
    bad "pattern vs ones: $(fingerprint "$work/pat.explain") vs $(fingerprint "$work/ones.explain")"

# A rank without rows: 3 rows at 4 ranks, forward and backward.
if plan_ok "tiny at 4 ranks" "$work/tiny.mtx" -n 4 --normalize gcn -o "$work/tiny.h5" -q; then
    check_ok "tiny gcn (rank 3 has no rows)" 4 "$work/tiny.h5"
    plan_ok "tiny transposed" "$work/tiny.mtx" --normalize gcn --transpose \
        --bands-from "$work/tiny.h5" -o "$work/tinyt.h5" -q &&
        check_ok "tiny gcn transposed" 4 "$work/tinyt.h5"
fi

# Cora (undirected): gcn keeps it symmetric; one plan serves both directions.
if plan_ok "cora --normalize gcn" "$CORA" -n 3 -k 16 --normalize gcn -o "$work/cora.h5" \
    --explain -q; then
    grep -q '^matrix: normalize gcn; symmetric' "$work/out" &&
        ok "cora gcn: symmetric" || bad "cora gcn: $(grep '^matrix:' "$work/out")"
    check_ok "cora gcn" 3 "$work/cora.h5"
    if command -v h5dump >/dev/null 2>&1 || { bad "h5dump is missing (hdf5-tools)"; false; }; then
        h5dump -a /normalization -a /symmetric -a /transposed "$work/cora.h5" >"$work/h5" 2>&1
        grep -q '"gcn"' "$work/h5" && grep -A8 'ATTRIBUTE "symmetric"' "$work/h5" | grep -q '(0): 1' &&
            ok "h5dump shows normalization gcn, symmetric 1" ||
            bad "h5dump: $(head -c 400 "$work/h5")"
    fi
fi

# Rectangular: mean and its transpose work (gcn needs a square matrix).
if plan_ok "rect --normalize mean" "$work/rect.mtx" -n 3 --normalize mean -o "$work/rect.h5" -q; then
    check_ok "rect mean" 3 "$work/rect.h5"
    plan_ok "rect transposed" "$work/rect.mtx" --normalize mean --transpose \
        --bands-from "$work/rect.h5" -o "$work/rectt.h5" --explain -q &&
        grep -q '^plan: 25 x 40' "$work/out" && ok "rect transposed: 25 x 40" &&
        check_ok "rect mean transposed" 3 "$work/rectt.h5"
fi

# ---- errors ---------------------------------------------------------------------
plan_fails "bad --normalize word" "normalisation 'sym': expected gcn, mean or none" \
    "$work/e.h5" "$work/dir.mtx" -n 2 --normalize sym
plan_fails "gcn of a rectangular matrix" "gcn normalisation needs a square matrix" \
    "$work/e.h5" "$work/rect.mtx" -n 2 --normalize gcn
plan_fails "negative degree" "sums to -5; the square root of a negative degree is undefined" \
    "$work/e.h5" "$work/neg.mtx" -n 2 --normalize gcn
plan_fails "--bands-from a missing file" "$work/none.h5: cannot open" \
    "$work/e.h5" "$work/dir.mtx" --transpose --bands-from "$work/none.h5"
plan_fails "--bands-from a plan of another matrix" \
    "bands-from $work/cora.h5: a plan of another matrix than $work/dir.mtx" \
    "$work/e.h5" "$work/dir.mtx" --normalize gcn --transpose --bands-from "$work/cora.h5"
plan_fails "--bands-from with another normalisation" \
    "a plan normalised 'gcn', but $work/dir.mtx is planned with --normalize mean" \
    "$work/e.h5" "$work/dir.mtx" --normalize mean --transpose --bands-from "$work/f3gcn.h5"
plan_fails "--bands-from with a disagreeing -n" \
    "-n 2 disagrees with --bands-from $work/f3gcn.h5, a plan for 3 ranks" \
    "$work/e.h5" "$work/dir.mtx" -n 2 --normalize gcn --transpose --bands-from "$work/f3gcn.h5"
# The bands come with their partition: another one asked for was ignored.
plan_fails "--bands-from with a disagreeing --partition" \
    "partition metis disagrees with --bands-from $work/f3gcn.h5, whose bands were made with --partition nnz" \
    "$work/e.h5" "$work/dir.mtx" --partition metis --normalize gcn --transpose --bands-from "$work/f3gcn.h5"
plan_ok "unnormalised plan" "$work/dir.mtx" -n 3 -o "$work/raw.h5" -q &&
    plan_fails "--bands-from an unnormalised plan" \
        "a plan normalised 'none', but $work/dir.mtx is planned with --normalize gcn" \
        "$work/e.h5" "$work/dir.mtx" --normalize gcn --transpose --bands-from "$work/raw.h5"
finish
