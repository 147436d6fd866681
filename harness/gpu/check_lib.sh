# The stages of harness/gpu/check.sh and their bookkeeping (sourced by it; reads its variables: root,
# out, work, logs, build, jobs, budget, gpu_present, gpu_name).
# shellcheck shell=bash disable=SC2154

# --- the plan: stages in run order, each with its time cap (s) ----------------------------------------
# The caps plus the summary reserve add up to the default budget (520 s), so the whole call fits the
# device tool's 540 s timeout with 20 s for the transfers. Most valuable first: a working build, the
# tests of every kernel, the benchmark at the target shapes, Table II at V = 100k with accuracy, the
# larger V, the PyTorch peer, and cuda_dense's points at P·V ≥ 2^31 (their own processes) last.
PLAN_STAGES=(deps configure build_lobench build_tests gpu_tests build_bench bench table2_accuracy table2_large
             peer_torch dense_big)
declare -A PLAN_CAP=([deps]=20 [configure]=40 [build_lobench]=155 [build_tests]=40 [gpu_tests]=60 [build_bench]=20
                     [bench]=35 [table2_accuracy]=50 [table2_large]=40 [peer_torch]=25 [dense_big]=20)
declare -A PLAN_WHAT=(
  [deps]="unpack .gpu_deps into a private prefix where the system lacks a package"
  [configure]="cmake, CUDA on, sm_90"
  [build_lobench]="the lobench binary (Table II needs only it)"
  [build_tests]="each gpu-labelled test executable on its own"
  [gpu_tests]="the gpu tests; on a GPU machine a skipped test fails the stage"
  [build_bench]="cuda_step_bench"
  [bench]="the target shapes (B=N=128 V=100k; B=N=32 V=1M) -> cuda_step.json"
  [table2_accuracy]="Table II at V=100k against the float64 reference -> table2_gpu.h5"
  [table2_large]="Table II at V=200k..1M, no accuracy (cuda_dense only where P*V < 2^31)"
  [peer_torch]="PyTorch dense BCE at the target shapes, into the same run file"
  [dense_big]="cuda_dense at P*V >= 2^31, last, one process per (B, N) (harness/gpu/table2_plan.py)"
)
SUMMARY_RESERVE=15
declare -A SELECTED=()
t_start=$(date +%s)

elapsed() { echo $(($(date +%s) - t_start)); }

