#!/usr/bin/env bash
# The README's second command, and what CI runs: install what the tests need, build everything (the
# tests, the benchmarks, the Python package; CUDA code where nvcc is found) and the Python wheel from it,
# run the test suite but for the exhaustive tests labelled `slow`. Extra arguments go to ctest (e.g. -R
# precision, -j1).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
scripts/install_deps.sh
scripts/build.sh
scripts/wheel.sh   # the wheel scripts/pip_install_check.sh installs, from build/: nothing compiles twice
# Both cores (-j; a later -jN in the arguments wins): the suite's long tests run side by side.
ctest --test-dir build --output-on-failure -LE slow -j"$(nproc)" "$@"
echo "test: passed ($((SECONDS - start)) s)"
