#!/bin/sh
# Markdown tables from a bench/run CSV (see bench/run for the columns).
#   sh bench/tables.sh bench/results/spmm-sm.csv sm
# Speedup of twoface over X = median time of X / median time of twoface, from
# the same process (interleaved rounds); > 1 means twoface is faster. "shift"
# is the best replication c of each case.
csv=$1
tr=${2:-sm}
awk -F, -v tr="$tr" '
NR == 1 { next }
{
    key = $2 SUBSEP $5 SUBSEP $6
    if (!(key in seen)) { seen[key] = 1; order[++ncase] = key; G[key] = $2; PP[key] = $5; KK[key] = $6; NNZ[key] = $4 }
    a = $7
    fam = a; if (a ~ /^shift/) fam = "shift"
    t = $10 + 0
    if (fam == "shift") {
        if (!((key, "shift") in T) || t < T[key, "shift"]) { T[key, "shift"] = t; C[key] = $8; BY[key, "shift"] = $14; MS[key, "shift"] = $16 }
    } else {
        T[key, a] = t; BY[key, a] = $14; MS[key, a] = $16
    }
    if (a == "twoface") {
        for (j = 20; j <= 26; j++) BD[key, j] = $j
        IT[key] = $9
        # the classes of the plan twoface ran; "*": the start-up trial kept
        # the runner-up over the choice of the planner
        RAN[key] = ($29 == "" ? "-" : $29) ($30 == "alternative" ? "*" : "")
        if ($30 != "") { ntrial++; if ($30 == "alternative") nalt++ }
    }
    if ($27 != "" && $27 + 0 > maxdiff) maxdiff = $27 + 0
}
function ms(x) { return x == "" ? "-" : sprintf("%.3f", 1e3 * x) }
function mb(x) { return x == "" ? "-" : (x >= 1e6 ? sprintf("%.2f", x / 1e6) : sprintf("%.3f", x / 1e6)) }
END {
    n = split("fetch collective allgather shift p2p", others, " ")
    label = (tr == "tcp" ? "TCP (OMPI_MCA_btl=self,tcp OMPI_MCA_osc=pt2pt)" : "shared memory (default btl)")
    printf "#### Time per SpMM, %s\n\n", label
    printf "Median ms per SpMM (max over ranks), all strategies interleaved in one process on the same B. "
    printf "best/twoface = time of the fastest other strategy / time of twoface (> 1: twoface wins). "
    printf "twoface ran = the classes of the plan twoface ran after its start-up trial; * = the trial kept the runner-up the plan carried instead of the choice of the planner.\n\n"
    printf "| graph | P | K | twoface | twoface ran | fetch | collective | allgather | shift (best c) | p2p | fastest other | best/twoface |\n"
    printf "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|---:|\n"
    for (i = 1; i <= ncase; i++) {
        k = order[i]
        if (!((k, "twoface") in T)) continue
        best = ""; bt = 0
        for (j = 1; j <= n; j++) if ((k, others[j]) in T && (best == "" || T[k, others[j]] < bt)) { best = others[j]; bt = T[k, others[j]] }
        printf "| %s | %s | %s | %s | %s", G[k], PP[k], KK[k], ms(T[k, "twoface"]), RAN[k]
        for (j = 1; j <= n; j++) {
            o = others[j]
            if (o == "shift" && (k, o) in T) printf " | %s (c=%s)", ms(T[k, o]), C[k]
            else printf " | %s", ((k, o) in T) ? ms(T[k, o]) : "-"
        }
        bname = best == "shift" ? "shift(c=" C[k] ")" : best
        printf " | %s | %s%.2f%s |\n", bname, (bt < T[k, "twoface"] ? "**" : ""), bt / T[k, "twoface"], (bt < T[k, "twoface"] ? "**" : "")
        # geometric means
        for (j = 1; j <= n; j++) {
            o = others[j]
            if (!((k, o) in T)) continue
            r = log(T[k, o] / T[k, "twoface"])
            S["all", o] += r; N["all", o]++
            S["K=" KK[k], o] += r; N["K=" KK[k], o]++
            S["P=" PP[k], o] += r; N["P=" PP[k], o]++
        }
        r = log(bt / T[k, "twoface"])
        S["all", "best"] += r; N["all", "best"]++
        S["K=" KK[k], "best"] += r; N["K=" KK[k], "best"]++
        S["P=" PP[k], "best"] += r; N["P=" PP[k], "best"]++
        groups["K=" KK[k]] = 1; groups["P=" PP[k]] = 1
        if (bt < T[k, "twoface"]) { lose[++nlose] = k; LB[k] = bname; LT[k] = bt; LBO[k] = best }
        ncases++
    }
    printf "\nLargest scaled difference between any strategy and twoface in these runs: %.2g (tolerance 1e-5).\n\n", maxdiff
    if (ntrial) printf "Start-up trials: %d of %d twoface contexts ran one (against the runner-up of the plan, or on one node with ranks sharing cores against the same plan read in place); the trial kept the runner-up in %d.\n\n", ntrial, ncases, nalt
    printf "#### Geometric-mean speedup of twoface, %s\n\n", label
    printf "Over the %d cases above; > 1: twoface faster. \"fastest other\" compares with the best of the five in each case.\n\n", ncases
    printf "| cases | over fetch | over collective | over allgather | over shift (best c) | over p2p | over the fastest other |\n"
    printf "|---|---:|---:|---:|---:|---:|---:|\n"
    ng = 0; gl[++ng] = "all"
    for (gk in groups) if (gk ~ /^P=/) gl[++ng] = gk
    for (gk in groups) if (gk ~ /^K=/) gl[++ng] = gk
    # sort the P= and K= groups numerically (insertion sort on the suffix)
    for (x = 3; x <= ng; x++) for (y = x; y > 2; y--) {
        ga = gl[y - 1]; gb = gl[y]
        if (substr(ga, 1, 2) == substr(gb, 1, 2) && substr(ga, 3) + 0 > substr(gb, 3) + 0) { gl[y - 1] = gb; gl[y] = ga }
    }
    for (x = 1; x <= ng; x++) {
        gk = gl[x]
        printf "| %s", gk == "all" ? "all" : gk
        for (j = 1; j <= n; j++) printf " | %s", N[gk, others[j]] ? sprintf("%.2f", exp(S[gk, others[j]] / N[gk, others[j]])) : "-"
        printf " | %s |\n", N[gk, "best"] ? sprintf("%.2f", exp(S[gk, "best"] / N[gk, "best"])) : "-"
    }
    if (N["K=128", "shift"]) printf "\n**Geometric-mean speedup over shift (best c) at K = 128: %.2f** (%d cases).\n", exp(S["K=128", "shift"] / N["K=128", "shift"]), N["K=128", "shift"]
    printf "\n#### Where twoface loses, %s\n\n", label
    if (!nlose) { printf "Nowhere: twoface was the fastest in every case.\n\n"; exit }
    printf "Cases where another strategy was faster; twoface/best = how much slower twoface was. "
    printf "twoface breakdown: ms per SpMM, max over ranks (with one thread per rank the halves run one after the other on one thread): "
    printf "collective half = local compute + collective wait + collective compute; fetch half = fetch wait + fetch compute; sync = waiting for fetchers (DONE). "
    printf "MB = B received per SpMM by the busiest rank.\n\n"
    printf "| graph | P | K | fastest | twoface/best | local | coll wait | coll comp | fetch wait | fetch comp | merge | sync | twoface MB | best MB |\n"
    printf "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    for (i = 1; i <= nlose; i++) {
        k = lose[i]
        printf "| %s | %s | %s | %s | %.2f", G[k], PP[k], KK[k], LB[k], T[k, "twoface"] / LT[k]
        for (j = 20; j <= 26; j++) printf " | %s", ms(BD[k, j])
        printf " | %s | %s |\n", mb(BY[k, "twoface"]), mb(BY[k, LBO[k]])
    }
    printf "\n"
}' "$csv"
