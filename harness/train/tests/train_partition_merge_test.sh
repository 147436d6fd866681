#!/usr/bin/env bash
# `lobench train-xmc --partition K/N` and `lobench merge` of its folders (ctest train_xmc_partition_merge):
# a sweep of 4 runs made as 3 partitions and merged holds the same run files, with the same per-epoch
# losses and P@k bit for bit, as the sweep made at once; each file records its partition and keeps the
# provenance of the process that trained it; a duplicated part, a gap, a missing run and a part of
# another sweep are refused, leaving nothing behind.
# Usage: train_partition_merge_test.sh LOBENCH SOURCE_DIR
set -euo pipefail
exe=$1
src=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
args=(--dataset synthetic:tiny --syn-scale 0.02 --epochs 2 --dim 8 --batch 64 --clf-format fp32,bf16
      --rounding sr --seeds 0,1 --threads 1 --quiet)

"$exe" train-xmc "${args[@]}" --out-dir "$d/one" > "$d/one.log" 2>&1
test "$("$exe" train-xmc "${args[@]}" --partition 1/3 --list | tail -1)" = "1 runs"
# The 3 partitions as 3 local processes, merged (scripts/run_train_partitions.sh, what a job array does).
LOBENCH="$exe" "$src/scripts/run_train_partitions.sh" 3 "$d/merged" "${args[@]}" | grep -q 'merged 3 train-xmc parts, 4 runs'
for k in 0 1 2; do mv "$d/merged.part$k" "$d/p$k"; done

# More tasks than runs (5 partitions of 4 runs): the fifth makes none and leaves an empty folder.
LOBENCH="$exe" "$src/scripts/run_train_partitions.sh" 5 "$d/merged5" "${args[@]}" | grep -q 'merged 5 train-xmc parts, 4 runs'
grep -q 'partition 4/5 of a sweep of 4 runs makes none' "$d/merged5.part4.log"
test -d "$d/merged5.part4" && test -z "$(ls "$d/merged5.part4")"

python3 - "$d" <<'EOF'
import os, sys
import h5py, numpy as np
d = sys.argv[1]
names = sorted(os.listdir(f"{d}/one"))
assert len(names) == 4 and sorted(os.listdir(f"{d}/merged")) == names, (names, os.listdir(f"{d}/merged"))
assert sorted(os.listdir(f"{d}/merged5")) == names, os.listdir(f"{d}/merged5")
parts = {n: k for k in range(3) for n in os.listdir(f"{d}/p{k}")}
assert sorted(parts) == names and sorted(parts.values()) == [0, 0, 1, 2], parts
fields = ["epoch", "steps", "train_loss", "test_loss", "p_at_1", "p_at_3", "p_at_5", "ndcg_at_5", "psp_at_5",
          "weight_mean_abs", "weight_zero_fraction", "peak_bytes"]
for n in names:
    with h5py.File(f"{d}/one/{n}") as a, h5py.File(f"{d}/merged/{n}") as b:
        ea, eb = a["epochs"][()], b["epochs"][()]
        assert len(ea) == len(eb) == 2, n
        for f in fields:
            assert np.array_equal(ea[f], eb[f]), (n, f, ea[f], eb[f])
        k = parts[n]
        assert b.attrs["partition"] == f"{k}/3" and a.attrs["partition"] == "0/1", n
        assert b.attrs["sweep_runs"] == a.attrs["sweep_runs"] == 4 and b.attrs["sweep_index"] == a.attrs["sweep_index"]
        assert b.attrs["sweep"] == a.attrs["sweep"], n
        assert f"--partition {k}/3" in b.attrs["argv"], b.attrs["argv"]  # the part's own provenance
        assert b.attrs["status"] == "ok", n
EOF
python3 "$src/plots/elmo_precision.py" "$d/merged" -o "$d/merged.png" > /dev/null  # read as one sweep's folder
test -s "$d/merged.png"

refused() {  # refused WHAT OUT PARTS...: merge must fail (status 2) naming WHAT and leave nothing at OUT
  local what=$1 out=$2 rc=0
  shift 2
  "$exe" merge "$out" "$@" 2> "$d/err" > /dev/null || rc=$?
  test "$rc" -eq 2 || { echo "merge $* exited $rc, not 2"; exit 1; }
  grep -q -- "$what" "$d/err" || { echo "merge $*: no '$what' in:"; cat "$d/err"; exit 1; }
  test ! -e "$out"
  if ls "$d" | grep -q partial; then echo "a temporary folder was left"; exit 1; fi
}
refused 'both partition' "$d/bad" "$d/p0" "$d/p0" "$d/p1" "$d/p2"
refused 'missing (a gap)' "$d/bad" "$d/p0" "$d/p1"
mkdir "$d/empty"
refused 'partition 2/3 is missing (a gap)' "$d/bad" "$d/p0" "$d/p1" "$d/empty"  # an empty folder for one that made runs
refused 'holds no run files' "$d/bad" "$d/empty" "$d/merged5.part4"
cp -r "$d/p0" "$d/p0x"
rm "$d/p0x/$(ls "$d/p0x" | head -1)"
refused 'is missing' "$d/bad" "$d/p0x" "$d/p1" "$d/p2"
"$exe" train-xmc "${args[@]}" --epochs 1 --partition 1/3 --out-dir "$d/q1" > /dev/null 2>&1
refused 'another sweep' "$d/bad" "$d/p0" "$d/q1" "$d/p2"
cp -r "$d/p1" "$d/p1v0"  # the same runs as another version of the run file
python3 -c "import h5py, glob, sys; [h5py.File(f, 'r+').attrs.__setitem__('schema', 'lobench train-xmc run, version 0') for f in glob.glob(sys.argv[1] + '/*.h5')]" "$d/p1v0"
refused "run, version 0' file" "$d/bad" "$d/p0" "$d/p1v0" "$d/p2"
refused 'is one train-xmc run file' "$d/bad" "$d/p1/$(ls "$d/p1")" "$d/p0" "$d/p2"
mkdir "$d/mixed" && cp "$d"/p0/*.h5 "$d"/p1/*.h5 "$d/mixed"
refused 'its own --out-dir' "$d/bad" "$d/mixed" "$d/p2"
# An existing OUT is never replaced (nor with --overwrite), and stays as it was.
before=$(ls "$d/merged")
if "$exe" merge "$d/merged" "$d/p0" "$d/p1" "$d/p2" 2> "$d/err"; then exit 1; fi
grep -q 'exists' "$d/err"
if "$exe" merge --overwrite "$d/merged" "$d/p0" "$d/p1" "$d/p2" 2> "$d/err"; then exit 1; fi
grep -q 'never replaced' "$d/err"
test "$(ls "$d/merged")" = "$before"
echo "train-xmc partition + merge: ok"
