#!/bin/sh
# End to end: `make -j` never compiles before the dependency step is over.
# On a fresh machine that step installs the compiler itself, so a
# compile started beside it fails with "mpicc: No such file or directory".
#
# Here the step is a stand-in (DEPS_CMD) that takes 2 s and then leaves a
# marker, and the compiler is a stand-in (CC) that records a call made
# before the marker exists and otherwise only creates its output file. A
# parallel build of every target then shows whether any rule that runs the
# compiler lacks the order-only prerequisite on deps-quiet. Nothing is
# really compiled; the source tree is not written to.
# Environment: TF_SRCDIR (tests/run_tests.sh sets it).
# Last line: "e2e_make: N passed, M failed"; exit status 1 if M > 0.
E2E_NAME=e2e_make
. "${TF_SRCDIR:-.}/tests/lib_e2e.sh"

cat >"$work/deps.sh" <<EOF
#!/bin/sh
sleep 2
echo run >>"$work/deps-runs"
touch "$work/deps-done"
EOF
cat >"$work/cc.sh" <<EOF
#!/bin/sh
[ -f "$work/deps-done" ] || echo "\$*" >>"$work/early"
out=
while [ \$# -gt 0 ]; do
    [ "\$1" = -o ] && out=\$2
    shift
done
[ -n "\$out" ] && mkdir -p "\$(dirname "\$out")" && : >"\$out"
exit 0
EOF
chmod +x "$work/deps.sh" "$work/cc.sh"

# The build runs from a sub-make of `make check` too: none of the outer
# make's settings (BUILD=build-san, SAN=1, its jobserver) may leak in.
env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -C "$SRC" --no-print-directory -j8 \
    BUILD="$work/build" CC="$work/cc.sh" DEPS_CMD="sh $work/deps.sh" all tests \
    >"$work/log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
    bad "make -j8 all tests with the stand-ins failed ($rc): $(tail -5 "$work/log")"
elif [ -s "$work/early" ]; then
    bad "compiled before the dependency step ended: $(head -3 "$work/early" | cut -c1-200)"
else
    n=$(grep -c "$work/cc.sh" "$work/log")
    ok "make -j8 all tests: none of $n compiler calls started before the dependency step"
fi
runs=$(grep -c . "$work/deps-runs" 2>/dev/null || echo 0)
if [ "$runs" = 1 ]; then
    ok "the dependency step ran once"
else
    bad "the dependency step ran $runs times"
fi
# Ordering only: a second build with everything present rebuilds nothing.
env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -C "$SRC" --no-print-directory -j8 \
    BUILD="$work/build" CC="$work/cc.sh" DEPS_CMD="sh $work/deps.sh" all tests \
    >"$work/log2" 2>&1
if grep -q "$work/cc.sh" "$work/log2"; then
    bad "second build recompiled: $(grep "$work/cc.sh" "$work/log2" | head -2 | cut -c1-200)"
else
    ok "second build: nothing recompiled because the dependency step ran"
fi

finish
