#!/bin/sh
# End to end: B rows travelling as bfloat16. twoface-plan --comm bf16
# records the choice (h5dump, --explain), twoface-exec follows it by
# default and --comm overrides it, every strategy passes --check with the
# bf16 tolerance (1e-5 + 2^-8) and reports the precision, the bytes received
# exactly halve against float32 (JSON), and bad values are one-line errors
# (docs/executor.md, "Precision of what travels"). Shipped Cora graph, 2
# and 4 ranks.
# Environment (tests/run_tests.sh sets both): TF_SRCDIR, TF_BUILD.
# Last line: "e2e_bf16: N passed, M failed"; exit status 1 if M > 0.
E2E_NAME=e2e_bf16
. "${TF_SRCDIR:-.}/tests/lib_e2e.sh"
e2e_mpi_env
e2e_cora_tools
H5DUMP=$B/bin/twoface-h5dump
run() { # ranks, args...
    np=$1; shift
    timeout 300 mpirun -n "$np" --bind-to none "$EXEC" "$@"
}
# A JSON field of the record of one algorithm: file, algo, key (number or string).
field() {
    grep "^{\"algo\": \"$2\"" "$1" | head -1 | sed -e "s/.*\"$3\": //" -e 's/[,}].*//' -e 's/"//g'
}
bytes_total() {
    grep "^{\"algo\": \"$2\"" "$1" | head -1 | sed -e 's/.*"bytes_received": {[^}]*"total": //' -e 's/[,}].*//'
}

"$PLAN" "$MATRIX" -n 4 -k 32 --comm bf16 -o "$work/bf.h5" --explain >"$work/explain.txt" 2>"$work/plan.log" &&
    ok "twoface-plan --comm bf16" || bad "twoface-plan --comm bf16: $(head -2 "$work/plan.log")"
grep -q '^comm: bf16 (B rows travel as bfloat16' "$work/explain.txt" &&
    ok "--explain names bf16 and its prediction" || bad "--explain: no comm line: $(grep comm "$work/explain.txt")"
grep -q 'comm bf16' "$work/plan.log" && ok "the summary names comm bf16" || bad "summary: $(cat "$work/plan.log")"
"$PLAN" "$MATRIX" -n 4 -k 32 -o "$work/f.h5" -q 2>"$work/plan.log" || bad "plan f32: $(head -2 "$work/plan.log")"
if [ -x "$H5DUMP" ]; then
    "$H5DUMP" -a /comm "$work/bf.h5" 2>&1 | grep -q '"bf16"' && ok "h5dump: /comm = bf16" ||
        bad "h5dump -a /comm: $("$H5DUMP" -a /comm "$work/bf.h5" 2>&1 | head -5)"
    "$H5DUMP" -a /format_version "$work/bf.h5" 2>&1 | grep -q '3, 3' && ok "format version 3.3" ||
        bad "format_version: $("$H5DUMP" -a /format_version "$work/bf.h5" 2>&1 | grep -A2 DATA)"
else
    bad "$H5DUMP is not built: the plan's attributes are unchecked"
fi
if "$PLAN" "$MATRIX" -n 4 --comm fp8 -o "$work/x.h5" -q 2>"$work/err.log"; then
    bad "twoface-plan --comm fp8 accepted"
else
    [ "$(wc -l <"$work/err.log")" -eq 1 ] && grep -q "expected f32 or bf16" "$work/err.log" &&
        [ ! -e "$work/x.h5" ] && ok "twoface-plan --comm fp8: one-line error, no file" ||
        bad "twoface-plan --comm fp8: $(cat "$work/err.log")"
fi

