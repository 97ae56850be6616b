#!/bin/sh
# End to end: where the programs write (format/tf_outpath.h). An output path
# that is a device, a FIFO or a directory is refused in one line before any
# work, and is still what it was afterwards; a symbolic link is followed and
# its target replaced; a bad --svg path fails before the plan is written;
# concurrent runs writing the same files do not collide; an output on an
# input or on the other output is refused. twoface-plan,
# twoface-exec --c-out and twoface-calibrate -o.
# Last line: "e2e_outpaths: N passed, M failed"; exit status 1 if M > 0.
E2E_NAME=e2e_outpaths
. "${TF_SRCDIR:-.}/tests/lib_e2e.sh"
e2e_mpi_env
PLAN=$B/bin/twoface-plan
EXEC=$B/bin/twoface-exec
CAL=$B/bin/twoface-calibrate
for p in "$PLAN" "$EXEC" "$CAL"; do
    [ -x "$p" ] || { bad "$p is not built"; finish; }
done

# A 40 x 40 matrix with a ring and a few chords.
{
    echo '%%MatrixMarket matrix coordinate real general'
    echo '40 40 80'
    i=1
    while [ $i -le 40 ]; do
        echo "$i $(( i % 40 + 1 )) 1.5"
        echo "$i $(( (i * 7) % 40 + 1 )) -0.5"
        i=$((i + 1))
    done
} >"$work/a.mtx"

# A character device of our own where we may make one (root): if the
# refusal ever broke, the test would replace this node, not /dev/null.
dev=$work/null
mknod "$dev" c 1 3 2>/dev/null || dev=/dev/null
mkfifo "$work/fifo"
mkdir "$work/dir"

# one_line_fail NAME PATTERN CMD...: CMD must exit non-zero with exactly one
# stderr line containing PATTERN.
one_line_fail() {
    name=$1 pattern=$2
    shift 2
    "$@" >"$work/out" 2>"$work/err"
    rc=$?
    if [ $rc -eq 0 ]; then
        bad "$name: succeeded"
    elif [ "$(grep -c . "$work/err")" -ne 1 ]; then
        bad "$name: expected one line on stderr, got: $(head -c 600 "$work/err")"
    elif ! grep -q -- "$pattern" "$work/err"; then
        bad "$name: '$pattern' not in: $(cat "$work/err")"
    else
        ok "$name (exit $rc): $(cat "$work/err")"
    fi
}

still_chr() { [ -c "$1" ] && ok "$2: $1 is still a character device" || bad "$2: $1 was replaced"; }

# ---- twoface-plan -------------------------------------------------------------
one_line_fail "plan -o device" "not a regular file (character device); twoface writes only regular files" \
    "$PLAN" "$work/a.mtx" -n 2 -o "$dev" -q
still_chr "$dev" "plan -o device"
one_line_fail "plan -o FIFO" "fifo: not a regular file (FIFO)" \
    timeout 60 "$PLAN" "$work/a.mtx" -n 2 -o "$work/fifo" -q
[ -p "$work/fifo" ] && ok "plan -o FIFO: still a FIFO" || bad "plan -o FIFO: replaced"
one_line_fail "plan -o directory" "not a regular file (directory)" \
    "$PLAN" "$work/a.mtx" -n 2 -o "$work/dir" -q
one_line_fail "plan -o ''" "twoface-plan: -o: the output path is empty" \
    "$PLAN" "$work/a.mtx" -n 2 -o '' -q
if grep -q 'tf_' "$work/err"; then bad "plan -o '': internal name in '$(cat "$work/err")'"; fi

one_line_fail "plan --svg device" "not a regular file (character device)" \
    "$PLAN" "$work/a.mtx" -n 2 -o "$work/p.h5" --svg "$dev"
still_chr "$dev" "plan --svg device"
[ ! -e "$work/p.h5" ] && ok "plan --svg device: no plan written" || bad "plan --svg device: plan written"
# Without -q: the success line must not follow a failure.
one_line_fail "plan --svg into a missing directory" "nodir: No such file or directory" \
    "$PLAN" "$work/a.mtx" -n 2 -o "$work/p.h5" --svg "$work/nodir/p.svg"
[ ! -e "$work/p.h5" ] && ok "plan --svg missing directory: checked before the plan is written" ||
    bad "plan --svg missing directory: the plan was written first"

# Links: the targets are replaced, the links stay.
echo old >"$work/target.h5"
ln -s target.h5 "$work/link.h5"
ln -s "$work/pic/target.svg" "$work/svglink.svg"   # dangling: its target is created
mkdir "$work/pic"
if "$PLAN" "$work/a.mtx" -n 2 -o "$work/link.h5" --svg "$work/svglink.svg" -q 2>"$work/err" &&
    [ -L "$work/link.h5" ] && [ -L "$work/svglink.svg" ] &&
    "$B/bin/twoface-h5dump" -H "$work/target.h5" >/dev/null 2>&1 &&
    tail -1 "$work/pic/target.svg" | grep -q '</svg>' &&
    [ -z "$(ls "$work" | grep '\.tmp\.')" ] && [ -z "$(ls "$work/pic" | grep '\.tmp\.')" ]; then
    ok "plan -o and --svg through links: targets written, links kept, no temporaries"
else
    bad "plan through links: $(cat "$work/err"); $(ls -l "$work" "$work/pic" | tr '\n' ' ')"
