#!/usr/bin/env bash
# Everything GPU-side in one call, for a short lease on a GPU machine with no network: build, the
# `gpu` tests, Table II on the GPU (lobench's CUDA variants, fp32 and bf16 operands), the framework
# peers (PyTorch and JAX dense BCE) into the same run file, and a summary table, printed last.
#
#   bash harness/gpu/check.sh OUT_DIR
#
# With the device tool, from the repository root of a checkout that has run harness/gpu/fetch_deps.sh
# (the C++ development packages the GPU image lacks, carried as .deb files):
#
#   run(command="bash harness/gpu/check.sh $OUT", carry=[".gpu_deps"], timeout_s=540)
#
# then copy what comes back under files_at into results/gpu/ (README "GPU").
#
# Budget: under 8 minutes on an H200 with 16 cores. Every stage prints its elapsed time, runs under
# `timeout`, and is cut to what is left of the budget (LOBENCH_GPU_BUDGET_S, default 470 s); a stage
# that fails or times out is reported and the later stages still run where they can. Rows are
# flushed as they complete, so a cut sweep keeps what it measured.
#
# OUT_DIR receives (five files: the device tool returns at most eight): check.log (all of this output),
# table2_gpu.h5 (lobench rows + peer rows, results/SCHEMA.md), table2_gpu.md (plots/table2_markdown.py),
# cuda_step.json (variants/cuda/bench/cuda_step_bench.cpp) and logs.tar.gz (machine.txt, configure.log,
# build.log, ctest_gpu.log, cuda_step_bench.log, table2_gpu.log, peers_*.log, stages.txt). Printed last:
# plots/run_summary.py's short table (ms per point and column, worst errors, peaks) and the stages.
#
# Dependencies: when the system lacks one of Eigen, HDF5 (C, HL), fmt, CLI11, GoogleTest or Google
# Benchmark (or LOBENCH_DEPS=private), the packages in .gpu_deps/ are unpacked with `dpkg -x` into a
# private prefix (LOBENCH_DEPS_PREFIX, default /tmp/lobench_deps; never /) and CMake is pointed at it
# (CMAKE_PREFIX_PATH, HDF5_ROOT); their run-time libraries are found through LD_LIBRARY_PATH, set only
# for the build, the tests and lobench (not for the Python peers). Run-time libraries libhdf5 needs and
# the machine lacks (libcurl, OpenSSL, ...) come from .gpu_deps/fallback/.
#
# Other knobs: LOBENCH_JOBS (build parallelism, default 16), LOBENCH_GPU_BUILD_DIR (default
# build-gpu, made fresh each call).
set -uo pipefail

out="${1:?usage: bash harness/gpu/check.sh OUT_DIR}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
exec > >(tee -a "$out/check.log") 2>&1
tee_pid=$!
# Closes the log so that tee has written all of it before the call returns.
finish() {
  exec 1>&- 2>&-
  wait "$tee_pid" 2> /dev/null
  exit "$1"
}

budget=${LOBENCH_GPU_BUDGET_S:-470}
jobs=${LOBENCH_JOBS:-16}
build="${LOBENCH_GPU_BUILD_DIR:-$root/build-gpu}"
prefix="${LOBENCH_DEPS_PREFIX:-/tmp/lobench_deps}"
t_start=$(date +%s)
stage_name="" stage_t0=0
summary=()

elapsed() { echo $(( $(date +%s) - t_start )); }
# Seconds a stage may take: its own limit, cut to what is left of the budget less a reserve for the
# summary. 0: no time left.
limit_for() {
  local want=$1 left=$(( budget - $(elapsed) - 60 ))
  (( left < 0 )) && left=0
  echo $(( want < left ? want : left ))
}
begin() {
  stage_name=$1
  stage_t0=$(date +%s)
  echo
  echo "=== [$(elapsed) s] stage: $stage_name"
}
# end STATUS [NOTE]
end() {
  local took=$(( $(date +%s) - stage_t0 ))
  local line
  line=$(printf '%-22s %-8s %4d s  %s' "$stage_name" "$1" "$took" "${2:-}")
  summary+=("$line")
  echo "=== [$(elapsed) s] $stage_name: $1 after ${took} s ${2:-}"
}
# run_limited SECONDS CMD...: timeout's status, 124 when cut.
run_limited() {
  local s=$1
  shift
  if (( s <= 0 )); then
    echo "no time left in the ${budget} s budget: not run: $*"
    return 124
  fi
  timeout --kill-after=10 "$s" "$@"
}
status_of() { case $1 in 0) echo ok ;; 124 | 137) echo TIMEOUT ;; *) echo "FAIL($1)" ;; esac; }

