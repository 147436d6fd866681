#!/usr/bin/env bash
# ctest peers_smoke: scripts/table2.sh at a tiny shape (lobench's sweep, then every peer that is installed,
# into one run file), a peer run with adaptive repetitions on 1 thread, and the tables. Checks that every
# peer row has the run file's type, status ok, its samples in /samples, its spread, threads as asked, its
# RSS growth measured, and that the markdown and summary read the file. Peers whose framework is missing
# (jax, keras, torch) must be skipped with a note, not fail.
# Usage: harness/peers/tests/peers_smoke.sh LOBENCH
set -euo pipefail
lobench=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

LOBENCH=$lobench "$root/scripts/table2.sh" "$d/run.h5" --B 1 --N 16 --V 300 --D 8 --L 2 --threads 2 \
  --variants dense,chunked,fused --reps 2 --warmup 1 --mem-limit 1G > "$d/table2.log" 2>&1 || { cat "$d/table2.log"; exit 1; }
python3 "$root/harness/peers/jax_chunked_bce.py" "$d/run.h5" --B 1 --N 16 --V 300 --D 8 --L 2 --threads 1 \
  --block-v 128 --min-time 0.05 --max-reps 6 > "$d/adaptive.log" 2>&1 || { cat "$d/adaptive.log"; exit 1; }
# the same points again with --skip-existing: nothing appended
python3 "$root/harness/peers/jax_chunked_bce.py" "$d/run.h5" --B 1 --N 16 --V 300 --D 8 --L 2 --threads 1 \
  --block-v 128 --skip-existing > "$d/again.log" 2>&1

# the PyTorch script without torch (pyenv's python3 here): exit 0, a note, nothing written
if ! python3 -c "import torch" > /dev/null 2>&1; then
  rows_before=$(python3 -c "import h5py, sys; print(h5py.File(sys.argv[1], 'r')['results'].shape[0])" "$d/run.h5")
  python3 "$root/harness/peers/torch_dense_bce.py" "$d/run.h5" --B 1 --N 16 --V 300 --D 8 --L 2 > "$d/notorch.log" 2>&1
  grep -q "torch is not importable" "$d/notorch.log"
  [[ $(python3 -c "import h5py, sys; print(h5py.File(sys.argv[1], 'r')['results'].shape[0])" "$d/run.h5") == "$rows_before" ]]
fi

torch_python=""
for candidate in python3 /usr/bin/python3; do
  "$candidate" -c "import torch, h5py, pandas" > /dev/null 2>&1 && { torch_python=$candidate; break; }
done
python3 - "$d" "$root" "${torch_python:-none}" <<'PY'
import importlib.util as u, math, os, sys
d, root, torch_python = sys.argv[1:]
sys.path.insert(0, os.path.join(root, "plots"))
import lobench_results as lr
r = lr.read(f"{d}/run.h5")
log = open(f"{d}/table2.log").read()
has = lambda m: u.find_spec(m) is not None
want = {"jax_dense": has("jax"), "keras_dense": has("jax") and has("keras"), "jax_chunked": has("jax"),
        "torch_dense": torch_python != "none"}
for variant, present in want.items():
    rows = r[(r.variant == variant) & (r.threads == 2)]
    if not present:
        assert len(rows) == 0 and f"{variant} skipped" in log, (variant, log)
        continue
    assert len(rows) == 1, (variant, rows)
    row = rows.iloc[0]
    assert row.status == "ok" and row.backend == "peer" and row.operand == "fp32", row
    assert row.reps == 2 and row.time_min_s <= row.time_median_s <= row.time_max_s and math.isfinite(row.time_cv), row
    assert math.isfinite(row.rss_growth_bytes) and math.isnan(row.peak_bytes) and "CPUs 0,1" in row.reason, row
    assert math.isnan(row.peak_device_bytes), row
    assert set(row["flags"].split(",")) - {""} <= {"noisy", "above_yardstick"}, row["flags"]
    assert math.isfinite(row.gemm_gflops), row  # the run's yardstick on 2 threads (a cpu row's)
one = r[(r.variant == "jax_chunked") & (r.threads == 1)]
if has("jax"):
    assert len(one) == 1 and one.iloc[0].status == "ok" and 3 <= one.iloc[0].reps <= 6 and "CPUs 0 " in one.iloc[0].reason + " ", one
    assert "already in" in open(f"{d}/again.log").read()
s = lr.read_samples(f"{d}/run.h5")
peers = r[r.backend == "peer"]
for rid, reps in zip(peers.row_id, peers.reps):
    assert (s.row_id == rid).sum() == reps, (rid, reps)
print(f"peers_smoke: {len(peers)} peer rows checked ({', '.join(sorted(set(peers.variant)))})")
PY
python3 "$root/plots/table2_markdown.py" "$d/run.h5" > "$d/table.md"
grep -q '^| 1 | 16 | 300 | fp32, 2 | ' "$d/table.md"
grep -q '| fused (2 thr) |' "$d/table.md"
python3 "$root/plots/run_summary.py" "$d/run.h5" > "$d/summary.txt"
grep -q 'median ms' "$d/summary.txt"
echo "peers_smoke: ok"
