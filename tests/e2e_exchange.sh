#!/bin/sh
# End to end: the neighbour exchange's fallback (executor/tf_exchange.h,
# TWOFACE_EXCHANGE=alltoall: MPI_Ialltoall{v,w} instead of the neighbourhood
# collectives, what the SMPI build runs) at 1-4 ranks on the shipped Cora
# graph: every strategy that exchanges (twoface's collective half, the pure
# collective plan, p2p) passes --check against the serial reference, its C
# is bitwise the C of the default exchange (same blocks, same order of
# accumulation), and a bad TWOFACE_EXCHANGE is a one-line error on exit 1.
# Likewise the collective's send side packed, zero-copy or chosen per
# destination (TWOFACE_COLL_PACK=always|never|auto, executor/tf_collective.c),
# and one rank packing while the other does not. All of it on the MPI
# exchange: the shared-memory transport is off (tests/e2e_coll_shm.sh).
# Environment (tests/run_tests.sh sets both): TF_SRCDIR, TF_BUILD.
# Last line: "e2e_exchange: N passed, M failed"; exit status 1 if M > 0.
E2E_NAME=e2e_exchange
. "${TF_SRCDIR:-.}/tests/lib_e2e.sh"
e2e_mpi_env
unset TWOFACE_EXCHANGE TWOFACE_COLL_PACK
export TWOFACE_COLL_SHM=off
e2e_cora_tools
run() { # ranks, args...
    np=$1; shift
    timeout 300 mpirun -n "$np" --bind-to none -x TWOFACE_EXCHANGE -x TWOFACE_COLL_PACK -x TWOFACE_COLL_SHM \
        "$EXEC" "$@"
}

for np in 1 2 3 4; do
    "$PLAN" "$MATRIX" -n $np -k 32 --mode collective -o "$work/c$np.h5" -q >"$work/plan.log" 2>&1 &&
        "$PLAN" "$MATRIX" -n $np -k 32 -o "$work/t$np.h5" -q >>"$work/plan.log" 2>&1 ||
        { bad "plans at $np ranks: $(head -2 "$work/plan.log")"; continue; }
    for algo in collective p2p; do
        plan=$work/c$np.h5
        for x in neighbor alltoall; do
            if TWOFACE_EXCHANGE=$x run $np "$plan" --algo $algo -k 24 -i 2 --warmup 1 --check \
                --c-out "$work/C-$algo-$x.h5" >"$work/out-$x.txt" 2>"$work/err.log"; then
                grep -q "check $algo: .*passed" "$work/out-$x.txt" &&
                    ok "$np ranks, $algo, $x exchange: --check passed" ||
                    bad "$np ranks, $algo, $x exchange: no passing check line"
            else
                bad "$np ranks, $algo, $x exchange: exit $? ($(head -1 "$work/err.log"))"
            fi
        done
        if h5diff -q "$work/C-$algo-neighbor.h5" "$work/C-$algo-alltoall.h5" /C /C; then
            ok "$np ranks, $algo: C of both exchanges identical"
        else
            bad "$np ranks, $algo: C differs between the exchanges"
        fi
    done
    # The collective's send side packed (every destination copied into one
    # buffer, plain counts), zero-copy (a datatype over B) or chosen per
    # destination (auto): the same rows land in the same places, so C is
    # bitwise the same, on both exchanges.
    for x in neighbor alltoall; do
        for pk in always never auto; do
            if TWOFACE_EXCHANGE=$x TWOFACE_COLL_PACK=$pk run $np "$work/c$np.h5" --algo collective \
                -k 24 -i 2 --warmup 1 --check --c-out "$work/C-pack-$pk.h5" \
                >"$work/out-$pk.txt" 2>"$work/err.log" &&
                grep -q "check collective: .*passed" "$work/out-$pk.txt"; then
                ok "$np ranks, $x exchange, TWOFACE_COLL_PACK=$pk: --check passed"
            else
                bad "$np ranks, $x exchange, TWOFACE_COLL_PACK=$pk: $(head -1 "$work/err.log")"
            fi
        done
        if h5diff -q "$work/C-pack-always.h5" "$work/C-pack-never.h5" /C /C &&
            h5diff -q "$work/C-pack-auto.h5" "$work/C-pack-never.h5" /C /C; then
            ok "$np ranks, $x exchange: C of the packed, zero-copy and mixed sends identical"
        else
            bad "$np ranks, $x exchange: C differs between the packed, zero-copy and mixed sends"
        fi
    done
    if TWOFACE_EXCHANGE=alltoall run $np "$work/t$np.h5" "$work/c$np.h5" \
        --algo twoface,collective,p2p -k 32 -i 2 --warmup 1 --check >"$work/out.txt" 2>"$work/err.log" &&
        [ "$(grep -c 'check .*: max scaled error .*passed' "$work/out.txt")" -eq 3 ]; then
        ok "$np ranks: twoface, collective, p2p interleaved on the fallback, all checks passed"
    else
        bad "$np ranks: interleaved run on the fallback failed: $(head -1 "$work/err.log")"
    fi
