#!/usr/bin/env bash
# The example plug-in as a user builds it: lobench installed into a temporary prefix, examples/plugin
# configured against it (find_package(lobench) → lobench_add_plugin), and the installed lobench lists
# the plug-in and measures it beside fused, each row with errors against the float64 reference. Where the
# build tree has the Python engine (lobench._engine), the same library and a Python variant in a user's
# own file are listed together and measured in one sweep beside fused by `python -m lobench run`.
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

compgen -G "$build/python/lobench/_engine*.so" > /dev/null || { echo "no lobench._engine in $build: the Python half is not run"; exit 0; }
# A user's own file, outside lobench: the example Python variant, copied there.
cp "$src/../python/numpy_dense.py" "$d/my_variants.py"
export PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}"
python3 -m lobench list --plugin "$plugin" --python-variant "$d/my_variants.py:NumpyDense" > "$d/list.txt"
grep -A3 '^naive_loop ' "$d/list.txt" | grep -q "origin: plugin $plugin"
grep -A3 '^numpy_dense ' "$d/list.txt" | grep -q "origin: python $d/my_variants.py:NumpyDense"
python3 -m lobench run --plugin "$plugin" --variants "naive_loop,fused,$d/my_variants.py:NumpyDense" --B 2 --N 7 \
  --V 500 --D 16 --L 3 --weighted --pad-fraction 0.1 --dup-fraction 0.1 --reps 2 --threads 1 --mem-limit 1G \
  --out "$d/both.h5"
python3 - "$plots" "$d/both.h5" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import lobench_results as lr
df = lr.read(sys.argv[2])
assert sorted(df["variant"]) == ["fused", "naive_loop", "numpy_dense"], df["variant"]
assert (df["status"] == "ok").all(), df[["variant", "status", "reason"]]
for col in ("rel_loss_err", "rel_dA_err", "rel_dE_err"):
    assert (df[col] < 1e-5).all(), (col, df[["variant", col]])
print(df[["variant", "backend", "time_median_s", "rel_loss_err", "rel_dA_err", "rel_dE_err"]].to_string(index=False))
PY
