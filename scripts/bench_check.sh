#!/usr/bin/env bash
# The performance gate: runs step_bench at small shapes with enough repetitions to test, then compares
# it with a baseline run of the same machine (`lobench compare`'s statistics, plots/perf_compare.py:
# Mann-Whitney U on the repetitions of each benchmark's time relative to the SGEMM of the same shape in
# the same run; a benchmark fails when it is more than --threshold percent slower with p < 0.05).
#
#   scripts/bench_check.sh [options] [OUT.json]          (OUT default: build/step_bench.json)
#     --baseline FILE    compare with this run (default: the newest run of this machine in --history,
#                        else results/bench/baseline.json, which gates only the machine it was measured
#                        on and is shown for information elsewhere); `none`: no comparison
#     --history DIR      the history store, a folder outside the source tree ($LOBENCH_BENCH_HISTORY)
#     --record           add the run to the history store, whatever the verdict (the dashboard marks a
#                        regression; a main-branch job records, a pull-request job only compares)
#     --site DIR         then regenerate the dashboard from the history store into DIR
#     --threshold PCT    percent slower that fails (default 10)
#     --reps N           repetitions per benchmark (default 9; at least 4 to be testable)
#     --shapes LIST      VxD shapes (default 16000x64,32000x128: about 30 s on 2 idle cores)
#     --step-bench PATH  the benchmark binary (default build/variants/bench/step_bench)
#     --no-confirm       fail on the first measurement (default: a slowdown is measured a second time and
#                        fails only when that measurement shows it too)
# Exit status: 0 pass, 1 a benchmark slower beyond the threshold, 2 usage or a missing/invalid baseline.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/step_bench.json baseline="" history="${LOBENCH_BENCH_HISTORY:-}" record=0 site="" threshold=10 reps=9
shapes=16000x64,32000x128 bench=build/variants/bench/step_bench confirm=1
usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --baseline) baseline="${2:?--baseline needs a file}"; shift ;;
    --history) history="${2:?--history needs a folder}"; shift ;;
    --record) record=1 ;;
    --site) site="${2:?--site needs a folder}"; shift ;;
    --threshold) threshold="${2:?--threshold needs a percentage}"; shift ;;
    --reps) reps="${2:?--reps needs a count}"; shift ;;
    --shapes) shapes="${2:?--shapes needs VxD,...}"; shift ;;
    --step-bench) bench="${2:?--step-bench needs a path}"; shift ;;
    --no-confirm) confirm=0 ;;
    -h|--help) usage ;;
    -*) echo "bench_check.sh: unknown option $1" >&2; usage ;;
    *) out="$1" ;;
  esac
  shift
done
[[ "$reps" =~ ^[0-9]+$ ]] && [ "$reps" -ge 4 ] || { echo "bench_check.sh: --reps $reps: need at least 4 to test" >&2; exit 2; }
[ -x "$bench" ] || { echo "bench_check.sh: $bench: not built (cmake --build build --target step_bench)" >&2; exit 2; }
if [ "$record" = 1 ] && [ -z "$history" ]; then echo "bench_check.sh: --record needs --history DIR" >&2; exit 2; fi
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
mkdir -p "$(dirname "$out")"
measure() {
  local start=$SECONDS
  LOBENCH_BENCH_SHAPES="$shapes" "$bench" --benchmark_filter='^(gemm|fused|chunked)/' \
    --benchmark_repetitions="$reps" --benchmark_min_time=0.05 --benchmark_enable_random_interleaving=true \
    --benchmark_out="$1" --benchmark_out_format=json --benchmark_context=commit="$commit" > /dev/null
  echo "bench_check: step_bench ($shapes, $reps repetitions) in $((SECONDS - start)) s -> $1"
}
measure "$out"
if [ -z "$baseline" ] && [ -n "$history" ] && [ -d "$history" ]; then
  baseline=$(python3 plots/perf_history.py latest "$history" "$out" || true)
fi
gated=1
if [ -z "$baseline" ]; then
  baseline=results/bench/baseline.json
  # The committed baseline gates only the machine (and yardstick) it was measured on: elsewhere its
  # ratios are shown for information, and this run, once recorded, is the store's first of this machine.
  here=$(python3 plots/perf_history.py fingerprint "$out") there=$(python3 plots/perf_history.py fingerprint "$baseline")
  if [ "$here" != "$there" ]; then
    gated=0
    echo "bench_check: no run of this machine ($here) in the history store; the committed baseline is from $there: compared for information, not gated"
  fi
fi
rc=0
if [ "$baseline" = none ]; then
  echo "bench_check: --baseline none: not compared"
else
  echo "bench_check: baseline $baseline"
  python3 plots/perf_compare.py "$baseline" "$out" --threshold "$threshold" || rc=$?
  if [ "$gated" = 0 ] && [ "$rc" = 1 ]; then rc=0; fi
  if [ "$rc" = 1 ] && [ "$confirm" = 1 ]; then
    # A shared machine has slow minutes: a slowdown counts only when a second, independent measurement
    # shows it too (each test keeps its own alpha; both must fail). A real 1.3x regression fails both.
    again="${out%.json}.confirm.json"
    echo "bench_check: slower than the baseline; measuring again to confirm ($again)"
    measure "$again"
    rc=0
    python3 plots/perf_compare.py "$baseline" "$again" --threshold "$threshold" || rc=$?
    case "$rc" in
      0) echo "bench_check: not confirmed: the second measurement is within the threshold (a noisy minute, not a regression)" ;;
      1) echo "bench_check: confirmed by a second measurement: a regression" ;;
    esac
  fi
fi
if [ "$rc" != 2 ] && [ "$record" = 1 ]; then
  echo "bench_check: recorded $(python3 plots/perf_history.py record "$history" "$out")"
fi
if [ -n "$site" ] && [ -n "$history" ] && [ -d "$history" ]; then
  python3 plots/bench_dashboard.py "$history" -o "$site" --threshold "$threshold"
fi
exit "$rc"
