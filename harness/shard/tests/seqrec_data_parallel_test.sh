#!/usr/bin/env bash
# `mpirun -np R lobench train-seqrec --data-parallel` (ctest train_seqrec_data_parallel):
# (1) R = 1, 2, 4 ranks (1 thread each) give the one-process run (2 threads) with the same --B and
#     --micro-batch bit for bit: every step's loss, every epoch's metrics and the final parameters' hash
#     (two epochs, so the short last batch leaves some ranks without a micro-batch; dropout on, so the masks must follow the windows);
#     for the full-vocabulary loss (chunked, item bias) and SASRec's sampled negative;
# (2) a second R = 2 job gives the same bits (run to run);
# (3) micro-batches change the loss only by rounding (the whole batch's Σw scales every micro-batch);
# (4) rank 0 writes a /ranks table: per-rank predicted = measured bytes, RSS, communication;
# (5) a rank out of memory alone ends every rank with its message, at once (no hang);
# (6) hostile options exit 2 with the reason: ranks not a power of two dividing the micro-batches,
#     --micro-batch not dividing --B, --resume with --data-parallel;
# (7) with SHIM, a signal to one rank stops every rank (below).
# Usage: seqrec_data_parallel_test.sh LOBENCH "MPIRUN [FLAGS]" [SHIM: libsignal_at_write.so]
set -euo pipefail
exe=$1
read -r -a mpirun <<< "$2"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
tiny=(train-seqrec --dataset synthetic:yambda --syn-scale 0.003 --L 2 --N 16 --B 8 --micro-batch 2 --D 16 --layers 1
      --heads 2 --epochs 2 --dropout 0.2 --threads 1 --quiet --mem-limit 8G)

for variant in "chunked --output-bias item" "sampled"; do
  tag=${variant%% *}
  # shellcheck disable=SC2086
  # the one-process run on 2 threads, the ranks on 1: the bits may not depend on the thread count either
  "$exe" "${tiny[@]}" --variant $variant --threads 2 --out "$d/${tag}_one.h5" > "$d/${tag}_one.log"
  # shellcheck disable=SC2086
  "$exe" "${tiny[@]}" --variant $variant --micro-batch 8 --out "$d/${tag}_plain.h5" > /dev/null
  for np in 1 2 4; do
    # shellcheck disable=SC2086
    timeout 120 "${mpirun[@]}" -np $np "$exe" "${tiny[@]}" --variant $variant --data-parallel \
      --out "$d/${tag}_r$np.h5" > "$d/${tag}_r$np.log" 2>&1 || { cat "$d/${tag}_r$np.log"; exit 1; }
  done
done
# shellcheck disable=SC2086
timeout 120 "${mpirun[@]}" -np 2 "$exe" "${tiny[@]}" --variant chunked --output-bias item --data-parallel \
  --out "$d/chunked_r2_again.h5" > /dev/null 2>&1
test "$(grep -c ': ok ->' "$d/chunked_r2.log")" -eq 1  # rank 0 alone prints (--quiet: its summary, no epoch lines)
! grep -q ' epoch [0-9]' "$d/chunked_r2.log"

python3 - "$d" <<'PY'
import sys
import h5py, numpy as np
d = sys.argv[1]
def load(name):
    with h5py.File(f"{d}/{name}.h5", "r") as f:
        return dict(f.attrs), f["steps"][()], f["epochs"][()], (f["ranks"][()] if "ranks" in f else None), \
               dict(f["memory"].attrs)
for tag in ["chunked", "sampled"]:
    a, steps, epochs, ranks, mem = load(f"{tag}_one")
    assert a["status"] == "ok" and a["micro_batch"] == 2 and ranks is None, a
    # Provenance: the commit the binary was built from (cmake/build_commit.cmake) beside the checkout's.
    assert len(a["build_commit"]) == 40 or a["build_commit"] == "unknown", a["build_commit"]
    assert a["build_dirty"] in (0, 1) and "git_commit" in a
    batches = steps["batch"]
    assert batches[-1] < 8 and len(set(batches)) > 1, batches  # a short last batch
    assert epochs.shape[0] == 2
    for np_ in [1, 2, 4]:
        b, s2, e2, r2, m2 = load(f"{tag}_r{np_}")
        assert b["status"] == "ok" and b["ranks"] == np_, b
        assert b["parameters_hash"] == a["parameters_hash"], (tag, np_, b["parameters_hash"], a["parameters_hash"])
        assert (s2["loss"].view(np.uint64) == steps["loss"].view(np.uint64)).all(), (tag, np_, s2["loss"], steps["loss"])
        for col in ["tp", "fp", "fn", "tn"]:
            assert (s2[col] == steps[col]).all(), (tag, np_, col)
        for col in ["dev_hit_at_8", "test_hit_at_8", "test_ndcg_at_10", "train_loss"]:
            assert (e2[col].view(np.uint64) == epochs[col].view(np.uint64)).all(), (tag, np_, col)
        assert r2 is not None and len(r2) == np_ and list(r2["rank"]) == list(range(np_)), r2
        assert (r2["measured_bytes"] == r2["predicted_bytes"]).all(), r2
        assert r2["measured_bytes"][0] == m2["measured_total_bytes"] == m2["predicted_total_bytes"], (r2, m2)
        assert (r2["rss_peak_bytes"] > r2["measured_bytes"]).all(), r2
        if np_ > 1:
            assert (r2["comm_bytes_sent"] > 0).all() and (r2["comm_s"] > 0).all(), r2
            assert m2["measured_gradient_sums_bytes"] > 0
        assert "MPI" in b["mpi_library"]
    # Micro-batches of 2 against the plain step (--micro-batch 8 = --B): the same objective, summed in
    # another order. A wrong scale (each micro-batch's own Σw) would be 4x off.
    p, sp, _, _, _ = load(f"{tag}_plain")
    assert p["parameters_hash"] != a["parameters_hash"]
    rel = np.abs(sp["loss"] - steps["loss"]) / np.abs(sp["loss"])
    assert rel[0] < 1e-6, (tag, rel[:3])  # the first step: the same parameters
    assert rel.max() < 1e-3, (tag, rel.max())
