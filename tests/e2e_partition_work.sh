#!/bin/sh
# End to end: --partition work (bands of equal nonzeros plus a cost per row
# of C) through the real programs. A work plan runs --check at 3 and 4 ranks;
# the file says partition "work"; --explain gives the row weight, built-in or
# from a calibration's gamma_row; on a matrix whose first rows are long and
# the rest short the work bands balance the rows better than nnz bands do,
# and --explain of the nnz plan (with a cost per row in the model) suggests
# --partition work; Q = 1..4 planning ranks
# write the same work plan as one process. --partition auto (the default)
# takes work on the skewed rows and nnz on even ones, at every Q alike.
# Environment as for the other e2e scripts (tests/run_tests.sh sets it).
# Last line: "e2e_partition_work: N passed, M failed".
E2E_NAME=e2e_partition_work
. "${TF_SRCDIR:-.}/tests/lib_e2e.sh"
H5DUMP=$B/bin/twoface-h5dump
e2e_cora_tools "$H5DUMP"

# ---- a work plan runs and computes the right C ----------------------------------
for np in 3 4; do
    if ! "$PLAN" "$MATRIX" -n $np -k 16 --partition work -o "$work/w$np.h5" -q 2>"$work/err"; then
        bad "plan --partition work -n $np: $(cat "$work/err")"
        continue
    fi
    if timeout 120 mpirun -n $np --bind-to none "$EXEC" "$work/w$np.h5" --algo twoface,p2p \
        --check -i 2 -k 16 >"$work/out" 2>"$work/err" &&
        [ "$(grep -c '^check .*passed' "$work/out")" -eq 2 ]; then
        ok "work plan at $np ranks: $(grep '^check' "$work/out" | tr '\n' ' ')"
    else
        bad "work plan at $np ranks, --check: $(cat "$work/out" "$work/err" | head -5)"
    fi
done
if e2e_plan_dump "$H5DUMP" "$work/w4.h5" | grep -q '"work"'; then
    ok "the plan file says partition \"work\""
else
    bad "no \"work\" in the dump of $work/w4.h5"
fi

# ---- the row weight --------------------------------------------------------------
# The built-in coefficients have a gamma_row: their ratio.
"$PLAN" "$MATRIX" -n 4 --partition work -o "$work/e.h5" --explain >"$work/out" 2>&1
grep -Eq '^work partition: a row of C weighs [0-9.]+ nonzeros \(gamma_row / gamma_local\)' "$work/out" &&
    ok "built-in row weight: $(grep '^work partition' "$work/out")" ||
    bad "built-in row weight not in --explain: $(grep -i work "$work/out" | head -3)"
# A calibration without gamma_row: the fixed weight of 2.
printf '%s\n' "alpha_coll = 4e-6" "beta_coll = 2e-10" "alpha_fetch = 2e-7" \
    "beta_fetch = 1.3e-10" "gamma_local = 4e-10" "gamma_coll = 7e-10" "gamma_fetch = 1.1e-9" \
    "alpha_sync = 1.2e-6" "threads = 1" >"$work/cal0.txt"
"$PLAN" "$MATRIX" -n 4 --partition work --calibration "$work/cal0.txt" -o "$work/e0.h5" \
    --explain >"$work/out" 2>&1
grep -q '^work partition: a row of C weighs 2 nonzeros (built-in' "$work/out" &&
    ok "fixed row weight without gamma_row: $(grep '^work partition' "$work/out")" ||
    bad "fixed row weight not in --explain: $(grep -i work "$work/out" | head -3)"
printf '%s\n' "alpha_coll = 4e-6" "beta_coll = 2e-10" "alpha_fetch = 2e-7" \
    "beta_fetch = 1.3e-10" "gamma_local = 4e-10" "gamma_coll = 7e-10" "gamma_fetch = 1.1e-9" \
    "alpha_sync = 1.2e-6" "gamma_row = 1.3e-9" "threads = 1" >"$work/cal.txt"
