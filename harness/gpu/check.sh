#!/usr/bin/env bash
# Everything GPU-side in one call of the device tool (a short lease on a GPU machine with no network),
# most valuable results first: build lobench, the `gpu` tests, the benchmark at the target shapes,
# Table II on the GPU, the PyTorch peer, and cuda_dense's largest points last. docs/gpu.md says how to
# run it and read what comes back.
#
#   bash harness/gpu/check.sh OUT_DIR
#   run(command="bash harness/gpu/check.sh $OUT", carry=[".gpu_deps"], timeout_s=540)
#
# .gpu_deps/ (git-ignored: fetch it with harness/gpu/fetch_deps.sh) holds the C++ development packages
# the GPU image lacks; without it configure fails there and every stage is lost. The first line printed
# says whether it is here and whether this machine needs it.
#
# The plan (printed at the start): each stage has a time cap; the caps and a summary reserve add up to
# the budget (LOBENCH_GPU_BUDGET_S, default 520 s, under the call's 540 s). Time a stage leaves unused
# passes to the later ones (a stage may run until only the later stages' caps are left); a stage that
# times out or fails is reported, and every later stage that does not need its product still runs.
# Each stage is gated on its own product: a test file that does not compile blocks only its tests.
#
# Verdicts: ok, FAIL(rc), TIMEOUT, SKIPPED (with the reason: no GPU, not selected, a missing input).
# With a GPU present, a GPU test that skipped or did not run FAILS its stage (harness/gpu/
# gpu_test_verdict.py); so does a Table II process whose CUDA rows were all skipped.
# Exit status: 0 every selected stage ok on a GPU; 3 no GPU here (nothing failed, the GPU stages
# skipped, saying why); 1 a stage failed or timed out, or with a GPU a selected stage skipped; 2 usage.
# A stage left out of LOBENCH_GPU_STAGES leaves its product as an earlier call left it (a rerun on a
# warm machine can skip configure and the builds and use the binaries already in the build directory).
#
# OUT_DIR holds at most seven files at any time (the device tool returns eight), each complete as soon
# as its stage ends, so a call cut short still returns what finished: check.log (all of this output),
# stages.txt (the stage table so far), logs.tar.gz (every stage's log and the tests' XML reports,
# rebuilt after each stage), table2_gpu.h5 (the run file, copied after each lobench process),
# cuda_step.json (Google Benchmark) and table2_gpu.md (the table, at the end).
#
# Knobs: LOBENCH_GPU_STAGES (the stages to run, deps always among them, e.g. "gpu_tests table2_accuracy";
# default all), LOBENCH_GPU_BUDGET_S, LOBENCH_JOBS (build parallelism, default 16),
# LOBENCH_GPU_BUILD_DIR (default build-gpu; kept between calls on a warm machine, so a rerun rebuilds
# only what changed; LOBENCH_GPU_FRESH=1 starts it afresh), LOBENCH_DEPS=private and
# LOBENCH_DEPS_PREFIX (the private prefix for .gpu_deps, default /tmp/lobench_deps; never /).
set -uo pipefail

out="${1:?usage: bash harness/gpu/check.sh OUT_DIR}"
mkdir -p "$out" || exit 2
out="$(cd "$out" && pwd)"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root" || exit 2
work="${LOBENCH_GPU_WORK:-/tmp/lobench_gpu_work}"  # the stages' logs and files, before they go to OUT
case "$work" in / | /tmp | /usr | /usr/* | "$root" | "$out") echo "refusing LOBENCH_GPU_WORK=$work" >&2; exit 2 ;; esac
rm -rf "$work" && mkdir -p "$work/logs" || exit 2
logs="$work/logs"
exec > >(tee -a "$out/check.log") 2>&1
tee_pid=$!
finish() {  # closes the log so that tee has written all of it before the call returns
  exec 1>&- 2>&-
  wait "$tee_pid" 2> /dev/null
  exit "$1"
}

# shellcheck source=harness/gpu/check_lib.sh
source "$root/harness/gpu/check_lib.sh"

# --- first line: the carried dependencies ----------------------------------------------------------
missing_dev=$(missing_system_deps)
n_debs=$(ls "$root"/.gpu_deps/*.deb 2> /dev/null | wc -l)
if (( n_debs > 0 )); then
  echo ".gpu_deps: $n_debs packages carried; this machine lacks ${missing_dev:-none of them} (only what it lacks is used)"
elif [[ -n "$missing_dev" || "${LOBENCH_DEPS:-}" == private ]]; then
  echo ".gpu_deps: MISSING, and this machine lacks ${missing_dev:-(LOBENCH_DEPS=private)}: configure will fail and" \
    "every stage is lost. Run bash harness/gpu/fetch_deps.sh on the CPU machine and pass carry=[\".gpu_deps\"]"
else
  echo ".gpu_deps: missing; not needed here (this machine has the C++ development packages), but a GPU machine" \
    "needs it: bash harness/gpu/fetch_deps.sh, then carry=[\".gpu_deps\"]"
fi

# --- the plan ----------------------------------------------------------------------------------------
budget=${LOBENCH_GPU_BUDGET_S:-520}
jobs=${LOBENCH_JOBS:-16}
build="${LOBENCH_GPU_BUILD_DIR:-$root/build-gpu}"
plan_init "$budget" "${LOBENCH_GPU_STAGES:-}" || finish 2
print_plan

# --- the machine -------------------------------------------------------------------------------------
machine_info > "$logs/machine.txt" 2>&1
cat "$logs/machine.txt"
gpu_present=0
if command -v nvidia-smi > /dev/null && nvidia-smi -L 2> /dev/null | grep -q '^GPU'; then gpu_present=1; fi
gpu_name=$( ((gpu_present)) && nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -n 1)
((gpu_present)) || echo "NO GPU visible: the GPU stages run what can run without one and report SKIPPED, saying why"

stage_deps
stage_configure
stage_build_lobench
stage_build_tests
stage_gpu_tests
stage_build_bench
stage_bench
stage_table2 table2_accuracy accuracy
stage_table2 table2_large large
stage_peer torch
stage_table2 dense_big dense_big
stage_summary

echo
echo "=== stages (total $(elapsed) s of the ${budget} s budget)"
cat "$out/stages.txt"
refresh_logs
echo "OUT: $(ls "$out" | tr '\n' ' ')"
finish "$(final_status)"