# plan_init BUDGET SELECTION: SELECTION is empty (every stage) or stage names (spaces or commas).
plan_init() {
  local name
  if [[ -z "$2" ]]; then
    for name in "${PLAN_STAGES[@]}"; do SELECTED[$name]=1; done
  else
    for name in ${2//,/ }; do
      [[ -n "${PLAN_CAP[$name]:-}" ]] || { echo "LOBENCH_GPU_STAGES: no stage '$name' (stages: ${PLAN_STAGES[*]})"; return 2; }
      SELECTED[$name]=1
    done
    SELECTED[deps]=1  # always: the binaries find the private prefix's libraries only through it
  fi
}

planned_total() {
  local name total=$SUMMARY_RESERVE
  for name in "${PLAN_STAGES[@]}"; do [[ -n "${SELECTED[$name]:-}" ]] && total=$((total + PLAN_CAP[$name])); done
  echo "$total"
}

print_plan() {
  local name
  echo "plan: budget ${budget} s; stage caps (s), in order; time a stage leaves unused passes to the later ones"
  for name in "${PLAN_STAGES[@]}"; do
    if [[ -n "${SELECTED[$name]:-}" ]]; then
      printf '  %-16s %4d  %s\n' "$name" "${PLAN_CAP[$name]}" "${PLAN_WHAT[$name]}"
    else
      printf '  %-16s    -  not selected (LOBENCH_GPU_STAGES)\n' "$name"
    fi
  done
  printf '  %-16s %4d  run file summary, table2_gpu.md\n' summary "$SUMMARY_RESERVE"
  echo "  total            $(planned_total) of ${budget} s"
  (($(planned_total) <= budget)) || echo "WARNING: the caps exceed the budget: the last stages will be cut"
}

# Seconds stage $1 may run: what is left of the budget less the caps of the selected stages after it
# and the summary reserve (at least its own cap when the earlier stages kept to theirs). 0: none.
limit_for() {
  local name after=0 seen=0 left
  for name in "${PLAN_STAGES[@]}"; do
    ((seen)) && [[ -n "${SELECTED[$name]:-}" ]] && after=$((after + PLAN_CAP[$name]))
    [[ "$name" == "$1" ]] && seen=1
  done
  left=$((budget - $(elapsed) - SUMMARY_RESERVE - after))
  echo $((left > 0 ? left : 0))
}

# --- stage bookkeeping ---------------------------------------------------------------------------------
stage_t0=0
stage_deadline=0
# begin NAME: false (and the stage recorded as SKIPPED) when it is not selected.
begin() {
  stage_name=$1
  stage_t0=$(date +%s)
  echo
  if [[ -z "${SELECTED[$1]:-}" ]]; then
    echo "=== [$(elapsed) s] stage $1: not selected"
    end SKIPPED "not selected"
    return 1
  fi
  local limit
  limit=$(limit_for "$1")
  stage_deadline=$((stage_t0 + limit))
  echo "=== [$(elapsed) s] stage $1 (up to $limit s): ${PLAN_WHAT[$1]}"
}
# Seconds left to the current stage.
stage_left() { echo $((stage_deadline - $(date +%s))); }
# end STATUS [NOTE]: one line in stages.txt (in OUT at once) and the logs archive refreshed.
end() {
  local took=$(($(date +%s) - stage_t0)) line note="${2:-}"
  ((${#note} > 200)) && note="${note:0:197}..."  # the whole of it is in the stage's log
  line=$(printf '%-16s %-9s %4d s  %s' "$stage_name" "$1" "$took" "$note")
  echo "$line" >> "$out/stages.txt"
  echo "=== [$(elapsed) s] $stage_name: $1 after ${took} s $note"
  refresh_logs
}
status_of() { case $1 in 0) echo ok ;; 124 | 137) echo TIMEOUT ;; *) echo "FAIL($1)" ;; esac; }
# run_limited CMD...: under the current stage's deadline; 124 when cut (or no time left).
run_limited() {
  local s
  s=$(stage_left)
  if ((s <= 0)); then
    echo "no time left in stage $stage_name: not run: $*"
    return 124
  fi
  timeout --kill-after=10 "$s" "$@"
}
# The logs as one archive in OUT (the device tool returns at most eight files), replaced atomically.
refresh_logs() {
  tar -czf "$out/.logs.tar.gz.tmp" -C "$work" logs 2> /dev/null && mv -f "$out/.logs.tar.gz.tmp" "$out/logs.tar.gz"
}
# copy_out FILE: FILE into OUT, atomically (a cut call never returns half a file).
copy_out() { [[ -f "$1" ]] && cp -f "$1" "$out/.$(basename "$1").tmp" && mv -f "$out/.$(basename "$1").tmp" "$out/$(basename "$1")"; }
# 1 when a stage failed or timed out, or (with a GPU) a selected stage skipped: nothing passes vacuously.
final_status() {
  if grep -qE '^\S+ +(FAIL|TIMEOUT)' "$out/stages.txt"; then
    echo 1
  elif ((!gpu_present)); then
    echo 3
  elif grep -E '^\S+ +SKIPPED' "$out/stages.txt" | grep -vq 'not selected'; then
    echo 1
  else
    echo 0
  fi
}

# --- the machine ---------------------------------------------------------------------------------------
machine_info() {
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  echo "commit: $(git rev-parse HEAD 2> /dev/null) $(git status --porcelain --untracked-files=no 2> /dev/null | grep -q . && echo dirty)"
  (. /etc/os-release 2> /dev/null && echo "os: $PRETTY_NAME")
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-) x $(nproc)"
  echo "memory: $(free -g | awk '/Mem:/{print $2 " GiB"}')"
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
  else
    echo "nvidia-smi: not installed"
  fi
  echo "nvcc: $(nvcc --version 2> /dev/null | tail -1 || echo missing)"
  echo "cmake: $(cmake --version 2> /dev/null | head -1); ninja: $(ninja --version 2> /dev/null || echo missing)"
  echo "c++: $(c++ --version 2> /dev/null | head -1)"
  echo "python: $(python3 --version 2>&1)"
  python3 - << 'PY' 2>&1
import importlib
for m in ("numpy", "h5py", "matplotlib", "torch", "jax"):
    try:
        mod = importlib.import_module(m)
        print(f"{m}: {getattr(mod, '__version__', '?')}")
    except Exception as e:
        print(f"{m}: not importable ({type(e).__name__})")
PY
}

