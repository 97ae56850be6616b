#!/bin/sh
# What --normalize and --transpose add to twoface-plan (docs/normalization.md,
# "Cost"): for each graph, plans it REPS times with --normalize none, gcn,
# gcn --transpose and mean, interleaved (none gcn gcnT mean none ...), and
# prints the medians of the "normalise/transpose/symmetry" phase (which
# includes the symmetry test, so it is not zero for none) and of the whole
# planning time without I/O, both from twoface-plan's own time line.
#
#   sh bench/normalize_cost.sh
#   GRAPHS="cora pubmed" P=8 REPS=5 sh bench/normalize_cost.sh
#
# Environment: BUILD [build], DATA [../shared/data], GRAPHS [cora citeseer
# email-Enron cit-HepPh copter2], P [4], REPS [5].
set -u
BUILD=${BUILD:-build}
DATA=${DATA:-../shared/data}
GRAPHS=${GRAPHS:-"cora citeseer email-Enron cit-HepPh copter2"}
P=${P:-4}
REPS=${REPS:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/normalize_cost.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "| graph | nnz | variant | normalise/transpose/symmetry (s) | planning without I/O (s) |"
echo "|---|---|---|---|---|"
for g in $GRAPHS; do
    f=$DATA/$g.mtx.zst
    [ -f "$f" ] || f=$DATA/$g.mtx
    [ -f "$f" ] || { echo "skipping $g: not in $DATA" >&2; continue; }
    : >"$work/$g"
    for r in $(seq "$REPS"); do
        for v in none gcn gcnT mean; do
            case $v in
            none) a="" ;; gcn) a="--normalize gcn" ;;
            gcnT) a="--normalize gcn --transpose" ;; mean) a="--normalize mean" ;;
            esac
            # shellcheck disable=SC2086
            "$BUILD/bin/twoface-plan" "$f" -n "$P" -o "$work/p.h5" $a 2>"$work/log" >/dev/null ||
                { cat "$work/log" >&2; exit 1; }
            nnz=$(sed -n 's/.*: [0-9]* x [0-9]*, \([0-9]*\) nnz,.*/\1/p' "$work/log")
            prep=$(sed -n 's/.*normalise\/transpose\/symmetry \([0-9.]*\) s.*/\1/p' "$work/log")
            plan=$(sed -n 's/.*planning \([0-9.]*\) s without I\/O.*/\1/p' "$work/log")
            echo "$v $nnz $prep $plan" >>"$work/$g"
        done
    done
    for v in none gcn gcnT mean; do
        nnz=$(awk -v v=$v '$1 == v { print $2; exit }' "$work/$g")
        mp=$(awk -v v=$v '$1 == v { print $3 }' "$work/$g" | median)
        mt=$(awk -v v=$v '$1 == v { print $4 }' "$work/$g" | median)
        echo "| $g | $nnz | $v | $mp | $mt |"
    done
done
