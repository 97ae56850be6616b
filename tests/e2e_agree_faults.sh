#!/bin/sh
# End to end: a failure on one rank, at every point where the ranks agree
# on a status (mpi/tf_agree.h), ends every rank with one line and no output
# file (but those of earlier, finished steps: a checkpoint, the model), and
# no rank waits. TF_FAULT_AGREE=R:N fails rank R's N-th agreement as if its
# own step before it had failed (an allocation, a read, a check), and says
# so on stderr; the walk goes N = 1, 2, ... until a run has no N-th
# agreement and succeeds (a run that failed an agreement and still succeeds
# must be a step that looks again, then goes on). Walked: twoface-plan at
# Q = 3 for P = 5, failing each rank in turn (rank 0 writes the file, the
# others hand it their parts), and once more with --normalize gcn
# --transpose --partition work; twoface-exec --check and twoface-gcn (Cora, every output) at
# 3 ranks. Agreements carried by another collective (mpi/tf_agree_carry.h)
# count as agreements here.
# Environment (tests/run_tests.sh sets both): TF_SRCDIR, TF_BUILD.
# Last line: "e2e_agree_faults: N passed, M failed"; exit status 1 if M > 0.
E2E_NAME=e2e_agree_faults
. "${TF_SRCDIR:-.}/tests/lib_e2e.sh"
e2e_mpi_env
PLAN=$B/bin/twoface-plan
EXEC=$B/bin/twoface-exec
GCN=$B/bin/twoface-gcn

e2e_directed_150 "$work/dir.mtx"

# walk NAME RANK DIR PROGRAM OUTPUT KEEP ARGS...: the runs with rank RANK
# failing at its agreement 1, 2, ..., in the scratch folder DIR (the walks
# run side by side). OUTPUT: the file a successful run writes last ("" for
# none); a failed run leaves nothing in DIR/out, no temporary file either,
# but the files an earlier, finished step wrote whose names match the
# extended regular expression KEEP. Prints the outcome as an "ok - " or
# "FAIL - " line.
walk() {
    name=$1 r=$2 d=$3 prog=$4 out=$5 keep=$6
    shift 6
    mkdir -p "$d/out"
    n=1 again=0
    while [ $n -le 400 ]; do
        rm -f "$d/out/"*
        TF_FAULT_AGREE=$r:$n timeout 60 mpirun -n 3 --bind-to none -x TF_FAULT_AGREE \
            "$prog" "$@" >"$d/o" 2>"$d/e"
        rc=$?
        tag=$(basename "$prog")
        lines=$(grep -c "^$tag" "$d/e")
        fired=$(grep -c "^tf_agree: failure injected on rank $r at its agreement $n\$" "$d/e")
        if [ $rc -eq 0 ] && [ "$fired" -eq 1 ]; then
            # A step that looks again after a failed agreement and goes on
            # (the read's coarse check of memory, then the node's count).
            again=$((again + 1))
            n=$((n + 1))
            continue
        fi
        if [ $rc -eq 0 ]; then
            if [ $n -gt 1 ] && { [ -z "$out" ] || [ -e "$out" ]; }; then
                echo "ok - $name, rank $r: $((n - 1)) agreements, each failed once: one line, no file, no wait ($again looked again and went on)"
            else
                echo "FAIL - $name, rank $r: no agreement at all, or no $out"
            fi
            return
        fi
        left=$(ls "$d/out" | grep -Evc "$keep")
        if [ $rc -eq 124 ] || [ "$lines" -ne 1 ] || [ "$left" -ne 0 ] ||
            ! grep -q "failure injected at its agreement $n " "$d/e"; then
            echo "FAIL - $name, rank $r, agreement $n: exit $rc, $lines lines, $left files left: $(head -2 "$d/e")"
            return
        fi
        n=$((n + 1))
    done
    echo "FAIL - $name, rank $r: still failing after 400 agreements"
}

if "$PLAN" "$work/dir.mtx" -n 3 -k 16 -q -o "$work/p3.h5" 2>"$work/e"; then
    walk "twoface-exec --check, 3 ranks" 1 "$work/x" "$EXEC" "" '^$' \
        "$work/p3.h5" -k 16 -i 2 --check >"$work/r.x" &
else
    bad "plan for twoface-exec: $(cat "$work/e")"
fi
# Training on the shipped Cora with every output: a checkpoint each epoch,
# the model, then the predictions, which are written last.
DATA=$SRC/examples/data
if "$PLAN" "$DATA/cora.mtx.zst" -n 3 -k 16 --normalize gcn -q -o "$work/cora3.h5" 2>"$work/e"
then
    walk "twoface-gcn with a checkpoint, the model and predictions, 3 ranks" 2 "$work/g" \
        "$GCN" "$work/g/out/pred.txt" '^(ck|model)\.h5$' "$work/cora3.h5" \
        --features "$DATA/cora.features.mtx.zst" --labels "$DATA/cora.labels.txt" \
        --split "$DATA/cora.split.txt" --epochs 2 --patience 0 \
        --checkpoint "$work/g/out/ck.h5" --checkpoint-every 1 \
        --save-model "$work/g/out/model.h5" --predictions "$work/g/out/pred.txt" >"$work/r.g" &
else
    bad "plan of Cora for twoface-gcn: $(cat "$work/e")"
fi
for r in 0 1 2; do
    walk "twoface-plan at Q = 3, P = 5" $r "$work/p$r" "$PLAN" "$work/p$r/out/p.h5" '^$' \
        "$work/dir.mtx" -n 5 -k 16 -q -o "$work/p$r/out/p.h5" >"$work/r.$r" &
done
# The normalisation's and the transpose's exchanges, whose agreements ride
# on the gathering of the bands and on the counts, and the work bands' (the
# reuse window's tail from the ranks before, the weights' total).
walk "twoface-plan --normalize gcn --transpose --partition work at Q = 3, P = 5" 1 "$work/t" \
    "$PLAN" "$work/t/out/p.h5" '^$' "$work/dir.mtx" -n 5 -k 16 -q --normalize gcn --transpose \
    --partition work -o "$work/t/out/p.h5" >"$work/r.t" &
# One part a rank: no candidate is built lean, none again in full.
walk "twoface-plan at Q = P = 3" 2 "$work/e3" "$PLAN" "$work/e3/out/p.h5" '^$' \
    "$work/dir.mtx" -n 3 -k 16 -q -o "$work/e3/out/p.h5" >"$work/r.e3" &
wait
for f in "$work"/r.*; do
    [ -s "$f" ] || bad "a walk ended without an outcome ($f)"
    while IFS= read -r line; do
        case $line in
        "ok - "*) ok "${line#ok - }" ;;
        *) bad "${line#FAIL - }" ;;
        esac
    done <"$f"
done
finish
