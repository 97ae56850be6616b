#!/bin/sh
# End to end: --partition metis (METIS partitioning) through the real programs. A METIS
# plan runs --check in original ids with the generator and with --b; its
# --c-out equals a band plan's (original row order); its --explain names the
# partition; bad requests and a damaged permutation end with one stderr line
# and a non-zero status on every rank, leaving no plan file behind.
# Environment as for the other e2e scripts (tests/run_tests.sh sets it).
# Last line: "e2e_partition: N passed, M failed".
E2E_NAME=e2e_partition
. "${TF_SRCDIR:-.}/tests/lib_e2e.sh"
HELPER=$B/tests/mpi_errors
e2e_cora_tools "$HELPER"

# one_line_error NAME PATTERN STATUS ERRFILE: a failure with exactly one
# non-empty stderr line containing PATTERN.
one_line_error() {
    if [ "$3" -eq 0 ]; then
        bad "$1: succeeded"
    elif [ "$(grep -c . "$4")" -ne 1 ]; then
        bad "$1: expected one stderr line, got: $(head -c 600 "$4")"
    elif ! grep -q -- "$2" "$4"; then
        bad "$1: '$2' not in: $(cat "$4")"
    else
        ok "$1: $(cat "$4")"
    fi
}

# run_exec NAME P ARGS...: twoface-exec on P ranks; rank 0's output in
# $work/out, all stderr in $work/err; the status in $rc.
run_exec() {
    np=$2
    shift 2
    timeout 120 mpirun -n "$np" --bind-to none "$EXEC" "$@" >"$work/out" 2>"$work/err.raw"
    rc=$?
    # mpirun's own notice about a non-zero exit is not the program's output.
    grep -v -e '^-----' -e 'mpirun' -e 'Primary job' -e 'non-zero' -e 'Process name' \
        -e 'Exit code' -e 'job to be' -e 'process to do so' -e '^ *$' "$work/err.raw" \
        >"$work/err"
}

# ---- plans ---------------------------------------------------------------------
for np in 2 3 4; do
    if ! "$PLAN" "$MATRIX" -n $np -k 16 --partition metis -o "$work/m$np.h5" -q 2>"$work/err"; then
        bad "plan --partition metis -n $np: $(cat "$work/err")"
        finish
    fi
done
"$PLAN" "$MATRIX" -n 3 -k 16 -o "$work/r3.h5" -q || { bad "plan rows -n 3"; finish; }

# ---- C in original ids ------------------------------------------------------
for np in 2 3 4; do
    run_exec "metis plan, --check" $np "$work/m$np.h5" --check -i 2 -k 16
    if [ $rc -eq 0 ] && grep -q '^check twoface: .*passed' "$work/out"; then
        ok "metis plan at $np ranks: $(grep '^check' "$work/out")"
    else
        bad "metis plan at $np ranks, --check (exit $rc): $(head -c 600 "$work/err")"
    fi
done
"$HELPER" --b "$work/b.h5" good 2708 8
run_exec "--b" 3 "$work/m3.h5" --b "$work/b.h5" --check -i 2 --c-out "$work/c_metis.h5"
if [ $rc -eq 0 ] && grep -q '^check twoface: .*passed' "$work/out"; then
    ok "metis plan with --b: $(grep '^check' "$work/out")"
else
    bad "metis plan with --b (exit $rc): $(head -c 600 "$work/err")"
fi
run_exec "--b rows" 3 "$work/r3.h5" --b "$work/b.h5" -i 1 --c-out "$work/c_rows.h5"
if command -v h5diff >/dev/null 2>&1; then
    # Sums in another order differ in the last bits: absolute 1e-5 on
    # entries of magnitude up to ~170 (Cora's largest row).
    if h5diff -d 1e-4 "$work/c_rows.h5" "$work/c_metis.h5" /C /C >"$work/diff" 2>&1; then
        ok "--c-out of the metis plan equals the rows plan's (original row order)"
    else
        bad "--c-out differs between the metis and the rows plan: $(head -c 600 "$work/diff")"
    fi
else
    bad "h5diff not found (hdf5-tools)"
fi

