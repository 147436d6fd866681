#!/usr/bin/env bash
# The README's second command, and what CI runs: install what the tests need, build everything (the
# tests, the benchmarks, the Python package; CUDA code where nvcc is found) and the Python wheel from it,
# run the test suite but for the exhaustive tests labelled `slow`, then this commit's share of those
# (scripts/slow_tests.sh: a slice of about 3 minutes chosen by the commit hash, so that over the commits
# every slow test runs; it prints which slice ran and how to run them all). Extra arguments go to the main
# ctest (e.g. -R precision, -j1); LOBENCH_SLOW_SLICE=none leaves the slow share out, =all runs every slow test.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
scripts/install_deps.sh
scripts/build.sh
scripts/wheel.sh   # the wheel scripts/pip_install_check.sh installs, from build/: nothing compiles twice
# The tests' caches (the measured kernel choice of `lobench tune`, harness/meters/products_cache.hpp) go
# under build/, not into the user's ~/.cache: a test run leaves the home folder as it found it.
export XDG_CACHE_HOME="$PWD/build/test-cache"
# (ctest itself sets the tests' OpenMP wait policy: cmake/ctest_environment.cmake)
# Both cores (-j; a later -jN in the arguments wins): the suite's long tests run side by side.
ctest --test-dir build --output-on-failure -LE slow -j"$(nproc)" "$@"
scripts/slow_tests.sh build
echo "test: passed ($((SECONDS - start)) s)"