fi

# Two runs at once, same plan and same picture: unique temporaries, both succeed.
"$PLAN" "$work/a.mtx" -n 2 -o "$work/c.h5" --svg "$work/c.svg" -q 2>"$work/err1" &
p1=$!
"$PLAN" "$work/a.mtx" -n 3 -o "$work/c.h5" --svg "$work/c.svg" -q 2>"$work/err2" &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
if [ $r1 -eq 0 ] && [ $r2 -eq 0 ] && tail -1 "$work/c.svg" | grep -q '</svg>' &&
    [ -z "$(ls "$work" | grep '\.tmp\.')" ]; then
    ok "two concurrent plans with the same -o and --svg"
else
    bad "concurrent plans: $r1 $r2 $(cat "$work/err1" "$work/err2")"
fi

# ---- twoface-exec --c-out ------------------------------------------------------
"$PLAN" "$work/a.mtx" -n 2 -o "$work/x.h5" -q
mpi_fail() { # NAME PATTERN NP CMD...
    name=$1 pattern=$2 np=$3
    shift 3
    timeout 120 mpirun -n "$np" --bind-to none "$@" >"$work/out" 2>"$work/err"
    rc=$?
    if [ $rc -eq 0 ] || [ $rc -eq 124 ]; then
        bad "$name: exit $rc"
    # mpirun adds its own banner about the exit status: count ours only.
    elif [ "$(grep -c '^twoface-' "$work/err")" -ne 1 ]; then
        bad "$name: expected one line, got: $(head -c 600 "$work/err")"
    elif ! grep -q -- "$pattern" "$work/err"; then
        bad "$name: '$pattern' not in: $(cat "$work/err")"
    else
        ok "$name (exit $rc): $(grep -- "$pattern" "$work/err")"
    fi
}
mpi_fail "exec --c-out device" "--c-out: .*not a regular file (character device)" 2 \
    "$EXEC" "$work/x.h5" -k 4 -i 1 --warmup 0 --c-out "$dev"
still_chr "$dev" "exec --c-out device"
ln -s c-target.h5 "$work/c-link.h5"
if timeout 120 mpirun -n 2 --bind-to none "$EXEC" "$work/x.h5" -k 4 -i 1 --warmup 0 \
    --c-out "$work/c-link.h5" >"$work/out" 2>"$work/err" && [ -L "$work/c-link.h5" ] &&
    h5dump -H "$work/c-target.h5" 2>/dev/null | grep -q 'DATASET "/C"\|DATASET "C"' &&
    [ -z "$(ls "$work" | grep '\.tmp\.')" ]; then
    ok "exec --c-out through a link: target written, link kept"
else
    bad "exec --c-out through a link: $(head -c 600 "$work/err")"
fi

# An output on a file the run reads, or on the other output: refused in one
# line before any work, the input intact (it was replaced before).
cp "$work/a.mtx" "$work/keep.mtx"
one_line_fail "plan -o MATRIX" "-o .*a.mtx: the same file as MATRIX" \
    "$PLAN" "$work/a.mtx" -n 2 -o "$work/./a.mtx" -q
one_line_fail "plan --svg MATRIX" "--svg .*: the same file as MATRIX" \
    "$PLAN" "$work/a.mtx" -n 2 -o "$work/y.h5" --svg "$work/a.mtx" -q
one_line_fail "plan --svg = -o" "--svg .*same.h5: the same file as -o" \
    "$PLAN" "$work/a.mtx" -n 2 -o "$work/same.h5" --svg "$work/same.h5" -q
cmp -s "$work/a.mtx" "$work/keep.mtx" && [ ! -e "$work/y.h5" ] && [ ! -e "$work/same.h5" ] &&
    ok "plan: the matrix intact, nothing written" || bad "plan: the matrix or an output changed"
cp "$work/x.h5" "$work/keep.h5"
mpi_fail "exec --c-out PLAN" "--c-out .*x.h5: the same file as PLAN" 2 \
    "$EXEC" "$work/x.h5" -k 4 -i 1 --warmup 0 --c-out "$work/x.h5"
cmp -s "$work/x.h5" "$work/keep.h5" && ok "exec --c-out PLAN: the plan intact" ||
    bad "exec --c-out PLAN: the plan was replaced"

# Standard output that cannot be written (--json, --explain to a full disk):
# the report is lost, so the run fails instead of exiting 0.
if [ -c /dev/full ]; then
    "$PLAN" "$work/a.mtx" -n 2 -o "$work/full.h5" -q --json >/dev/full 2>"$work/err"
    rc=$?
    if [ $rc -eq 1 ] && [ "$(grep -c . "$work/err")" -eq 1 ] &&
        grep -q "^twoface-plan: standard output: " "$work/err"; then
        ok "plan --json to /dev/full: exit 1, $(cat "$work/err")"
    else
        bad "plan --json to /dev/full: exit $rc, stderr: $(head -c 300 "$work/err")"
    fi
fi

# ---- twoface-calibrate -o --------------------------------------------------------
mpi_fail "calibrate -o FIFO (refused before measuring)" "fifo: not a regular file (FIFO)" 2 \
    "$CAL" --quick -o "$work/fifo"
[ -p "$work/fifo" ] && ok "calibrate -o FIFO: still a FIFO" || bad "calibrate -o FIFO: replaced"

finish
