#!/bin/sh
# End to end: one node's transports - peers' rows read in place
# (executor/tf_node_direct.c, TWOFACE_COLL_SHM=direct), copied by the
# collective's receivers (executor/tf_coll_shm.c, copy) - and auto, which
# reads in place or, where ranks share processors, lets the start-up trial
# choose between in place and the copies (or the MPI exchange where few
# nonzeros are remote), against the exchange (off), at
# 1-4 ranks on the shipped Cora graph: the pure collective plan and
# twoface's plan pass --check every way, in float32 and bf16, the collective
# plan's C is bitwise the same, --json and the text report name the
# transport ("direct", "shm", "mpi", or "none" where no rank receives), a
# one-sided component without shared windows falls back to
# the exchange, a component that refuses the B window altogether (osc
# pt2pt under MPI_THREAD_MULTIPLE, osc rdma on one rank) and a bad or
# rank-dependent TWOFACE_COLL_SHM are one-line errors on exit 1 with no
# output.
# Environment (tests/run_tests.sh sets both): TF_SRCDIR, TF_BUILD.
# Last line: "e2e_coll_shm: N passed, M failed"; exit status 1 if M > 0.
E2E_NAME=e2e_coll_shm
. "${TF_SRCDIR:-.}/tests/lib_e2e.sh"
e2e_mpi_env
unset TWOFACE_COLL_SHM TWOFACE_EXCHANGE TWOFACE_COLL_PACK
e2e_cora_tools
run() { # ranks, args...
    np=$1; shift
    timeout 300 mpirun -n "$np" --bind-to none -x TWOFACE_COLL_SHM "$EXEC" "$@"
}
# transport JSON-FILE ALGO: the coll_transport of ALGO's record.
transport() {
    grep "\"algo\": \"$2\"" "$1" | sed -n 's/.*"coll_transport": "\([a-z]*\)".*/\1/p'
}

for np in 1 2 3 4; do
    "$PLAN" "$MATRIX" -n $np -k 32 --mode collective -o "$work/c$np.h5" -q >"$work/plan.log" 2>&1 &&
        "$PLAN" "$MATRIX" -n $np -k 32 -o "$work/t$np.h5" -q >>"$work/plan.log" 2>&1 ||
        { bad "plans at $np ranks: $(head -2 "$work/plan.log")"; continue; }
    # auto reads in place unless ranks x threads exceed the processors;
    # then the start-up trial keeps the copies (Cora: many remote
    # nonzeros; the exchange where few are) or in place (an ERE).
    cpus=$(getconf _NPROCESSORS_ONLN)
    for cm in f32 bf16; do
        want="shm|mpi|direct"
        [ $np -le "$cpus" ] && want=direct
        [ $np -eq 1 ] && want=none
        for x in auto direct copy off; do
            # --warmup 70: as many rounds (so the same last B) whether or
            # not a start-up trial lengthens the warm-up (on a graph this
            # small, 2 + 2 x 32 calls).
            if TWOFACE_COLL_SHM=$x run $np "$work/c$np.h5" --algo collective --comm $cm -k 13 -i 3 \
                --warmup 70 --check --json --c-out "$work/C-$x.h5" >"$work/out-$x.json" \
                2>"$work/err.log" && grep -q '"check_passed": true' "$work/out-$x.json"; then
                ok "$np ranks, collective plan, $cm, TWOFACE_COLL_SHM=$x: --check passed"
            else
                bad "$np ranks, collective plan, $cm, TWOFACE_COLL_SHM=$x: $(head -1 "$work/err.log")"
            fi
        done
        want_direct=direct
        [ $np -eq 1 ] && want_direct=none
        [ $np -eq 1 ] && want_copy=none || want_copy=shm
        [ $np -eq 1 ] && want_off=none || want_off=mpi
        for x in auto:$want direct:$want_direct copy:$want_copy off:$want_off; do
            got=$(transport "$work/out-${x%%:*}.json" collective)
            echo "$got" | grep -Eqx "${x#*:}" &&
                ok "$np ranks, $cm: ${x%%:*} reports coll_transport ${x#*:}" ||
                bad "$np ranks, $cm: ${x%%:*} reports coll_transport '$got', expected ${x#*:}"
        done
        if [ "$want" = "shm|mpi|direct" ]; then
            grep -Eq '"transports": \["(shm|mpi)", "direct"\]' "$work/out-auto.json" &&
                ok "$np ranks, $cm: auto ran the start-up trial between the copies or the exchange and in place" ||
                bad "$np ranks, $cm: auto ran no trial: $(head -c 400 "$work/out-auto.json")"
        fi
        # Read in place nothing travels, so bf16 rounds nothing: C is
        # float32's through the exchange.
        [ $cm = f32 ] && cp "$work/C-off.h5" "$work/C-off-f32.h5"
        for x in auto direct copy; do
            ref=off
            [ "$(transport "$work/out-$x.json" collective)" = direct ] && ref=off-f32
            if h5diff -q "$work/C-$x.h5" "$work/C-$ref.h5" /C /C; then
                ok "$np ranks, collective plan, $cm: C of $x and $ref identical"
            else
                bad "$np ranks, collective plan, $cm: C differs between $x and $ref"
            fi
        done
    done
    want="shm|mpi|direct"
    [ $np -le "$cpus" ] && want=direct
    [ $np -eq 1 ] && want=none
    # twoface beside p2p in one process (the runs the benchmarks make), and
    # the text report's transport.
    if run $np "$work/t$np.h5" "$work/c$np.h5" --algo twoface,collective,p2p -k 32 -i 2 \
        --warmup 1 --check >"$work/out.txt" 2>"$work/err.log" &&
        [ "$(grep -c 'check .*: max scaled error .*passed' "$work/out.txt")" -eq 3 ] &&
        grep -Eq "collective .* messages \(transport ($want)\)" "$work/out.txt"; then
        ok "$np ranks: twoface, collective, p2p interleaved, checks passed, transport $want"
    else
        bad "$np ranks: interleaved run: $(head -1 "$work/err.log") $(grep transport "$work/out.txt" | head -1)"
    fi
