#!/bin/sh
# End to end: bad input, damaged plans and failures through the real
# programs. Every failure must end with a non-zero exit status and
# exactly one line on stderr naming the file and the problem; with MPI, every
# rank must exit non-zero and none may hang (each mpirun runs under
# `timeout 120`; a timeout counts as a hang); a failed twoface-plan must leave
# no output file behind (neither PLAN.h5 nor PLAN.h5.tmp.*) and an existing
# plan untouched. Unusual but valid matrices must plan and pass --check.
#
# Damaged files come from the helper modes of tests/mpi_errors.c.
# Environment (tests/run_tests.sh sets them): TF_SRCDIR, TF_BUILD and the
# Open MPI variables (root, oversubscription, osc, yield when idle).
# Last line: "e2e_errors: N passed, M failed"; exit status 1 if M > 0.
E2E_NAME=e2e_errors
. "${TF_SRCDIR:-.}/tests/lib_e2e.sh"
PLAN=$B/bin/twoface-plan
EXEC=$B/bin/twoface-exec
HELPER=$B/tests/mpi_errors
MPI_LIMIT=120

for p in "$PLAN" "$EXEC" "$HELPER"; do
    if [ ! -x "$p" ]; then
        bad "$p is not built (make all $B/tests/mpi_errors)"
        finish
    fi
done
command -v mpirun >/dev/null 2>&1 || { bad "mpirun not found"; finish; }

# ---- helpers ----------------------------------------------------------------

# Non-empty lines of a file.
nlines() { grep -c . "$1" 2>/dev/null || true; }

# leftovers PLAN: lists PLAN and PLAN.tmp.* if they exist.
leftovers() { ls -d "$1" "$1".tmp.* 2>/dev/null; }

# plan_fails NAME PATTERN PLANFILE ARGS...: twoface-plan must fail with one
# stderr line containing PATTERN and leave no PLANFILE (or its temporaries).
plan_fails() {
    name=$1 pattern=$2 out=$3
    shift 3
    "$PLAN" "$@" -o "$out" -q >"$work/out" 2>"$work/err"
    rc=$?
    left=$(leftovers "$out")
    if [ $rc -eq 0 ]; then
        bad "$name: twoface-plan succeeded"
    elif [ "$(nlines "$work/err")" -ne 1 ]; then
        bad "$name: expected one line on stderr, got: $(head -c 600 "$work/err")"
    elif ! grep -q -- "$pattern" "$work/err"; then
        bad "$name: '$pattern' not in: $(cat "$work/err")"
    elif [ -n "$left" ]; then
        bad "$name: left $left behind"
    else
        ok "$name (exit $rc): $(cat "$work/err")"
    fi
}

# mpi_run P DIR CMD...: runs CMD on P ranks under timeout; rank r's stdout,
# stderr and exit status go to DIR/out.r, DIR/err.r, DIR/rc.r (each rank is
# wrapped in a shell that exits 0, so that mpirun does not kill the other
# ranks when the first one exits non-zero: each rank must stop on its own).
# Returns mpirun's status (124: timed out).
mpi_run() {
    np=$1 dir=$2
    shift 2
    rm -rf "$dir"
    mkdir -p "$dir"
    # As for the MPI suites in run_tests.sh: Open MPI leaks at finalize from
    # components it unloads, which no suppression can name, so a sanitizer
    # build checks leaks in the serial programs only.
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    timeout $MPI_LIMIT mpirun -n "$np" --bind-to none sh -c '
        d=$1; shift
        r=${OMPI_COMM_WORLD_RANK:-0}
        "$@" >"$d/out.$r" 2>"$d/err.$r"
        echo $? >"$d/rc.$r"' sh "$dir" "$@" >"$dir/mpirun.log" 2>&1
}

# exec_fails NAME P PATTERN ARGS...: twoface-exec on P ranks must stop on
# every rank with status 1 (within 30 s; a hang is killed at 120 s), with
# exactly one stderr line in all (rank 0 reports the agreed message)
# containing PATTERN.
exec_fails() {
    name=$1 np=$2 pattern=$3
    shift 3
    d=$work/run
    t0=$(date +%s)
    mpi_run "$np" "$d" "$EXEC" "$@"
    mrc=$?
    dt=$(($(date +%s) - t0))
    if [ $mrc -eq 124 ]; then
        bad "$name: hang (killed after ${MPI_LIMIT} s)"
        return
    fi
    r=0 other= missing=
    while [ $r -lt "$np" ]; do
        if [ ! -f "$d/rc.$r" ]; then
            missing="$missing $r"
        elif [ "$(cat "$d/rc.$r")" -ne 1 ]; then
            other="$other $r:$(cat "$d/rc.$r")"
        fi
        r=$((r + 1))
    done
    cat "$d"/err.* 2>/dev/null >"$d/err.all"
    if [ -n "$missing" ]; then
        bad "$name: ranks$missing did not finish (mpirun: $(head -c 300 "$d/mpirun.log"))"
    elif [ -n "$other" ]; then
        bad "$name: rank:status$other, expected status 1 on every rank: $(head -c 300 "$d/err.all")"
    elif [ "$dt" -gt 30 ]; then
        bad "$name: took $dt s to stop"
    elif [ "$(nlines "$d/err.all")" -ne 1 ]; then
        bad "$name: expected one line on stderr, got: $(head -c 600 "$d/err.all")"
    elif ! grep -q -- "$pattern" "$d/err.all"; then
        bad "$name: '$pattern' not in: $(cat "$d/err.all")"
    else
        ok "$name (all $np ranks exit $(cat "$d/rc.0"), ${dt} s): $(cat "$d/err.all")"
    fi
}

