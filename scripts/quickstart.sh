#!/usr/bin/env bash
# The README's first command: install what the main job needs, build `lobench` alone, run the main job
# (a reduced Table II of the Cut BCE paper on built-in synthetic data), print its table, write
# results/quickstart.h5 and the figure results/quickstart.png. The tests' own build and dependencies
# come with the second command, scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
scripts/install_deps.sh --main-job
scripts/build.sh lobench
build/lobench run @harness/sweeps/quickstart.args --out results/quickstart.h5 --overwrite  # a demo file: rerunning replaces it
python3 plots/plot_sweep.py results/quickstart.h5 -o results/quickstart.png
echo "quickstart: table above, run file results/quickstart.h5, figure results/quickstart.png ($((SECONDS - start)) s)"
