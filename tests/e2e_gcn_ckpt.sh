#!/bin/sh
# End to end: twoface-gcn's checkpoints, resume and output files
# (docs/gnn.md, "Checkpoints and resume", "Output files").
#   - resume at the same P is bitwise the uninterrupted run: the same loss
#     lines and the same saved weights (h5diff) and predictions (cmp), on
#     Cora (3 layers) and on a directed graph with a backward plan;
#   - resume at another P and from a METIS plan: losses within the
#     P-agreement tolerance (1e-4 relative);
#   - a job with one rank killed (kill -9) mid-run, resumed from its last
#     checkpoint, ends with the uninterrupted run's test accuracy;
#   - --save-model is readable by plain h5dump; --predictions has one line
#     per node in file order (also from a METIS plan); --json names the files;
#   - refusals in one line, every rank exiting 1: a checkpoint of another
#     graph, feature width, model shape or seed; an output path that is a
#     directory or a device; --layers 1. A link as output path is followed.
# Environment as tests/e2e_gcn.sh. Last line: "e2e_gcn_ckpt: N passed, M failed".
E2E_NAME=e2e_gcn_ckpt
. "${TF_SRCDIR:-.}/tests/lib_e2e.sh"
PLAN=$B/bin/twoface-plan
GCN=$B/bin/twoface-gcn
DATA=$SRC/examples/data
MPI_LIMIT=300
for p in "$PLAN" "$GCN"; do
    [ -x "$p" ] || { bad "$p is not built"; finish; }
done
command -v h5diff >/dev/null && command -v h5dump >/dev/null ||
    { bad "h5diff/h5dump (hdf5-tools) not installed"; finish; }

gcn() { # P OUT ARGS...
    np=$1 out=$2
    shift 2
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    timeout $MPI_LIMIT mpirun -n "$np" --bind-to none "$GCN" "$@" >"$out" 2>"$out.err"
}

# The per-epoch JSON lines of FILE from epoch FIRST on, without the times.
epochs_from() {
    awk -v f="$2" 'match($0, /"epoch":[0-9]+/) {
        e = substr($0, RSTART + 8, RLENGTH - 8) + 0; if (e >= f) print }' "$1" |
        sed 's/,"time_ms":[^}]*//'
}
col() { sed -n "s/.*\"$2\":\([-0-9.e+]*\).*/\1/p" "$1" | grep -v '^$'; }
summary() { sed -n "s/.*\"summary\".*\"$2\":\([-0-9.e+]*\).*/\1/p" "$1"; }

# bitwise NAME FULL.json PART2.json FROM FULL.h5 RES.h5 [FULL.pred RES.pred]
bitwise() {
    name=$1
    epochs_from "$2" "$4" >"$work/bw.a"
    epochs_from "$3" "$4" >"$work/bw.b"
    if [ ! -s "$work/bw.a" ] || ! cmp -s "$work/bw.a" "$work/bw.b"; then
        bad "$name: the loss lines from epoch $4 differ: $(diff "$work/bw.a" "$work/bw.b" | head -3)"
    elif ! h5diff "$5" "$6" >"$work/bw.diff" 2>&1; then
        bad "$name: the saved weights differ: $(head -c 300 "$work/bw.diff")"
    elif [ -n "$7" ] && ! cmp -s "$7" "$8"; then
        bad "$name: the predictions differ"
    else
        ok "$name: $(grep -c . "$work/bw.a") epochs' losses, the weights${7:+ and predictions} bitwise equal"
    fi
}

# close NAME A.json B.json FROM: losses from epoch FROM on within 1e-4 relative.
close() {
    for key in train_loss val_loss; do
        epochs_from "$2" "$4" >"$work/c.a"
        epochs_from "$3" "$4" >"$work/c.b"
        col "$work/c.a" $key >"$work/a"
        col "$work/c.b" $key >"$work/b"
        n=$(grep -c . "$work/a")
        if [ "$n" -lt 1 ] || [ "$n" -ne "$(grep -c . "$work/b")" ]; then
            bad "$1: $key: $n vs $(grep -c . "$work/b") epochs"
            return
        fi
        worst=$(paste "$work/a" "$work/b" | awk '{ d = $1 - $2; if (d < 0) d = -d;
            r = d / ($1 < 0 ? -$1 : $1); if (r > w) w = r } END { printf "%.3g", w }')
        if ! awk -v w="$worst" 'BEGIN { exit !(w <= 1e-4) }'; then
            bad "$1: $key differs by $worst relative"
            return
        fi
    done
    ok "$1: losses of $n epochs agree (worst $worst)"
}

