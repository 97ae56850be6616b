#!/bin/sh
# End to end: twoface-gcn on odd inputs (docs/reliability.md, "Non-finite
# values"; docs/gnn.md). NaN and Inf in HDF5 features, a zero-width dataset,
# an HDF5 file where text or a dataset is expected, trailing blank lines,
# empty validation and test splits, a backward plan for other ranks: every
# failure ends every rank with status 1 and one line (each mpirun under
# timeout 120); the accepted cases train and print what they should.
# Environment (tests/run_tests.sh sets them): TF_SRCDIR, TF_BUILD and the
# Open MPI variables. Last line: "e2e_gcn_inputs: N passed, M failed".
E2E_NAME=e2e_gcn_inputs
. "${TF_SRCDIR:-.}/tests/lib_e2e.sh"
PLAN=$B/bin/twoface-plan
GCN=$B/bin/twoface-gcn
HELPER=$B/tests/mpi_errors
MPI_LIMIT=120
for p in "$PLAN" "$GCN" "$HELPER"; do
    [ -x "$p" ] || { bad "$p is not built"; finish; }
done

# gcn_run NAME NP DIR ARGS...: each rank's stdout, stderr, status in DIR.
gcn_run() {
    np=$1 d=$2
    shift 2
    rm -rf "$d"
    mkdir -p "$d"
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    timeout $MPI_LIMIT mpirun -n "$np" --bind-to none sh -c '
        d=$1; shift
        r=${OMPI_COMM_WORLD_RANK:-0}
        "$@" >"$d/out.$r" 2>"$d/err.$r"
        echo $? >"$d/rc.$r"' sh "$d" "$GCN" "$@" >"$d/mpirun.log" 2>&1
}

# gcn_fails NAME NP PATTERN ARGS...: every rank exits 1, one stderr line in
# all, containing PATTERN, printable ASCII only.
gcn_fails() {
    name=$1 np=$2 pattern=$3
    shift 3
    d=$work/run
    gcn_run "$np" "$d" "$@"
    [ $? -eq 124 ] && { bad "$name: hang"; return; }
    r=0 other=
    while [ $r -lt "$np" ]; do
        rc=$(cat "$d/rc.$r" 2>/dev/null || echo missing)
        [ "$rc" = 1 ] || other="$other $r:$rc"
        r=$((r + 1))
    done
    cat "$d"/err.* >"$d/err.all" 2>/dev/null
    if [ -n "$other" ]; then
        bad "$name: rank:status$other: $(head -c 300 "$d/err.all")"
    elif [ "$(grep -c . "$d/err.all")" -ne 1 ]; then
        bad "$name: expected one line on stderr, got: $(head -c 600 "$d/err.all")"
    elif LC_ALL=C grep -q '[^ -~]' "$d/err.all"; then
        bad "$name: bytes that are not printable ASCII in: $(od -c "$d/err.all" | head -5)"
    elif ! grep -q -- "$pattern" "$d/err.all"; then
        bad "$name: '$pattern' not in: $(cat "$d/err.all")"
    else
        ok "$name: $(cat "$d/err.all")"
    fi
}

# A ring of 12 nodes with chords, 4 features, 3 classes.
{
    echo '%%MatrixMarket matrix coordinate real symmetric'
    echo '12 12 18'
    i=1
    while [ $i -le 12 ]; do
        j=$((i % 12 + 1))
        [ $i -lt $j ] && echo "$j $i 1" || echo "$i $j 1"
        i=$((i + 1))
    done
    echo '7 1 1'; echo '8 2 1'; echo '9 3 1'; echo '10 4 1'; echo '11 5 1'; echo '12 6 1'
} >"$work/g.mtx"
{
    echo '%%MatrixMarket matrix coordinate real general'
    echo '12 4 24'
    i=1
    while [ $i -le 12 ]; do
        echo "$i $((i % 4 + 1)) 1"
        echo "$i $(((i + 1) % 4 + 1)) 0.5"
        i=$((i + 1))
    done
} >"$work/f.mtx"
printf '0\n1\n2\n0\n1\n2\n0\n1\n2\n0\n1\n2\n' >"$work/l.txt"
printf 'train\ntrain\ntrain\ntrain\nval\nval\ntest\ntest\ntrain\ntrain\nval\ntest\n' >"$work/s.txt"
"$PLAN" "$work/g.mtx" -n 2 --normalize gcn -o "$work/g2.h5" -q &&
    "$PLAN" "$work/g.mtx" -n 3 --normalize gcn -o "$work/g3.h5" -q ||
    { bad "planning the test graph"; finish; }
