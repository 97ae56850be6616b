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
