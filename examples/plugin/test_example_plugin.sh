#!/usr/bin/env bash
# The example plug-in as a user builds it: lobench installed into a temporary prefix, examples/plugin
# configured against it (find_package(lobench) → lobench_add_plugin), and the installed lobench lists
# the plug-in and measures it beside fused, each row with errors against the float64 reference.
# Usage: test_example_plugin.sh CMAKE BUILD_DIR EXAMPLE_SOURCE_DIR CXX PLOTS_DIR
set -euo pipefail
cmake=$1 build=$2 src=$3 cxx=$4 plots=$5
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
"$cmake" --install "$build" --prefix "$d/prefix" > "$d/install.log"
"$cmake" -S "$src" -B "$d/plugin-build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$d/prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" > "$d/configure.log"
"$cmake" --build "$d/plugin-build" > "$d/build.log"
plugin="$d/plugin-build/naive_loop.so"
test -f "$plugin"
"$d/prefix/bin/lobench" list --plugin "$plugin" | grep -A3 '^naive_loop ' | grep -q "origin: plugin $plugin"
"$d/prefix/bin/lobench" run --plugin "$plugin" --variants naive_loop,fused --B 2 --N 7 --V 500 --D 16 --L 3 \
  --weighted --pad-fraction 0.1 --dup-fraction 0.1 --reps 2 --threads 1 --mem-limit 1G --out "$d/run.h5"
python3 - "$plots" "$d/run.h5" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import lobench_results as lr
df = lr.read(sys.argv[2])
assert sorted(df["variant"]) == ["fused", "naive_loop"], df["variant"]
assert (df["status"] == "ok").all(), df["status"]
for col in ("rel_loss_err", "rel_dA_err", "rel_dE_err"):
    assert (df[col] < 1e-5).all(), (col, df[["variant", col]])
print(df[["variant", "time_median_s", "rel_loss_err", "rel_dA_err", "rel_dE_err"]].to_string(index=False))
PY
