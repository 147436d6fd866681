#!/usr/bin/env bash
# The performance gate: runs step_bench (reduced Table II shapes, about a minute) and judges it against
# the committed baseline as ratios to the SGEMM time measured in the same run (plots/bench_compare.py).
# Fails only on a clear regression: a ratio more than max(50 %, 4 noise sigmas) worse than the baseline.
#   scripts/bench_check.sh [OUT.json]      (default: build/step_bench.json)
#   scripts/bench_check.sh --record        also copy the run into results/bench/history/ (for the dashboard)
set -euo pipefail
cd "$(dirname "$0")/.."
record=0
out=build/step_bench.json
for a in "$@"; do
  case "$a" in
    --record) record=1 ;;
    *) out="$a" ;;
  esac
done
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
build/variants/bench/step_bench --benchmark_min_time=0.3 --benchmark_repetitions=3 \
  --benchmark_out="$out" --benchmark_out_format=json --benchmark_context=commit="$commit"
python3 plots/bench_compare.py results/bench/baseline.json "$out" --min-threshold 0.5 --sigmas 4
if [ "$record" = 1 ]; then
  mkdir -p results/bench/history
  cp "$out" "results/bench/history/$(date -u +%Y%m%dT%H%M%SZ)_${commit}.json"
  python3 plots/bench_dashboard.py results/bench/history/*.json -o results/bench/dashboard.html
fi