done

# Ranks in different modes would wait in different collectives: they must
# stop with one message instead (and this shows the variable is read).
timeout 300 mpirun --bind-to none -n 1 env TWOFACE_EXCHANGE=neighbor "$EXEC" "$work/c2.h5" -k 8 -i 1 : \
    -n 1 env TWOFACE_EXCHANGE=alltoall "$EXEC" "$work/c2.h5" -k 8 -i 1 >"$work/out.txt" 2>"$work/err.log"
rc=$?
if [ $rc -eq 1 ] && grep -q "^twoface-exec: .*TWOFACE_EXCHANGE differs between ranks" "$work/err.log"; then
    ok "different TWOFACE_EXCHANGE on two ranks: one line, exit 1"
else
    bad "different TWOFACE_EXCHANGE on two ranks: exit $rc, stderr: $(head -2 "$work/err.log")"
fi

# The send form is each rank's own: one rank packing, the other not, still
# exchanges correctly.
timeout 300 mpirun --bind-to none -n 1 env TWOFACE_COLL_PACK=always "$EXEC" "$work/c2.h5" \
    --algo collective -k 24 -i 2 --check : \
    -n 1 env TWOFACE_COLL_PACK=never "$EXEC" "$work/c2.h5" --algo collective -k 24 -i 2 \
    --check >"$work/out.txt" 2>"$work/err.log"
rc=$?
if [ $rc -eq 0 ] && grep -q "check collective: .*passed" "$work/out.txt"; then
    ok "packed on one rank, zero-copy on the other: --check passed"
else
    bad "packed on one rank, zero-copy on the other: exit $rc, stderr: $(head -2 "$work/err.log")"
fi

TWOFACE_COLL_PACK=sometimes run 2 "$work/c2.h5" -k 8 -i 1 >"$work/out.txt" 2>"$work/err.log"
rc=$?
if [ $rc -eq 1 ] && grep -q "^twoface-exec: .*TWOFACE_COLL_PACK=sometimes: expected auto, always or never$" \
    "$work/err.log" && [ "$(grep -c TWOFACE_COLL_PACK "$work/err.log")" -eq 1 ] && [ ! -s "$work/out.txt" ]; then
    ok "TWOFACE_COLL_PACK=sometimes: one line, exit 1"
else
    bad "TWOFACE_COLL_PACK=sometimes: exit $rc, stderr: $(head -2 "$work/err.log")"
fi

# A bad value: every rank stops with the same one-line message, exit 1.
TWOFACE_EXCHANGE=bogus run 3 "$work/c3.h5" -k 8 -i 1 >"$work/out.txt" 2>"$work/err.log"
rc=$?
if [ $rc -eq 1 ] && grep -q "^twoface-exec: .*TWOFACE_EXCHANGE=bogus: expected neighbor or alltoall$" \
    "$work/err.log" && [ "$(grep -c TWOFACE_EXCHANGE "$work/err.log")" -eq 1 ]; then
    ok "TWOFACE_EXCHANGE=bogus: one line, exit 1"
else
    bad "TWOFACE_EXCHANGE=bogus: exit $rc, stderr: $(head -2 "$work/err.log")"
fi
finish
