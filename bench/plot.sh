#!/bin/sh
# docs/bench-speedup.png: twoface's speedup over each other strategy, per graph
# (geometric mean over its P and K cases), log scale; from a bench/run CSV.
#   sh bench/plot.sh bench/results/spmm-sm.csv docs/bench-speedup.png
csv=$1
png=$2
dat=$(mktemp "${TMPDIR:-/tmp}/tf-plot.XXXXXX") || exit 1
awk -F, '
NR == 1 { next }
{
    key = $2 SUBSEP $5 SUBSEP $6
    if (!($2 in gs)) { gs[$2] = 1; go[++ng] = $2 }
    a = $7; if (a ~ /^shift/) a = "shift"
    t = $10 + 0
    if (a == "shift") { if (!((key, a) in T) || t < T[key, a]) T[key, a] = t }
    else T[key, a] = t
    cases[key] = $2
}
END {
    n = split("fetch collective allgather shift p2p", o, " ")
    print "graph fetch collective allgather shift(best_c) p2p"
    for (i = 1; i <= ng; i++) {
        g = go[i]
        printf "%s", g
        for (j = 1; j <= n; j++) {
            s = 0; c = 0
            for (k in cases) if (cases[k] == g && (k, "twoface") in T && (k, o[j]) in T) { s += log(T[k, o[j]] / T[k, "twoface"]); c++ }
            printf " %s", c ? sprintf("%.4f", exp(s / c)) : "NaN"
        }
        printf "\n"
    }
}' "$csv" >"$dat"
gnuplot <<EOF
set terminal pngcairo size 1100,520 noenhanced font ",10"
set output "$png"
set title "twoface speedup over each strategy (time of X / time of twoface; geometric mean over P and K per graph; > 1: twoface faster)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set logscale y 2
set yrange [0.25:*]
set ylabel "speedup of twoface (log scale)"
set grid ytics
set key top left
set xtics rotate by -20
set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 2 dt 2
plot "$dat" using 2:xtic(1) title columnheader(2), '' using 3 title columnheader(3), \
     '' using 4 title columnheader(4), '' using 5 title columnheader(5), '' using 6 title columnheader(6)
EOF
rc=$?
rm -f "$dat"
exit $rc
