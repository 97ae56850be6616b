#!/bin/sh
# The owner's bf16 rounding per value (bench/bf16_pack.c): every vector set,
# and the fused pack-round against the old round-then-copy and float32's
# copy, at 16K values (in cache), 1M and 8M (from memory).
#   sh bench/bf16_pack.sh        Environment: CC (mpicc), OUT (${TMPDIR:-/tmp})
CC=${CC:-mpicc}
OUT=${OUT:-${TMPDIR:-/tmp}}
bin=$OUT/twoface-bf16-pack
$CC -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Wall -Wextra -Iformat -o "$bin" bench/bf16_pack.c \
    format/tf_bf16.c || exit 1
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); uptime: $(uptime)"
for n in 16384 1048576 8388608; do
    "$bin" $n || exit 1
done
echo "# end: $(uptime)"