"$PLAN" "$MATRIX" -n 4 --partition work --calibration "$work/cal.txt" -o "$work/c.h5" \
    --explain >"$work/out" 2>&1
grep -q '^work partition: a row of C weighs 3.25 nonzeros (gamma_row / gamma_local)' "$work/out" &&
    ok "calibrated row weight: $(grep '^work partition' "$work/out")" ||
    bad "calibrated row weight not in --explain: $(grep -i work "$work/out" | head -3)"

# ---- skewed rows: 40 rows of 30 nonzeros, then 760 rows of 1 -----------------------
awk 'BEGIN {
    n = 800; nz = 0
    for (i = 1; i <= n; i++) { c[i] = (i <= 40) ? 30 : 1; nz += c[i] }
    print "%%MatrixMarket matrix coordinate real general"
    print n, n, nz
    for (i = 1; i <= n; i++)
        for (j = 0; j < c[i]; j++) print i, (i * 7 + j * 13) % n + 1, 1
}' >"$work/skew.mtx"
# rows_ratio FILE: the "rows" max/mean of --explain's balance line.
rows_ratio() { sed -n 's/^balance .*nonzeros [0-9.]*, rows \([0-9.]*\),.*/\1/p' "$1"; }
# The nnz plan with a gamma_row in the model, so that the predicted time
# sees the rows (the built-in coefficients have no cost per row); a dear
# one (20 nonzeros), so that on so small a matrix the rows outweigh the
# per-message costs.
sed 's/^gamma_row = .*/gamma_row = 8e-9/' "$work/cal.txt" >"$work/cal20.txt"
"$PLAN" "$work/skew.mtx" -n 4 --partition nnz --calibration "$work/cal20.txt" -o "$work/sn.h5" \
    --explain >"$work/nnz.txt" 2>&1 ||
    bad "plan skew nnz: $(tail -1 "$work/nnz.txt")"
"$PLAN" "$work/skew.mtx" -n 4 --partition work -o "$work/sw.h5" --explain >"$work/work.txt" 2>&1 ||
    bad "plan skew work: $(tail -1 "$work/work.txt")"
rn=$(rows_ratio "$work/nnz.txt")
rw=$(rows_ratio "$work/work.txt")
if [ -n "$rn" ] && [ -n "$rw" ] && awk -v a="$rn" -v b="$rw" 'BEGIN { exit !(b < a - 0.1) }'; then
    ok "skewed rows: rows max/mean $rn with nnz bands, $rw with work bands"
else
    bad "skewed rows: rows max/mean nnz '$rn', work '$rw' (work should be lower)"
fi
grep -q 'IMBALANCED.*(the excess: rows); try --partition work' "$work/nnz.txt" &&
    ok "--explain of the nnz plan suggests --partition work" ||
    bad "no --partition work suggestion: $(grep '^balance' "$work/nnz.txt")"
if timeout 120 mpirun -n 4 --bind-to none "$EXEC" "$work/sw.h5" --check -i 2 -k 8 \
    >"$work/out" 2>"$work/err" && grep -q '^check twoface: .*passed' "$work/out"; then
    ok "skewed work plan: $(grep '^check' "$work/out")"
else
    bad "skewed work plan, --check: $(cat "$work/out" "$work/err" | head -5)"
fi

# ---- the same plan at every number of planning ranks --------------------------------
e2e_plan_dump "$H5DUMP" "$work/sw.h5" >"$work/s.txt"
for q in 1 2 3 4; do
    rm -f "$work/d.h5"
    if ! e2e_run_mpi "$q" "$PLAN" "$work/skew.mtx" -q -n 4 --partition work -o "$work/d.h5" \
        >"$work/out" 2>&1; then
        bad "work plan at Q = $q: $(head -3 "$work/out")"
        continue
    fi
    e2e_plan_dump "$H5DUMP" "$work/d.h5" >"$work/d.txt"
    cmp -s "$work/s.txt" "$work/d.txt" && ok "work plan at Q = $q: same plan as one process" ||
        bad "work plan at Q = $q differs: $(diff "$work/s.txt" "$work/d.txt" | head -4 | tr '\n' ' ')"