CORA="--features $DATA/cora.features.mtx.zst --labels $DATA/cora.labels.txt"
CORA="$CORA --split $DATA/cora.split.txt"
for np in 2 3; do
    "$PLAN" "$DATA/cora.mtx.zst" -n $np -k 16 --normalize gcn -o "$work/cora$np.h5" -q ||
        bad "plan Cora for $np ranks"
done
"$PLAN" "$DATA/cora.mtx.zst" -n 3 -k 16 --normalize gcn --partition metis \
    -o "$work/cora3m.h5" -q || bad "plan Cora with METIS"

# ---- Cora, 3 layers: bitwise resume at the same P --------------------------
RUN="$CORA --layers 3 --hidden 32 --seed 4 --patience 0 --json"
gcn 2 "$work/full.json" "$work/cora2.h5" $RUN --epochs 30 --save-model "$work/full.h5" \
    --predictions "$work/full.pred" || bad "Cora 30 epochs: $(head -c 300 "$work/full.json.err")"
gcn 2 "$work/p1.json" "$work/cora2.h5" $RUN --epochs 17 --checkpoint "$work/ck.h5" \
    --checkpoint-every 5 || bad "Cora 17 epochs: $(head -c 300 "$work/p1.json.err")"
gcn 2 "$work/p2.json" "$work/cora2.h5" $RUN --epochs 30 --resume "$work/ck.h5" \
    --save-model "$work/res.h5" --predictions "$work/res.pred" ||
    bad "Cora resumed: $(head -c 300 "$work/p2.json.err")"
bitwise "Cora, 3 layers, 2 ranks, resumed after epoch 17" "$work/full.json" "$work/p2.json" 18 \
    "$work/full.h5" "$work/res.h5" "$work/full.pred" "$work/res.pred"
if grep -q "\"checkpoint\":\"$work/ck.h5\"" "$work/p1.json" &&
    grep -q "\"model\":\"$work/res.h5\",\"predictions\":\"$work/res.pred\"" "$work/p2.json"; then
    ok "--json summary names the files written"
else
    bad "--json summary without the paths: $(tail -1 "$work/p2.json")"
fi

# ---- Another P, another partition: the P-agreement tolerance ---------------
gcn 3 "$work/p3.json" "$work/cora3.h5" $RUN --epochs 30 --resume "$work/ck.h5" ||
    bad "Cora resumed at 3 ranks: $(head -c 300 "$work/p3.json.err")"
close "Cora checkpoint of 2 ranks resumed at 3" "$work/full.json" "$work/p3.json" 18
gcn 3 "$work/p3m.json" "$work/cora3m.h5" $RUN --epochs 30 --resume "$work/ck.h5" \
    --predictions "$work/m.pred" || bad "Cora resumed on METIS: $(head -c 300 "$work/p3m.json.err")"
close "Cora checkpoint of 2 ranks resumed on a METIS plan at 3" "$work/full.json" "$work/p3m.json" 18

# ---- Output files -----------------------------------------------------------
n=$(grep -c . "$work/m.pred")
if [ "$n" -eq 2708 ] && paste -d' ' "$work/m.pred" "$DATA/cora.split.txt" |
    awk '$1 !~ /^[0-6]$/ || $2 != $3 { exit 1 }'; then
    ok "METIS plan: --predictions has 2708 lines, classes 0-6, each node's split in file order"
else
    bad "METIS plan: --predictions: $n lines, or a class/split out of place: $(head -3 "$work/m.pred")"
fi
if h5dump -d /W1 "$work/full.h5" >"$work/dump" 2>&1 && grep -q '( 32, 32 )' "$work/dump" &&
    h5dump -a /layers "$work/full.h5" | grep -q '(0): 3'; then
    ok "--save-model: plain h5dump reads W1 (32 x 32) and the layers attribute"