"$PLAN" "$MATRIX" -n 3 -k 16 --partition metis --explain -o "$work/x.h5" -q >"$work/explain" 2>&1
if grep -qi 'metis' "$work/explain"; then
    ok "--explain of a metis plan names the partition"
else
    bad "--explain does not name the metis partition: $(head -c 400 "$work/explain")"
fi

# A backward plan (--transpose) on the bands of a METIS plan reuses its
# permutation: the plan renumbers the same way and runs --check.
if "$PLAN" "$MATRIX" -k 16 --transpose --bands-from "$work/m3.h5" -o "$work/t3.h5" -q \
        2>"$work/err"; then
    run_exec "transposed metis plan" 3 "$work/t3.h5" --check -i 2 -k 16
    if [ $rc -eq 0 ] && grep -q '^check twoface: .*passed' "$work/out"; then
        ok "--transpose --bands-from a metis plan: $(grep '^check' "$work/out")"
    else
        bad "--transpose --bands-from a metis plan, --check (exit $rc): $(head -c 600 "$work/err")"
    fi
    if pt=$(e2e_h5dump "$B/bin/twoface-h5dump" -d /perm "$work/t3.h5") &&
       pm=$(e2e_h5dump "$B/bin/twoface-h5dump" -d /perm "$work/m3.h5") &&
       printf '%s\n' "$pm" | grep -q '(0):' &&
       [ "$(printf '%s\n' "$pt" | grep -v HDF5)" = "$(printf '%s\n' "$pm" | grep -v HDF5)" ]; then
        ok "--bands-from carried the permutation"
    else
        bad "the transposed plan's perm differs from the forward plan's"
    fi
else
    bad "--transpose --bands-from a metis plan: $(cat "$work/err")"
fi

# ---- errors -------------------------------------------------------------------
printf '%%%%MatrixMarket matrix coordinate real general\n3 4 3\n1 1 1\n2 3 2\n3 4 1\n' \
    >"$work/rect.mtx"
"$PLAN" "$work/rect.mtx" -n 2 --partition metis -o "$work/rect.h5" -q 2>"$work/err"
one_line_error "rectangular matrix with --partition metis" "square" $? "$work/err"
[ -e "$work/rect.h5" ] && bad "a refused plan left $work/rect.h5"
"$PLAN" "$MATRIX" -n 2 --partition mets -o "$work/bad.h5" -q 2>"$work/err"
one_line_error "unknown partition" "expected 'auto', 'rows', 'nnz', 'work' or 'metis'" $? "$work/err"
"$PLAN" "$MATRIX" -n 2 --partition metis --metis-balance rows -o "$work/bad.h5" -q 2>"$work/err"
one_line_error "unknown --metis-balance" "nnz or nnz+rows" $? "$work/err"
"$PLAN" "$MATRIX" -n 2 --partition metis --metis-objective edges -o "$work/bad.h5" -q 2>"$work/err"
one_line_error "unknown --metis-objective" "cut or vol" $? "$work/err"
# Options only METIS reads were ignored without a word with another partition.
"$PLAN" "$MATRIX" -n 2 --metis-objective vol -o "$work/bad.h5" -q 2>"$work/err"
one_line_error "--metis-objective without --partition metis" \
    "twoface-plan: --metis-objective applies to --partition metis only" $? "$work/err"
[ -e "$work/bad.h5" ] && bad "a refused plan left $work/bad.h5"

run_exec "metis and rows plan together" 3 "$work/m3.h5" "$work/r3.h5" -i 1
one_line_error "a metis and a rows plan in one run" "different partitions" $rc "$work/err"

cp "$work/m3.h5" "$work/damaged.h5"
"$HELPER" --edit "$work/damaged.h5" perm
run_exec "damaged perm" 3 "$work/damaged.h5" -i 1
one_line_error "plan with a damaged perm" "checksum mismatch" $rc "$work/err"
cp "$work/m3.h5" "$work/damaged.h5"
"$HELPER" --edit "$work/damaged.h5" iperm
run_exec "damaged iperm" 3 "$work/damaged.h5" -i 1
one_line_error "plan with a damaged iperm" "checksum mismatch" $rc "$work/err"

finish
