#!/bin/sh
# The pytest suite of python/twoface, for tests/run_tests.sh: runs pytest
# under Debian's python (/usr/bin/python3, where python3-torch, -mpi4py and
# -pytest live) and prints one line "python: N passed, M failed" that the
# runner counts. Failures and errors count as failed; pytest's exit 5 (no
# test collected) and any other exit without a failure counted (no pytest,
# a crash) count as one failure.
PY=${TF_PYTHON:-/usr/bin/python3}
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in the source tree
here=$(dirname "$0")
build=${TF_BUILD:-build}
if ldd "$build/lib/libtwoface.so" 2>/dev/null | grep -q libasan; then
    # make sanitize: an ASan/UBSan library inside a python that is not
    # instrumented needs the sanitizer runtimes loaded first.
    LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
    export LD_PRELOAD ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}
fi
out=$(mktemp)
"$PY" -m pytest -q --tb=short -rfE -p no:cacheprovider "$here" >"$out" 2>&1
rc=$?
summary=$(grep -E '^(=+ )?[0-9]+ (passed|failed|error)|no tests ran' "$out" | tail -n 1)
count() { echo "$summary" | grep -oE "[0-9]+ $1" | grep -oE '^[0-9]+' || echo 0; }
passed=$(count passed); failed=$(count failed); errors=$(count 'errors?')
failed=$((failed + errors))
if [ $rc -eq 5 ]; then
    echo "pytest collected no test in $here"
    failed=$((failed + 1))
elif [ $rc -ne 0 ] && [ "$failed" -eq 0 ]; then # e.g. no pytest module, a crash
    echo "pytest exited $rc:"
    tail -n 5 "$out"
    failed=1
fi
[ "$failed" -gt 0 ] && sed -n '/short test summary/,$p' "$out" | head -n 40
rm -f "$out"
echo "python: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