done

# bf16 through shared memory with twoface's plan and the collective one in
# one process (3 ranks on this machine's processors: in place, or where
# ranks share processors the other side if the trial keeps it).
if run 3 "$work/t3.h5" "$work/c3.h5" --algo twoface,collective --comm bf16 -k 16 -i 2 --check \
    --json >"$work/out.json" 2>"$work/err.log" &&
    [ "$(grep -c '"check_passed": true' "$work/out.json")" -eq 2 ] &&
    transport "$work/out.json" collective | grep -Eqx 'shm|mpi|direct'; then
    ok "3 ranks, --comm bf16, twoface and collective: shared memory, --check passed"
else
    bad "3 ranks, --comm bf16: $(head -1 "$work/err.log") $(transport "$work/out.json" collective)"
fi

# A one-sided component without shared windows (osc pt2pt, the emulated
# network of calibrate/run.sh and bench/run): auto falls back to the MPI
# exchange instead of aborting, in both precisions, with the job's own
# error handler kept (a later bad argument is still our one-line error).
for cm in f32 bf16; do
    if OMPI_MCA_btl=self,tcp OMPI_MCA_osc=pt2pt run 3 "$work/t3.h5" "$work/c3.h5" \
        --algo twoface,collective --comm $cm -k 16 -i 2 --check --json >"$work/out.json" \
        2>"$work/err.log" && [ "$(grep -c '"check_passed": true' "$work/out.json")" -eq 2 ] &&
        [ "$(transport "$work/out.json" collective)" = mpi ]; then
        ok "3 ranks, osc pt2pt, $cm: no shared window, the MPI exchange, --check passed"
    else
        bad "3 ranks, osc pt2pt, $cm: $(grep -m1 -i error "$work/err.log") $(transport "$work/out.json" collective)"
    fi
done

# A one-sided component that refuses the B window itself (osc pt2pt under
# MPI_THREAD_MULTIPLE, which twoface-exec asks for with two OpenMP threads;
# osc rdma on one rank): one line naming the call and what to change,
# exit 1 on every rank, instead of the communicator's fatal handler.
for case in "2 pt2pt 2 MPI_THREAD_MULTIPLE" "1 rdma 1 OMPI_MCA_osc"; do
    set -- $case
    OMP_NUM_THREADS=$3 OMPI_MCA_osc=$2 run $1 "$work/t$1.h5" -k 8 -i 1 >"$work/out.txt" \
        2>"$work/err.log"
    rc=$?
    if [ $rc -eq 1 ] && [ ! -s "$work/out.txt" ] &&
        [ "$(grep -c '^twoface-exec: ' "$work/err.log")" -eq 1 ] &&
        grep -q "^twoface-exec: .*MPI_Win_allocate (B) failed: .*$4" "$work/err.log" &&
        ! grep -q MPI_ERRORS_ARE_FATAL "$work/err.log"; then
        ok "$1 rank(s), osc $2, $3 thread(s): the refused window is one line, exit 1"
    else
        bad "$1 rank(s), osc $2, $3 thread(s): exit $rc, stderr: $(grep -m2 'twoface-exec\|FATAL' "$work/err.log")"
    fi
done

TWOFACE_COLL_SHM=sometimes run 2 "$work/c2.h5" -k 8 -i 1 >"$work/out.txt" 2>"$work/err.log"
rc=$?
if [ $rc -eq 1 ] && grep -q "^twoface-exec: .*TWOFACE_COLL_SHM=sometimes: expected auto, direct, trial, copy or off$" \
    "$work/err.log" && [ "$(grep -c TWOFACE_COLL_SHM "$work/err.log")" -eq 1 ] &&
    [ ! -s "$work/out.txt" ]; then
    ok "TWOFACE_COLL_SHM=sometimes: one line, exit 1"
else
    bad "TWOFACE_COLL_SHM=sometimes: exit $rc, stderr: $(head -2 "$work/err.log")"
fi

# Ranks choosing differently would allocate different windows: one message.
timeout 300 mpirun --bind-to none -n 1 env TWOFACE_COLL_SHM=auto "$EXEC" "$work/c2.h5" -k 8 -i 1 : \
    -n 1 env TWOFACE_COLL_SHM=off "$EXEC" "$work/c2.h5" -k 8 -i 1 >"$work/out.txt" 2>"$work/err.log"
rc=$?
if [ $rc -eq 1 ] && grep -q "^twoface-exec: .*TWOFACE_COLL_SHM differs between ranks" "$work/err.log" &&
    [ "$(grep -c TWOFACE_COLL_SHM "$work/err.log")" -eq 1 ]; then
    ok "different TWOFACE_COLL_SHM on two ranks: one line, exit 1"
else
    bad "different TWOFACE_COLL_SHM on two ranks: exit $rc, stderr: $(head -2 "$work/err.log")"
fi
finish