# --- dependencies --------------------------------------------------------------------------------------
missing_system_deps() {
  local missing=()
  [[ -f /usr/include/eigen3/Eigen/Core ]] || missing+=(Eigen)
  [[ -f /usr/include/hdf5.h || -f /usr/include/hdf5/serial/hdf5.h ]] || missing+=(HDF5)
  [[ -f /usr/include/fmt/format.h ]] || missing+=(fmt)
  [[ -f /usr/include/CLI/CLI.hpp ]] || missing+=(CLI11)
  [[ -f /usr/include/gtest/gtest.h ]] || missing+=(GoogleTest)
  [[ -f /usr/include/benchmark/benchmark.h ]] || missing+=(benchmark)
  echo "${missing[*]}"
}
unpack_deb() { # unpack_deb DEB DIR: dpkg -x, or ar + tar where dpkg is missing
  if command -v dpkg-deb > /dev/null; then
    dpkg-deb -x "$1" "$2"
  else
    (cd "$2" && ar p "$1" "$(ar t "$1" | grep '^data\.tar')" | tar -x $(ar t "$1" | grep -q 'data.tar.zst' && echo --zstd) -f -)
  fi
}
cmake_dep_args=()
dep_libpath=""
deps_ok=0
# Only for the C++ side: the peers keep their own Python libraries.
with_deps() { LD_LIBRARY_PATH="${dep_libpath}${dep_libpath:+${LD_LIBRARY_PATH:+:}}${LD_LIBRARY_PATH:-}" "$@"; }