# exec_checks NAME P ARGS...: twoface-exec --check must pass on every rank.
exec_checks() {
    name=$1 np=$2
    shift 2
    d=$work/run
    mpi_run "$np" "$d" "$EXEC" --check -i 2 --warmup 1 "$@"
    mrc=$?
    rcs=$(cat "$d"/rc.* 2>/dev/null | tr '\n' ' ')
    if [ $mrc -eq 124 ]; then
        bad "$name: hang (killed after ${MPI_LIMIT} s)"
    elif [ "$(cat "$d"/rc.* 2>/dev/null | grep -c '^0$')" -ne "$np" ]; then
        bad "$name: exit statuses '$rcs': $(cat "$d"/err.* | head -c 600)"
    elif ! grep -q '^check[^:]*: .*passed' "$d/out.0" || grep -q 'FAILED' "$d/out.0"; then
        bad "$name: no passed check in: $(head -c 600 "$d/out.0")"
    else
        ok "$name: $(grep '^check' "$d/out.0" | head -1)"
    fi
}

banner='%%MatrixMarket matrix coordinate real general'

# ---- 1. Unusual but valid matrices: planned and multiplied correctly ------

valid() { # NAME P FILE
    name=$1 np=$2 f=$3
    out=$work/valid.h5
    if ! "$PLAN" "$f" -n "$np" -o "$out" -q 2>"$work/err"; then
        bad "$name: twoface-plan failed: $(cat "$work/err")"
        return
    fi
    if ls "$out".tmp.* >/dev/null 2>&1; then
        bad "$name: temporary file left next to the plan"
        return
    fi
    exec_checks "$name, $np ranks" "$np" "$out"
    rm -f "$out"
}

printf '%s\n6 6 0\n' "$banner" >"$work/empty.mtx"
valid "empty 6x6 matrix (0 entries)" 4 "$work/empty.mtx"
printf '%s\n1 1 1\n1 1 -2.5\n' "$banner" >"$work/one.mtx"
valid "1x1 matrix (more ranks than rows)" 4 "$work/one.mtx"
awk -v b="$banner" 'BEGIN { print b; print 40, 7, 60
    for (i = 0; i < 60; i++) print (i * 7) % 40 + 1, (i * 3) % 7 + 1, (i % 5) - 2.5 }' \
    >"$work/tall.mtx"
valid "tall 40x7 matrix" 3 "$work/tall.mtx"
awk -v b="$banner" 'BEGIN { print b; print 7, 40, 60
    for (i = 0; i < 60; i++) print (i * 3) % 7 + 1, (i * 7) % 40 + 1, (i % 5) - 2.5 }' \
    >"$work/wide.mtx"
valid "wide 7x40 matrix" 3 "$work/wide.mtx"
awk -v b="$banner" 'BEGIN { print b; print 30, 30, 30
    for (j = 1; j <= 30; j++) print 13, j, j / 4 }' >"$work/row.mtx"
valid "all entries in one row (30x30)" 4 "$work/row.mtx"
awk -v b="$banner" 'BEGIN { print b; print 30, 30, 30
    for (i = 1; i <= 30; i++) print i, 5, i / 4 }' >"$work/col.mtx"
valid "all entries in one column (30x30)" 4 "$work/col.mtx"

# ---- 2. Malformed Matrix Market files: one line, no plan file ---------------

printf '3 3 1\n1 1 1\n' >"$work/nobanner.mtx"
plan_fails "missing banner" "nobanner.mtx:1: expected the banner" "$work/bad.h5" \
    "$work/nobanner.mtx" -n 2
printf '%%%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n' >"$work/array.mtx"
plan_fails "array format" "array.mtx:1: format 'array'" "$work/bad.h5" "$work/array.mtx" -n 2
printf '%s\n3 3 2\n1 1 1\n4 2 1\n' "$banner" >"$work/range.mtx"
plan_fails "row index out of range" "range.mtx:4: row index 4 out of range" "$work/bad.h5" \
    "$work/range.mtx" -n 2
printf '%s\n3 3 2\n1 0 1\n2 2 1\n' "$banner" >"$work/zero.mtx"
plan_fails "column index 0" "zero.mtx:3:" "$work/bad.h5" "$work/zero.mtx" -n 2
plan_fails "missing matrix file" "$work/none.mtx" "$work/bad.h5" "$work/none.mtx" -n 2
plan_fails "output directory missing" "$work/nodir/p.h5" "$work/nodir/p.h5" "$work/one.mtx" -n 2

# A failure never touches an existing plan.
"$PLAN" "$work/tall.mtx" -n 3 -o "$work/keep.h5" -q
cp "$work/keep.h5" "$work/keep.orig"
"$PLAN" "$work/range.mtx" -n 2 -o "$work/keep.h5" -q 2>/dev/null
if cmp -s "$work/keep.h5" "$work/keep.orig" && ! ls "$work"/keep.h5.tmp.* >/dev/null 2>&1; then
    ok "a failed twoface-plan leaves the existing plan untouched"
else
    bad "a failed twoface-plan changed or removed the existing plan"
fi

# ---- 3. Plans that are not plans, damaged or wrong for the run -------------

awk 'BEGIN { srand(3); n = 3000; print "%%MatrixMarket matrix coordinate real general"
    print n, n, 30000
    for (i = 0; i < 30000; i++) printf "%d %d %.3f\n", int(rand() * n) + 1, int(rand() * n) + 1, rand() - 0.5 }' \
    >"$work/r.mtx"
