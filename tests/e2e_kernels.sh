#!/bin/sh
# End to end: twoface-exec runs and reports the kernel variant TF_KERNEL asks
# for (every variant the CPU has, by its /proc/cpuinfo flags), in --json and
# in the text report, with C checked against the serial reference at 3 ranks
# and an odd K (the kernels' scalar tails); "auto" reports the CPU's best; a
# name that is unknown, or that the CPU lacks, fails on every rank with one
# message naming TF_KERNEL (docs/executor.md, "Kernels"). Non-temporal
# stores of C (TWOFACE_STREAM=on, K = 32 so that rows fill cache lines) give
# bitwise the C of ordinary ones, in twoface and in p2p, in every variant,
# and with two thread groups (a fetch plan: the fetch group's sums are merged
# into the streamed C; its accumulators add runs in the order the gets land,
# which differs from run to run, so there the two Cs agree within 1e-3 of
# values up to about 100 and both pass --check); a bad TWOFACE_STREAM fails
# on every rank with one line.
# Environment (tests/run_tests.sh sets both): TF_SRCDIR, TF_BUILD.
# Last line: "e2e_kernels: N passed, M failed"; exit status 1 if M > 0.
E2E_NAME=e2e_kernels
. "${TF_SRCDIR:-.}/tests/lib_e2e.sh"
e2e_mpi_env
unset TF_KERNEL
e2e_cora_tools
NP=3
"$PLAN" "$MATRIX" -n $NP -k 33 -o "$work/plan.h5" -q >"$work/plan.log" 2>&1 ||
    { bad "plan: $(head -2 "$work/plan.log")"; finish; }
exec_run() { # TF_KERNEL value, args...
    v=$1; shift
    TF_KERNEL=$v timeout 300 mpirun -n $NP --bind-to none "$EXEC" "$work/plan.h5" -k 33 -i 2 \
        --warmup 1 --check "$@"
}

# What the CPU has, independently of the executor's detection.
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
has() { case " $flags " in *" $1 "*) return 0 ;; esac; return 1; }
avail="baseline"
if [ "$(uname -m)" = x86_64 ]; then
    has avx2 && has fma && avail="$avail avx2"
    has avx512f && has avx512vl && has avx2 && has fma && avail="$avail avx512"
