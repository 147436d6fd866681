#!/usr/bin/env bash
# The README's first command: install what the main job needs, build `lobench` alone, run the main job
# (a reduced Table II of the Cut BCE paper on built-in synthetic data), print its table, write
# results/quickstart.h5 and the figure results/quickstart.png. The tests' own build and dependencies
# come with the second command, scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
scripts/install_deps.sh --main-job
# The CUDA variants need a GPU to run: without one visible, the main job's build leaves their kernels
# out (nvcc is the slowest part of the build); scripts/test.sh compiles them, as CI must.
if [ -z "${LOBENCH_CUDA:-}" ] && ! nvidia-smi -L >/dev/null 2>&1; then export LOBENCH_CUDA=OFF; fi
scripts/build.sh lobench
build/lobench run @harness/sweeps/quickstart.args --out results/quickstart.h5 --overwrite  # a demo file: rerunning replaces it
python3 plots/plot_sweep.py results/quickstart.h5 -o results/quickstart.png
echo "quickstart: table above, run file results/quickstart.h5, figure results/quickstart.png ($((SECONDS - start)) s)"