good=$work/good3.h5
if ! "$PLAN" "$work/r.mtx" -n 3 -o "$good" -q 2>"$work/err" ||
    ! "$PLAN" "$work/r.mtx" -n 4 -o "$work/good4.h5" -q 2>>"$work/err"; then
    bad "cannot plan the test matrix: $(cat "$work/err")"
    finish
fi
exec_checks "control: the intact plan runs" 3 "$good"

exec_fails "plan file missing" 3 "$work/none.h5: cannot open" "$work/none.h5"
exec_fails "plan file is a directory" 3 "is a directory" "$work"
cp "$work/r.mtx" "$work/text.h5"
exec_fails "not an HDF5 file" 3 "text.h5: not an HDF5 file" "$work/text.h5"
"$HELPER" --not-a-plan "$work/other.h5"
exec_fails "an HDF5 file that is not a plan" 3 "other.h5:" "$work/other.h5"
size=$(wc -c <"$good")
head -c $((size / 2)) "$good" >"$work/trunc.h5"
exec_fails "truncated plan ($((size / 2)) of $size bytes)" 3 "trunc.h5: .*damaged" "$work/trunc.h5"
cp "$good" "$work/flip.h5"
"$HELPER" --flip-chunk "$work/flip.h5" local/col 1
exec_fails "flipped byte in a compressed chunk" 3 "parts/local/col', rank 1's slice.*checksum" \
    "$work/flip.h5"
cp "$good" "$work/drop.h5"
"$HELPER" --drop "$work/drop.h5" parts/fetch/colptr
exec_fails "part dataset missing" 3 "parts/fetch/colptr' is missing" "$work/drop.h5"
exec_fails "plan for 4 ranks run on 3" 3 "plan is for 4 ranks, but 3 ranks are running" \
    "$work/good4.h5"
exec_fails "plan for 3 ranks run on 4" 4 "plan is for 3 ranks, but 4 ranks are running" "$good"
"$HELPER" --bad-fingerprint "$good" "$work/fp.h5"
exec_fails "fingerprint does not match the parts" 3 "fp.h5.*fingerprint mismatch" "$work/fp.h5"
# Only rank 2 cannot load its part: ranks 0 and 1 must not wait for it.
cp "$good" "$work/rank2.h5"
"$HELPER" --edit "$work/rank2.h5" local/val 2
exec_fails "only rank 2's part damaged (edited value)" 3 "rank 2's part: checksum mismatch" \
    "$work/rank2.h5"
cp "$work/good4.h5" "$work/rank2of4.h5"
"$HELPER" --flip-chunk "$work/rank2of4.h5" local/col 2
exec_fails "only rank 2's chunk damaged, 4 ranks" 4 "rank 2's slice" "$work/rank2of4.h5"

# ---- 4. B files for --b ------------------------------------------------------

n=3000
"$HELPER" --b "$work/b_good.h5" good $n 8
exec_checks "control: --b with a good B file" 3 "$good" --b "$work/b_good.h5"
exec_fails "B file missing" 3 "b_none.h5" "$good" --b "$work/b_none.h5"
"$HELPER" --b "$work/b_nodset.h5" no-dataset $n 8
exec_fails "B file without dataset /B" 3 "b_nodset.h5.*/B" "$good" --b "$work/b_nodset.h5"
"$HELPER" --b "$work/b_rows.h5" rows $n 8
exec_fails "B with n+1 rows" 3 "b_rows.h5: /B has 3001 rows, the matrix has 3000 columns" \
    "$good" --b "$work/b_rows.h5"
"$HELPER" --b "$work/b_1d.h5" one-d $n 8
exec_fails "B one-dimensional" 3 "b_1d.h5.*2-D" "$good" --b "$work/b_1d.h5"
"$HELPER" --b "$work/b_f64.h5" float64 $n 8
exec_fails "B of float64" 3 "b_f64.h5.*float32" "$good" --b "$work/b_f64.h5"
exec_fails "B width differs from -k" 3 "b_good.h5: /B has 8 columns, -k is 16" \
    "$good" --b "$work/b_good.h5" -k 16
"$HELPER" --b "$work/b_w0.h5" good $n 0
exec_fails "B of width 0, no -k" 3 "b_w0.h5: /B has 0 columns, expected 1..16777216" \
    "$good" --b "$work/b_w0.h5"
# Each node may read its own copy: rank 2's is 16 wide, the others' 8 (no
# -k: each rank took its copy's width for K).
cp "$work/b_good.h5" "$work/b_copy.0.h5" && cp "$work/b_good.h5" "$work/b_copy.1.h5" &&
    "$HELPER" --b "$work/b_copy.2.h5" good $n 16
e2e_per_rank_wrapper "$work/per_rank.sh"
EXEC_SAVED=$EXEC
EXEC="$work/per_rank.sh"
exec_fails "B copies of other widths on the ranks" 3 \
    "b_copy.0.h5: the ranks' copies of /B are 8 to 16 columns wide: every rank must read the same file" \
    "$EXEC_SAVED" "$good" --b "$work/b_copy.@R@.h5"
rm -f "$work/b_copy.2.h5"
exec_fails "B file missing on one rank" 3 \
    "b_copy.2.h5: cannot open for reading (rank 2; 1 of 3 ranks cannot read it)" \
    "$EXEC_SAVED" "$good" --b "$work/b_copy.@R@.h5"