stage_deps() {
  begin deps || return
  local missing status=ok note="system packages" prefix="${LOBENCH_DEPS_PREFIX:-/tmp/lobench_deps}" arch libdir deb
  missing=$(missing_system_deps)
  if [[ -z "$missing" && "${LOBENCH_DEPS:-}" != private ]]; then
    deps_ok=1
    end ok "$note"
    return
  fi
  echo "missing on this system: ${missing:-none (LOBENCH_DEPS=private)}; using .gpu_deps/ in $prefix"
  if ! ls "$root"/.gpu_deps/*.deb > /dev/null 2>&1; then
    echo "ERROR: no .gpu_deps/*.deb: run harness/gpu/fetch_deps.sh on a machine with network and carry .gpu_deps"
    end FAIL "no .gpu_deps (fetch_deps.sh, carry=[\".gpu_deps\"])"
    return
  fi
  case "$prefix" in / | /usr | /usr/*) end FAIL "refusing to unpack into $prefix"; return ;; esac
  arch=$(gcc -dumpmachine 2> /dev/null || echo x86_64-linux-gnu)
  rm -rf "$prefix" && mkdir -p "$prefix"
  for deb in "$root"/.gpu_deps/*.deb; do unpack_deb "$deb" "$prefix" || status=FAIL; done
  libdir="$prefix/usr/lib/$arch"
  dep_libpath="$libdir"
  # Debian's CMake package files are relocatable; any absolute /usr path left in what they import is
  # pointed into the prefix.
  find "$prefix" -name '*.cmake' -print0 | xargs -0 -r sed -i -E \
    "/(IMPORTED_LOCATION|INTERFACE_INCLUDE_DIRECTORIES|INTERFACE_LINK_LIBRARIES)/ s#\"/usr/#\"$prefix/usr/#g"
  note="private prefix"
  # Run-time libraries of libhdf5 the machine lacks (libcurl, OpenSSL, ...): from the fallback set.
  if LD_LIBRARY_PATH="$libdir" ldd "$libdir/libhdf5_serial.so.103" | grep -q 'not found'; then
    echo "libhdf5 needs: $(LD_LIBRARY_PATH="$libdir" ldd "$libdir/libhdf5_serial.so.103" | grep 'not found' | awk '{print $1}' | tr '\n' ' ')-> .gpu_deps/fallback"
    mkdir -p "$prefix/fallback"
    for deb in "$root"/.gpu_deps/fallback/*.deb; do unpack_deb "$deb" "$prefix/fallback" || status=FAIL; done
    dep_libpath="$dep_libpath:$prefix/fallback/usr/lib/$arch:$prefix/fallback/lib/$arch"
    note="private prefix + fallback run-time libraries"
  fi
  LD_LIBRARY_PATH="$dep_libpath" ldd "$libdir/libhdf5_serial.so.103" | grep 'not found' && status=FAIL
  cmake_dep_args=(
    "-DCMAKE_PREFIX_PATH=$prefix/usr"
    "-DHDF5_ROOT=$libdir/hdf5/serial"
    "-DCMAKE_EXE_LINKER_FLAGS=-Wl,-rpath-link,${dep_libpath//:/,-rpath-link,}"
  )
  echo "CMake: ${cmake_dep_args[*]}"
  [[ $status == ok ]] && deps_ok=1
  end "$status" "$note"
}

# --- configure and build -------------------------------------------------------------------------------
configured=0
stage_configure() {
  # Not selected (a rerun): an earlier call's build directory is used as it is.
  begin configure || { [[ -f "$build/CMakeCache.txt" ]] && configured=1; return; }
  if ((!deps_ok)); then end SKIPPED "the dependencies are missing (stage deps)"; return; fi
  local args=() rc
  # A build directory left by an earlier call on this (warm) machine is reused: only what changed
  # rebuilds. Its generator is fixed, so -G is given only to a new one.
  case "$build" in / | "$root" | "$HOME" | /usr | /usr/* | /tmp) end FAIL "refusing build directory $build"; return ;; esac
  if [[ "${LOBENCH_GPU_FRESH:-0}" == 1 || ! -f "$build/CMakeCache.txt" ]]; then
    rm -rf "$build"
    command -v ninja > /dev/null && args+=(-G Ninja)
  else
    echo "reusing $build (LOBENCH_GPU_FRESH=1 to start afresh)"
  fi
  # The Python package (the engine the PyTorch peer runs in, stage peer_torch) where nanobind is importable.
  python3 -c 'import nanobind' > /dev/null 2>&1 && args+=(-DLOBENCH_PYTHON_PACKAGE=ON -DPython_EXECUTABLE="$(command -v python3)")
  command -v ccache > /dev/null && args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache
                                          -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  with_deps run_limited cmake -S "$root" -B "$build" "${args[@]}" -DCMAKE_BUILD_TYPE=Release -DLOBENCH_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 "${cmake_dep_args[@]}" > "$logs/configure.log" 2>&1
  rc=$?
  tail -n 3 "$logs/configure.log"
  grep -E '^-- (lobench|Found (HDF5|fmt|Eigen3|GTest|benchmark|CUDAToolkit))' "$logs/configure.log" || true
  configured=$((rc == 0))
  end "$(status_of $rc)"
}

# build_target TARGET LOG: true when it built.
build_target() {
  echo "--- cmake --build --target $1" >> "$2"
  with_deps run_limited cmake --build "$build" -j "$jobs" --target "$1" >> "$2" 2>&1
}
# The path of an executable target in the build tree ("" when it is not there).
target_path() { find "$build" -maxdepth 3 -type f -name "$1" -perm -u+x 2> /dev/null | head -n 1; }

lobench_built=0
stage_build_lobench() {
  begin build_lobench || { [[ -x "$build/lobench" ]] && lobench_built=1; return; }
  if ((!configured)); then end SKIPPED "not configured"; return; fi
  build_target lobench "$logs/build_lobench.log"
  local rc=$?
  grep -E 'error|FAILED' "$logs/build_lobench.log" | head -n 30
  tail -n 3 "$logs/build_lobench.log"
  [[ $rc == 0 && -x "$build/lobench" ]] && lobench_built=1
  end "$(status_of $rc)" "jobs=$jobs"
}

# The executables of the ctest label `gpu`: lobench_add_test(NAME ... LABELS ...gpu...) in the sources.
gpu_test_targets() {
  python3 - "$root" << 'PY'
import pathlib, re, sys
names = []
for f in sorted(pathlib.Path(sys.argv[1]).glob("**/CMakeLists.txt")):
    if any(p.startswith("build") or p.startswith(".") for p in f.relative_to(sys.argv[1]).parts[:-1]):
        continue
    text = f.read_text()
    for m in re.finditer(r"lobench_add_test\(", text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        call = text[m.end():i - 1].split()
        if "LABELS" in call and any("gpu" in w for w in call[call.index("LABELS") + 1:]):
            names.append(call[0])
print(" ".join(names))
PY
}

built_tests=()
stage_build_tests() {
  local t failed=() rc=0
  if ! begin build_tests; then
    for t in $(gpu_test_targets); do [[ -n "$(target_path "$t")" ]] && built_tests+=("$t"); done
    return
  fi
  if ((!configured)); then end SKIPPED "not configured"; return; fi
  for t in $(gpu_test_targets); do
    if build_target "$t" "$logs/build_tests.log" && [[ -n "$(target_path "$t")" ]]; then
      built_tests+=("$t")
    else
      rc=$?
      failed+=("$t")
    fi
  done
  grep -E 'error|FAILED' "$logs/build_tests.log" | head -n 30
  if ((${#failed[@]} == 0 && ${#built_tests[@]} > 0)); then
    end ok "${built_tests[*]}"
  elif ((${#built_tests[@]} == 0 && ${#failed[@]} == 0)); then
    end FAIL "no gpu-labelled test target found"
  else
    end "$(status_of $((rc == 0 ? 1 : rc)))" "not built: ${failed[*]}; built: ${built_tests[*]:-none}"
  fi
}

# --- the GPU tests: every test executable with its XML report, judged by gpu_test_verdict.py -----------
stage_gpu_tests() {
  begin gpu_tests || return
  if ((${#built_tests[@]} == 0)); then end SKIPPED "no test executable built"; return; fi
  local t runs=() rc verdict_rc
  for t in "${built_tests[@]}"; do
    with_deps run_limited "$(target_path "$t")" --gtest_output="xml:$logs/$t.xml" > "$logs/$t.log" 2>&1
    rc=$?
    echo "$t: exit status $rc ($(grep -cE '^\[ +(OK|SKIPPED|FAILED) +\]' "$logs/$t.log") results; log $t.log)"
    runs+=(--run "$t" "$rc" "$logs/$t.xml")
    if ((rc == 124 || rc == 137)); then
      end TIMEOUT "$t cut at the stage limit"
      return
    fi
  done
  python3 "$root/harness/gpu/gpu_test_verdict.py" --gpu-present "$gpu_present" "${runs[@]}" > "$logs/gpu_tests_verdict.txt"
  verdict_rc=$?
  head -n 16 "$logs/gpu_tests_verdict.txt"  # the rest in logs/gpu_tests_verdict.txt
  (($(wc -l < "$logs/gpu_tests_verdict.txt") > 16)) && echo "  ... $(($(wc -l < "$logs/gpu_tests_verdict.txt") - 16)) more lines in gpu_tests_verdict.txt"
  case $verdict_rc in
    0) end ok "$(head -n 1 "$logs/gpu_tests_verdict.txt")" ;;
    3) end SKIPPED "$(head -n 1 "$logs/gpu_tests_verdict.txt")" ;;
    *) end "FAIL($verdict_rc)" "$(head -n 1 "$logs/gpu_tests_verdict.txt")" ;;
  esac
}

# --- Google Benchmark at the target shapes ---------------------------------------------------------------
bench_built=0
stage_build_bench() {
  begin build_bench || { [[ -n "$(target_path cuda_step_bench)" ]] && bench_built=1; return; }
  if ((!configured)); then end SKIPPED "not configured"; return; fi
  build_target cuda_step_bench "$logs/build_bench.log"
  local rc=$?
  grep -E 'error|FAILED' "$logs/build_bench.log" | head -n 20
  [[ $rc == 0 && -n "$(target_path cuda_step_bench)" ]] && bench_built=1
  end "$(status_of $rc)"
}

stage_bench() {
  begin bench || return
  if ((!bench_built)); then end SKIPPED "cuda_step_bench not built"; return; fi
  local rc errors
  with_deps run_limited "$(target_path cuda_step_bench)" --benchmark_out="$work/cuda_step.json" \
    --benchmark_out_format=json > "$logs/cuda_step_bench.log" 2>&1
  rc=$?
  cat "$logs/cuda_step_bench.log"
  copy_out "$work/cuda_step.json"
  if ((!gpu_present)); then
    end "$([[ $rc == 0 ]] && echo SKIPPED || status_of $rc)" "no GPU: $(head -n 1 "$logs/cuda_step_bench.log")"
    return
  fi
  # On a GPU a benchmark that skipped with an error (SkipWithError) is a failure, not a result.
  errors=$(python3 -c 'import json,sys; print(sum(bool(b.get("error_occurred")) for b in json.load(open(sys.argv[1]))["benchmarks"]))' \
    "$work/cuda_step.json" 2> /dev/null || echo "no JSON")
  if [[ $rc == 0 && "$errors" != 0 ]]; then
    end FAIL "benchmarks with an error: $errors (see cuda_step_bench.log)"
  else
    end "$(status_of $rc)"
  fi
}

# --- Table II on the GPU: the invocations of harness/gpu/table2_plan.py, one group per stage ------------
run_file="$work/table2_gpu.h5"
stage_table2() {  # stage_table2 STAGE GROUP
  begin "$1" || return
  if ((!lobench_built)); then end SKIPPED "lobench not built"; return; fi
  local line args rc worst=0 n=0 log="$logs/$1.log" problems=""
  while IFS=$'\t' read -r group line; do
    [[ "$group" == "$2" ]] || continue
    n=$((n + 1))
    read -r -a args <<< "$line"
    echo "lobench run @harness/sweeps/table2_gpu.args ${args[*]} --out table2_gpu.h5 --resume" | tee -a "$log"
    with_deps run_limited "$build/lobench" run @harness/sweeps/table2_gpu.args "${args[@]}" --out "$run_file" \
      --resume >> "$log" 2>&1
    rc=$?
    copy_out "$run_file"
    grep -E '^summary:' "$log" | tail -n 1
    ((rc != 0 && worst == 0)) && worst=$rc
    ((rc == 124 || rc == 137)) && break
  done < <(python3 "$root/harness/gpu/table2_plan.py" "$root/harness/sweeps/table2_gpu.args")
  grep -v '^progress:' "$log" | grep -vE '^lobench run' | tail -n 40
  if ((n == 0)); then end SKIPPED "no invocation in group $2"; return; fi
  # The sweep skips a CUDA row, with the reason, where no device can be used: fine without a GPU, a
  # failure with one. A failed row (a CUDA error) fails the stage too.
  if ((gpu_present)) && grep -qE 'CUDA device' "$log"; then problems="CUDA rows skipped on a GPU machine; "; fi
  if ((gpu_present)) && grep -qE '^summary: .* [1-9][0-9]* failed' "$log"; then problems+="failed rows; "; fi
  if ((worst == 0 && ${#problems} > 0)); then worst=1; fi
  if ((!gpu_present && worst == 0)); then
    end SKIPPED "no GPU: $n lobench processes recorded the CUDA rows as skipped ($(grep -m1 -oE 'no (usable )?CUDA device[^|]*' "$log" | head -c 80))"
  else
    end "$(status_of $worst)" "$n processes; ${problems}$(grep -E '^summary:' "$log" | sed -E 's/^summary: ([^;]*) in .*/\1/' | tr '\n' ';')"
  fi
}

# --- the PyTorch peer at the target shapes ----------------------------------------------------------------
# The peer is a Python variant (lobench/peer_torch_dense.py) run by lobench's engine inside Python, so
# its rows join the same run file with the float64 reference's errors: the build needs the Python package
# (configured when nanobind is importable) and its target _engine.
stage_peer() {  # stage_peer torch
  begin "peer_$1" || return
  if ((!gpu_present)); then end SKIPPED "no GPU: the peer would time the CPU"; return; fi
  if [[ ! -f "$run_file" ]]; then end SKIPPED "no run file to append to"; return; fi
  local rc shape
  if ! run_limited python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' \
       > "$logs/peer_$1.log" 2>&1; then
    end FAIL "torch is not importable or does not see the GPU (peer_$1.log): it would time the CPU"
    return
  fi
  if ! build_target _engine "$logs/peer_$1.log"; then
    end FAIL "lobench._engine did not build (the Python package needs nanobind; peer_$1.log)"
    return
  fi
  for shape in "--B 32 --N 32 --V 1000000" "--B 128 --N 128 --V 100000"; do
    # shellcheck disable=SC2086
    PYTHONPATH="$build/python" run_limited python3 -m lobench run $shape --D 128 --L 8 --operand fp32,bf16 \
      --variants lobench.peer_torch_dense:TorchDense --reps 3 --warmup 1 --out "$run_file" --resume >> "$logs/peer_$1.log" 2>&1
    rc=$?
    ((rc != 0)) && break
  done
  copy_out "$run_file"
  tail -n 20 "$logs/peer_$1.log"
  end "$(status_of $rc)"
}

# --- summary (printed last) -------------------------------------------------------------------------------
stage_summary() {
  stage_name=summary
  stage_t0=$(date +%s)
  echo
  echo "=== [$(elapsed) s] stage summary"
  if [[ -f "$run_file" ]]; then
    timeout 25 python3 plots/table2_markdown.py "$run_file" -o "$work/table2_gpu.md" \
      --note "harness/gpu/check.sh on ${gpu_name:-no GPU}: V = 100k against the float64 CPU reference, larger V without accuracy; cuda_dense at P·V ≥ 2^31 in separate processes; PyTorch dense BCE at the target shapes (its own rows)." \
      > "$logs/table2_markdown.log" 2>&1 || echo "table2_markdown.py failed (table2_markdown.log)"
    copy_out "$work/table2_gpu.md"
    timeout 25 python3 plots/run_summary.py "$run_file" || echo "run_summary.py failed"
  else
    echo "no run file"
  fi
  end ok
}
