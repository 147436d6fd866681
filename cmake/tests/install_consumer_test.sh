#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then builds cmake/tests/consumer against it twice:
# with find_package(lobench) and with pkg-config, and runs each build's one step. The prefix is removed.
# Usage: install_consumer_test.sh CMAKE BUILD_DIR CONSUMER_SOURCE_DIR CXX
set -euo pipefail
cmake=$1 build=$2 src=$3 cxx=$4
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
"$cmake" --install "$build" --prefix "$d/prefix" > "$d/install.log"
test -x "$d/prefix/bin/lobench"
"$d/prefix/bin/lobench" list | grep -q fused
"$cmake" -S "$src" -B "$d/cmake-build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$d/prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" > "$d/configure.log"
"$cmake" --build "$d/cmake-build" > "$d/build.log"
echo "find_package(lobench):"
"$d/cmake-build/consumer"
pc=$(find "$d/prefix" -name lobench.pc)
echo "pkg-config ($pc):"
# shellcheck disable=SC2046
"$cxx" -O2 "$src/main.cpp" -o "$d/pc-consumer" $(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs lobench)
"$d/pc-consumer"
