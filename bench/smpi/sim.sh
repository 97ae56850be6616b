# The simulated cluster's SMPI options and the sim() runner, shared by
# bench/smpi/run.sh (the executor) and bench/smpi/plan.sh (the planner), so
# that both run on the same simulated machine. Sourced; needs OUT (holding
# platform.xml, from platform.sh) and TIMEOUT (seconds per simulated job).
#
# smpi/test, iprobe: SMPI charges 100 us per MPI_Test by default (and grows
# it on repeated calls) to stop busy loops from freezing simulated time; the
# executor tests between compute chunks, so that would be a fake 0.8 ms per
# SpMM. 0.1 us is the order of a real MPI_Test. bw/lat factors 1: the
# platform's numbers as they are (the defaults are fitted to an Ethernet
# cluster). privatization: every rank gets its own copy of our globals.
# network/crosstraffic:0: SimGrid by default sends a TCP acknowledgement
# flow back for every flow, which the links' reverse directions carry; an
# InfiniBand RDMA network has none, and the extra flows doubled the
# solver's work. smpi/allgather:ring, smpi/alltoall:pair,
# smpi/alltoallv:pair: SMPI's default algorithms post all 2 (P - 1) requests
# at once and complete them with a wait-any loop that is quadratic in host
# time; MPI_Win_allocate runs an allgather inside, and at P = 256 the
# executor's set-up (windows, counts, row lists) had not finished after 10
# minutes. These calls are all set-up (the timed SpMMs use the nonblocking
# MPI_Ialltoallw/v, MPI_Allgatherv, and the shift ring, which these options
# do not touch), and ring/pairwise are what Open MPI uses for large P.
# The timed exchanges stay quadratic in host time (SMPI completes a
# nonblocking collective with the same wait-any loop), which is what keeps
# P = 256 out of reach here (docs/scale.md).
# SIMCOLL: those three choices, unless the sourcing script sets its own.
# bench/smpi/plan.sh runs MPI_Alltoall and MPI_Allgather with Bruck's
# algorithm instead: the planner's all-to-alls and all-gathers are its timed
# work, a few bytes a rank, and for those Open MPI's fixed rules take
# log2(P) steps (alltoall: Bruck for blocks under 200 bytes on more than 12
# ranks, coll_tuned_alltoall_small_msg; allgather: recursive doubling or
# Bruck), where pairwise and ring take P - 1.
export OMP_NUM_THREADS=1
SIMOPTS="--cfg=smpi/host-speed:1Gf --cfg=smpi/test:1e-7 --cfg=smpi/iprobe:1e-7
 --cfg=smpi/grow-injected-times:no --cfg=smpi/wtime:0 --cfg=smpi/bw-factor:0:1
 --cfg=smpi/lat-factor:0:1 --cfg=smpi/privatization:1 --cfg=network/crosstraffic:0
 ${SIMCOLL:---cfg=smpi/allgather:ring --cfg=smpi/alltoall:pair --cfg=smpi/alltoallv:pair}
 --log=smpi_mpi.thresh:error --log=xbt_cfg.thresh:warning --log=smpi_config.thresh:error"
sim() { # ranks, program and arguments
    np=$1
    shift
    timeout "$TIMEOUT" smpirun -np "$np" -platform "$OUT/platform.xml" $SIMOPTS "$@"
}