done

# ---- --partition auto, the default: work where nnz bands leave the kernels heavy ----
"$PLAN" "$work/skew.mtx" -n 4 --calibration "$work/cal20.txt" -o "$work/sa.h5" --explain \
    >"$work/auto.txt" 2>&1 || bad "plan skew default: $(tail -1 "$work/auto.txt")"
"$PLAN" "$work/skew.mtx" -n 4 --partition work --calibration "$work/cal20.txt" -o "$work/sw20.h5" \
    -q 2>"$work/err" || bad "plan skew work: $(cat "$work/err")"
if grep -Eq '^partition auto: work; bands of equal nonzeros give the heaviest rank [0-9.]+x' \
    "$work/auto.txt"; then
    ok "default on skewed rows: $(grep '^partition auto' "$work/auto.txt")"
else
    bad "default on skewed rows: $(grep -i 'partition' "$work/auto.txt" | head -2)"
fi
e2e_plan_dump "$H5DUMP" "$work/sa.h5" >"$work/a.txt"
e2e_plan_dump "$H5DUMP" "$work/sw20.h5" >"$work/w.txt"
cmp -s "$work/a.txt" "$work/w.txt" && ok "the default plan is the --partition work plan" ||
    bad "default and work plans differ: $(diff "$work/a.txt" "$work/w.txt" | head -4 | tr '\n' ' ')"
# --bands-from brings its bands: auto agrees with the work or nnz they were made with.
if "$PLAN" "$work/skew.mtx" --bands-from "$work/sa.h5" --partition auto -o "$work/sb.h5" -q \
    2>"$work/err" && e2e_plan_dump "$H5DUMP" "$work/sb.h5" | grep -q '"work"'; then
    ok "--partition auto with --bands-from a work plan: its bands, partition work"
else
    bad "--partition auto --bands-from a work plan: $(cat "$work/err")"
fi
# Every row 3 nonzeros: both cuts alike, nnz kept.
awk 'BEGIN { n = 600; print "%%MatrixMarket matrix coordinate real general"; print n, n, 3 * n
    for (i = 1; i <= n; i++) for (j = 0; j < 3; j++) print i, (i * 11 + j * 17) % n + 1, 1 }' \
    >"$work/even.mtx"
"$PLAN" "$work/even.mtx" -n 3 -o "$work/ea.h5" --explain >"$work/even.txt" 2>&1 ||
    bad "plan even default: $(tail -1 "$work/even.txt")"
grep -q '^partition auto: nnz; ' "$work/even.txt" && e2e_plan_dump "$H5DUMP" "$work/ea.h5" |
    grep -q '"nnz"' && ok "default on even rows: $(grep '^partition auto' "$work/even.txt")" ||
    bad "default on even rows: $(grep -i 'partition' "$work/even.txt" | head -2)"
"$PLAN" "$work/even.mtx" -n 3 --partition nnz -o "$work/en.h5" --explain >"$work/out" 2>&1
grep -q '^partition auto' "$work/out" && bad "--partition nnz printed the auto line" ||
    ok "--partition nnz: no auto line"
for q in 1 2 3 4; do
    rm -f "$work/d.h5"
    if ! e2e_run_mpi "$q" "$PLAN" "$work/skew.mtx" -q -n 4 --calibration "$work/cal20.txt" \
        -o "$work/d.h5" >"$work/out" 2>&1; then
        bad "default plan at Q = $q: $(head -3 "$work/out")"
        continue
    fi
    e2e_plan_dump "$H5DUMP" "$work/d.h5" >"$work/d.txt"
    cmp -s "$work/a.txt" "$work/d.txt" && ok "default plan at Q = $q: same plan as one process" ||
        bad "default plan at Q = $q differs: $(diff "$work/a.txt" "$work/d.txt" | head -4 | tr '\n' ' ')"
done

finish