else
    bad "--save-model: h5dump: $(head -c 300 "$work/dump")"
fi

# ---- Directed graph with a backward plan: bitwise at the same P -------------
e2e_gcn_directed_inputs
# Collective plans: a fetching rank adds the runs of several owners to C in
# the order they land, so two uninterrupted runs of a fetch plan at P = 3 may
# differ in the last bits (docs/gnn.md, "Checkpoints and resume"); bitwise
# equality needs an SpMM that sums in a fixed order.
"$PLAN" "$work/dir.mtx" -n 3 --normalize gcn --mode collective -o "$work/dir3.h5" -q &&
    "$PLAN" "$work/dir.mtx" --normalize gcn --mode collective --transpose \
        --bands-from "$work/dir3.h5" -o "$work/dirT3.h5" -q || bad "plan the directed graph"
DRUN="$work/dir3.h5 --backward-plan $work/dirT3.h5 $DIR --hidden 4 --patience 0 --json"
gcn 3 "$work/df.json" $DRUN --epochs 20 --save-model "$work/df.h5" ||
    bad "directed 20 epochs: $(head -c 300 "$work/df.json.err")"
gcn 3 "$work/d1.json" $DRUN --epochs 8 --checkpoint "$work/dck.h5" ||
    bad "directed 8 epochs: $(head -c 300 "$work/d1.json.err")"
gcn 3 "$work/d2.json" $DRUN --epochs 20 --resume "$work/dck.h5" --save-model "$work/dr.h5" ||
    bad "directed resumed: $(head -c 300 "$work/d2.json.err")"
bitwise "directed graph, backward plan, 3 ranks, resumed after epoch 8" "$work/df.json" \
    "$work/d2.json" 9 "$work/df.h5" "$work/dr.h5"

# ---- One rank killed mid-run, then resumed ----------------------------------
# Long enough (1000 epochs) that the kill lands mid-run even on an idle machine.
KRUN="$work/cora2.h5 $CORA --hidden 64 --seed 5 --patience 0 --epochs 1000 --json"
gcn 2 "$work/kfull.json" $KRUN || bad "uninterrupted 1000 epochs: $(head -c 300 "$work/kfull.json.err")"
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
mpirun -n 2 --bind-to none "$GCN" $KRUN --checkpoint "$work/kck.h5" --checkpoint-every 20 \
    >"$work/k1.json" 2>"$work/k1.err" &
mpid=$!
waited=0
until [ "$(col "$work/k1.json" epoch 2>/dev/null | tail -1)" -ge 100 ] 2>/dev/null; do
    sleep 0.1
    waited=$((waited + 1))
    [ $waited -gt 2400 ] && break
