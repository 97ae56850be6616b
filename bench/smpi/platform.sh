#!/bin/sh
# Writes a SimGrid platform (XML, stdout) for a cluster of N one-core nodes on
# a two-level fat tree with full bisection (16 nodes per leaf switch, as many
# top switches as a leaf has nodes), the shape of an InfiniBand cluster.
#   sh bench/smpi/platform.sh [N] [BW] [LAT] [SPEED] > platform.xml
#   N      nodes, a multiple of 16 (default 256)
#   BW     bandwidth of every link, SimGrid units (default 12GBps: 100 Gb/s
#          InfiniBand EDR delivers about 12 GB/s)
#   LAT    latency of every link (default 0.5us: node - leaf - top - leaf -
#          node crosses 4 links, 2 us end to end; 2 links, 1 us, within a leaf)
#   SPEED  node speed (default 1Gf; run.sh passes the same value as
#          smpi/host-speed, so a compute block costs what it measured here)
N=${1:-256}
BW=${2:-12GBps}
LAT=${3:-0.5us}
SPEED=${4:-1Gf}
case $N in
    '' | *[!0-9]*) echo "platform.sh: N = '$N': expected a multiple of 16" >&2; exit 1 ;;
esac
if [ "$N" -lt 16 ] || [ $((N % 16)) -ne 0 ]; then
    echo "platform.sh: N = $N: expected a multiple of 16" >&2
    exit 1
fi
LEAVES=$((N / 16))
cat <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- $N nodes, fat tree 2;16,$LEAVES;1,16;1,1, links $BW / $LAT, nodes $SPEED -->
<platform version="4.1">
  <cluster id="ft" prefix="node-" suffix="" radical="0-$((N - 1))" speed="$SPEED"
           bw="$BW" lat="$LAT" topology="FAT_TREE" topo_parameters="2;16,$LEAVES;1,16;1,1"
           loopback_bw="100GBps" loopback_lat="0us"/>
</platform>
XML
