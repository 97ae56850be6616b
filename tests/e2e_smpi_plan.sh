#!/bin/sh
# End to end: the SMPI build of twoface-plan (make smpi; docs/scale.md,
# "Planning at scale") plans on simulated ranks. smpirun sets no launcher
# variables, so only the build's TF_PLAN_ALWAYS_MPI puts it on its MPI path;
# the plan it writes at 4 simulated ranks for P = 4 and P = 6 is the one a
# single process writes (h5dump, timestamps aside); its --json line counts
# the planning ranks and its phases add up to its wall time on the simulated
# clock; every rank finalises (a simulated rank ends when main returns: an
# unfinalised one stalls the simulation); a missing matrix ends the job with
# one line, non-zero, and no output file.
# Needs SimGrid (`make smpi` installs libsimgrid-dev); without smpicc it says
# so and checks nothing. Builds twoface-plan into build-smpi/ (incremental).
# Environment (tests/run_tests.sh sets both): TF_SRCDIR, TF_BUILD.
# Last line: "e2e_smpi_plan: N passed, M failed"; exit status 1 if M > 0.
E2E_NAME=e2e_smpi_plan
. "${TF_SRCDIR:-.}/tests/lib_e2e.sh"
PLAN=$B/bin/twoface-plan
H5DUMP=$B/bin/twoface-h5dump
for p in "$PLAN" "$H5DUMP"; do
    [ -x "$p" ] || { bad "$p is not built"; finish; }
done
e2e_smpi_setup twoface-plan
SPLAN=$SMPI_BUILD/bin/twoface-plan

e2e_directed_150 "$work/a.mtx"

dump() { e2e_plan_dump "$H5DUMP" "$1"; }

for P in 4 6; do
    rm -f "$work/s.h5" "$work/m.h5"
    if ! sim 4 "$SPLAN" "$work/a.mtx" -n "$P" -k 64 --json -q -o "$work/m.h5" \
        >"$work/out" 2>"$work/err"; then
        bad "P = $P: 4 simulated ranks plan (exit non-zero)"
        grep -v INFO "$work/err" | tail -3
        continue
    fi
    ok "P = $P: 4 simulated ranks plan"
    "$PLAN" "$work/a.mtx" -n "$P" -k 64 -q -o "$work/s.h5"
    if dump "$work/s.h5" >"$work/s.txt" && dump "$work/m.h5" >"$work/m.txt" &&
        cmp -s "$work/s.txt" "$work/m.txt"; then
        ok "P = $P: the plan equals the single process's"
    else
        bad "P = $P: the plan equals the single process's"
    fi
    # One JSON line from rank 0 alone, 4 planning ranks, phases adding up to
    # the wall time within 5 % on the simulated clock.
    if [ "$(grep -c '^{' "$work/out")" -eq 1 ] &&
        grep '^{' "$work/out" | awk -v P="$P" '{
            if (!match($0, /"ranks_planning": [0-9]+/)) exit 1
            q = substr($0, RSTART + 18, RLENGTH - 18)
            if (!match($0, /"nranks": [0-9]+/)) exit 1
            p = substr($0, RSTART + 10, RLENGTH - 10)
            if (!match($0, /"total_s": [0-9.]+/)) exit 1
            t = substr($0, RSTART + 11, RLENGTH - 11)
            if (!match($0, /"wall_s": [0-9.]+/)) exit 1
            w = substr($0, RSTART + 10, RLENGTH - 10)
            exit !(q == 4 && p == P && w > 0 && t >= 0.95 * w && t <= 1.05 * w)
        }'; then
        ok "P = $P: --json: 4 planning ranks, phases add up to the simulated wall time"
    else
        bad "P = $P: --json: 4 planning ranks, phases add up to the simulated wall time"
        cat "$work/out"
    fi
done

# A missing matrix: every rank agrees, rank 0 says it in one line.
rm -f "$work/x.h5"
sim 4 "$SPLAN" "$work/missing.mtx" -n 4 -q -o "$work/x.h5" >"$work/out" 2>"$work/err"
rc=$?
msg=$(grep '^twoface-plan:' "$work/err")
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$(echo "$msg" | wc -l)" -eq 1 ] &&
    echo "$msg" | grep -q missing.mtx && [ ! -e "$work/x.h5" ]; then
    ok "a missing matrix: one line, non-zero, no output file"
else
    bad "a missing matrix: one line, non-zero, no output file (rc $rc: $msg)"
fi
finish
