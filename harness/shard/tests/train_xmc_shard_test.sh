#!/usr/bin/env bash
# `mpirun -np 2 lobench train-xmc --shard labels` (ctest train_xmc_shard_labels): the same sweep trained
# in one process and label-sharded over 2 ranks gives the same per-epoch losses and P@k within the
# accuracy rules of the library test (label_shard_mpi_test.cpp: fp32 head, losses 1e-6, the weights'
# mean 1e-5, P@k exact); rank 0 writes the run files, which record the ranks, the shard and the MPI
# library. A rank whose shard cannot train makes the run fail on every rank with that rank's message; a
# failure of the primary alone (an --out-dir it cannot use) ends every rank with status 2, and so does a
# rank running out of memory alone inside the training; no hang.
# Usage: train_xmc_shard_test.sh LOBENCH "MPIRUN [FLAGS]"
set -euo pipefail
exe=$1
read -r -a mpirun <<< "$2"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
args=(train-xmc --dataset synthetic:tiny --syn-scale 0.05 --epochs 2 --dim 16 --batch 64 --clf-format fp32
      --rounding rne --update fused,separate --dropout 0.2 --seeds 3 --threads 1 --quiet)

"$exe" "${args[@]}" --out-dir "$d/one" > "$d/one.log"
timeout 240 "${mpirun[@]}" -np 2 "$exe" "${args[@]}" --shard labels --out-dir "$d/two" > "$d/two.log" 2>&1 \
  || { cat "$d/two.log"; exit 1; }
test "$(grep -c 'P@1' "$d/two.log")" -eq 2  # rank 0 alone prints

python3 - "$d" <<'EOF'
import os, sys
import h5py, numpy as np
d = sys.argv[1]
names = sorted(os.listdir(f"{d}/one"))
assert len(names) == 2 and sorted(os.listdir(f"{d}/two")) == names, (names, os.listdir(f"{d}/two"))
def rel(a, b):
    return np.abs(a - b) / np.maximum(np.abs(b), 1e-300)
for n in names:
    with h5py.File(f"{d}/one/{n}") as a, h5py.File(f"{d}/two/{n}") as b:
        assert b.attrs["status"] == "ok" and b.attrs["ranks"] == 2, dict(b.attrs)
        assert b.attrs["shard"] == "labels over 2 ranks" and "MPI" in b.attrs["mpi_library"], b.attrs["shard"]
        assert "ranks" not in a.attrs and "shard" not in a.attrs
        ea, eb = a["epochs"][()], b["epochs"][()]
        assert len(ea) == len(eb) == 2, n
        for f in ["train_loss", "test_loss"]:
            assert (rel(eb[f], ea[f]) <= 1e-6).all(), (n, f, ea[f], eb[f])
        assert (rel(eb["weight_mean_abs"], ea["weight_mean_abs"]) <= 1e-5).all(), n
        assert np.array_equal(eb["weight_zero_fraction"], ea["weight_zero_fraction"]), n
        for f in ["p_at_1", "p_at_3", "p_at_5"]:
            assert (np.abs(eb[f] - ea[f]) <= 1e-12).all(), (n, f, ea[f], eb[f])
        for f in ["psp_at_1", "psp_at_3", "psp_at_5"]:
            assert (np.abs(eb[f] - ea[f]) <= 1e-9).all(), (n, f, ea[f], eb[f])
        # Memory per rank: each rank holds half the head; the sum over ranks is at least the largest.
        assert b.attrs["rank_peak_bytes_sum"] >= b.attrs["rank_peak_bytes_max"] > 0
        # Exact per rank: rank 0's measured peak is its prediction, the largest rank's the largest's.
        assert b["memory"].attrs["measured_peak_bytes"] == b["memory"].attrs["predicted_peak_bytes"], dict(b["memory"].attrs)
        assert b.attrs["rank_peak_bytes_max"] == b.attrs["rank_predicted_peak_bytes_max"], dict(b.attrs)
        assert b.attrs["rank_predicted_peak_bytes_max"] < a["memory"].attrs["predicted_peak_bytes"], n
        assert b["memory"].attrs["predicted_weights_bytes"] < a["memory"].attrs["predicted_weights_bytes"], n
        assert b.attrs["comm_bytes_max"] > 0, n
EOF

