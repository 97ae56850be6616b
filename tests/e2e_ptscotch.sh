#!/bin/sh
# End to end: --partition metis under `mpirun -n Q twoface-plan` with Q > 1,
# where PT-Scotch partitions the graph (docs/planning.md, "What depends on
# the number of planning ranks"). At Q = 2, 3 and 4: the plan runs under
# twoface-exec --check, every band is nonempty, the same Q gives the same
# plan again, and the B rows received stay within 2x of serial METIS's on
# Cora and a generated graph; a graph with isolated vertices; a graph with
# fewer rows than P, which has nothing to partition and so gives the serial
# plan at every Q; a planning rank without rows; options PT-Scotch does not
# have end every rank with one line, no output file.
# Environment (tests/run_tests.sh sets both): TF_SRCDIR, TF_BUILD.
# Last line: "e2e_ptscotch: N passed, M failed"; exit status 1 if M > 0.
E2E_NAME=e2e_ptscotch
. "${TF_SRCDIR:-.}/tests/lib_e2e.sh"
e2e_mpi_env
H5DUMP=$B/bin/twoface-h5dump
e2e_cora_tools "$H5DUMP"
CORA=$MATRIX

# iso.mtx: 400 vertices, a ring with chords over the first 360, the last 40
# isolated (no entries at all). tiny.mtx: 3 x 3. gen.mtx: 2,000 vertices,
# 10 clusters of 200 joined by few edges (a partitioner finds them).
awk 'BEGIN {
    n = 400; live = 360; k = 0
    for (i = 0; i < live; i++) { r[k] = i; c[k] = (i + 1) % live; k++
                                 r[k] = i; c[k] = (i * 7 + 11) % live; k++ }
    print "%%MatrixMarket matrix coordinate pattern symmetric" > "'"$work"'/iso.mtx"
    print n, n, k > "'"$work"'/iso.mtx"
    for (e = 0; e < k; e++) {
        a = r[e] > c[e] ? r[e] : c[e]; b = r[e] > c[e] ? c[e] : r[e]
        print a + 1, b + 1 > "'"$work"'/iso.mtx"
    }
    print "%%MatrixMarket matrix coordinate real general" > "'"$work"'/tiny.mtx"
    print "3 3 4\n1 1 1\n2 3 2\n3 1 3\n3 3 4" > "'"$work"'/tiny.mtx"
    n = 2000; k = 0
    for (i = 0; i < n; i++) {
        base = int(i / 200) * 200
        for (t = 1; t <= 4; t++) { r[k] = i; c[k] = base + (i - base + t * t * 7 + t) % 200; k++ }
        if (i % 50 == 0) { r[k] = i; c[k] = (i + 977) % n; k++ }
    }
    print "%%MatrixMarket matrix coordinate real general" > "'"$work"'/gen.mtx"
    print n, n, k > "'"$work"'/gen.mtx"
    for (e = 0; e < k; e++) print r[e] + 1, c[e] + 1, 1 + e % 3 > "'"$work"'/gen.mtx"
}'

# A sanitized build's filter plugin needs the ASan runtime in h5dump.
h5env=
if nm -D "$B/hdf5-plugins/libh5zstd.so" 2>/dev/null | grep -q __asan_init; then
    h5env="LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0"
