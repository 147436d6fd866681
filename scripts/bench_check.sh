#!/usr/bin/env bash
# The performance gate, paired (issue 41; docs/dashboard.md): builds step_bench at the baseline commit
# (results/bench/baseline names it) beside the candidate's, runs the two alternately on this machine in
# one session (plots/perf_paired.py: rounds, the two in a random order within each, the benchmarks in a
# random order within each process), and decides from the ratios of the same round (`lobench compare`'s
# paired test, plots/perf_compare.py: slower = the ratios are centred above 1 + threshold, one-sided
# Wilcoxon signed-rank, p < 0.05). A slowdown fails only when a second, independent set of rounds shows it
# too. No number measured on another machine, or earlier on this one, is ever needed.
#
#   scripts/bench_check.sh [options] [OUT_DIR]         (OUT_DIR default: build/gate)
#     --baseline REV       the baseline commit (default: the commit results/bench/baseline names)
#     --baseline-bench P   use this step_bench binary as the baseline instead of building REV (tests)
#     --step-bench PATH    the candidate's binary (default build/variants/bench/step_bench)
#     --rounds N           rounds per set (default 9; at least 5 to be testable)
#     --shapes LIST        VxD shapes (default 16000x64,32000x128)
#     --threshold PCT      percent slower that fails (default 10)
#     --inject F           test hook: the candidate's variant steps take F times their CPU time
#                          (LOBENCH_INJECT_SLOWDOWN=F in the candidate's processes only)
#     --no-confirm         fail on the first set of rounds
#     --history DIR        the history store, a folder outside the source tree ($LOBENCH_BENCH_HISTORY)
#     --record             add this paired run to the history store, whatever the verdict
#     --site DIR           then regenerate the dashboard from the history store into DIR
# Exit status: 0 pass, 1 a benchmark slower beyond the threshold (confirmed), 2 usage, a baseline that
# cannot be built, a benchmark binary that failed, or a store that cannot be written.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/gate baseline="" base_bench="" bench=build/variants/bench/step_bench rounds=9
shapes=16000x64,32000x128 threshold=10 inject="" confirm=1 history="${LOBENCH_BENCH_HISTORY:-}" record=0 site=""
usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
die() { echo "bench_check: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --baseline) baseline="${2:?--baseline needs a commit}"; shift ;;
    --baseline-bench) base_bench="${2:?--baseline-bench needs a path}"; shift ;;
    --step-bench) bench="${2:?--step-bench needs a path}"; shift ;;
    --rounds) rounds="${2:?--rounds needs a count}"; shift ;;
    --shapes) shapes="${2:?--shapes needs VxD,...}"; shift ;;
    --threshold) threshold="${2:?--threshold needs a percentage}"; shift ;;
    --inject) inject="${2:?--inject needs a factor}"; shift ;;
    --no-confirm) confirm=0 ;;
    --history) history="${2:?--history needs a folder}"; shift ;;
    --record) record=1 ;;
    --site) site="${2:?--site needs a folder}"; shift ;;
    -h|--help) usage ;;
    -*) echo "bench_check: unknown option $1" >&2; usage ;;
    *) out="$1" ;;
  esac
  shift
done
[[ "$rounds" =~ ^[0-9]+$ ]] && [ "$rounds" -ge 5 ] && [ "$rounds" -le 200 ] || die "--rounds $rounds: want 5 to 200 (fewer cannot reach p < 0.05)"
[[ "$threshold" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--threshold $threshold: want a percentage, e.g. 10"
[ -z "$inject" ] || [[ "$inject" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--inject $inject: want a factor, e.g. 1.3"
[ -x "$bench" ] || die "$bench: not built (cmake --build build --target step_bench)"
if [ "$record" = 1 ] && [ -z "$history" ]; then die "--record needs --history DIR"; fi
cand_commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || cand_commit="$cand_commit+dirty"

mkdir -p "$out"
if [ -n "$base_bench" ]; then
  [ -x "$base_bench" ] || die "--baseline-bench $base_bench: not an executable file"
  base_commit="${baseline:-$cand_commit}"
else
  scripts/gate_baseline_build.sh ${baseline:+--baseline "$baseline"} > "$out/baseline-build.log" 2>&1 \
    || { tail -n 20 "$out/baseline-build.log" >&2; die "the baseline's step_bench could not be built (log: $out/baseline-build.log)"; }
  read -r base_commit base_bench < <(tail -n 1 "$out/baseline-build.log")
fi
echo "bench_check: baseline $base_commit ($base_bench), candidate $cand_commit ($bench), $rounds rounds, $shapes"

cand_env=()
[ -z "$inject" ] || cand_env=(--cand-env "LOBENCH_INJECT_SLOWDOWN=$inject")
# One set of rounds into $1, then the paired comparison; returns the comparison's status.
measure_and_compare() {
  rm -rf "$1"
  python3 plots/perf_paired.py --base "$base_bench" --cand "$bench" --out-dir "$1" --rounds "$rounds" \
    --shapes "$shapes" --base-commit "$base_commit" --cand-commit "$cand_commit" ${cand_env[@]+"${cand_env[@]}"} \
    || return 2
  local rc=0
  python3 plots/perf_compare.py "$1/base.json" "$1/cand.json" --threshold "$threshold" || rc=$?
  return "$rc"
}
rc=0
measure_and_compare "$out/paired" || rc=$?
if [ "$rc" = 1 ] && [ "$confirm" = 1 ]; then
  # A shared machine has slow minutes, and a 5 % test fails an unchanged commit one time in twenty: a
  # slowdown counts only when a second, independent set of rounds shows it too.
  echo "bench_check: slower than the baseline; measuring again to confirm ($out/confirm)"
  rc=0
  measure_and_compare "$out/confirm" || rc=$?
  case "$rc" in
    0) echo "bench_check: not confirmed: the second set of rounds is within the threshold (a noisy minute, not a regression)" ;;
    1) echo "bench_check: confirmed by a second set of rounds: a regression" ;;
  esac
fi
if [ "$rc" != 2 ] && [ "$record" = 1 ]; then
  stored=$(python3 plots/perf_history.py record "$history" "$out/paired/base.json" "$out/paired/cand.json") \
    || die "could not record the run in the history store $history"
  echo "bench_check: recorded $stored"
fi
if [ -n "$site" ] && [ -n "$history" ] && [ -d "$history" ]; then
  python3 plots/bench_dashboard.py "$history" -o "$site" --threshold "$threshold" \
    || { echo "bench_check: the dashboard could not be built" >&2; [ "$rc" != 0 ] || rc=2; }
fi
case "$rc" in
  0) echo "bench_check: pass: no benchmark slower than the baseline $base_commit beyond $threshold %" ;;
  1) echo "bench_check: FAIL: slower than the baseline $base_commit beyond $threshold %$([ "$confirm" = 1 ] && echo " in two independent sets of rounds" || echo " (one set of rounds: --no-confirm)")" ;;
  *) echo "bench_check: no verdict (exit $rc)" ;;
esac
exit "$rc"