# --- the machine ---------------------------------------------------------------------------------
begin machine
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  echo "commit: $(git rev-parse HEAD 2>/dev/null) $(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo dirty)"
  (. /etc/os-release 2>/dev/null && echo "os: $PRETTY_NAME")
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-) x $(nproc)"
  echo "memory: $(free -g | awk '/Mem:/{print $2 " GiB"}')"
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
  else
    echo "nvidia-smi: not installed"
  fi
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -1 || echo missing)"
  echo "cmake: $(cmake --version 2>/dev/null | head -1)"
  echo "ninja: $(ninja --version 2>/dev/null || echo missing)"
  echo "c++: $(c++ --version 2>/dev/null | head -1)"
  echo "python: $(python3 --version 2>&1)"
  python3 - <<'PY' 2>&1
import importlib
for m in ("numpy", "h5py", "matplotlib", "torch", "jax"):
    try:
        mod = importlib.import_module(m)
        print(f"{m}: {getattr(mod, '__version__', '?')}")
    except Exception as e:
        print(f"{m}: not importable ({type(e).__name__})")
PY
} | tee "$out/machine.txt"
gpu_present=0
if command -v nvidia-smi > /dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then gpu_present=1; fi
gpu_name=$( ((gpu_present)) && nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
(( gpu_present )) || echo "WARNING: no GPU visible: the gpu tests skip, the sweep records the CUDA variants as skipped, the peers are not run"
end ok "gpu=$gpu_present"

# --- dependencies ----------------------------------------------------------------------------------
begin dependencies
arch=$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)
have_system_deps() {
  local missing=()
  [[ -f /usr/include/eigen3/Eigen/Core ]] || missing+=(Eigen)
  [[ -f /usr/include/hdf5.h || -f /usr/include/hdf5/serial/hdf5.h ]] || missing+=(HDF5)
  [[ -f /usr/include/fmt/format.h ]] || missing+=(fmt)
  [[ -f /usr/include/CLI/CLI.hpp ]] || missing+=(CLI11)
  [[ -f /usr/include/gtest/gtest.h ]] || missing+=(GoogleTest)
  [[ -f /usr/include/benchmark/benchmark.h ]] || missing+=(benchmark)
  echo "${missing[*]}"
}
unpack() {  # unpack DEB DIR: dpkg -x, or ar + tar where dpkg is missing
  if command -v dpkg-deb > /dev/null; then
    dpkg-deb -x "$1" "$2"
  else
    (cd "$2" && ar p "$1" "$(ar t "$1" | grep '^data\.tar')" | tar -x $(ar t "$1" | grep -q 'data.tar.zst' && echo --zstd) -f -)
  fi
}
cmake_dep_args=()
dep_libpath=""
missing=$(have_system_deps)
deps_status=ok deps_note="system packages"
if [[ -n "$missing" || "${LOBENCH_DEPS:-}" == private ]]; then
  echo "missing on this system: ${missing:-none (LOBENCH_DEPS=private)}; using .gpu_deps/ in $prefix"
  if ! ls "$root"/.gpu_deps/*.deb > /dev/null 2>&1; then
    echo "ERROR: no .gpu_deps/*.deb: run harness/gpu/fetch_deps.sh on a machine with network and carry .gpu_deps"
    deps_status=FAIL deps_note="no .gpu_deps"
  else
    case "$prefix" in / | /usr | /usr/*) echo "refusing to unpack into $prefix"; finish 2 ;; esac
    rm -rf "$prefix"
    mkdir -p "$prefix"
    for deb in "$root"/.gpu_deps/*.deb; do unpack "$deb" "$prefix" || deps_status=FAIL; done
    libdir="$prefix/usr/lib/$arch"
    dep_libpath="$libdir"
    # Debian's CMake package files are relocatable; any absolute /usr path left in what they import is
    # pointed into the prefix.
    find "$prefix" -name '*.cmake' -print0 | xargs -0 -r sed -i -E \
      "/(IMPORTED_LOCATION|INTERFACE_INCLUDE_DIRECTORIES|INTERFACE_LINK_LIBRARIES)/ s#\"/usr/#\"$prefix/usr/#g"
    # Run-time libraries of libhdf5 the machine lacks (libcurl, OpenSSL, ...): from the fallback set.
    if LD_LIBRARY_PATH="$libdir" ldd "$libdir/libhdf5_serial.so.103" | grep -q 'not found'; then
      echo "libhdf5 needs: $(LD_LIBRARY_PATH="$libdir" ldd "$libdir/libhdf5_serial.so.103" | grep 'not found' | awk '{print $1}' | tr '\n' ' ')-> unpacking .gpu_deps/fallback"
      mkdir -p "$prefix/fallback"
      for deb in "$root"/.gpu_deps/fallback/*.deb; do unpack "$deb" "$prefix/fallback" || deps_status=FAIL; done
      dep_libpath="$dep_libpath:$prefix/fallback/usr/lib/$arch:$prefix/fallback/lib/$arch"
      deps_note="private prefix + fallback run-time libraries"
    else
      deps_note="private prefix"
    fi
    if LD_LIBRARY_PATH="$dep_libpath" ldd "$libdir/libhdf5_serial.so.103" | grep 'not found'; then
      deps_status=FAIL
    fi
    cmake_dep_args=(
      "-DCMAKE_PREFIX_PATH=$prefix/usr"
      "-DHDF5_ROOT=$libdir/hdf5/serial"
      "-DCMAKE_EXE_LINKER_FLAGS=-Wl,-rpath-link,${dep_libpath//:/,-rpath-link,}"
    )
    echo "CMake: ${cmake_dep_args[*]}"
  fi
fi
# Only for the C++ side: the peers keep their own Python libraries.
with_deps() { LD_LIBRARY_PATH="${dep_libpath}${dep_libpath:+${LD_LIBRARY_PATH:+:}}${LD_LIBRARY_PATH:-}" "$@"; }
end "$deps_status" "$deps_note"

# --- configure ---------------------------------------------------------------------------------------
begin configure
generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
rm -rf "$build"
with_deps run_limited "$(limit_for 90)" cmake -S "$root" -B "$build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DLOBENCH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 "${cmake_dep_args[@]}" \
  > "$out/configure.log" 2>&1
rc=$?
tail -n 15 "$out/configure.log"
grep -E '^-- (lobench|Found (HDF5|fmt|Eigen3|GTest|benchmark|CUDAToolkit))' "$out/configure.log" || true
configured=$(( rc == 0 ))
end "$(status_of $rc)"

# --- build -------------------------------------------------------------------------------------------
begin build
# The executables of the ctest label `gpu`: lobench_add_test(NAME ... LABELS ...gpu...) in the sources.
gpu_targets=$(python3 - "$root" <<'PY'
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
)
echo "targets: lobench $gpu_targets (then cuda_step_bench on its own: its failure must not stop the rest)"
rc=1
if (( configured )); then
  # shellcheck disable=SC2086
  with_deps run_limited "$(limit_for 270)" cmake --build "$build" -j "$jobs" --target lobench $gpu_targets \
    > "$out/build.log" 2>&1
  rc=$?
  grep -E 'error|Error|FAILED' "$out/build.log" | head -n 30
  tail -n 3 "$out/build.log"
fi
built=$(( rc == 0 ))
bench_built=0
if (( built )); then
  with_deps run_limited "$(limit_for 120)" cmake --build "$build" -j "$jobs" --target cuda_step_bench \
    >> "$out/build.log" 2>&1 && bench_built=1
  (( bench_built )) || echo "cuda_step_bench did not build (see build.log); the other stages go on"
fi
end "$(status_of $rc)" "jobs=$jobs bench=$bench_built"

# --- gpu tests ---------------------------------------------------------------------------------------
begin "ctest -L gpu"
rc=1
if (( built )); then
  with_deps run_limited "$(limit_for 120)" ctest --test-dir "$build" -L gpu --output-on-failure --timeout 100 \
    > "$out/ctest_gpu.log" 2>&1
  rc=$?
  grep -E 'tests passed|Failed|\*\*\*|Skipped|Not Run' "$out/ctest_gpu.log" | tail -n 25
fi
end "$(status_of $rc)"

# --- Google Benchmark: the issue's target shapes against the GPU's GEMM rates --------------------------
begin "cuda_step_bench"
rc=1
if (( bench_built )); then
  with_deps run_limited "$(limit_for 90)" "$build/variants/cuda_step_bench" --benchmark_out="$out/cuda_step.json" \
    --benchmark_out_format=json > "$out/cuda_step_bench.log" 2>&1
  rc=$?
  cat "$out/cuda_step_bench.log"
fi
end "$(status_of $rc)"

# --- Table II on the GPU ---------------------------------------------------------------------------
begin "table2 lobench"
run_file="$out/table2_gpu.h5"
rc=1
if (( built )); then
  rm -f "$run_file"
  with_deps run_limited "$(limit_for 150)" "$build/lobench" run @harness/sweeps/table2_gpu.args --V 100000 \
    --out "$run_file" > "$out/table2_gpu.log" 2>&1
  rc1=$?
  with_deps run_limited "$(limit_for 200)" "$build/lobench" run @harness/sweeps/table2_gpu.args \
    --V 200000,500000,1000000 --no-accuracy --out "$run_file" --resume >> "$out/table2_gpu.log" 2>&1
  rc2=$?
  grep -v '^progress:' "$out/table2_gpu.log"
  rc=$(( rc1 != 0 ? rc1 : rc2 ))
fi
end "$(status_of $rc)" "(V=100k with accuracy; larger V --no-accuracy)"

# --- peers ---------------------------------------------------------------------------------------------
peer_shapes=(--B 32,128 --N 32,128 --V 100000,200000,500000,1000000 --D 128 --L 8 --operand fp32,bf16
             --reps 3 --warmup 1)
for peer in torch jax; do
  begin "peer $peer"
  rc=1
  if [[ ! -f "$run_file" ]]; then
    echo "no run file to append to"
  elif (( ! gpu_present )); then
    echo "no GPU: not run"
    rc=0
  else
    run_limited "$(limit_for 100)" python3 "harness/peers/${peer}_dense_bce.py" "$run_file" "${peer_shapes[@]}" \
      > "$out/peers_$peer.log" 2>&1
    rc=$?
    cat "$out/peers_$peer.log"
  fi
  end "$(status_of $rc)"
done

# --- summary (printed last) ----------------------------------------------------------------------------
begin summary
if [[ -f "$run_file" ]]; then
  timeout 25 python3 plots/table2_markdown.py "$run_file" -o "$out/table2_gpu.md" \
    --note "harness/gpu/check.sh on ${gpu_name:-no GPU}: V = 100k against the float64 CPU reference, larger V without accuracy; peers: PyTorch and JAX dense BCE (their own rows)." \
    > /dev/null 2>&1 || echo "table2_markdown.py failed"
  echo "full table: $out/table2_gpu.md"
  timeout 25 python3 plots/run_summary.py "$run_file" || echo "run_summary.py failed"
fi
end ok
echo
echo "=== stages (total $(elapsed) s of the ${budget} s budget)"
printf '%s\n' "${summary[@]}" | tee "$out/stages.txt"
# The device tool returns at most 8 files from OUT: the logs travel as one archive beside the run
# file, the markdown table, the benchmark JSON and check.log (which is still being written).
(cd "$out" && tar -czf logs.tar.gz --remove-files $(ls | grep -vE '^(check\.log|table2_gpu\.h5|table2_gpu\.md|cuda_step\.json|logs\.tar\.gz)$') 2> /dev/null) ||
  echo "bundling the logs failed: more than 8 files in OUT, some will not come back"
echo "OUT: $(ls "$out" | tr '\n' ' ')"
if printf '%s\n' "${summary[@]}" | grep -qE ' (FAIL|TIMEOUT)'; then finish 1; fi
finish 0
