#!/bin/sh
# What `make calibrate` runs: measures this machine with 4 ranks and writes
# $BUILD/calibration.txt (for twoface-plan --calibration), then prints it.
#   FULL=1      the full sweep (a few minutes) instead of --quick (< 30 s)
#   NP=P        ranks (default 4); K="32,128" dense widths for the kernels
#   TRANSPORT=tcp  calibrate an emulated network instead of shared memory:
#               OMPI_MCA_btl=self,tcp OMPI_MCA_osc=pt2pt (gets travel over TCP
#               too); writes $BUILD/calibration-tcp.txt
#   OMP_NUM_THREADS  threads per rank the executor will use (default 1: four
#               ranks already oversubscribe the development machine's 2 cores)
# Extra arguments go to twoface-calibrate.
BUILD=${BUILD:-build}
NP=${NP:-4}
K=${K:-128}
if [ "${TRANSPORT:-sm}" = tcp ]; then
    export OMPI_MCA_btl=self,tcp OMPI_MCA_osc=pt2pt
    OUT=${OUT:-$BUILD/calibration-tcp.txt}
fi
OUT=${OUT:-$BUILD/calibration.txt}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# sm for allocated windows, never ucx (corrupted MPI_Get data here); a
# transport chosen by the caller (OMPI_MCA_btl, OMPI_MCA_osc) is kept.
export OMPI_MCA_osc=${OMPI_MCA_osc:-sm,rdma}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
mode=--quick
[ "${FULL:-0}" = 1 ] && mode=
mpirun -n "$NP" --bind-to none "$BUILD/bin/twoface-calibrate" -o "$OUT" -k "$K" $mode "$@" || exit 1
echo
echo "== $OUT"
cat "$OUT"