# A named pipe would block the opening rank until a writer came.
cp "$good" "$work/pc.0.h5" && cp "$good" "$work/pc.2.h5" && mkfifo "$work/pc.1.h5"
exec_fails "the plan a named pipe on rank 1 only" 3 \
    "pc.1.h5: a named pipe, not a plan file (rank 1; 1 of 3 ranks cannot read it)" \
    "$EXEC_SAVED" "$work/pc.@R@.h5"
rm -f "$work/pc.0.h5" "$work/pc.1.h5" "$work/pc.2.h5"
cp "$work/b_good.h5" "$work/bp.0.h5" && cp "$work/b_good.h5" "$work/bp.2.h5" &&
    mkfifo "$work/bp.1.h5"
exec_fails "B a named pipe on rank 1 only" 3 \
    "bp.1.h5: a named pipe, not an HDF5 file (rank 1; 1 of 3 ranks cannot read it)" \
    "$EXEC_SAVED" "$good" --b "$work/bp.@R@.h5"
rm -f "$work/bp.0.h5" "$work/bp.1.h5" "$work/bp.2.h5"
EXEC=$EXEC_SAVED

# ---- 4b. A run that would not fit in the node's memory ------------------------
# twoface-exec estimates every strategy's buffers before creating any and
# compares the node's sum with its available memory (TWOFACE_MEM_AVAILABLE_MIB
# stands in for /proc/meminfo): refused in one line instead of the
# out-of-memory killer. allgather at K = 6000 on 3000 rows: about 131 MiB per
# rank (its copy of B, twoface-exec's B and C, the generated B).
export TWOFACE_MEM_AVAILABLE_MIB=100000
exec_checks "control: allgather at K = 6000 with room for it" 3 "$good" --algo allgather -k 6000
export TWOFACE_MEM_AVAILABLE_MIB=300
exec_fails "strategies beyond the node's memory" 3 \
    "the 1 strategy needs about 4[0-9][0-9] MiB on this node (3 ranks), more than the 300 MiB it has available" \
    "$good" --algo allgather -k 6000 -i 1
exec_fails "two strategies beyond the node's memory" 3 \
    "the 2 strategies need about .* MiB on this node (3 ranks), more than the 300 MiB" \
    "$good" --algo allgather,p2p -k 6000 -i 1
export TWOFACE_MEM_AVAILABLE_MIB=12x
exec_fails "TWOFACE_MEM_AVAILABLE_MIB not a number" 3 \
    "TWOFACE_MEM_AVAILABLE_MIB=12x: expected a positive whole number of MiB" \
    "$good" --algo p2p -k 8 -i 1
unset TWOFACE_MEM_AVAILABLE_MIB

# More OpenMP threads than a process can start crashed inside libgomp (the
# first parallel region); every program refuses it before any.
omp_saved=${OMP_NUM_THREADS:-1}
export OMP_NUM_THREADS=100000
plan_fails "OMP_NUM_THREADS=100000 (twoface-plan)" \
    "OMP_NUM_THREADS=100000: at most 4096 OpenMP threads per process" "$work/omp.h5" \
    "$work/r.mtx" -n 2
exec_fails "OMP_NUM_THREADS=100000 (twoface-exec)" 3 \
    "OMP_NUM_THREADS=100000: at most 4096 OpenMP threads per process" "$good" -i 1
export OMP_NUM_THREADS=$omp_saved

# ---- 5. Calibration files ---------------------------------------------------

calib() { # extra lines after a complete file
    {
        echo "# twoface cost-model calibration"
        echo "date = 2026-01-01"
        echo "alpha_coll   = 2.0e-05  # s"
        echo "beta_coll    = 1.0e-10  # s/byte"
        echo "alpha_fetch  = 5.0e-06  # s"
        echo "beta_fetch   = 2.0e-10  # s/byte"
        echo "gamma_local  = 1.0e-09  # s"
        echo "gamma_coll   = 1.0e-09  # s"
        echo "gamma_fetch  = 2.0e-09  # s"
        echo "alpha_sync   = 5.0e-06  # s/peer"
        echo "threads      = 1"
    }
}
calib >"$work/cal_good.txt"
if "$PLAN" "$work/tall.mtx" -n 3 -o "$work/cal.h5" -q --calibration "$work/cal_good.txt" \
    2>"$work/err"; then
    ok "control: a complete calibration file is accepted"
else
    bad "a complete calibration file is rejected: $(cat "$work/err")"
fi
rm -f "$work/cal.h5"
{ calib; echo "alpha_colll = 1e-5"; } >"$work/cal_key.txt"
plan_fails "calibration: unknown key" "cal_key.txt:12: unknown key 'alpha_colll'" \
    "$work/cal.h5" "$work/tall.mtx" -n 3 --calibration "$work/cal_key.txt"
calib | sed 's/^beta_fetch .*/beta_fetch = 2.0e-1O/' >"$work/cal_num.txt"
plan_fails "calibration: bad number" "cal_num.txt:6: 'beta_fetch' needs a finite" \
    "$work/cal.h5" "$work/tall.mtx" -n 3 --calibration "$work/cal_num.txt"
calib | grep -v '^gamma_coll' >"$work/cal_miss.txt"
plan_fails "calibration: missing key" "cal_miss.txt: missing key 'gamma_coll'" \
    "$work/cal.h5" "$work/tall.mtx" -n 3 --calibration "$work/cal_miss.txt"