fi
dump() { e2e_plan_dump "$H5DUMP" "$1"; }
# The band bounds of a plan, one line: "0 631 1320 2021 2708".
bands() {
    # shellcheck disable=SC2086
    env $h5env "$H5DUMP" -d /row_offsets -y -w 0 "$1" | sed -n '/DATA {/,/}/p' | tr -d ',{}A-Z' | tr -s ' \n' ' ' |
        sed 's/^ *//; s/ *$//'
}
# B rows received by all ranks per SpMM (MiB), from --explain.
received() {
    sed -n 's/^totals: .* received \([0-9.]*\) MiB vs.*/\1/p' "$1"
}
nonempty() { # P bounds...: P + 1 bounds, every band has a row
    np_=$1
    shift
    [ $# -eq $((np_ + 1)) ] || return 1
    prev=
    for x in "$@"; do
        [ -n "$prev" ] && [ "$x" -le "$prev" ] && return 1
        prev=$x
    done
    return 0
}

# plan_and_check NAME MATRIX Q P [options]: plan at Q ranks, run at P.
plan_and_check() {
    name=$1 mat=$2 q=$3 p=$4
    shift 4
    rm -f "$work/d.h5"
    if ! e2e_run_mpi "$q" "$PLAN" "$mat" -q -n "$p" --partition metis -o "$work/d.h5" "$@" \
        >"$work/out" 2>&1; then
        bad "$name: plan at Q = $q failed: $(head -3 "$work/out")"
        return 1
    fi
    if e2e_run_mpi "$p" "$EXEC" "$work/d.h5" -k 8 -i 1 --check >"$work/out" 2>&1; then
        ok "$name: plan made at Q = $q passes twoface-exec --check at $p ranks"
    else
        bad "$name: plan made at Q = $q fails --check: $(tail -3 "$work/out")"
    fi
}

for q in 2 3 4; do
    if plan_and_check "cora P=4" "$CORA" "$q" 4; then
        b=$(bands "$work/d.h5")
        # shellcheck disable=SC2086
        if nonempty 4 $b; then ok "cora P=4 at Q = $q: every band has rows ($b)"
        else bad "cora P=4 at Q = $q: an empty band ($b)"; fi
        dump "$work/d.h5" >"$work/first.txt"
        e2e_run_mpi "$q" "$PLAN" "$CORA" -q -n 4 --partition metis -o "$work/d2.h5" >/dev/null 2>&1
        dump "$work/d2.h5" >"$work/second.txt"
        if [ -s "$work/first.txt" ] && cmp -s "$work/first.txt" "$work/second.txt"; then
            ok "cora P=4 at Q = $q: the same plan on a second run"
        else
            bad "cora P=4 at Q = $q: a second run gave another plan"
        fi
    fi
    plan_and_check "cora P=$q" "$CORA" "$q" "$q" --normalize gcn
    plan_and_check "isolated vertices P=3" "$work/iso.mtx" "$q" 3
    b=$(bands "$work/d.h5")
    # shellcheck disable=SC2086
    if nonempty 3 $b; then ok "isolated vertices at Q = $q: every band has rows ($b)"
    else bad "isolated vertices at Q = $q: an empty band ($b)"; fi
done

# Quality: B rows received (the communication volume) against serial METIS.
for g in "cora:$CORA" "generated:$work/gen.mtx"; do
    name=${g%%:*} mat=${g#*:}
    "$PLAN" "$mat" -q -n 4 --partition metis --explain -o "$work/s.h5" >"$work/s.txt" 2>&1
    s=$(received "$work/s.txt")
    for q in 2 4; do
        e2e_run_mpi "$q" "$PLAN" "$mat" -q -n 4 --partition metis --explain -o "$work/d.h5" \
            >"$work/d.txt" 2>&1
        d=$(received "$work/d.txt")
        if [ -n "$s" ] && [ -n "$d" ] && awk -v s="$s" -v d="$d" 'BEGIN { exit !(d <= 2 * s + 0.01) }'; then
            ok "$name P=4 at Q = $q: $d MiB received per SpMM, serial METIS $s MiB"
        else
            bad "$name P=4 at Q = $q: '$d' MiB received per SpMM, serial METIS '$s' MiB"
        fi
    done
done

# Fewer rows than P: nothing to partition, the serial plan at every Q.
"$PLAN" "$work/tiny.mtx" -q -n 4 --partition metis -o "$work/s.h5" 2>"$work/err" ||
    bad "tiny serial plan failed: $(cat "$work/err")"
dump "$work/s.h5" >"$work/s.txt"
for q in 2 3 4; do
    rm -f "$work/d.h5"
    if e2e_run_mpi "$q" "$PLAN" "$work/tiny.mtx" -q -n 4 --partition metis -o "$work/d.h5" \
        >"$work/out" 2>&1 && [ -s "$work/s.txt" ] && dump "$work/d.h5" | cmp -s "$work/s.txt" -; then
        ok "3 rows, P = 4 at Q = $q: the serial plan"
    else
        bad "3 rows, P = 4 at Q = $q: $(head -3 "$work/out")"
    fi
done
# 3 rows into 2 parts at Q = 4: PT-Scotch runs with a rank that has no vertex.
plan_and_check "3 rows, P = 2 (a planning rank without rows)" "$work/tiny.mtx" 4 2

# Errors: one line from rank 0, non-zero exit, no output file, no hang.
err_case() { # name, Q, args...
    name=$1 q=$2
    shift 2
    rm -f "$work/e.h5"
    e2e_run_mpi "$q" "$PLAN" -o "$work/e.h5" "$@" >"$work/out" 2>"$work/err"
    rc=$?
    lines=$(grep -c 'twoface-plan' "$work/err")
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$lines" -eq 1 ] && [ ! -e "$work/e.h5" ]; then
        ok "$name: one line, exit $rc"
    else
        bad "$name: exit $rc, $lines lines: $(head -3 "$work/err")"
    fi
}
err_case "--metis-objective vol at Q = 3" 3 "$CORA" -n 4 --partition metis --metis-objective vol
err_case "--metis-balance nnz+rows at Q = 2" 2 "$CORA" -n 4 --partition metis \
    --metis-balance nnz+rows
printf '%%%%MatrixMarket matrix coordinate real general\n5 4 2\n1 1 1\n5 4 1\n' >"$work/rect.mtx"
err_case "rectangular metis at Q = 4" 4 "$work/rect.mtx" -n 2 --partition metis
finish