done
# mpirun's children are the ranks (/proc: no procps needed).
victim=$(cat /proc/$mpid/task/*/children 2>/dev/null | tr ' ' '\n' | grep . | tail -1)
if [ -n "$victim" ]; then
    kill -9 "$victim"
fi
waited=0
while kill -0 $mpid 2>/dev/null && [ $waited -lt 600 ]; do
    sleep 0.1
    waited=$((waited + 1))
done
kill -0 $mpid 2>/dev/null && kill -9 $mpid
wait $mpid
krc=$?
last=$(col "$work/k1.json" epoch | tail -1)
if [ -z "$victim" ] || [ $krc -eq 0 ] || [ "${last:-1000}" -ge 1000 ]; then
    bad "kill -9 of one rank: victim '$victim', mpirun status $krc, last epoch '$last'"
else
    gcn 2 "$work/k2.json" $KRUN --checkpoint "$work/kck.h5" --checkpoint-every 20 \
        --resume "$work/kck.h5" || bad "resume after kill: $(head -c 300 "$work/k2.json.err")"
    first=$(col "$work/k2.json" epoch | head -1)
    a=$(summary "$work/kfull.json" test_acc)
    b=$(summary "$work/k2.json" test_acc)
    if [ -n "$a" ] && [ "$a" = "$b" ] && [ "${first:-1}" -gt 1 ]; then
        ok "rank killed (kill -9) after epoch $last, resumed at epoch $first: test accuracy $b as uninterrupted"
    else
        bad "killed and resumed (from epoch '$first'): test accuracy '$b', uninterrupted '$a'"
    fi
fi

# ---- Refusals ---------------------------------------------------------------
# gcn_fails NAME P PATTERN ARGS...: status 1 on every rank, one line on stderr.
gcn_fails() {
    name=$1 np=$2 pattern=$3
    shift 3
    d=$work/run
    rm -rf "$d"
    mkdir -p "$d"
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    timeout 120 mpirun -n "$np" --bind-to none sh -c '
        d=$1; shift
        r=${OMPI_COMM_WORLD_RANK:-0}
        "$@" >"$d/out.$r" 2>"$d/err.$r"
        echo $? >"$d/rc.$r"' sh "$d" "$GCN" "$@" >"$d/mpirun.log" 2>&1
    [ $? -eq 124 ] && { bad "$name: hang"; return; }
    r=0 other=
    while [ $r -lt "$np" ]; do
        rc=$(cat "$d/rc.$r" 2>/dev/null || echo missing)
        [ "$rc" = 1 ] || other="$other $r:$rc"
        r=$((r + 1))
    done
    cat "$d"/err.* >"$d/err.all" 2>/dev/null
    if [ -n "$other" ]; then
        bad "$name: rank:status$other, expected 1 on every rank: $(head -c 300 "$d/err.all")"
    elif [ "$(grep -c . "$d/err.all")" -ne 1 ]; then
        bad "$name: expected one line on stderr, got: $(head -c 600 "$d/err.all")"
    elif ! grep -q -- "$pattern" "$d/err.all"; then
        bad "$name: '$pattern' not in: $(cat "$d/err.all")"
    else
        ok "$name: $(cat "$d/err.all")"
    fi
}
C2="$work/cora2.h5 $CORA --layers 3 --hidden 32 --seed 4 --patience 0 --epochs 20"
gcn_fails "checkpoint of another graph" 2 "another graph" $C2 --resume "$work/dck.h5"
gcn_fails "checkpoint of another model shape" 2 "model is --layers 3 --hidden 32" \
    "$work/cora2.h5" $CORA --layers 2 --hidden 32 --seed 4 --patience 0 --resume "$work/ck.h5"
gcn_fails "checkpoint of another feature width" 2 "1433 input features" "$work/cora2.h5" \
    --random-features 20 --labels "$DATA/cora.labels.txt" --split "$DATA/cora.split.txt" \
    --layers 3 --hidden 32 --seed 4 --patience 0 --resume "$work/ck.h5"
gcn_fails "checkpoint with another seed" 2 "with --seed 4" "$work/cora2.h5" $CORA --layers 3 \
    --hidden 32 --seed 5 --patience 0 --resume "$work/ck.h5"
gcn_fails "resume from a file that is not a checkpoint" 2 "not a twoface-gcn checkpoint" $C2 \
    --resume "$work/full.h5"
mkdir -p "$work/adir"
gcn_fails "checkpoint path is a directory" 2 "not a regular file (directory)" $C2 \
    --checkpoint "$work/adir"
gcn_fails "predictions path is a device" 2 "not a regular file (character device)" $C2 \
    --predictions /dev/null
# An output on an input or on another output (each replaced the file
# before): refused before training, the inputs intact.
cp "$DATA/cora.labels.txt" "$work/labels.txt"
cp "$work/cora2.h5" "$work/plan.keep"
cp "$work/ck.h5" "$work/ck.keep"
CL="$work/cora2.h5 --features $DATA/cora.features.mtx.zst --labels $work/labels.txt"
CL="$CL --split $DATA/cora.split.txt --layers 3 --hidden 32 --seed 4 --patience 0 --epochs 20"
gcn_fails "predictions on the labels" 2 "--predictions .*: the same file as --labels" $CL \
    --predictions "$work/./labels.txt"
gcn_fails "model on the plan" 2 "--save-model .*: the same file as PLAN" $CL \
    --save-model "$work/cora2.h5"
gcn_fails "model on the resumed checkpoint" 2 "--save-model .*: the same file as --resume" $CL \
    --checkpoint "$work/ck.h5" --resume "$work/ck.h5" --save-model "$work/ck.h5"
gcn_fails "predictions on the model" 2 "--predictions .*: the same file as --save-model" $CL \
    --save-model "$work/out.h5" --predictions "$work/out.h5"
if cmp -s "$work/labels.txt" "$DATA/cora.labels.txt" && cmp -s "$work/cora2.h5" "$work/plan.keep" &&
    cmp -s "$work/ck.h5" "$work/ck.keep" && [ ! -e "$work/out.h5" ]; then
    ok "outputs on inputs: labels, plan and checkpoint intact, nothing written"
else
    bad "outputs on inputs: an input was replaced or an output written"
fi

gcn_fails "outputs with several algorithms" 2 "need a single --algo" $C2 --algo twoface,p2p \
    --save-model "$work/x.h5"
gcn_fails "one layer" 2 "--layers '1': expected a whole number in 2..32" $C2 --layers 1
gcn_fails "--checkpoint-every without --checkpoint" 2 "needs --checkpoint FILE" $C2 \
    --checkpoint-every 3

# A link as --checkpoint: its target is replaced, the link stays.
ln -s ck.h5 "$work/link.h5"
cp "$work/ck.h5" "$work/ck.before"
if gcn 2 "$work/l.json" $C2 --epochs 3 --checkpoint "$work/link.h5" && [ -L "$work/link.h5" ] &&
    ! cmp -s "$work/ck.h5" "$work/ck.before" &&
    h5dump -a /epoch "$work/ck.h5" | grep -q '(0): 3'; then
    ok "--checkpoint through a symbolic link replaces its target (epoch 3), the link stays"
else
    bad "--checkpoint through a link: $(head -c 300 "$work/l.json.err")"
fi
# gcn_ranks_stop NAME WRAPPER PATTERN [ABSENT]: twoface-gcn through WRAPPER
# (which changes one rank's arguments) on 2 ranks must stop with a non-zero
# status and one "twoface-gcn:" line in all, matching PATTERN, and leave
# ABSENT unwritten.
gcn_ranks_stop() {
    timeout $MPI_LIMIT mpirun -n 2 --bind-to none sh "$2" "$work/cora2.h5" $RUN \
        --epochs 2 >"$work/pr.out" 2>"$work/pr.err"
    rc=$?
    if [ $rc -eq 124 ]; then
        bad "$1: hang (killed after $MPI_LIMIT s)"
    elif [ $rc -ne 0 ] && [ "$(grep -c '^twoface-gcn:' "$work/pr.err")" -eq 1 ] &&
        grep -q "$3" "$work/pr.err" && { [ -z "${4:-}" ] || [ ! -f "$4" ]; }; then
        ok "$1: every rank stops: $(grep '^twoface-gcn:' "$work/pr.err")"
    else
        bad "$1 (exit $rc): $(head -c 400 "$work/pr.err")"
    fi
}
# A --checkpoint folder that only rank 0's node has (here: only rank 0 is
# given one that exists): every rank stops with one line, none waits in the
# collective opening of the plan.
mkdir -p "$work/only0"
cat >"$work/per_rank.sh" <<EOF2
#!/bin/sh
[ "\${OMPI_COMM_WORLD_RANK:-0}" = 0 ] && d=$work/only0 || d=$work/nowhere
exec "$GCN" "\$@" --checkpoint "\$d/ck.h5"
EOF2
gcn_ranks_stop "a --checkpoint folder missing on rank 1 only" "$work/per_rank.sh" \
    "^twoface-gcn: .*nowhere" "$work/only0/ck.h5"
# Other training options on rank 1 only (a wrapper or an MPMD launch): the
# ranks would stop at other epochs; every rank stops at once with one line.
cat >"$work/lr1.sh" <<EOF2
#!/bin/sh
[ "\${OMPI_COMM_WORLD_RANK:-0}" = 1 ] && exec "$GCN" "\$@" --lr 0.1
exec "$GCN" "\$@"
EOF2
gcn_ranks_stop "--lr on rank 1 only" "$work/lr1.sh" \
    "^twoface-gcn: rank 1 was given other options than rank 0"

finish
