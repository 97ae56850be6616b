#!/bin/sh
# End to end: twoface-plan on the job's own ranks (docs/planning.md). For
# every partition, mode and matrix option, the plan written by
# `mpirun -n Q twoface-plan` at Q = 1..4 holds the same datasets and
# attributes as the one a single process writes (h5dump, timestamps
# aside): P > Q, P < Q (planning ranks without plan ranks), P = Q, a
# rectangular matrix, a 3-row matrix at 4 ranks (--partition metis at Q = 1
# only: above, PT-Scotch's parts depend on Q); the plan runs under
# twoface-exec --check; errors end every rank with one line, no hang and no
# output file.
# Environment (tests/run_tests.sh sets both): TF_SRCDIR, TF_BUILD.
# Last line: "e2e_dist_plan: N passed, M failed"; exit status 1 if M > 0.
E2E_NAME=e2e_dist_plan
. "${TF_SRCDIR:-.}/tests/lib_e2e.sh"
e2e_mpi_env
H5DUMP=$B/bin/twoface-h5dump
e2e_cora_tools "$H5DUMP"
CORA=$MATRIX

# dir.mtx: 150 x 150 directed with weights; rect.mtx: 40 x 25; tiny.mtx 3 x 3.
e2e_directed_150 "$work/dir.mtx"
awk 'BEGIN {
    m = 40; nc = 25
    print "%%MatrixMarket matrix coordinate real general" > "'"$work"'/rect.mtx"
    print m, nc, 2 * m > "'"$work"'/rect.mtx"
    for (i = 0; i < m; i++) { print i + 1, (3 * i) % nc + 1, 1.5 > "'"$work"'/rect.mtx"
                              print i + 1, (5 * i + 2) % nc + 1, -0.5 > "'"$work"'/rect.mtx" }
    print "%%MatrixMarket matrix coordinate real general" > "'"$work"'/tiny.mtx"
    print "3 3 4\n1 1 1\n2 3 2\n3 1 3\n3 3 4" > "'"$work"'/tiny.mtx"
}'

dump() { e2e_plan_dump "$H5DUMP" "$1"; }

# same NAME MATRIX PLAN-OPTIONS...: serial plan vs Q = 1..4 (or the Qs in
# QS: --partition metis depends on Q above 1, tests/e2e_ptscotch.sh).
same() {
    name=$1 mat=$2
    shift 2
    if ! "$PLAN" "$mat" -q -o "$work/s.h5" "$@" 2>"$work/err"; then
        bad "$name: serial plan failed: $(cat "$work/err")"
        return
    fi
    dump "$work/s.h5" >"$work/s.txt"
    for q in ${QS:-1 2 3 4}; do
        rm -f "$work/d.h5"
        if ! e2e_run_mpi "$q" "$PLAN" "$mat" -q -o "$work/d.h5" "$@" >"$work/out" 2>&1; then
            bad "$name at Q = $q: $(head -3 "$work/out")"
            continue
        fi
        dump "$work/d.h5" >"$work/d.txt"
        if cmp -s "$work/s.txt" "$work/d.txt"; then
            ok "$name at Q = $q: same plan as one process"
        else
            bad "$name at Q = $q: plan differs: $(diff "$work/s.txt" "$work/d.txt" | head -4 | tr '\n' ' ')"
        fi
    done
}

same "cora nnz P=4" "$CORA" -n 4
same "cora rows P=3" "$CORA" -n 3 --partition rows
same "cora work P=4" "$CORA" -n 4 --partition work
same "dir work P=5 gcn" "$work/dir.mtx" -n 5 --partition work --normalize gcn
same "rect work P=3" "$work/rect.mtx" -n 3 --partition work
same "tiny work P=4 (ranks without rows)" "$work/tiny.mtx" -n 4 --partition work
QS=1
same "cora metis P=4" "$CORA" -n 4 --partition metis
QS=
same "cora gcn P=5" "$CORA" -n 5 --normalize gcn
same "cora fetch P=2 (P < Q)" "$CORA" -n 2 --mode fetch
same "cora collective stripe P=6" "$CORA" -n 6 --mode collective --collective-rows stripe
same "cora no-alternative P=7" "$CORA" -n 7 --no-alternative -k 32
same "cora bf16 P=4" "$CORA" -n 4 --comm bf16
same "dir mean transpose P=4" "$work/dir.mtx" -n 4 --normalize mean --transpose
same "dir gcn P=3 stripe 8" "$work/dir.mtx" -n 3 --normalize gcn --stripe-width 8
same "rect P=3" "$work/rect.mtx" -n 3
same "tiny P=4 (ranks without rows)" "$work/tiny.mtx" -n 4
# Coefficients with a cache: the reuse counts (per rank, gathered on rank 0
# for the classification) must come out as one process counts them.
printf '%s\n' "alpha_coll = 4e-6" "beta_coll = 2e-10" "alpha_fetch = 2e-7" \
    "beta_fetch = 1.3e-10" "gamma_local = 5e-10" "gamma_coll = 7e-10" "gamma_fetch = 1.1e-9" \
    "alpha_sync = 1.2e-6" "gamma_cached = 1.5e-10" "cache_bytes = 65536" "threads = 1" \
    >"$work/cache.txt"