plan_fails "calibration file missing" "cal_none.txt: cannot open" \
    "$work/cal.h5" "$work/tall.mtx" -n 3 --calibration "$work/cal_none.txt"
# A named FIFO as the matrix: opened more than once, its data was lost at
# the first close and the next open waited for a writer forever.
mkfifo "$work/matrix.fifo"
timeout 60 "$PLAN" "$work/matrix.fifo" -n 3 -o "$work/fifo.h5" -q >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -eq 2 ] && [ "$(nlines "$work/err")" -eq 1 ] &&
    grep -q "^twoface-plan: MATRIX .*matrix.fifo: a named FIFO, which would be opened more than once" \
        "$work/err" && [ -z "$(leftovers "$work/fifo.h5")" ]; then
    ok "matrix a named FIFO (exit $rc): $(cat "$work/err")"
else
    bad "matrix a named FIFO: exit $rc (124: hang), stderr: $(head -c 300 "$work/err")"
fi
cat "$work/tall.mtx" | timeout 60 "$PLAN" /dev/stdin -n 3 -o "$work/stdin.h5" -q \
    >"$work/out" 2>"$work/err" && [ -f "$work/stdin.h5" ] &&
    ok "the matrix piped into /dev/stdin plans" || bad "matrix on /dev/stdin: $(head -c 300 "$work/err")"
# An empty input path said ": cannot open", naming nothing.
plan_fails "empty --calibration path" "^twoface-plan: --calibration: the path is empty: give a file name$" \
    "$work/cal.h5" "$work/tall.mtx" -n 3 --calibration ""
plan_fails "empty MATRIX path" "^twoface-plan: MATRIX: the path is empty: give a file name$" \
    "$work/cal.h5" "" -n 3
exec_fails "empty --b path" 3 "^twoface-exec: --b: the path is empty: give a file name$" "$good" --b ""

# ---- 6. Resources -------------------------------------------------------------

plan_fails "--max-memory 1K: reading refused" "reading needs about .* (--max-memory)" \
    "$work/mem.h5" "$work/r.mtx" -n 3 --max-memory 1K
plan_fails "--max-memory with a bad suffix" "--max-memory '12Q'" "$work/mem.h5" \
    "$work/r.mtx" -n 3 --max-memory 12Q
# The size line after 8 kB of comments: past the header's first look, which
# then reads further (the estimate names the size line's numbers).
{ head -1 "$work/r.mtx"
  awk 'BEGIN { for (i = 0; i < 128; i++) printf "%% comment line %03d of a long header %040d\n", i, 0 }'
  tail -n +2 "$work/r.mtx"; } >"$work/longhead.mtx"
plan_fails "--max-memory 1K, size line after 8 kB of comments" \
    "reading needs about .* (3000 x 3000, 30000 entries" "$work/mem.h5" \
    "$work/longhead.mtx" -n 3 --max-memory 1K
# ranks_fail NAME WANT PATTERN OUT CMD...: CMD on 3 ranks must stop on every
# rank with status WANT, one stderr line in all (rank 0's) containing
# PATTERN, and leave neither OUT nor OUT's temporaries.
ranks_fail() {
    name=$1 want=$2 pattern=$3 out=$4
    shift 4
    mpi_run 3 "$work/run" "$@"
    mrc=$?
    rcs=$(cat "$work/run/rc.0" "$work/run/rc.1" "$work/run/rc.2" 2>/dev/null | tr '\n' ' ')
    lines=$(cat "$work/run/err.0" "$work/run/err.1" "$work/run/err.2" 2>/dev/null | grep -c .)
    if [ $mrc -eq 124 ]; then
        bad "$name: hang (killed after ${MPI_LIMIT} s)"
    elif [ "$rcs" = "$want $want $want " ] && [ "$lines" -eq 1 ] &&
        grep -q -- "$pattern" "$work/run/err.0" && [ -z "$(leftovers "$out")" ]; then
        ok "$name: every rank exits $want: $(cat "$work/run/err.0")"
    else
        bad "$name: exit statuses $rcs, $lines stderr lines: $(cat "$work/run/err.0" \
            "$work/run/err.1" "$work/run/err.2" 2>/dev/null | head -c 400)"
    fi
}

# A limit that only one rank exceeds (nodes of other sizes, or another number
# of ranks per node, give ranks other limits): every rank stops, none waits
# for the others, and rank 0 prints the failing rank's line.
cat >"$work/permem.sh" <<EOF2
#!/bin/sh
[ "\${OMPI_COMM_WORLD_RANK:-0}" = 2 ] && m=1K || m=4G
exec "$PLAN" "\$@" --max-memory \$m
EOF2
ranks_fail "a memory limit exceeded on rank 2 only" 1 \
    "reading needs about .*(--max-memory) (rank 2 of 3)$" "$work/mem3.h5" \
    sh "$work/permem.sh" "$work/r.mtx" -o "$work/mem3.h5" -q
# A setting that only one rank's environment has wrong (OMP_NUM_THREADS set
# per node): each program checks it before its first collective step, and
# the ranks agree, so that none goes on alone into that step and waits.
cat >"$work/omp1.sh" <<'EOF2'
#!/bin/sh
[ "${OMPI_COMM_WORLD_RANK:-0}" = 1 ] && export OMP_NUM_THREADS=100000
exec "$@"
EOF2
omp="OMP_NUM_THREADS=100000: at most 4096 OpenMP threads per process"
ranks_fail "twoface-plan, OMP_NUM_THREADS too large on rank 1 only" 2 "$omp" "$work/omp1.h5" \
    sh "$work/omp1.sh" "$PLAN" "$work/r.mtx" -n 3 -o "$work/omp1.h5" -q
