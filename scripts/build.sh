#!/usr/bin/env bash
# Configures and builds lobench into build/ (Release). CUDA code is built when nvcc is found.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
