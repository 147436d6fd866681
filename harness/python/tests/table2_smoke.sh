#!/usr/bin/env bash
# ctest table2_smoke: scripts/table2.sh at a tiny shape: lobench's dense, chunked and fused and every
# framework peer (Python variants: jax_dense, keras_dense, jax_chunked with python3, torch_dense with the
# interpreter that has torch) as rows of one run file, each peer's row measured with its errors against
# the float64 reference, or skipped with the reason where its framework is missing; the tables read it.
# Usage: harness/python/tests/table2_smoke.sh BUILD_DIR
set -euo pipefail
build=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

LOBENCH_BUILD=$build "$root/scripts/table2.sh" "$d/run.h5" --B 1 --N 16 --V 300 --D 8 --L 2 --threads 2 \
  --reps 2 --warmup 1 --mem-limit 1G --overwrite > "$d/table2.log" 2>&1 || { cat "$d/table2.log"; exit 1; }
torch_python=python3
python3 -c "import torch" > /dev/null 2>&1 || torch_python=/usr/bin/python3
python3 - "$d" "$root" "$torch_python" <<'PY'
import math, os, subprocess, sys
d, root, torch_python = sys.argv[1:]
sys.path.insert(0, os.path.join(root, "plots"))
import lobench_results as lr
has = lambda python, check: subprocess.run([python, "-c", check], capture_output=True).returncode == 0
jax = has("python3", "import jax")
keras = jax and has("python3", "import os; os.environ['KERAS_BACKEND'] = 'jax'; import keras")
want = {"dense": True, "chunked": True, "fused": True, "jax_dense": jax, "keras_dense": keras, "jax_chunked": jax,
        "torch_dense": has(torch_python, "import torch")}
r = lr.read(f"{d}/run.h5")
assert sorted(r.variant) == sorted(want), sorted(r.variant)
for variant, present in want.items():
    (row,) = [row for _, row in r[r.variant == variant].iterrows()]
    if not present:
        assert row.status == "skipped" and variant.split("_")[0] + " is not" in row.reason, (variant, row.reason)
        continue
    assert row.status == "ok" and row.threads == 2 and row.reps == 2, (variant, row.status, row.reason)
    assert row.time_min_s <= row.time_median_s <= row.time_max_s, row
    assert row.rel_loss_err <= 1e-6 and row.rel_dA_err <= 1e-5 and row.rel_dE_err <= 1e-5, (variant, row)
print(f"table2_smoke: {len(r)} rows in one run file ({', '.join(v for v, p in want.items() if p)} measured)")
PY
python3 "$root/plots/table2_markdown.py" "$d/run.h5" > "$d/table.md"
grep -q '^| 1 | 16 | 300 | fp32, 2 | ' "$d/table.md"
grep -q '^| 1 | 16 | 300 | fused | ' "$d/table.md"
python3 "$root/plots/run_summary.py" "$d/run.h5" > "$d/summary.txt"
grep -q 'median ms' "$d/summary.txt"
echo "table2_smoke: ok"
