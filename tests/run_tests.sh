#!/bin/sh
# Runs every test binary and end-to-end script, prints each Check summary
# line and a total, and exits non-zero if anything failed.
#   serial suites   build/tests/test_*        (Check, forking)
#   MPI suites      build/tests/mpi_*         at 1, 2, 3 and 4 ranks, oversubscribed
#   end-to-end      tests/e2e_*.sh            (print "N passed, M failed")
#   Python          tests/python/run.sh       (pytest; prints "python: N passed, M failed")
BUILD=${BUILD:-build}
export TF_SRCDIR=$(pwd)
export TF_BUILD=$BUILD
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-120}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# sm for allocated windows, never ucx (corrupted MPI_Get data here).
export OMPI_MCA_osc=sm,rdma OMPI_MCA_osc_rdma_priority=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
# Ranks outnumber cores: without yielding, busy-polling ranks starve each other.
export OMPI_MCA_mpi_yield_when_idle=1
export HDF5_PLUGIN_PATH=$BUILD/hdf5-plugins
# Leak reports from Open MPI's own start-up allocations are not ours.
export LSAN_OPTIONS=suppressions=$TF_SRCDIR/tests/lsan.supp:print_suppressions=0
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
MPI_TIMEOUT=${MPI_TIMEOUT:-600}

# Every file a test makes goes under one directory, removed at the end:
# forked Check tests that fail or abort never reach their own clean-up.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/twoface-check.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
export TMPDIR=$scratch
log=$(mktemp)
status=0
run() { # name, command...
    name=$1; shift
    out=$(mktemp)
    "$@" >"$out" 2>&1
    rc=$?
    grep -E '^[0-9]+%: Checks: |^[a-z0-9_]+: [0-9]+ passed, [0-9]+ failed' "$out" | tee -a "$log"
    if [ $rc -ne 0 ]; then
        echo "FAILED ($rc): $name" | tee -a "$log"
        sed -n '1,60p' "$out" | grep -v '^[0-9]*%: Checks' | sed 's/^/    /'
        status=1
    fi
    rm -f "$out"
}

for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    run "$t" "$t"
done
for t in "$BUILD"/tests/mpi_*; do
    [ -x "$t" ] || continue
    for np in 1 2 3 4; do
        # Open MPI leaks from components it unloads at finalize (unsymbolised,
        # so no suppression can name them): leak checking is on for serial
        # suites only; ASan and UBSan stay on everywhere.
        ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 \
        run "$t -n $np" timeout "$MPI_TIMEOUT" mpirun -n $np --bind-to none "$t"
    done
done
for t in tests/e2e_*.sh; do
    [ -f "$t" ] || continue
    # The scripts launch MPI programs: same leak-check rule as the MPI suites.
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 \
    run "$t" timeout "$MPI_TIMEOUT" sh "$t"
done

# ---- Python module (python/twoface): its pytest suite, one summary line ----
if [ -f tests/python/run.sh ]; then
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 \
    run tests/python timeout "$MPI_TIMEOUT" sh tests/python/run.sh
fi

# Totals over all runners: Check lines count tests, e2e lines count cases.
awk '
/^[0-9]+%: Checks: / { gsub(",", ""); c += $3; f += $5 + $7 }
/^[a-z0-9_]+: [0-9]+ passed, [0-9]+ failed/ { c += $2 + $4; f += $4 }
/^FAILED/ { runs++ }
END { printf "\nTotal: %d passed, %d failed\n", c - f, f + runs }' "$log"
rm -f "$log"
exit $status
