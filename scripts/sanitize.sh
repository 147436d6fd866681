#!/usr/bin/env bash
# The sanitizer run (issue 11): AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/ (CUDA
# off, -O2 -g, frame pointers kept, every UB report fatal), then the CPU test suite (ctest -LE slow,
# which includes the hostile-input suite `hostile_inputs`). Only what those tests need is built.
#   scripts/sanitize.sh [-jN]      default -j$(nproc)
# Leak detection is on: a leak fails the test that leaks.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${1:--j$(nproc)}"
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOBENCH_CUDA=OFF "${launcher[@]}" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
# Every CPU test executable (lobench_add_test in the CMakeLists) but the slow ones, and the programs the
# command-line tests run. A name here that is not a target fails the build, so the list stays true.
targets=(lobench fuzz_read_file precision_sim_test precision_sim_device_rounding_test precision_sim_oracle_test
         variants_test bce_kernels_test datasets_test harness_test train_test seqrec_data_test seqrec_test)
command -v mpicxx >/dev/null && targets+=(shard_layout_test)
cmake --build build-asan "$jobs" --target "${targets[@]}"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
ctest --test-dir build-asan --output-on-failure -LE slow -j2 --timeout 1800
