#!/usr/bin/env bash
# Configures and builds lobench into build/ (Release; CUDA code too when nvcc is found).
#
#   scripts/build.sh            everything: lobench, the tests, the benchmarks, the Python package
#   scripts/build.sh TARGET...  only these targets (the quick start builds `lobench` alone)
#
# Every call configures the same tree the same way, so the quick start's build and the test command's
# share their objects. When the Python package (build/python/lobench) has been built, it is made
# importable for python3 and for Debian's /usr/bin/python3 (which has Debian's torch) through a path
# entry (lobench-build.pth in their site-packages): `import lobench` works anywhere and nothing is
# compiled twice. (`pip install .` builds a standalone copy instead.)
set -euo pipefail
cd "$(dirname "$0")/.."
py=$(python3 -c 'import sys; print(sys.executable)')
# ccache, when installed, makes a rebuild after a checkout of another commit cheap; it is never required.
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
# The Python package needs nanobind, which the quick start's install (--main-job) leaves out.
python_package=OFF
"$py" -c "import nanobind" >/dev/null 2>&1 && python_package=ON
# LOBENCH_CUDA=AUTO|ON|OFF (environment; default AUTO: CUDA code is built wherever nvcc is found). Passed
# on every call, so that the cache never keeps an earlier call's choice.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DLOBENCH_PYTHON_PACKAGE=$python_package -DPython_EXECUTABLE="$py" \
      -DLOBENCH_CUDA="${LOBENCH_CUDA:-AUTO}" "${launcher[@]}" >/dev/null
if [ $# -gt 0 ]; then
  cmake --build build -j"$(nproc)" --target "$@"
else
  cmake --build build -j"$(nproc)"
fi
compgen -G "build/python/lobench/_ext*.so" >/dev/null || exit 0
for interp in "$py" /usr/bin/python3; do
  [ -x "$interp" ] || continue
  site=$("$interp" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  if mkdir -p "$site" 2>/dev/null && echo "$PWD/build/python" > "$site/lobench-build.pth" 2>/dev/null; then
    echo "build: lobench importable from $interp (via $site/lobench-build.pth)"
  else
    echo "build: could not write $site/lobench-build.pth; use PYTHONPATH=$PWD/build/python" >&2
  fi
done