# 9 labels over 2 ranks: rank 1's shard [5, 9) is too small for P@5. Every rank fails the run with rank 1's
# message (rank 0 records it) and exits non-zero.
python3 - "$d" <<'EOF'
import random, sys
d = sys.argv[1]
rng = random.Random(7)
for split, rows in (("train", 60), ("test", 20)):
    with open(f"{d}/{split}.txt", "w") as f:
        f.write(f"{rows} 30 9\n")
        for _ in range(rows):
            labels = sorted(rng.sample(range(9), 2))
            feats = sorted(rng.sample(range(30), 4))
            f.write(",".join(map(str, labels)) + " " + " ".join(f"{j}:1" for j in feats) + "\n")
EOF
small=(train-xmc --dataset "xc:$d/train.txt,$d/test.txt" --epochs 1 --dim 8 --batch 16 --threads 1 --quiet)
rc=0
timeout 120 "${mpirun[@]}" -np 2 "$exe" "${small[@]}" --shard labels --out-dir "$d/small" > "$d/small.log" 2>&1 || rc=$?
test "$rc" -ne 0 -a "$rc" -ne 124 || { echo "exit $rc"; cat "$d/small.log"; exit 1; }
grep -q "FAILED: rank 1: its label shard .* holds fewer than the 5 labels" "$d/small.log" \
  || { cat "$d/small.log"; exit 1; }
python3 -c "import h5py, sys, glob; [f] = glob.glob(sys.argv[1] + '/small/*.h5'); a = h5py.File(f).attrs; \
assert a['status'] == 'failed' and a['reason'].startswith('rank 1: '), dict(a)" "$d"

# The primary alone cannot use --out-dir (a file is there): every rank exits with status 2 and rank 0's message.
touch "$d/not_a_folder"
rc=0
timeout 120 "${mpirun[@]}" -np 2 "$exe" "${args[@]}" --shard labels --out-dir "$d/not_a_folder" > "$d/bad.log" 2>&1 || rc=$?
test "$rc" -eq 2 || { echo "exit $rc"; cat "$d/bad.log"; exit 1; }
test "$(grep -c "rank 0: --out-dir '$d/not_a_folder' exists and is not a folder" "$d/bad.log")" -eq 2 \
  || { cat "$d/bad.log"; exit 1; }

# Rank 1 alone runs out of memory inside the training (its address space capped below its label shard of
# 3M labels x 64 x fp32 = 384 MB, above the ~210 MB a rank maps before training, plus the shared
# libraries it maps): every rank ends with status 2 and
# rank 1's message, at once (no rank left waiting in a collective).
# An AddressSanitizer build cannot start under an address-space cap (it reserves terabytes of shadow
# memory first): the case is for uninstrumented builds (scripts/sanitize.sh runs this script too).
if ldd "$exe" | grep -q libasan; then
  echo "the out-of-memory rank: skipped (AddressSanitizer build: ulimit -v stops it from starting)"
else
  libs_kb=$(ldd "$exe" | awk '/=> \//{print $3}' | xargs -r stat -L -c %s | awk '{s += $1} END {print int(s / 1024)}')
  cap_kb=$((409600 + libs_kb))
  cat > "$d/cap_rank1.sh" <<EOF
#!/bin/bash
if [ "\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-}}" = 1 ]; then ulimit -v $cap_kb; fi
exec "\$@"
EOF
  chmod +x "$d/cap_rank1.sh"
  rc=0
  timeout 120 "${mpirun[@]}" -np 2 "$d/cap_rank1.sh" "$exe" train-xmc --dataset synthetic:tiny --syn-scale 0.05 \
    --labels-total 3000000 --epochs 1 --dim 64 --batch 8 --threads 1 --quiet --mem-limit 64G --shard labels \
    --out-dir "$d/oom" > "$d/oom.log" 2>&1 || rc=$?
  test "$rc" -ne 0 -a "$rc" -ne 124 || { echo "exit $rc"; cat "$d/oom.log"; exit 1; }
  grep -q 'rank 1: std::bad_alloc (ending every rank)' "$d/oom.log" || { cat "$d/oom.log"; exit 1; }
fi

# --shard takes labels only.
rc=0
"$exe" "${args[@]}" --shard vocab --out-dir "$d/x" 2> "$d/err" || rc=$?
test "$rc" -eq 2 && grep -q "by 'labels', not 'vocab'" "$d/err" && test ! -e "$d/x"
echo "train-xmc --shard labels: ok"
