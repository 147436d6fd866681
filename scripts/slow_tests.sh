#!/usr/bin/env bash
# The share of the tests labelled `slow` that CI runs on every submission (scripts/test.sh runs this after
# the main suite): the slow tests, in ctest's order, are dealt into K slices (the i-th into slice i mod K),
# and the commit picks one, slice = (its hash's first 8 hex digits) mod K. So every submission runs a few
# minutes of them, and over the commits every one of them runs: a given slice is left out of one commit
# with probability 1 - 1/K, of n commits in a row with (1 - 1/K)^n (K = 20: 13 % after 40 commits).
#
# K is sized so that a slice fits about 3 minutes on 2 cores; docs/reliability.md ("The slow tier") has
# the measurements behind it.
#
#   scripts/slow_tests.sh [BUILD_DIR]                this commit's slice (BUILD_DIR: build)
#   LOBENCH_SLOW_SLICE=N scripts/slow_tests.sh       slice N (0 <= N < K)
#   LOBENCH_SLOW_SLICE=all scripts/slow_tests.sh     every slow test (as ctest --test-dir build -L slow)
#   LOBENCH_SLOW_SLICE=none scripts/slow_tests.sh    none (scripts/test.sh without its slow share)
#   scripts/slow_tests.sh --self-test [BUILD_DIR]    checks that the K slices are disjoint and hold every
#                                                    slow test, and that the commit's slice is one of them
# Exit status: ctest's (0 when the slice passed), 1 for a failed self-test, 2 for a bad LOBENCH_SLOW_SLICE
# or a missing build.
set -euo pipefail
cd "$(dirname "$0")/.."
readonly K=20
self_test=0
if [ "${1:-}" = --self-test ]; then
  self_test=1
  shift
fi
build=${1:-build}
if [ ! -f "$build/CTestTestfile.cmake" ]; then
  echo "slow tests: $build is not a build directory with tests (scripts/build.sh makes build/)" >&2
  exit 2
fi

# ctest's numbers of the slow tests (its global numbering, which -I takes), in its order.
mapfile -t tests < <(ctest --test-dir "$build" -L slow -N | sed -n 's/^ *Test *#\([0-9]*\):.*/\1/p')

# The numbers of slice $1, comma-separated.
slice_tests() {
  local i picked=()
  for i in "${!tests[@]}"; do
    if [ $((i % K)) -eq "$1" ]; then picked+=("${tests[$i]}"); fi
  done
  (IFS=,; echo "${picked[*]}")
}

# This commit's slice, and why it is that one.
commit_slice() {
  local commit
  if commit=$(git rev-parse --verify -q HEAD 2>/dev/null); then
    slice=$((16#${commit:0:8} % K))
    why="commit ${commit:0:12}: 0x${commit:0:8} mod $K"
  else
    slice=0
    why="not a git checkout: slice 0"
  fi
}

if [ "$self_test" = 1 ]; then
  joined=""
  for ((s = 0; s < K; s++)); do joined+="$(slice_tests "$s"),"; done
  got=$(tr ',' '\n' <<< "$joined" | sed '/^$/d' | sort -n)
  want=$(printf '%s\n' "${tests[@]}" | sed '/^$/d' | sort -n)
  if [ "$got" != "$want" ]; then
    echo "slow tests: the $K slices do not hold each of the ${#tests[@]} slow tests exactly once" >&2
    exit 1
  fi
  commit_slice
  if [ "$slice" -lt 0 ] || [ "$slice" -ge "$K" ]; then
    echo "slow tests: the commit's slice $slice ($why) is not one of 0..$((K - 1))" >&2
    exit 1
  fi
  echo "slow tests: $K slices hold each of the ${#tests[@]} slow tests once; this commit's: $slice ($why)"
  exit 0
fi

if [ "${#tests[@]}" -eq 0 ]; then
  echo "slow tests: none in $build (built with LOBENCH_BUILD_TESTS=OFF?)"
  exit 0
fi
choice=${LOBENCH_SLOW_SLICE:-}
case "$choice" in
  none)
    echo "slow tests: left out (LOBENCH_SLOW_SLICE=none); all of them: LOBENCH_SLOW_SLICE=all scripts/slow_tests.sh"
    exit 0 ;;
  all)
    echo "slow tests: all ${#tests[@]} (LOBENCH_SLOW_SLICE=all)"
    exec ctest --test-dir "$build" --output-on-failure -L slow ;;
  "")
    commit_slice ;;
  *)
    if ! [[ "$choice" =~ ^[0-9]+$ ]] || [ "$choice" -ge "$K" ]; then
      echo "slow tests: LOBENCH_SLOW_SLICE=$choice is not 'all', 'none' or a slice number 0..$((K - 1))" >&2
      exit 2
    fi
    slice=$choice
    why="LOBENCH_SLOW_SLICE=$choice" ;;
esac

list=$(slice_tests "$slice")
n=$(tr ',' '\n' <<< "$list" | sed '/^$/d' | wc -l)
echo "slow tests: slice $slice of $K ($why): $n of ${#tests[@]} tests; all of them:" \
  "LOBENCH_SLOW_SLICE=all scripts/slow_tests.sh (about 45 min on 2 cores), another slice: LOBENCH_SLOW_SLICE=N"
[ "$n" -gt 0 ] || exit 0
# (-I 0,0,0,n,m,...: exactly the tests numbered n, m, ...)
exec ctest --test-dir "$build" --output-on-failure -I "0,0,0,$list"
