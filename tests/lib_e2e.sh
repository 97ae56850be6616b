# Sourced by the end-to-end scripts (tests/e2e_*.sh; this file's name keeps
# it out of their glob in tests/run_tests.sh): the case counters, the
# summary line the runner counts ("NAME: N passed, M failed"), and a scratch
# folder removed on exit and on INT/TERM. Set E2E_NAME before sourcing.
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