ranks_fail "twoface-exec, OMP_NUM_THREADS too large on rank 1 only" 1 "$omp" "$work/omp1.h5" \
    sh "$work/omp1.sh" "$EXEC" "$good" -k 4
ranks_fail "twoface-calibrate, OMP_NUM_THREADS too large on rank 1 only" 2 "$omp" \
    "$work/omp1.txt" sh "$work/omp1.sh" "$B/bin/twoface-calibrate" --quick -o "$work/omp1.txt"

# Another argument vector on rank 1 only (a wrapper or an MPMD launch): a bad
# option, options that decide the collectives, or a memory limit of its own
# node (which may differ per rank and is not an error).
cat >"$work/arg1.sh" <<'EOF2'
#!/bin/sh
[ "${OMPI_COMM_WORLD_RANK:-0}" = 1 ] && exec "$@" $EXTRA
exec "$@"
EOF2
other="rank 1 was given other options than rank 0"
for extra in "--bogus|unknown option '--bogus'" \
    "--mode fetch|rank 1 was given other planning options than rank 0" \
    "--svg $work/s1.svg|rank 1 was given other planning options than rank 0"; do
    EXTRA=${extra%%|*}
    export EXTRA
    ranks_fail "twoface-plan, $EXTRA on rank 1 only" 2 "${extra#*|}" "$work/arg1.h5" \
        sh "$work/arg1.sh" "$PLAN" "$work/r.mtx" -n 3 -o "$work/arg1.h5" -q
done
EXTRA="-i 3"
ranks_fail "twoface-exec, $EXTRA on rank 1 only" 1 "$other" "$work/arg1.h5" \
    sh "$work/arg1.sh" "$EXEC" "$good" -k 4
EXTRA="--reps 3"
ranks_fail "twoface-calibrate, $EXTRA on rank 1 only" 2 "$other" "$work/arg1.txt" \
    sh "$work/arg1.sh" "$B/bin/twoface-calibrate" --quick -o "$work/arg1.txt"
EXTRA="--max-memory 4G"
export EXTRA
mpi_run 3 "$work/run" sh "$work/arg1.sh" "$PLAN" "$work/r.mtx" -n 3 -o "$work/arg1.h5" -q
mrc=$?
rcs=$(cat "$work/run/rc.0" "$work/run/rc.1" "$work/run/rc.2" 2>/dev/null | tr '\n' ' ')
if [ "$rcs" = "0 0 0 " ] && e2e_h5dump "$B/bin/twoface-h5dump" "$work/arg1.h5" >/dev/null; then
    ok "twoface-plan, --max-memory on rank 1 only (a node's own limit): planned"
else
    bad "twoface-plan, --max-memory on rank 1 only: mpirun $mrc, exit statuses $rcs: $(cat \
        "$work/run/err.0" "$work/run/err.1" "$work/run/err.2" 2>/dev/null | head -c 400)"
fi
unset EXTRA
# A size line asking for ~2^31 rows: its row arrays alone need 48 GiB.
printf '%s\n2147483647 2147483647 1\n1 1 1\n' "$banner" >"$work/huge.mtx"
mem_kib=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo 2>/dev/null)
if [ -n "$mem_kib" ] && [ "$mem_kib" -lt $((40 * 1024 * 1024)) ]; then
    plan_fails "more than the physical memory (2^31 rows declared)" \
        "reading needs about .*(the physical memory); set --max-memory" "$work/mem.h5" \
        "$work/huge.mtx" -n 2
else
    echo "skip - physical memory check: this machine has more than 40 GiB"
fi

# A file-size limit while writing: no file, no temporary, old plan kept.
cp "$work/keep.orig" "$work/fsize.h5"
(
    ulimit -f 8
    exec "$PLAN" "$work/r.mtx" -n 3 -o "$work/fsize.h5" -q
) >/dev/null 2>"$work/err"
rc=$?
if [ $rc -ne 0 ] && [ "$(nlines "$work/err")" -eq 1 ] && grep -q 'fsize.h5' "$work/err" &&
    cmp -s "$work/fsize.h5" "$work/keep.orig" && ! ls "$work"/fsize.h5.tmp.* >/dev/null 2>&1; then
    ok "file-size limit while writing (exit $rc, old plan kept, no temporary): $(cat "$work/err")"
else
    bad "file-size limit: exit $rc, stderr '$(head -c 400 "$work/err")', files: $(ls "$work" | grep fsize)"
fi
rm -f "$work/fsize.h5"
(
    ulimit -f 8
    exec "$PLAN" "$work/r.mtx" -n 3 -o "$work/fsize.h5" -q
) >/dev/null 2>/dev/null
left=$(leftovers "$work/fsize.h5")
if [ -z "$left" ]; then
    ok "file-size limit with no previous plan: nothing left"
else
    bad "file-size limit left $left"
fi

# Signals. ~3M entries take a second or two to read and plan; a high zstd
# level makes the write last long enough to be hit while PLAN.h5.tmp.* exists.
awk 'BEGIN { srand(5); n = 200000; e = 3000000
    print "%%MatrixMarket matrix coordinate pattern general"; print n, n, e
    for (i = 0; i < e; i++) print int(rand() * n) + 1, int(rand() * n) + 1 }' >"$work/big.mtx"
plan_fails "--max-memory between the reading and planning estimates" \
    "planning needs about .* (--max-memory)" "$work/mem.h5" "$work/big.mtx" -n 4 \
    --max-memory 150M