IN="--labels $work/l.txt --split $work/s.txt"

# ---- features ------------------------------------------------------------------
"$HELPER" --b "$work/nan.h5" nan 12 4 && "$HELPER" --b "$work/inf.h5" inf 12 4 &&
    "$HELPER" --b "$work/w0.h5" good 12 0 && "$HELPER" --b "$work/ok.h5" good 12 4 ||
    bad "making HDF5 feature files"
gcn_fails "NaN in HDF5 features" 2 "nan.h5: dataset /B, row 11, column 3 (from 0): nan is not a finite number" \
    "$work/g2.h5" --features "$work/nan.h5:/B" $IN
gcn_fails "Inf in HDF5 features" 3 "inf.h5: dataset /B, row 11, column 3 (from 0): inf is not a finite number" \
    "$work/g3.h5" --features "$work/inf.h5:/B" $IN
sed 's/^12 2 0.5$/12 2 nan/' "$work/f.mtx" >"$work/fnan.mtx"
gcn_fails "NaN in Matrix Market features" 2 "fnan.mtx:26:" \
    "$work/g2.h5" --features "$work/fnan.mtx" $IN
gcn_fails "HDF5 features of width 0" 2 "w0.h5: dataset /B has no columns" \
    "$work/g2.h5" --features "$work/w0.h5:/B" $IN
gcn_fails "HDF5 features without a dataset" 2 \
    "ok.h5: this is an HDF5 file; did you mean $work/ok.h5:/dataset?" \
    "$work/g2.h5" --features "$work/ok.h5" $IN
gcn_fails "empty --labels path" 2 "^twoface-gcn: --labels: the path is empty: give a file name$" \
    "$work/g2.h5" --features "$work/f.mtx" --labels "" --split "$work/s.txt"
mkfifo "$work/labels.fifo"
gcn_fails "labels a named FIFO" 2 "^twoface-gcn: --labels .*labels.fifo: a named FIFO, which would be opened more than once" \
    "$work/g2.h5" --features "$work/f.mtx" --labels "$work/labels.fifo" --split "$work/s.txt"
gcn_fails "HDF5 file as labels" 2 "ok.h5: this is an HDF5 file; expected text" \
    "$work/g2.h5" --features "$work/f.mtx" --labels "$work/ok.h5" --split "$work/s.txt"
printf '0\n1\n2\n\033[2J\n1\n2\n0\n1\n2\n0\n1\n2\n' >"$work/esc.txt"
gcn_fails "control bytes in labels" 2 "esc.txt:4: expected a class 0..4095, got '.x1b\[2J'" \
    "$work/g2.h5" --features "$work/f.mtx" --labels "$work/esc.txt" --split "$work/s.txt"
gcn_fails "backward plan for other ranks" 2 "^twoface-gcn: --backward-plan $work/g3.h5: plan is for 3 ranks" \
    "$work/g2.h5" --backward-plan "$work/g3.h5" --features "$work/f.mtx" $IN
gcn_fails "plan for other ranks" 2 "^twoface-gcn: $work/g3.h5: plan is for 3 ranks" \
    "$work/g3.h5" --features "$work/f.mtx" $IN
# A features file of a few hundred bytes declaring 2^31 - 1 columns: the
# model's first layer would take hundreds of GiB per rank (its weights were
# allocated and touched: with --hidden 1 the kernel killed the job).
{
    echo '%%MatrixMarket matrix coordinate real general'
    echo '12 2147483647 12'
    i=1
    while [ $i -le 12 ]; do echo "$i $((i * 7919)) 1"; i=$((i + 1)); done
} >"$work/fwide.mtx"
mem_saved=${TWOFACE_MEM_AVAILABLE_MIB-unset}
export TWOFACE_MEM_AVAILABLE_MIB=64
gcn_fails "features 2^31 - 1 wide" 2 \
    "the model's weights (2147483647 features, 3 classes: .* weights, 5 copies on each of 2 ranks on this node): need .* GiB, more than the 64.0 MiB TWOFACE_MEM_AVAILABLE_MIB allows" \
    "$work/g2.h5" --features "$work/fwide.mtx" $IN
if [ "$mem_saved" = unset ]; then unset TWOFACE_MEM_AVAILABLE_MIB; else export TWOFACE_MEM_AVAILABLE_MIB=$mem_saved; fi
# More OpenMP threads than a process can start crashed inside libgomp.
omp_saved=${OMP_NUM_THREADS:-1}
export OMP_NUM_THREADS=100000
gcn_fails "OMP_NUM_THREADS=100000" 2 "OMP_NUM_THREADS=100000: at most 4096 OpenMP threads" \
    "$work/g2.h5" --features "$work/f.mtx" $IN
