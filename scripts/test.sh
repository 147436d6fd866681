#!/usr/bin/env bash
# The README's second command, and what CI runs: install what the tests need, build everything (the
# tests, the benchmarks, the Python package; CUDA code where nvcc is found), run the test suite but for
# the exhaustive tests labelled `slow`. Extra arguments go to ctest (e.g. -R precision, -j2).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
scripts/install_deps.sh
scripts/build.sh
ctest --test-dir build --output-on-failure -LE slow "$@"
echo "test: passed ($((SECONDS - start)) s)"
