#!/bin/sh
# End to end: the SMPI build of twoface-gcn (make smpi; docs/gnn.md,
# "Training at scale (simulated)") trains on simulated ranks. On a tiny
# generated graph, 4 simulated ranks train 2 epochs of a 3-layer model with
# twoface and the three baselines side by side, and their losses equal the
# native build's at 4 ranks within the P-agreement tolerance of e2e_gcn.sh
# (1e-4 relative), for a symmetric graph and for a directed one with
# --backward-plan; the summary's SpMM + dense + Allreduce is its epoch time
# (what bench/smpi/gcn_table.py reports split); a missing plan ends the job
# with one line and a non-zero status.
# Needs SimGrid (`make smpi` installs libsimgrid-dev); without smpicc it says
# so and checks nothing. Builds twoface-gcn into build-smpi/ (incremental).
# Environment (tests/run_tests.sh sets both): TF_SRCDIR, TF_BUILD.
# Last line: "e2e_smpi_gcn: N passed, M failed"; exit status 1 if M > 0.
E2E_NAME=e2e_smpi_gcn
. "${TF_SRCDIR:-.}/tests/lib_e2e.sh"
PLAN=$B/bin/twoface-plan
GCN=$B/bin/twoface-gcn
for p in "$PLAN" "$GCN"; do
    [ -x "$p" ] || { bad "$p is not built"; finish; }
done
e2e_smpi_setup twoface-gcn
SGCN=$SMPI_BUILD/bin/twoface-gcn

# 160 nodes: a ring and two chords per node. sym: both directions of every
# edge; dir: one direction, plus a hub every node points to.
awk -v sym="$work/sym.mtx" -v dir="$work/dir.mtx" 'BEGIN {
    n = 160; k = 0
    for (i = 0; i < n; i++) { r[k] = i; c[k] = (i + 1) % n; k++
                              r[k] = i; c[k] = (7 * i + 3) % n; k++
                              r[k] = i; c[k] = (i * i + 11) % n; k++ }
    print "%%MatrixMarket matrix coordinate pattern general" > sym
    print n, n, 2 * k > sym
    for (e = 0; e < k; e++) { print r[e] + 1, c[e] + 1 > sym; print c[e] + 1, r[e] + 1 > sym }
    print "%%MatrixMarket matrix coordinate pattern general" > dir
    print n, n, k + n - 1 > dir
    for (e = 0; e < k; e++) print r[e] + 1, c[e] + 1 > dir
    for (i = 1; i < n; i++) print i + 1, 1 > dir
}' || { bad "generate the graphs"; finish; }

"$PLAN" "$work/sym.mtx" -n 4 -k 16 --normalize gcn -o "$work/sym.h5" -q || bad "plan sym"
"$PLAN" "$work/dir.mtx" -n 4 -k 16 --normalize gcn -o "$work/dir.h5" -q || bad "plan dir"
"$PLAN" "$work/dir.mtx" --normalize gcn --transpose --bands-from "$work/dir.h5" \
    -o "$work/dirT.h5" -q || bad "plan dir's transpose"
MODEL="--random-features 24 --random-classes 5 --random-split --layers 3 --hidden 16"
MODEL="$MODEL --epochs 2 --patience 0 --seed 3 --json --algo twoface,allgather,shift,p2p"

# Column KEY of the per-epoch JSON lines of FILE, one value per line.
col() { sed -n "s/.*\"$2\":\([-0-9.e+]*\).*/\1/p" "$1" | grep -v '^$'; }

# same_losses NAME A B: per-epoch train_loss and val_loss equal to 1e-4 relative.
same_losses() {
    for key in train_loss val_loss; do
        col "$2" $key >"$work/a"
        col "$3" $key >"$work/b"
        if [ "$(grep -c . "$work/a")" -ne 8 ] || [ "$(grep -c . "$work/b")" -ne 8 ]; then
            bad "$1: $key: $(grep -c . "$work/a") and $(grep -c . "$work/b") epoch lines, expected 8"
            return
        fi
        worst=$(paste "$work/a" "$work/b" | awk '{ d = $1 - $2; if (d < 0) d = -d;
            r = d / ($1 < 0 ? -$1 : $1); if (r > w) w = r } END { printf "%.3g", w }')
        if ! awk -v w="$worst" 'BEGIN { exit !(w <= 1e-4) }'; then
            bad "$1: $key differs by $worst relative"
            return
        fi
    done
    ok "$1: train and val losses of 4 algorithms x 2 epochs agree (worst $worst)"
}

for g in sym dir; do
    plans=$work/$g.h5
    [ $g = dir ] && plans="$plans --backward-plan $work/dirT.h5"
    # shellcheck disable=SC2086 # option lists
    if ! e2e_run_mpi 4 "$GCN" $plans $MODEL >"$work/$g.native" 2>"$work/$g.native.err"; then
        bad "$g: native twoface-gcn at 4 ranks"
        tail -3 "$work/$g.native.err"
        continue
    fi
    # shellcheck disable=SC2086
    if ! sim 4 "$SGCN" $plans $MODEL >"$work/$g.sim" 2>"$work/$g.sim.err"; then
        bad "$g: SMPI twoface-gcn at 4 simulated ranks"
        grep -v INFO "$work/$g.sim.err" | tail -3
        continue
    fi
    ok "$g: SMPI twoface-gcn trains at 4 simulated ranks"
    same_losses "$g: SMPI vs native" "$work/$g.native" "$work/$g.sim"
    # Four summaries, each with a positive epoch time equal to its split.
    n=$(grep '"summary"' "$work/$g.sim" | awk '{
        split("epoch_ms spmm_ms dense_ms allreduce_ms", keys, " ")
        for (i = 1; i <= 4; i++) {
            if (!match($0, "\"" keys[i] "\":[0-9.e+-]+")) exit 1
            v[i] = substr($0, RSTART + length(keys[i]) + 3, RLENGTH - length(keys[i]) - 3)
        }
        s = v[2] + v[3] + v[4]
        if (v[1] > 0 && v[2] > 0 && s >= 0.99 * v[1] && s <= 1.01 * v[1]) ok++
    } END { print ok + 0 }')
    if [ "$n" = 4 ]; then
        ok "$g: 4 summaries, SpMM + dense + Allreduce = the epoch time"
    else
        bad "$g: $n of 4 summaries with SpMM + dense + Allreduce = the epoch time"
        grep '"summary"' "$work/$g.sim"
    fi
done

# A missing plan: every rank stops, rank 0 says it in one line.
sim 4 "$SGCN" "$work/missing.h5" $MODEL >"$work/out" 2>"$work/err"
rc=$?
msg=$(grep '^twoface-gcn:' "$work/err")
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$(echo "$msg" | wc -l)" -eq 1 ] &&
    echo "$msg" | grep -q missing.h5; then
    ok "a missing plan: one line, non-zero"
else
    bad "a missing plan: one line, non-zero (rc $rc: $msg)"
fi
finish