again, s3, _, _, _ = load("chunked_r2_again")
assert again["parameters_hash"] == load("chunked_r2")[0]["parameters_hash"]
print("bit-identical over 1, 2, 4 ranks and run to run")
PY

# A rank out of memory alone (its address space capped below its model: a 45k x 1024 tied table is
# 180 MB, x4 with its gradient and AdamW's moments) ends every rank with status != 0 and its message.
# An AddressSanitizer build cannot start under an address-space cap (it reserves terabytes of shadow
# memory first): the case is for uninstrumented builds (scripts/sanitize.sh runs this script too).
if ldd "$exe" | grep -q libasan; then
  echo "the out-of-memory rank: skipped (AddressSanitizer build: ulimit -v stops it from starting)"
else
  libs_kb=$(ldd "$exe" | awk '/=> \//{print $3}' | xargs -r stat -L -c %s | awk '{s += $1} END {print int(s / 1024)}')
  cap_kb=$((450000 + libs_kb))
  cat > "$d/cap_rank1.sh" <<EOS
#!/bin/bash
if [ "\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-}}" = 1 ]; then ulimit -v $cap_kb; fi
exec "\$@"
EOS
  chmod +x "$d/cap_rank1.sh"
  rc=0
  start=$(date +%s)
  timeout 120 "${mpirun[@]}" -np 2 "$d/cap_rank1.sh" "$exe" train-seqrec --dataset synthetic:yambda --syn-scale 0.05 \
    --L 2 --N 16 --B 4 --D 1024 --layers 1 --heads 2 --steps 2 --threads 1 --quiet --mem-limit 64G --data-parallel \
    --variant fused --out "$d/oom.h5" > "$d/oom.log" 2>&1 || rc=$?
  test "$rc" -ne 0 -a "$rc" -ne 124 || { echo "exit $rc"; cat "$d/oom.log"; exit 1; }
  grep -q 'rank 1: std::bad_alloc (ending every rank)' "$d/oom.log" || { cat "$d/oom.log"; exit 1; }
  test ! -e "$d/oom.h5"
  [ $(( $(date +%s) - start )) -lt 60 ] || { echo "the failing job took a minute or more"; exit 1; }
fi

# (7) SIGTERM to rank 0 alone (signal_at_write.so, SHIM, at its 40th write to the run file): every rank
#     stops at the same step and says so (a rank that saw no signal itself took the others'), rank 0
#     alone what became of the file; the run file keeps its steps with status interrupted.
if [ -n "${3:-}" ]; then
  cat > "$d/signal_rank0.sh" <<EOS
#!/bin/bash
if [ "\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-}}" = 0 ]; then export LD_PRELOAD=$3 SIGNAL_AT_WRITE=40 SIGNAL_AT_WRITE_SIG=15; fi
exec "\$@"
EOS
  chmod +x "$d/signal_rank0.sh"
  rc=0
  # shellcheck disable=SC2086
  timeout 120 "${mpirun[@]}" -np 2 "$d/signal_rank0.sh" "$exe" "${tiny[@]}" --variant chunked --data-parallel \
    --out "$d/stopped.h5" > "$d/stopped.log" 2>&1 || rc=$?
  test "$rc" -eq 143 || { echo "exit $rc"; cat "$d/stopped.log"; exit 1; }
  test "$(grep -c 'interrupted by SIGTERM' "$d/stopped.log")" -eq 2 || { cat "$d/stopped.log"; exit 1; }
  # (rank 0 alone says what became of the file: the other rank has none)
  test "$(grep -c 'status interrupted' "$d/stopped.log")" -eq 1 || { cat "$d/stopped.log"; exit 1; }
  grep -q "rank 0 says what became of" "$d/stopped.log" || { cat "$d/stopped.log"; exit 1; }
  python3 -c "import h5py, sys; f = h5py.File(sys.argv[1], 'r'); s = f.attrs['status']; \
assert (s.decode() if isinstance(s, bytes) else s) == 'interrupted' and 0 < len(f['steps']) == int(f.attrs['steps'])" \
    "$d/stopped.h5"
fi

# Hostile options: exit 2 with the reason, on every rank, nothing written.
expect2() {  # expect2 PATTERN CMD...
  local pattern=$1 rc=0
  shift
  timeout 60 "$@" > "$d/bad.log" 2>&1 || rc=$?
  test "$rc" -eq 2 || { echo "exit $rc for $*"; cat "$d/bad.log"; exit 1; }
  grep -q -- "$pattern" "$d/bad.log" || { echo "no '$pattern' for $*"; cat "$d/bad.log"; exit 1; }
}
expect2 'power of two dividing' "${mpirun[@]}" -np 2 "$exe" "${tiny[@]}" --micro-batch 8 --data-parallel --out "$d/x.h5"
expect2 'power of two dividing' "${mpirun[@]}" -np 3 "$exe" "${tiny[@]}" --data-parallel --out "$d/x.h5"
expect2 'must divide --B' "$exe" "${tiny[@]}" --micro-batch 3 --out "$d/x.h5"
expect2 'does not take --data-parallel' "${mpirun[@]}" -np 2 "$exe" "${tiny[@]}" --data-parallel --resume --out-dir "$d/xd"
test ! -e "$d/x.h5" -a ! -e "$d/xd"
echo "train-seqrec --data-parallel: ok"
