# What the bench scripts that run twoface-exec on this machine share:
# sourced (". bench/lib_bench.sh"), after the script's own defaults.
#
#   bench_mpi_env         Open MPI oversubscribed on one node, root allowed,
#                         one OpenMP thread, passive waits (docs/benchmarks.md)
#   bench_graphs          GRAPHS defaults to every *.mtx.zst in $DATA
#   bench_need NAME BIN...  each BIN executable, else "NAME: BIN is not built"
#   bench_work NAME       $work: $OUT (kept) when given, else a temporary
#                         directory removed at exit
#   load1                 the 1-minute load average
bench_mpi_env() {
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_osc=sm,rdma OMPI_MCA_mpi_yield_when_idle=1
    export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
}

bench_graphs() {
    if [ -z "${GRAPHS:-}" ]; then
        GRAPHS=$(for f in "$DATA"/*.mtx.zst; do basename "$f" .mtx.zst; done)
    fi
}

bench_need() {
    _bn=$1
    shift
    for _b in "$@"; do
        [ -x "$_b" ] || { echo "$_bn: $_b is not built (make)" >&2; exit 1; }
    done
}

bench_work() {
    if [ -n "${OUT:-}" ]; then
        mkdir -p "$OUT" || exit 1
        work=$OUT
    else
        work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 1
        trap 'rm -rf "$work"' EXIT
    fi
}

load1() { cut -d' ' -f1 /proc/loadavg; }