fi
best=${avail##* }
echo "# CPU runs: $avail"

for v in $avail; do
    if exec_run $v --json >"$work/out" 2>"$work/err"; then
        n=$(grep -c '"algo"' "$work/out")
        nk=$(grep -c "\"kernel\": \"$v\"" "$work/out")
        if [ "$n" -ge 1 ] && [ "$nk" -eq "$n" ] && ! grep -q '"check_passed": false' "$work/out" &&
            grep -q '"check_passed": true' "$work/out"; then
            ok "TF_KERNEL=$v: --json reports kernel $v, C checked ($n records)"
        else
            bad "TF_KERNEL=$v: --json: $(head -c 400 "$work/out")"
        fi
    else
        bad "TF_KERNEL=$v --json failed: $(head -3 "$work/err")"
    fi
    if exec_run $v >"$work/out" 2>"$work/err" && grep -q "^kernels: $v\$" "$work/out"; then
        ok "TF_KERNEL=$v: the report says 'kernels: $v'"
    else
        bad "TF_KERNEL=$v: report: $(head -c 400 "$work/out") $(head -3 "$work/err")"
    fi
done

for v in auto ""; do
    if exec_run "$v" --json >"$work/out" 2>"$work/err" &&
        grep -q "\"kernel\": \"$best\"" "$work/out"; then
        ok "TF_KERNEL='$v': the CPU's best, $best"
    else
        bad "TF_KERNEL='$v': expected $best: $(head -c 300 "$work/out") $(head -3 "$work/err")"
    fi
done

# streamed NAME ALGO NP MPIRUN_ARGS...: the run with TWOFACE_STREAM=off and
# with =on both pass --check for ALGO and write bitwise the same C (within
# STREAM_DELTA where set: h5diff -d).
streamed() {
    name=$1 algo=$2 np=$3
    shift 3
    for st in off on; do
        TWOFACE_STREAM=$st timeout 300 mpirun -n "$np" --bind-to none -x TWOFACE_STREAM "$@" \
            -i 2 --warmup 1 --check --c-out "$work/C-$st.h5" >"$work/out-$st" 2>"$work/err-$st"
        echo $? >"$work/rc-$st"
    done
    if [ "$(cat "$work/rc-off")$(cat "$work/rc-on")" != 00 ]; then
        bad "$name, TWOFACE_STREAM: $(head -3 "$work/err-off" "$work/err-on")"
    elif h5diff -q ${STREAM_DELTA:+-d "$STREAM_DELTA"} "$work/C-off.h5" "$work/C-on.h5" /C /C &&
        grep -q "check $algo: .*passed" "$work/out-on"; then
        same="bitwise the same C"
        [ -n "${STREAM_DELTA:-}" ] && same="C within $STREAM_DELTA of ordinary stores'"
        ok "$name: streamed stores give $same, checked"
    else
        bad "$name: streamed C differs: $(head -c 300 "$work/out-on")"
    fi
}
"$PLAN" "$MATRIX" -n $NP -k 32 -o "$work/plan32.h5" -q >"$work/plan.log" 2>&1 ||
    { bad "plan K=32: $(head -2 "$work/plan.log")"; finish; }
for v in $avail; do
    for algo in twoface p2p; do
        streamed "TF_KERNEL=$v $algo" $algo $NP -x TF_KERNEL=$v "$EXEC" "$work/plan32.h5" \
            -k 32 --algo $algo
    done
done
# Two thread groups (the fetch group's accumulators are merged into C after
# the collective group streamed it): a fetch plan, 2 threads per rank.
"$PLAN" "$MATRIX" -n 2 -k 32 --mode fetch -o "$work/fetch32.h5" -q >"$work/plan.log" 2>&1 ||
    { bad "plan --mode fetch: $(head -2 "$work/plan.log")"; finish; }
STREAM_DELTA=1e-3 streamed "two thread groups, fetch plan" fetch 2 -x OMP_NUM_THREADS=2 "$EXEC" \
    "$work/fetch32.h5" -k 32 --threads 2 --threads-fetch 1
TWOFACE_STREAM=sometimes timeout 300 mpirun -n $NP --bind-to none -x TWOFACE_STREAM "$EXEC" \
    "$work/plan32.h5" -k 32 -i 2 >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(grep -c TWOFACE_STREAM "$work/err")" -eq 1 ] &&
    grep -q "TWOFACE_STREAM=sometimes: expected auto, on or off" "$work/err"; then
    ok "TWOFACE_STREAM=sometimes (exit $rc): $(grep TWOFACE_STREAM "$work/err")"
else
    bad "TWOFACE_STREAM=sometimes: exit $rc: $(head -c 600 "$work/err")"
fi

# fails NAME VALUE PATTERN: non-zero exit, one stderr line with PATTERN.
fails() {
    exec_run "$2" --json >"$work/out" 2>"$work/err"
    rc=$?
    n=$(grep -c "TF_KERNEL" "$work/err")
    if [ $rc -eq 0 ] || [ $rc -eq 124 ]; then
        bad "$1: exit $rc"
    elif [ "$n" -ne 1 ] || ! grep -q -- "$3" "$work/err"; then
        bad "$1: expected one TF_KERNEL line with '$3', got: $(head -c 600 "$work/err")"
    elif grep -q '"algo"' "$work/out"; then
        bad "$1: printed results"
    else
        ok "$1 (exit $rc): $(grep TF_KERNEL "$work/err")"
    fi
}
fails "unknown variant" sse9 "kernel variant 'sse9' unknown"
for v in avx2 avx512; do
    case " $avail " in
    *" $v "*) ;;
    *) [ "$(uname -m)" = x86_64 ] && fails "variant the CPU lacks" $v "cannot run it" ;;
    esac
done
finish