same "cora with a cache in the model P=5" "$CORA" -n 5 -k 64 --calibration "$work/cache.txt"
# A row weight from the calibration that is not a whole number (2.5625).
{ cat "$work/cache.txt"; echo "gamma_row = 1.28125e-9"; } >"$work/row.txt"
same "cora work with gamma_row P=3" "$CORA" -n 3 --partition work --calibration "$work/row.txt"
# The fetch kernel's reuse count (C rows in column order) and the overlap of
# fetch transfers with compute, in a fetch plan and a twoface one.
{ cat "$work/cache.txt"; echo "gamma_fetch_cached = 4e-10"; echo "overlap_fetch = 0.9"; } \
    >"$work/fetchcache.txt"
same "cora fetch with a cached fetch rate P=5" "$CORA" -n 5 -k 64 --mode fetch \
    --calibration "$work/fetchcache.txt"
same "dir gcn with a cached fetch rate P=3" "$work/dir.mtx" -n 3 --normalize gcn \
    --calibration "$work/fetchcache.txt"

# --bands-from: a backward plan on the forward plan's bands, forward made at Q = 3.
if e2e_run_mpi 3 "$PLAN" "$work/dir.mtx" -q -n 4 --normalize gcn --partition metis -o "$work/fwd.h5" >/dev/null 2>&1; then
    same "dir backward --bands-from a metis plan" "$work/dir.mtx" --normalize gcn --transpose \
        --bands-from "$work/fwd.h5"
else
    bad "forward metis plan at Q = 3 failed"
fi

# The distributed plan runs: twoface-exec --check against the serial reference.
if e2e_run_mpi 3 "$PLAN" "$CORA" -q -n 4 --normalize gcn -o "$work/run.h5" >/dev/null 2>&1 &&
   e2e_run_mpi 4 "$EXEC" "$work/run.h5" -k 16 -i 2 --check >"$work/out" 2>&1; then
    ok "a plan made at Q = 3 passes twoface-exec --check at 4 ranks"
else
    bad "plan made at Q = 3 does not run: $(tail -3 "$work/out")"
fi

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
printf '%%%%MatrixMarket matrix coordinate real general\n4 4 3\n1 1 1\n2 x 1\n3 3 1\n' >"$work/bad.mtx"
err_case "malformed line at Q = 3" 3 "$work/bad.mtx" -n 2
err_case "missing file at Q = 2" 2 "$work/nonexistent.mtx" -n 2
err_case "rectangular gcn at Q = 4" 4 "$work/rect.mtx" -n 2 --normalize gcn
err_case "unwritable output at Q = 3" 3 "$CORA" -n 2 -o /nonexistent-dir/x.h5
err_case "--max-memory too small at Q = 2" 2 "$CORA" -n 4 --max-memory 1M
# The same line as one process prints: a reader's message names the file
# and line itself (no second "FILE: " before it), a later step's gets the
# matrix's name in front, as in the serial planner.
same_error() { # name, Q, args...
    name=$1 q=$2
    shift 2
    "$PLAN" -o "$work/e.h5" "$@" >/dev/null 2>"$work/serr"
    e2e_run_mpi "$q" "$PLAN" -o "$work/e.h5" "$@" >"$work/out" 2>"$work/err"
    grep 'twoface-plan' "$work/err" >"$work/derr"
    if [ -s "$work/serr" ] && cmp -s "$work/serr" "$work/derr"; then
        ok "$name: the serial planner's line: $(cat "$work/serr")"
    else
        bad "$name: serial '$(cat "$work/serr")', at Q = $q '$(cat "$work/derr")'"
    fi
}
same_error "malformed line at Q = 3, worded as serial" 3 "$work/bad.mtx" -n 2
same_error "rectangular gcn at Q = 2, worded as serial" 2 "$work/rect.mtx" -n 2 --normalize gcn
# Each node may read its own copy of an input: rank 1's --calibration or
# --bands-from differs from rank 0's (with other coefficients the ranks
# wrote a mixed plan without a word). A wrapper gives each rank the files
# named with its rank where an argument holds @R@.
e2e_per_rank_wrapper "$work/per_rank.sh"
printf 'alpha_coll = 2e-05\nbeta_coll = 4e-10\nalpha_fetch = 5e-6\nbeta_fetch = 2.5e-10\ngamma_local = 6e-10\ngamma_coll = 6e-10\ngamma_fetch = 9e-10\nalpha_sync = 3e-6\nthreads = 1\n' >"$work/cal.0.txt"
sed 's/^beta_coll = 4e-10$/beta_coll = 4e-6/' "$work/cal.0.txt" >"$work/cal.1.txt"
"$PLAN" "$work/dir.mtx" -n 2 -o "$work/bf.0.h5" -q &&
    "$PLAN" "$work/dir.mtx" -n 2 --partition rows -o "$work/bf.1.h5" -q ||
    bad "planning the --bands-from copies"