# signal_case NAME SIG WHEN: the signal is sent while reading (a quarter of
# the matrix file read, from /proc/PID/io), while planning (all of it read:
# its size plus the planner's 4 KiB header peek) or while writing (as soon
# as the temporary file exists). It must land before the phase is over.
rchar() { sed -n 's/^rchar: //p' "/proc/$1/io" 2>/dev/null; }
signal_case() {
    name=$1 sig=$2 when=$3
    out=$work/sig.h5
    rm -f "$out" "$out".tmp.*
    cp "$work/keep.orig" "$out"
    size=$(wc -c <"$work/big.mtx")
    case $when in
    read) need=$((size / 4)) ;;
    plan) need=$((size + 4096)) ;;
    *) need= ;;
    esac
    # Background jobs of a non-interactive shell ignore SIGINT, which the
    # program (rightly) leaves ignored: restore the default disposition.
    env --default-signal=INT,TERM "$PLAN" "$work/big.mtx" -n 4 -o "$out" -q --zstd-level 19 \
        2>"$work/sigerr" &
    pid=$!
    hit= i=0
    while [ $i -lt 3000 ] && kill -0 $pid 2>/dev/null; do
        if [ -n "$need" ]; then
            got=$(rchar $pid)
            if [ -n "$got" ] && [ "$got" -ge "$need" ]; then
                ls "$out".tmp.* >/dev/null 2>&1 || hit=1
                break
            fi
        elif ls "$out".tmp.* >/dev/null 2>&1; then
            hit=1
            break
        fi
        sleep 0.01
        i=$((i + 1))
    done
    kill -s "$sig" $pid 2>/dev/null
    wait $pid 2>/dev/null
    rc=$?
    left=$(ls "$out".tmp.* 2>/dev/null)
    if [ -z "$hit" ]; then
        bad "$name: the signal did not land in time (exit $rc)"
    elif [ $rc -eq 0 ]; then
        bad "$name: twoface-plan finished despite SIG$sig"
    elif [ -n "$left" ]; then
        bad "$name: SIG$sig left $left"
    elif ! cmp -s "$out" "$work/keep.orig"; then
        bad "$name: SIG$sig changed or removed the existing plan"
    else
        ok "$name: exit $rc, no temporary file, old plan kept"
    fi
}
signal_case "SIGTERM while reading the matrix" TERM read
signal_case "SIGINT while planning" INT plan
signal_case "SIGTERM while planning" TERM plan
signal_case "SIGINT while writing the plan" INT write
signal_case "SIGTERM while writing the plan" TERM write

# ---- 7. Command lines: one getopt_long style in every program ------------------

exec_fails "exec: unknown option" 2 "^twoface-exec: unknown option '--frob' (--help lists them)$" \
    "$good" --frob
exec_fails "exec: missing value" 2 "^twoface-exec: option '--b' needs a value$" "$good" --b
exec_fails "exec: bad value" 2 "^twoface-exec: -k '0': expected a whole number in 1..16777216$" \
    "$good" -k 0
exec_fails "exec: value given to a flag" 2 "^twoface-exec: option '--check' takes no value$" \
    "$good" --check=yes
exec_fails "exec: no plan" 2 "^twoface-exec: missing PLAN.h5" -i 2
plan_fails "plan: unknown option" "^twoface-plan: unknown option '--frob' (--help lists them)$" \
    "$work/opt.h5" "$work/tall.mtx" -n 3 --frob
plan_fails "plan: bad value" "^twoface-plan: -n 'x': expected a whole number in 1..1048576$" \
    "$work/opt.h5" "$work/tall.mtx" -n x
plan_fails "plan: value given to a flag" "^twoface-plan: option '--explain' takes no value$" \
    "$work/opt.h5" "$work/tall.mtx" -n 3 --explain=yes
"$PLAN" "$work/tall.mtx" -n >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -eq 2 ] && [ "$(nlines "$work/err")" -eq 1 ] &&
    grep -q "^twoface-plan: option '-n' needs a value$" "$work/err"; then
    ok "plan: missing value (exit $rc): $(cat "$work/err")"
else
    bad "plan: missing value: exit $rc, stderr: $(head -c 400 "$work/err")"
