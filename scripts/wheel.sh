#!/usr/bin/env bash
# The wheel of `pip install .`, made from the build tree scripts/build.sh made (build/), into build/wheels/,
# without compiling anything again: scikit-build-core (pyproject.toml) configures build/ with the settings
# scripts/build.sh gave it (tests on, the same CUDA choice, the same generator and interpreter), finds the
# wheel's targets (_ext, _engine, lobench) up to date and installs their `python` component into the wheel.
# scripts/pip_install_check.sh installs this wheel when it was made from the commit checked out.
#   scripts/wheel.sh          (after scripts/build.sh; scripts/test.sh runs both)
set -euo pipefail
cd "$(dirname "$0")/.."
py=$(python3 -c 'import sys; print(sys.executable)')
[ -f build/CMakeCache.txt ] || { echo "wheel: no build/ to make the wheel from; run scripts/build.sh first" >&2; exit 2; }
"$py" -c "import scikit_build_core, nanobind" 2>/dev/null \
  || { echo "wheel: $py lacks scikit-build-core or nanobind (scripts/install_deps.sh installs them)" >&2; exit 2; }
generator=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' build/CMakeCache.txt)
cuda=$(sed -n 's/^LOBENCH_CUDA:[A-Z]*=//p' build/CMakeCache.txt)
start=$SECONDS
rm -rf build/wheels
# --no-build-isolation: this interpreter's scikit-build-core and nanobind, at the paths build/ was
# configured with (an isolated environment's temporary paths would make it reconfigure and rebuild).
CMAKE_GENERATOR="$generator" "$py" -m pip wheel . --no-deps --no-build-isolation -w build/wheels -v \
  -C build-dir=build -C cmake.define.LOBENCH_BUILD_TESTS=ON -C cmake.define.LOBENCH_CUDA="${cuda:-AUTO}" \
  -C cmake.define.Python_EXECUTABLE="$py" > build/wheel.log 2>&1 \
  || { tail -40 build/wheel.log; echo "wheel: pip wheel failed (build/wheel.log)" >&2; exit 1; }
compiled=$(grep -c 'Building C' build/wheel.log || true)
wheel=$(compgen -G "build/wheels/lobench-*.whl" | head -1) || true
[ -n "$wheel" ] || { echo "wheel: pip made no wheel in build/wheels" >&2; exit 1; }
git rev-parse HEAD > build/wheels/COMMIT 2>/dev/null || echo unknown > build/wheels/COMMIT
git diff --quiet HEAD 2>/dev/null || echo "dirty" >> build/wheels/COMMIT
echo "wheel: $wheel from build/, $compiled sources compiled ($((SECONDS - start)) s)"