ALL=twoface,allgather,shift,p2p
for np in 2 4; do
    "$PLAN" "$MATRIX" -n $np -k 32 --comm bf16 -o "$work/bf$np.h5" -q 2>/dev/null
    "$PLAN" "$MATRIX" -n $np -k 32 -o "$work/f$np.h5" -q 2>/dev/null
    # The plan's choice by default, for every strategy. The byte counts
    # compared below are of rows that move: the copies, not rows read in
    # place (TWOFACE_COLL_SHM's default on one node where the ranks fit
    # the processors), which read float32 in both precisions.
    if TWOFACE_COLL_SHM=copy run $np "$work/bf$np.h5" --algo $ALL -k 32 -i 2 --warmup 1 --check --json \
        --select-calls -1 >"$work/bf.json" 2>"$work/err.log"; then
        ok "$np ranks: bf16 plan, --algo $ALL --check exits 0"
    else
        bad "$np ranks: bf16 plan failed: $(grep -v '^-\|^ \|^$\|Primary\|mpirun\|Process\|Exit code\|a non-zero' "$work/err.log" | head -3)"
        continue
    fi
    nbf=$(grep -c '"comm": "bf16"' "$work/bf.json")
    [ "$nbf" -ge 4 ] && ok "$np ranks: every strategy reports comm bf16" || bad "$np ranks: $nbf records say bf16"
    tol=$(field "$work/bf.json" twoface tolerance)
    awk -v t="$tol" 'BEGIN { exit !(t > 0.0039 && t < 0.0040) }' &&
        ok "$np ranks: tolerance $tol = 1e-5 + 2^-8" || bad "$np ranks: tolerance $tol"
    # --comm f32 overrides the plan; the same plan f32 by default.
    TWOFACE_COLL_SHM=copy run $np "$work/bf$np.h5" --comm f32 --algo twoface,p2p -k 32 -i 2 --warmup 1 --check --json \
        --select-calls -1 >"$work/f.json" 2>"$work/err.log" || bad "$np ranks: --comm f32 failed"
    [ "$(field "$work/f.json" twoface comm)" = f32 ] && ok "$np ranks: --comm f32 overrides the plan" ||
        bad "$np ranks: --comm f32: $(field "$work/f.json" twoface comm)"
    ftol=$(field "$work/f.json" twoface tolerance)
    [ "$ftol" = 1e-05 ] && ok "$np ranks: float32 tolerance stays 1e-5" || bad "$np ranks: f32 tolerance $ftol"
    for algo in twoface p2p; do
        b16=$(bytes_total "$work/bf.json" $algo)
        b32=$(bytes_total "$work/f.json" $algo)
        [ -n "$b32" ] && [ "$b32" -gt 0 ] && [ $((b16 * 2)) -eq "$b32" ] &&
            ok "$np ranks: $algo receives exactly half the bytes ($b16 vs $b32)" ||
            bad "$np ranks: $algo bytes $b16 (bf16) vs $b32 (f32)"
    done
    # Both precisions interleaved in one process: two records per algorithm.
    TWOFACE_COLL_SHM=copy run $np "$work/f$np.h5" --comm f32,bf16 --algo twoface,p2p -k 32 -i 2 --warmup 1 --check \
        --json --select-calls -1 >"$work/both.json" 2>"$work/err.log" || bad "$np ranks: --comm f32,bf16 failed"
    n2=$(grep -c '^{"algo": "\(twoface\|p2p\)/\(f32\|bf16\)"' "$work/both.json")
    b16=$(bytes_total "$work/both.json" twoface/bf16)
    b32=$(bytes_total "$work/both.json" twoface/f32)
    [ "$n2" -eq 4 ] && [ -n "$b32" ] && [ $((b16 * 2)) -eq "$b32" ] &&
        [ "$(field "$work/both.json" twoface/bf16 comm)" = bf16 ] &&
        ok "$np ranks: --comm f32,bf16: 4 records, half the bytes in bf16" ||
        bad "$np ranks: --comm f32,bf16: $n2 records, bytes $b16 vs $b32"
    # A float32 plan run with --comm bf16.
    run $np "$work/f$np.h5" --comm bf16 -k 32 -i 2 --warmup 1 --check >"$work/out.txt" 2>"$work/err.log" &&
        grep -q "bf16 bound included): passed" "$work/out.txt" &&
        grep -q "^B rows travel as: twoface bf16" "$work/out.txt" &&
        ok "$np ranks: --comm bf16 on a float32 plan, text report" ||
        bad "$np ranks: --comm bf16 on f32 plan: $(tail -3 "$work/out.txt") $(head -3 "$work/err.log")"
    # Read in place nothing travels, so nothing is rounded: a bf16 plan's C
    # is bitwise float32's through the copies. A collective plan: with
    # fetched runs the copies add them in the order they land, and the last
    # bits vary.
    "$PLAN" "$MATRIX" -n $np -k 32 --comm bf16 --mode collective -o "$work/cbf$np.h5" -q 2>/dev/null
    for x in direct:bf16 copy:f32; do
        TWOFACE_COLL_SHM=${x%%:*} run $np "$work/cbf$np.h5" --algo collective --comm ${x#*:} -k 32 \
            -i 2 --warmup 1 --check --json --select-calls -1 --c-out "$work/C-${x%%:*}.h5" \
            >"$work/${x%%:*}.json" 2>"$work/err.log" ||
            bad "$np ranks: --comm ${x#*:}, TWOFACE_COLL_SHM=${x%%:*}: $(head -1 "$work/err.log")"
    done
    [ "$(field "$work/direct.json" collective coll_transport)" = direct ] &&
        grep -q '"check_passed": true' "$work/direct.json" &&
        [ "$(field "$work/direct.json" collective comm)" = bf16 ] &&
        ok "$np ranks: bf16 read in place, --check passed" ||
        bad "$np ranks: bf16 in place: transport $(field "$work/direct.json" collective coll_transport)"
    h5diff -q "$work/C-direct.h5" "$work/C-copy.h5" /C /C &&
        ok "$np ranks: bf16 read in place: C is float32's" ||
        bad "$np ranks: bf16 read in place: C differs from float32's"
done
# Training: the shipped Cora with real features, forward and backward
# products in bf16; accuracy like float32's, the summary names bf16.
GCN=$B/bin/twoface-gcn
D=$SRC/examples/data
CORA="--features $D/cora.features.mtx.zst --labels $D/cora.labels.txt --split $D/cora.split.txt"
if [ -x "$GCN" ] && "$PLAN" "$MATRIX" -n 3 -k 16 --normalize gcn -o "$work/g3.h5" -q; then
    for c in f32 bf16; do
        timeout 300 mpirun -n 3 --bind-to none "$GCN" "$work/g3.h5" $CORA --seed 1 --json \
            --comm $c >"$work/gcn-$c.json" 2>"$work/gcn.err" ||
            bad "twoface-gcn --comm $c: $(head -c 300 "$work/gcn.err")"
    done
    a32=$(sed -n 's/.*"summary".*"test_acc":\([0-9.]*\).*/\1/p' "$work/gcn-f32.json")
    a16=$(sed -n 's/.*"summary".*"test_acc":\([0-9.]*\).*/\1/p' "$work/gcn-bf16.json")
    grep -q '"summary":true,"algo":"twoface","comm":"bf16"' "$work/gcn-bf16.json" &&
        ok "twoface-gcn --comm bf16: the summary names bf16" ||
        bad "twoface-gcn --comm bf16 summary: $(grep summary "$work/gcn-bf16.json")"
    awk -v a="$a16" -v b="$a32" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a >= 0.78 && d <= 0.02) }' &&
        ok "twoface-gcn Cora 3 ranks seed 1: bf16 test accuracy $a16, float32 $a32" ||
        bad "twoface-gcn bf16 accuracy '$a16' vs float32 '$a32'"
    if timeout 300 mpirun -n 3 --bind-to none "$GCN" "$work/g3.h5" $CORA --comm fp8 \
        >/dev/null 2>"$work/gcn.err"; then
        bad "twoface-gcn --comm fp8 accepted"
    else
        grep -q "expected f32, bf16 or plan" "$work/gcn.err" && ok "twoface-gcn --comm fp8: error" ||
            bad "twoface-gcn --comm fp8: $(head -3 "$work/gcn.err")"
    fi
else
    bad "the GCN section did not run: $GCN missing or planning g3.h5 failed"
fi
if run 2 "$work/f2.h5" --comm bf16,bf16 -i 1 >/dev/null 2>"$work/err.log"; then
    bad "twoface-exec --comm bf16,bf16 accepted"
else
    grep -q "expected f32, bf16, plan, f32,bf16 or bf16,f32" "$work/err.log" &&
        ok "twoface-exec --comm bf16,bf16: error" || bad "--comm bf16,bf16: $(head -3 "$work/err.log")"
fi
if run 2 "$work/f2.h5" --comm half -i 1 >/dev/null 2>"$work/err.log"; then
    bad "twoface-exec --comm half accepted"
else
    grep -q "expected f32, bf16, plan" "$work/err.log" && ok "twoface-exec --comm half: error" ||
        bad "twoface-exec --comm half: $(head -3 "$work/err.log")"
fi
finish
