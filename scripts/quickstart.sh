#!/usr/bin/env bash
# The README's first command: install what is missing, build, run the main job (a reduced Table II
# sweep on built-in synthetic data), print its table, write results/quickstart.h5 and a figure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh
build/lobench run @harness/sweeps/quickstart.args --out results/quickstart.h5 --overwrite  # a demo file: rerunning replaces it
python3 plots/plot_sweep.py results/quickstart.h5 -o results/quickstart.png