fi
CAL=$B/bin/twoface-calibrate
if [ -x "$CAL" ]; then
    mpi_run 1 "$work/run" "$CAL" --threads
    if [ "$(cat "$work/run/rc.0" 2>/dev/null)" = 2 ] && [ "$(nlines "$work/run/err.0")" -eq 1 ] &&
        grep -q "^twoface-calibrate: option '--threads' needs a value$" "$work/run/err.0"; then
        ok "calibrate: missing value: $(cat "$work/run/err.0")"
    else
        bad "calibrate: missing value: $(cat "$work/run/rc.0" "$work/run/err.0" 2>/dev/null | head -c 400)"
    fi
    # --validate names the plan that fails (several may be given).
    EXEC_SAVED=$EXEC
    EXEC=$CAL
    exec_fails "calibrate --validate: plan for other ranks" 2 \
        "^twoface-calibrate: $good: plan is for 3 ranks, but 2 ranks are running" --validate "$good"
    EXEC=$EXEC_SAVED
    mpi_run 1 "$work/run" "$CAL" -o "$work/cal0.txt" -k 32,,128
    if [ "$(cat "$work/run/rc.0" 2>/dev/null)" = 2 ] && [ "$(nlines "$work/run/err.0")" -eq 1 ] &&
        grep -q "^twoface-calibrate: -k '32,,128': empty item in the list" "$work/run/err.0"; then
        ok "calibrate: -k with an empty item: $(cat "$work/run/err.0")"
    else
        bad "calibrate: -k 32,,128: $(cat "$work/run/rc.0" "$work/run/err.0" 2>/dev/null | head -c 400)"
    fi
    mpi_run 1 "$work/run" "$CAL" -o "$work/cal0.txt" --reps 0
    if [ "$(cat "$work/run/rc.0" 2>/dev/null)" = 2 ] && [ "$(nlines "$work/run/err.0")" -eq 1 ] &&
        grep -q "^twoface-calibrate: --reps '0'" "$work/run/err.0" && [ ! -e "$work/cal0.txt" ]; then
        ok "calibrate: --reps 0: $(cat "$work/run/err.0")"
    else
        bad "calibrate: --reps 0: $(cat "$work/run/rc.0" "$work/run/err.0" 2>/dev/null | head -c 400)"
    fi
    # --reps reaches every sweep (each prints its repetitions) and the file
    # it writes is one the planner takes.
    mpi_run 2 "$work/run" "$CAL" -o "$work/cal2.txt" --quick --reps 2 --no-insitu -k 32
    nrep=$(grep -c "[(, ]2 reps, first start to last end" "$work/run/out.0" 2>/dev/null)
    # Every coefficient is written, the overlap a share and the fetch
    # kernel's cached rate measured (the machine's cache size is known).
    ov=$(sed -n 's/^overlap_fetch *= *\([^ ]*\).*/\1/p' "$work/cal2.txt" 2>/dev/null)
    gfc=$(sed -n 's/^gamma_fetch_cached *= *\([^ ]*\).*/\1/p' "$work/cal2.txt" 2>/dev/null)
    cb=$(sed -n 's/^cache_bytes *= *\([^ ]*\).*/\1/p' "$work/cal2.txt" 2>/dev/null)
    if awk -v o="${ov:-x}" -v g="${gfc:-x}" -v c="${cb:-x}" 'BEGIN { exit !(o != "x" && o >= 0 &&
            o <= 1 && g != "x" && c != "x" && (c + 0 == 0 ? g + 0 == 0 : g > 0)) }'; then
        ok "calibrate: overlap_fetch $ov, gamma_fetch_cached $gfc"
    else
        bad "calibrate: overlap_fetch '$ov', gamma_fetch_cached '$gfc' in $(head -c 600 "$work/cal2.txt" 2>/dev/null)"
    fi
    if [ "$(cat "$work/run/rc.0" 2>/dev/null)" = 0 ] && [ "${nrep:-0}" -ge 4 ] &&
        "$PLAN" "$work/tall.mtx" -n 2 -k 32 -o "$work/cal2.h5" -q --calibration "$work/cal2.txt" \
            >"$work/out" 2>"$work/err"; then
        ok "calibrate: --reps 2 in all $nrep sweeps, and the planner reads the result"
    else
        bad "calibrate: --reps 2: rc $(cat "$work/run/rc.0" 2>/dev/null), $nrep sweeps with 2 reps: $(head -c 400 "$work/run/err.0") $(head -c 300 "$work/err")"
    fi
    # With the in-situ step: the executor runs the three synthetic plans, every
    # part's factor is reported, and the corrected file is one the planner takes.
    mpi_run 2 "$work/run" "$CAL" -o "$work/cal3.txt" --quick --reps 2 -k 32
    if [ "$(cat "$work/run/rc.0" 2>/dev/null)" = 0 ] &&
        grep -q "^  per part, summed over ranks" "$work/run/out.0" &&
        grep -q "measured / predicted: local .*, fetch transfer .*, fetch kernel .*, handshake" \
            "$work/run/out.0" &&
        "$PLAN" "$work/tall.mtx" -n 2 -k 32 -o "$work/cal3.h5" -q --calibration "$work/cal3.txt" \
            >"$work/out" 2>"$work/err"; then
        ok "calibrate: the in-situ step reports every part and the planner reads its file"
    else
        bad "calibrate: in-situ: rc $(cat "$work/run/rc.0" 2>/dev/null): $(grep -A1 'in-situ' "$work/run/out.0" 2>/dev/null | head -c 400) $(head -c 400 "$work/run/err.0") $(head -c 300 "$work/err")"
    fi
    # The fetch kernel keeps its fit: the file's gamma_fetch is the fit's
    # (printed with 4 digits), whatever the in-situ step measured for it, and
    # the note (whole: it passes 256 bytes) says so.
    gfit=$(sed -n 's/.*(gamma_fetch\*miss.*: gamma_fetch = \([0-9.e+-]*\) s.*/\1/p' "$work/run/out.0")
    gfile=$(sed -n 's/^gamma_fetch *= *\([0-9.e+-]*\).*/\1/p' "$work/cal3.txt")
    if [ -n "$gfit" ] && [ -n "$gfile" ] &&
        grep -Eq '^note = .*fetch kernel measured / predicted [0-9.]+, not applied\)$' "$work/cal3.txt" &&
        awk -v a="$gfit" -v b="$gfile" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 1e-3 * b) }'; then
        ok "calibrate: the fetch kernel's rate is its fit ($gfile), the in-situ factor only reported"
    else
        bad "calibrate: gamma_fetch fit '$gfit', file '$gfile'; $(grep '^note' "$work/cal3.txt")"
    fi
else
    bad "$CAL is not built: its checks did not run"
fi

finish