copy_case() { # name, pattern, args...
    name=$1 pattern=$2
    shift 2
    rm -f "$work/e.h5"
    e2e_run_mpi 2 "$work/per_rank.sh" "$PLAN" -o "$work/e.h5" "$@" >"$work/out" 2>"$work/err"
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(grep -c 'twoface-plan' "$work/err")" -eq 1 ] &&
        grep -q -- "$pattern" "$work/err" && [ ! -e "$work/e.h5" ]; then
        ok "$name: $(grep twoface-plan "$work/err")"
    else
        bad "$name: exit $rc: $(head -3 "$work/err")"
    fi
}
copy_case "ranks' --calibration copies differ" \
    "calibration $work/cal.1.txt: rank 1's copy differs from rank 0's: every rank must read the same file" \
    "$work/dir.mtx" --calibration "$work/cal.@R@.txt"
copy_case "ranks' --bands-from copies differ" \
    "bands-from $work/bf.1.h5: rank 1's copy differs from rank 0's" \
    "$work/dir.mtx" --transpose --bands-from "$work/bf.@R@.h5"
# A symmetric file's matrix as the readers mirror it, and its gcn
# normalisation, are taken as symmetric without the test
# (tf_matrix_prepare_read, tf_dist_prepare): the plan must be the plan of
# the same matrix written out in full, which the test decides, by one
# process and by 3 ranks. Real values, duplicates (summed), diagonal
# entries; the mean normalisation runs the test; a skew-symmetric file is
# not symmetric.
awk -v W="$work" 'BEGIN {
    n = 60; k = 0
    for (i = 0; i < n; i++) { r[k] = i; c[k] = int(i / 2); v[k] = 0.1 * (k % 7) + 0.3; k++
                              r[k] = i; c[k] = (i * 7) % (i + 1); v[k] = 1.7 / (1 + k % 5); k++ }
    for (i = 5; i < n; i += 9) { r[k] = i; c[k] = 2; v[k] = 0.7; k++
                                 r[k] = i; c[k] = 2; v[k] = 0.11; k++ }
    for (s = 0; s < 2; s++) {
        kind = s ? "skew-symmetric" : "symmetric"; f = W "/" kind; g = 0; z = 0
        for (e = 0; e < k; e++) if (r[e] != c[e]) { g += 2; z++ } else if (!s) g++
        print "%%MatrixMarket matrix coordinate real " kind > (f ".mtx")
        print n, n, s ? z : k > (f ".mtx")
        print "%%MatrixMarket matrix coordinate real general" > (f "-full.mtx")
        print n, n, g > (f "-full.mtx")
        for (e = 0; e < k; e++) {
            if (s && r[e] == c[e]) continue
            print r[e] + 1, c[e] + 1, v[e] > (f ".mtx")
            print r[e] + 1, c[e] + 1, v[e] > (f "-full.mtx")
            if (r[e] != c[e]) print c[e] + 1, r[e] + 1, (s ? -v[e] : v[e]) > (f "-full.mtx")
        }
    }
}'
for case in "symmetric none 1" "symmetric gcn 1" "symmetric mean -" "skew-symmetric none 0"; do
    set -- $case
    kind=$1 norm=$2 want=$3
    for q in 1 3; do
        for f in "$kind" "$kind-full"; do
            if [ $q = 1 ]; then
                "$PLAN" "$work/$f.mtx" -n 5 -k 16 --normalize $norm -q -o "$work/$f.h5" 2>"$work/err"
            else
                e2e_run_mpi $q "$PLAN" "$work/$f.mtx" -n 5 -k 16 --normalize $norm -q \
                    -o "$work/$f.h5" 2>"$work/err"
            fi || bad "$f.mtx, $norm, at Q = $q: $(cat "$work/err")"
            dump "$work/$f.h5" >"$work/$f.txt"
        done
        got=$(grep -A4 'ATTRIBUTE "symmetric"' "$work/$kind.txt" | sed -n 's/.*(0): //p' | head -1)
        if cmp -s "$work/$kind.txt" "$work/$kind-full.txt" && { [ "$want" = - ] || [ "$got" = "$want" ]; }; then
            ok "a $kind file, --normalize $norm, at Q = $q: symmetric $got, the plan of its matrix in full"
        else
            bad "a $kind file, --normalize $norm, at Q = $q: symmetric '$got' (expected $want), or not the plan of its matrix in full"
        fi
    done
done
mkfifo "$work/fifo"
err_case "-o a FIFO at Q = 3" 3 "$CORA" -n 2 -o "$work/fifo"
[ -p "$work/fifo" ] && ok "the FIFO is still a FIFO" || bad "the FIFO was replaced"
finish
