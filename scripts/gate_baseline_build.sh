#!/usr/bin/env bash
# Builds step_bench at the performance gate's baseline commit, for scripts/bench_check.sh (issue 41).
#
#   scripts/gate_baseline_build.sh [--baseline REV]
#
# REV defaults to the commit results/bench/baseline names (its first line that is not a comment). The
# commit is checked out in a detached worktree build/gate-base/<commit>/src (so that its build records its
# own commit) and step_bench alone is built in build/gate-base/<commit>/build, Release, without CUDA or the
# Python package; a second call reuses both. The last line of output is "COMMIT PATH_OF_STEP_BENCH".
# Exit status: 0 built, 2 a REV that is not a commit of this clone, or a build that failed.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=""
case "${1:-}" in
  --baseline) rev="${2:?--baseline needs a commit}" ;;
  "") ;;
  -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "gate_baseline_build: unknown option $1" >&2; exit 2 ;;
esac
if [ -z "$rev" ]; then
  [ -f results/bench/baseline ] || { echo "gate_baseline_build: results/bench/baseline is missing" >&2; exit 2; }
  rev=$(grep -v '^[[:space:]]*\(#\|$\)' results/bench/baseline | head -n 1 | tr -d '[:space:]')
fi
commit=$(git rev-parse --verify --quiet "$rev^{commit}") || {
  echo "gate_baseline_build: $rev is not a commit of this clone (a shallow clone lacks history: git fetch --unshallow)" >&2
  exit 2
}
short=${commit:0:12}
dir=build/gate-base/$short
bin=$dir/build/variants/bench/step_bench
start=$SECONDS
if [ ! -x "$bin" ]; then
  git worktree prune
  if [ ! -f "$dir/src/CMakeLists.txt" ]; then
    rm -rf "$dir/src"
    mkdir -p "$dir"
    git worktree add --detach --force "$dir/src" "$commit" >/dev/null
  fi
  launcher=()
  if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S "$dir/src" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release -DLOBENCH_CUDA=OFF -DLOBENCH_PYTHON_PACKAGE=OFF \
        "${launcher[@]}" >/dev/null
  cmake --build "$dir/build" -j"$(nproc)" --target step_bench
  echo "gate_baseline_build: step_bench of $short built in $((SECONDS - start)) s"
else
  echo "gate_baseline_build: step_bench of $short already built ($bin)"
fi
echo "$short $bin"
