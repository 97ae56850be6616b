#!/bin/sh
# Writes a SimGrid platform (XML, stdout) for a cluster of N one-core nodes,
# each on its own full-duplex link to a non-blocking switch: what a fat tree
# with full bisection gives every node pair, without simulating its switches
# (a two-level FAT_TREE cluster was first used here; SimGrid's bandwidth-
# sharing solver then took most of the simulation's time, 4 links per route).
# No backbone either: a route is the sender's up-link and the receiver's
# down-link. A backbone link, even an unlimited FATPIPE one, is a constraint
# every flow shares, so each flow's start or end made the solver revisit all
# flows in the system (docs/scale.md, "How it runs": the host time fell
# several-fold, the simulated times moved by under 4%).
#   sh bench/smpi/platform.sh [N] [BW] [LAT] [SPEED] > platform.xml
#   N      nodes (default 256)
#   BW     bandwidth of every node link, SimGrid units (default 12GBps: 100 Gb/s
#          InfiniBand EDR delivers about 12 GB/s), each direction (SPLITDUPLEX)
#   LAT    latency of every node link (default 0.75us: a route crosses two
#          node links, 1.5 us end to end)
#   SPEED  node speed (default 1Gf; run.sh passes the same value as
#          smpi/host-speed, so a compute block costs what it measured here)
N=${1:-256}
BW=${2:-12GBps}
LAT=${3:-0.75us}
SPEED=${4:-1Gf}
case $N in
    '' | *[!0-9]* | 0) echo "platform.sh: N = '$N': expected a positive number of nodes" >&2; exit 1 ;;
esac
cat <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- $N nodes, node links $BW / $LAT full duplex, non-blocking switch, nodes $SPEED -->
<platform version="4.1">
  <cluster id="c" prefix="node-" suffix="" radical="0-$((N - 1))" speed="$SPEED"
           bw="$BW" lat="$LAT" sharing_policy="SPLITDUPLEX"
           loopback_bw="100GBps" loopback_lat="0us"/>
</platform>
XML
