# Sourced by the end-to-end scripts (tests/e2e_*.sh; this file's name keeps
# it out of their glob in tests/run_tests.sh): the source and build trees
# (SRC, and B made absolute, from TF_SRCDIR and TF_BUILD), the case
# counters, the summary line the runner counts ("NAME: N passed, M failed"),
# a scratch folder removed on exit and on INT/TERM, and e2e_mpi_env for the
# scripts that run mpirun without tests/run_tests.sh's environment. Set
# E2E_NAME before sourcing.
SRC=${TF_SRCDIR:-.}
B=${TF_BUILD:-build}
case $B in /*) ;; *) B=$(pwd)/$B ;; esac
# Open MPI as root, oversubscribed (more ranks than the 2 cores), one-sided
# over shared memory, ranks yielding when idle; one OpenMP thread, passive.
e2e_mpi_env() {
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_rmaps_base_oversubscribe=1
    export OMPI_MCA_osc=${OMPI_MCA_osc:-sm,rdma}
    export OMPI_MCA_mpi_yield_when_idle=1
    export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
}
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }
finish() {
    rm -rf "$work"
    echo "$E2E_NAME: $pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit $?
}
work=$(mktemp -d "${TMPDIR:-/tmp}/$E2E_NAME.XXXXXX") || exit 1
trap 'rm -rf "$work"; exit 1' INT TERM
# e2e_directed_150 FILE: a 150 x 150 directed matrix, three entries a row
# and a few on the diagonal, weights 1-4: at up to 6 ranks every rank has
# rows, remote columns and stripes to exchange.
e2e_directed_150() {
    awk 'BEGIN {
        n = 150; k = 0
        for (i = 0; i < n; i++) { r[k] = i; c[k] = (7 * i + 3) % n; k++
                                  r[k] = i; c[k] = (i * i + 1) % n; k++
                                  r[k] = i; c[k] = (i + 75) % n; k++ }
        for (i = 0; i < n; i += 10) { r[k] = i; c[k] = i; k++ }
        print "%%MatrixMarket matrix coordinate real general"
        print n, n, k
        for (e = 0; e < k; e++) print r[e] + 1, c[e] + 1, 1 + e % 4
    }' >"$1"
}
# e2e_run_mpi Q COMMAND...: mpirun on Q ranks, unbound, at most 300 s.
e2e_run_mpi() { q_=$1; shift; timeout 300 mpirun -n "$q_" --bind-to none "$@"; }
# e2e_per_rank_wrapper FILE [PROGRAM]: writes FILE, a command that runs
# PROGRAM (or its own first argument) with every "@R@" in the arguments
# replaced by the rank's number, so that each rank reads its own copy of an
# input (each node its own, without a shared file system).
e2e_per_rank_wrapper() {
    {
        echo '#!/bin/sh'
        echo 'r=${OMPI_COMM_WORLD_RANK:-0}'
        echo 'for a; do shift; set -- "$@" "$(printf '"'"'%s'"'"' "$a" | sed "s/@R@/$r/g")"; done'
        if [ $# -gt 1 ]; then
            printf 'exec "%s" "$@"\n' "$2"
        else
            echo 'exec "$@"'
        fi
    } >"$1" && chmod +x "$1"
}
# e2e_cora_tools [PROGRAM ...]: PLAN and EXEC (twoface-plan, twoface-exec of
# the build), any further programs the script names, and MATRIX (the Cora
# graph shipped in examples/data), each checked to be there; a missing one is
# a failed case and ends the script.
e2e_cora_tools() {
    PLAN=$B/bin/twoface-plan
    EXEC=$B/bin/twoface-exec
    MATRIX=$SRC/examples/data/cora.mtx.zst
    for p in "$PLAN" "$EXEC" "$@"; do
        [ -x "$p" ] || { bad "$p is not built"; finish; }
    done
    [ -f "$MATRIX" ] || { bad "$MATRIX missing"; finish; }
}
# e2e_h5dump H5DUMP ARGS...: H5DUMP's output for ARGS, with the ASan runtime
# inside it where a sanitized build's filter plugin needs it. When h5dump
# fails or prints no data (a plugin it cannot load gives a header and an
# exit status of 1), the output is one line naming the arguments instead and
# the status is 1, so that two failed dumps of different files never
# compare equal.
e2e_h5dump() {
    prog_=$1
    shift
    h5env_=
    if nm -D "$B/hdf5-plugins/libh5zstd.so" 2>/dev/null | grep -q __asan_init; then
        h5env_="LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0"
    fi
    # shellcheck disable=SC2086
    if out_=$(env $h5env_ "$prog_" "$@" 2>/dev/null) &&
        printf '%s\n' "$out_" | grep -q 'DATA {'; then
        printf '%s\n' "$out_"
        return 0
    fi
    echo "e2e_h5dump: $prog_ $* failed or printed no data"
    return 1
}
# e2e_plan_dump H5DUMP FILE: the plan's h5dump without its first line (the
# file name) and with creation dates replaced by "DATE", so that two writes
# of one plan compare equal; a failed dump gives e2e_h5dump's line, which
# names the file.
e2e_plan_dump() {
    e2e_h5dump "$1" "$2" >"$2.dump.$$" || { cat "$2.dump.$$"; rm -f "$2.dump.$$"; return 1; }
    sed -e 1d -e 's/"[0-9]\{4\}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z"/"DATE"/' \
        "$2.dump.$$"
    rm -f "$2.dump.$$"
}

# The simulated cluster of the e2e_smpi_* scripts. Without SimGrid the script
# says so and ends, checking nothing. Otherwise builds build-smpi/bin/$1 with
# smpicc (incremental) in a sub-make of `make check` that none of the outer
# make's settings (BUILD=build-san, SAN=1, its jobserver) leak into - make
# exports its command-line variables to the environment of what it runs, so
# SAN is also unset and overridden - then writes a 4-host platform to
# $work/platform.xml and loads bench/smpi/sim.sh. Sets SMPI_BUILD, OUT, TIMEOUT.
e2e_smpi_setup() {
    if ! command -v smpicc >/dev/null || ! command -v smpirun >/dev/null; then
        echo "skip: no smpicc/smpirun (SimGrid; make smpi installs libsimgrid-dev)"
        finish
    fi
    SMPI_BUILD=$(cd "$SRC" && pwd)/build-smpi
    if env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u SAN -u BUILD make -C "$SRC" --no-print-directory \
        BUILD="$SMPI_BUILD" CC=smpicc SMPI=1 SAN=0 "$SMPI_BUILD/bin/$1" >"$work/build.log" 2>&1; then
        ok "smpicc builds $1"
    else
        tail -5 "$work/build.log"
        bad "smpicc builds $1"
        finish
    fi
    OUT=$work
    TIMEOUT=300
    sh "$SRC/bench/smpi/platform.sh" 4 >"$work/platform.xml" || { bad "platform.sh"; finish; }
    . "$SRC/bench/smpi/sim.sh"
}

# The small directed GCN input of e2e_gcn.sh and e2e_gcn_ckpt.sh: 7 nodes with
# weighted directed edges ($work/dir.mtx), features 7 x 3, 3 classes, a split;
# sets DIR to the twoface-gcn options that name them.
e2e_gcn_directed_inputs() {
    cat >"$work/dir.mtx" <<'M'
%%MatrixMarket matrix coordinate real general
7 7 10
1 2 1.0
2 3 0.5
3 1 2.0
3 4 1.0
4 5 1.5
5 6 1.0
6 7 0.25
7 1 1.0
2 6 1.0
5 2 3.0
M
    cat >"$work/dir.feat.mtx" <<'M'
%%MatrixMarket matrix coordinate real general
7 3 9
1 1 1
2 2 1
3 3 1
4 1 2
4 2 1
5 3 1
6 1 1
7 2 3
7 3 1
M
    printf '0\n1\n2\n0\n1\n2\n0\n' >"$work/dir.labels"
    printf 'train\ntrain\ntrain\nval\ntest\ntrain\ntest\n' >"$work/dir.split"
    DIR="--features $work/dir.feat.mtx --labels $work/dir.labels --split $work/dir.split"
}