export OMP_NUM_THREADS=$omp_saved

# ---- copies that differ between ranks ---------------------------------------------
# Each node may read its own copy of the inputs. A wrapper gives each rank
# the files named with its rank where an argument holds @R@.
e2e_per_rank_wrapper "$work/per_rank.sh" "$GCN"
REAL_GCN=$GCN
GCN=$work/per_rank.sh
cp "$work/l.txt" "$work/l.0.txt"
sed '3s/.*/5/' "$work/l.txt" >"$work/l.1.txt"
gcn_fails "ranks' label copies with other classes" 2 \
    "l.0.txt: the ranks' copies give 3 to 6 classes: every rank must read the same file" \
    "$work/g2.h5" --features "$work/f.mtx" --labels "$work/l.@R@.txt" --split "$work/s.txt"
rm -f "$work/l.1.txt"
gcn_fails "labels missing on one rank" 2 \
    "l.1.txt: cannot open: No such file or directory (rank 1; 1 of 2 ranks cannot read it)" \
    "$work/g2.h5" --features "$work/f.mtx" --labels "$work/l.@R@.txt" --split "$work/s.txt"
cp "$work/f.mtx" "$work/f.0.mtx"
sed '2s/^12 4 24$/12 5 24/' "$work/f.mtx" >"$work/f.1.mtx"
gcn_fails "ranks' feature copies of other widths" 2 \
    "f.0.mtx: the ranks' copies give 4 to 5 features: every rank must read the same file" \
    "$work/g2.h5" --features "$work/f.@R@.mtx" $IN
GCN=$REAL_GCN
d=$work/ck
gcn_run 2 "$d" "$work/g2.h5" --features "$work/f.mtx" $IN --epochs 2 --checkpoint "$work/ck.0.h5"
gcn_run 2 "$d" "$work/g2.h5" --features "$work/f.mtx" $IN --epochs 4 --checkpoint "$work/ck.1.h5"
GCN=$work/per_rank.sh
gcn_fails "ranks' checkpoint copies of other epochs" 2 \
    "resume $work/ck.1.h5: rank 1 reads another checkpoint than rank 0 (epoch 4 here)" \
    "$work/g2.h5" --features "$work/f.mtx" $IN --epochs 6 --resume "$work/ck.@R@.h5"
GCN=$REAL_GCN

# ---- accepted: trailing blank lines; empty validation and test splits ---------------
{ cat "$work/l.txt"; printf '\n\n'; } >"$work/l-blank.txt"
d=$work/ok
gcn_run 2 "$d" "$work/g2.h5" --features "$work/f.mtx" --labels "$work/l-blank.txt" \
    --split "$work/s.txt" --epochs 3 --every 1
if [ "$(cat "$d/rc.0" "$d/rc.1")" = "$(printf '0\n0')" ] && grep -q 'test accuracy' "$d/out.0"; then
    ok "labels with trailing blank lines train"
else
    bad "labels with trailing blank lines: $(cat "$d"/err.* | head -c 400)"
fi
printf 'train\ntrain\ntrain\ntrain\nnone\nnone\nnone\nnone\ntrain\ntrain\nnone\nnone\n' >"$work/trainonly.txt"
gcn_run 2 "$d" "$work/g2.h5" --features "$work/f.mtx" --labels "$work/l.txt" \
    --split "$work/trainonly.txt" --epochs 3 --every 1
if [ "$(cat "$d/rc.0" "$d/rc.1")" = "$(printf '0\n0')" ] &&
    [ "$(grep -c 'no validation nodes: early stopping is off' "$d/err.0")" -eq 1 ] &&
    grep -q 'val loss n/a  val acc n/a  ' "$d/out.0" &&
    grep -q '^test accuracy n/a (val n/a, train [0-9.]* %) after 3 epochs' "$d/out.0" &&
    ! grep -q ' 0\.00 %' "$d/out.0"; then
    ok "no validation or test nodes: n/a, and one note that early stopping is off"
else
    bad "empty splits: $(cat "$d/out.0" "$d"/err.* | head -c 600)"
fi
gcn_run 2 "$d" "$work/g2.h5" --features "$work/f.mtx" --labels "$work/l.txt" \
    --split "$work/trainonly.txt" --epochs 2 --json
if grep -q '"val_acc":null' "$d/out.0" && grep -q '"test_acc":null,"test_loss":null' "$d/out.0"; then
    ok "empty splits in JSON are null"
else
    bad "empty splits in JSON: $(head -c 600 "$d/out.0")"
fi
finish
