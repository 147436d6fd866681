#!/usr/bin/env bash
# Configures and builds lobench into build/ (Release), with the Python package (build/python/lobench).
# CUDA code is built when nvcc is found. Then installs the build tree's package for python3, and for
# Debian's /usr/bin/python3 (which has Debian's torch), as a path entry (lobench-build.pth in their
# site-packages): `import lobench` works anywhere and nothing is compiled twice. (`pip install .`
# builds a standalone copy instead; see the README.)
set -euo pipefail
cd "$(dirname "$0")/.."
py=$(python3 -c 'import sys; print(sys.executable)')
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DLOBENCH_PYTHON_PACKAGE=ON -DPython_EXECUTABLE="$py" >/dev/null
cmake --build build -j"$(nproc)"
for interp in "$py" /usr/bin/python3; do
  [ -x "$interp" ] || continue
  site=$("$interp" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  if mkdir -p "$site" 2>/dev/null && echo "$PWD/build/python" > "$site/lobench-build.pth" 2>/dev/null; then
    echo "build: lobench importable from $interp (via $site/lobench-build.pth)"
  else
    echo "build: could not write $site/lobench-build.pth; use PYTHONPATH=$PWD/build/python" >&2
  fi
done
