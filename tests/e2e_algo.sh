#!/bin/sh
# End to end: twoface-exec --algo runs every strategy interleaved in one
# process on the shipped Cora graph at 1-4 ranks (plans made with each
# --mode), every C agrees with the first algorithm's and with the serial
# reference, and the JSON has one object per algorithm; plus the error cases
# of the plan/algorithm matching (docs/baselines.md, "Side by side").
# Environment (tests/run_tests.sh sets both): TF_SRCDIR, TF_BUILD.
# Last line: "e2e_algo: N passed, M failed"; exit status 1 if M > 0.
E2E_NAME=e2e_algo
. "${TF_SRCDIR:-.}/tests/lib_e2e.sh"
e2e_mpi_env
e2e_cora_tools
# The collective copies its rows: the start-up trials checked here are
# between a plan and its runner-up, which reading peers' rows in place
# (the default on one node) makes moot; e2e_coll_shm.sh runs that.
export TWOFACE_COLL_SHM=copy
run() { # ranks, args...
    np=$1; shift
    timeout 300 mpirun -n "$np" --bind-to none -x TWOFACE_COLL_SHM "$EXEC" "$@"
}
ALL=twoface,fetch,collective,allgather,shift,p2p

for np in 1 2 3 4; do
    ok_plans=1
    for mode in twoface fetch collective; do
        "$PLAN" "$MATRIX" -n $np -k 32 --mode $mode -o "$work/p$np-$mode.h5" -q \
            >"$work/plan.log" 2>&1 || { ok_plans=0; bad "plan $mode at $np ranks: $(head -2 "$work/plan.log")"; }
    done
    [ $ok_plans = 1 ] || continue
    # Divisors of np up to 4: the shift entries a bare `shift` expands to.
    nshift=0
    for c in 1 2 3 4; do [ $c -le $np ] && [ $((np % c)) -eq 0 ] && nshift=$((nshift + 1)); done
    want=$((5 + nshift))
    if run $np "$work/p$np-twoface.h5" "$work/p$np-fetch.h5" "$work/p$np-collective.h5" \
        --algo $ALL -k 32 -i 4 --warmup 1 --check --json >"$work/out.json" 2>"$work/err.log"; then
        ok "$np ranks: --algo $ALL --check exits 0"
    else
        bad "$np ranks: --algo $ALL failed: $(grep -v '^-\|^ \|^$\|Primary\|mpirun\|Process\|Exit code\|a non-zero' "$work/err.log" | head -3)"
        continue
    fi
    n=$(grep -c '^{"algo"' "$work/out.json")
    [ "$n" -eq "$want" ] && ok "$np ranks: $n JSON objects (5 + $nshift shift entries)" ||
        bad "$np ranks: $n JSON objects, expected $want"
    # Every entry agrees with the first and with the reference.
    if awk -v tol=1e-5 '
        /^\{"algo"/ {
            d = $0; sub(/.*"max_diff_vs_first": /, "", d); sub(/[,}].*/, "", d)
            e = $0; sub(/.*"max_error": /, "", e); sub(/[,}].*/, "", e)
            if (!(d + 0 <= tol) || !(e + 0 <= tol) || $0 !~ /"check_passed": true/) bad++
            if ($0 !~ /"max_diff_vs_first": [0-9]/ || $0 !~ /"max_error": [0-9]/) bad++
            if ($0 !~ /"ratio_to_twoface": [0-9]/) bad++
            if ($0 !~ /"b_write_s": [0-9]/) bad++
            if ($0 !~ /"bytes_per_rank": \{"max": [0-9]+, "mean": [0-9.e+]+\}/) bad++
            if ($0 ~ /"algo": "shift/ && $0 !~ /"replication": [0-9]/) bad++
            n++
        }
        END { exit !(n > 0 && bad == 0) }' "$work/out.json"; then
        ok "$np ranks: all agree (scaled difference and reference error <= 1e-5), fields present"
    else
        bad "$np ranks: disagreement or missing fields: $(head -c 600 "$work/out.json")"
    fi
    # Start-up trial: with the default coefficients Cora's plan at K = 32 is
    # one pure plan with the other predicted within 2x at 2-4 ranks (which
    # one is planned depends on the coefficients), so it carries that
    # runner-up; twoface then reports the trial and warms up over its 66
    # calls (Cora is small: 32 timed calls per plan by default,
    # context/tf_select.c); the plans made with --mode carry none.
    if [ $np -ge 2 ]; then
        if awk '
            /^\{"algo": "twoface"/ {
                w = $0; sub(/.*"warmup": /, "", w); sub(/[,}].*/, "", w)
                if (w + 0 < 66 || $0 !~ /"selection": \{"planned": "(fetch", "alternative": "collective|collective", "alternative": "fetch)", "transports": \["(shm|none)", "(shm|none)"\], "chose": "(planned|alternative)", "trial_calls": 32, "trial_median_s": \[[0-9]/) bad++
                t++
            }
            /^\{"algo": "(fetch|collective)"/ && $0 !~ /"selection": null/ { bad++ }
            END { exit !(t == 1 && bad == 0) }' "$work/out.json"; then
            ok "$np ranks: twoface ran its start-up trial (one pure plan against the other as runner-up) within the warm-up"
        else
            bad "$np ranks: start-up trial not reported as expected: $(grep '"algo": "twoface"' "$work/out.json" | head -c 600)"
        fi
    fi
    # Bytes: allgather moves (n - n_p) rows per rank; with one rank nothing moves.
    if [ $np -eq 1 ]; then
        grep -q '"algo": "p2p".*"bytes_per_rank": {"max": 0,' "$work/out.json" &&
            ok "1 rank: p2p moves no bytes" || bad "1 rank: p2p reports traffic"
    fi
done

# --- error cases (4 ranks) ---
expect_error() { # description, expected message part, args...
    d=$1; msg=$2; shift 2
    if run 4 "$@" >"$work/out.txt" 2>"$work/err.txt"; then
        bad "$d: exited 0"
    elif grep -q -- "$msg" "$work/err.txt"; then
        ok "$d: \"$(grep -m1 -- "$msg" "$work/err.txt")\""
    else
        bad "$d: message not found ($msg): $(head -3 "$work/err.txt")"
    fi
}
if [ -f "$work/p4-twoface.h5" ]; then
    expect_error "--algo fetch without a fetch plan" \
        "--algo fetch needs a plan made with --mode fetch" \
        "$work/p4-twoface.h5" --algo twoface,fetch -i 1
    "$PLAN" "$MATRIX" -n 4 -k 32 --mode fetch --partition rows -o "$work/p4-nnz.h5" -q
    expect_error "plans with different partitions" "different partitions" \
        "$work/p4-twoface.h5" "$work/p4-nnz.h5" --algo twoface,fetch -i 1
    expect_error "--replication 3 at 4 ranks" "does not divide 4 ranks" \
        "$work/p4-twoface.h5" --algo shift --replication 3 -i 1
    expect_error "--replication 0" "not a positive integer" \
        "$work/p4-twoface.h5" --algo shift --replication 0 -i 1
    expect_error "--replication 1,,2" "expected a list of integers" \
        "$work/p4-twoface.h5" --algo shift --replication 1,,2 -i 1
    expect_error "--replication without shift" "shift" \
        "$work/p4-twoface.h5" --algo twoface,p2p --replication 2 -i 1
    expect_error "unknown algorithm" "unknown algorithm 'spmv'" \
        "$work/p4-twoface.h5" --algo twoface,spmv -i 1
    expect_error "two plans of one mode" "both made with --mode twoface" \
        "$work/p4-twoface.h5" "$work/p4-twoface.h5" -i 1
    "$PLAN" "$MATRIX" -n 2 -k 32 -o "$work/p2-only.h5" -q
    expect_error "plan for another rank count" "plan is for 2 ranks" \
        "$work/p2-only.h5" --algo allgather -i 1
    # No runner-up: --no-alternative at planning, --select-calls -1 at run time.
    "$PLAN" "$MATRIX" -n 4 -k 32 --no-alternative --explain -o "$work/p4-noalt.h5" -q \
        >"$work/explain.txt" 2>&1
    "$PLAN" "$MATRIX" -n 4 -k 32 --explain -o "$work/p4-again.h5" -q >"$work/p4-explain.txt" 2>&1
    if grep -q "no runner-up carried" "$work/explain.txt" &&
        grep -Eq "runner-up carried: (collective|fetch)" "$work/p4-explain.txt"; then
        ok "--explain: runner-up carried by default, none with --no-alternative"
    else
        bad "--explain: $(tail -1 "$work/explain.txt") / $(tail -1 "$work/p4-explain.txt")"
    fi
    for v in noalt select; do
        if [ $v = noalt ]; then set -- "$work/p4-noalt.h5"; else set -- "$work/p4-twoface.h5" --select-calls -1; fi
        if run 4 "$@" -k 16 -i 2 --warmup 1 --json >"$work/sel.json" 2>"$work/err.txt" &&
            grep -q '"selection": null' "$work/sel.json" && grep -q '"warmup": 1,' "$work/sel.json"; then
            ok "no trial ($v): selection null, warm-up as asked"
        else
            bad "no trial ($v): $(cat "$work/sel.json" "$work/err.txt" | head -c 600)"
        fi
    done
    expect_error "--select-calls -2" "--select-calls '-2': expected a whole number in -1..1000" \
        "$work/p4-twoface.h5" --select-calls -2 -i 1
    # --replication list: one entry each, named shift(c=C).
    if run 4 "$work/p4-twoface.h5" --algo shift,twoface --replication 4,1 -k 16 -i 2 --json \
        >"$work/rep.json" 2>"$work/err.txt" &&
        [ "$(sed -n 's/^{"algo": "\([^"]*\)".*/\1/p' "$work/rep.json" | tr '\n' ' ')" = "shift(c=4) shift(c=1) twoface " ]; then
        ok "--replication 4,1: entries shift(c=4) shift(c=1) in order"
    else
        bad "--replication 4,1: $(cat "$work/rep.json" "$work/err.txt" | head -5)"
    fi
fi
finish
