#!/usr/bin/env bash
# `lobench train-seqrec --partition K/N`, `--resume` and `lobench merge` of the parts' folders (ctest
# train_seqrec_partition_merge), through the one sweep driver and merger that `run` and `train-xmc` use:
# a sweep of 4 runs made as 3 partitions and merged holds the same run files, with the same per-step
# losses and cut counts and per-epoch metrics bit for bit, as the sweep made at once; each file records
# its place in the sweep; --resume of a finished part trains nothing and changes nothing; --resume into a
# folder of another sweep, --resume with --overwrite, and a merge of a seqrec part with a train-xmc part
# are refused (exit 2), leaving nothing behind.
# Usage: seqrec_partition_merge_test.sh LOBENCH
set -euo pipefail
exe=$1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
args=(--dataset synthetic:yambda --syn-scale 0.002 --L 2 --N 16 --B 4 --D 16 --layers 1 --heads 2 --steps 3
      --variant chunked,fused --seed 0,1 --threads 1 --quiet)

"$exe" train-seqrec "${args[@]}" --out-dir "$d/one" > "$d/one.log"
test "$("$exe" train-seqrec "${args[@]}" --partition 1/3 --list | tail -1)" = "1 runs"
test "$("$exe" train-seqrec "${args[@]}" --partition 0/3 --list | tail -1)" = "2 runs"
for k in 0 1 2; do "$exe" train-seqrec "${args[@]}" --partition $k/3 --out-dir "$d/p$k" > "$d/p$k.log"; done
"$exe" merge "$d/merged" "$d/p0" "$d/p1" "$d/p2" | grep -q 'merged 3 train-seqrec parts, 4 runs'

python3 - "$d" <<'PY'
import os, sys
import h5py, numpy as np
d = sys.argv[1]
names = sorted(os.listdir(f"{d}/one"))
assert len(names) == 4 and sorted(os.listdir(f"{d}/merged")) == names, (names, os.listdir(f"{d}/merged"))
parts = {n: k for k in range(3) for n in os.listdir(f"{d}/p{k}")}
assert sorted(parts) == names and sorted(parts.values()) == [0, 0, 1, 2], parts
text = lambda v: v.decode() if isinstance(v, bytes) else str(v)
steps = ["step", "epoch", "batch", "loss", "lr", "tp", "fp", "fn", "tn", "precision", "recall", "f1"]
epochs = ["epoch", "steps", "train_loss", "dev_hit_at_8", "dev_hr_at_10", "dev_ndcg_at_10", "test_hit_at_8",
          "test_hr_at_10", "test_ndcg_at_10"]
for n in names:
    with h5py.File(f"{d}/one/{n}") as a, h5py.File(f"{d}/merged/{n}") as b:
        for table, fields in (("steps", steps), ("epochs", epochs)):
            ta, tb = a[table][()], b[table][()]
            assert len(ta) == len(tb) > 0, (n, table)
            for f in fields:
                assert np.array_equal(ta[f], tb[f], equal_nan=True), (n, table, f, ta[f], tb[f])
        assert text(b.attrs["partition"]) == f"{parts[n]}/3" and text(a.attrs["partition"]) == "0/1", n
        assert b.attrs["sweep_runs"] == a.attrs["sweep_runs"] == 4 and b.attrs["sweep_index"] == a.attrs["sweep_index"]
        assert b.attrs["sweep_index"] % 3 == parts[n], n
        assert text(b.attrs["sweep"]) == text(a.attrs["sweep"]), n
        assert text(b.attrs["status"]) == "ok", n
PY

# --resume of a finished part: nothing trained, no file changed.
cp -r "$d/p0" "$d/p0.before"
"$exe" train-seqrec "${args[@]}" --partition 0/3 --out-dir "$d/p0" --resume > "$d/again.log"
if grep -q 'steps/s' "$d/again.log"; then echo "--resume trained a finished run again"; cat "$d/again.log"; exit 1; fi
for f in "$d"/p0/*.h5; do cmp "$f" "$d/p0.before/$(basename "$f")"; done

refused() {  # refused WHAT COMMAND...: must exit 2 naming WHAT
  local what=$1 rc=0
  shift
  "$@" 2> "$d/err" > /dev/null || rc=$?
  test "$rc" -eq 2 || { echo "$* exited $rc, not 2"; cat "$d/err"; exit 1; }
  grep -q -- "$what" "$d/err" || { echo "$*: no '$what' in:"; cat "$d/err"; exit 1; }
}
# Another sweep (another --lr) in the same folder: refused before anything is written.
refused 'another sweep' "$exe" train-seqrec "${args[@]}" --lr 0.01 --partition 0/3 --out-dir "$d/p0" --resume
for f in "$d"/p0/*.h5; do cmp "$f" "$d/p0.before/$(basename "$f")"; done
refused 'does not take --overwrite' "$exe" train-seqrec "${args[@]}" --out-dir "$d/p0" --resume --overwrite
# Without --resume or --overwrite an existing run file is refused, naming both.
refused 'resume' "$exe" train-seqrec "${args[@]}" --partition 0/3 --out-dir "$d/p0"
# A train-xmc part with train-seqrec parts: refused, OUT not written.
"$exe" train-xmc --dataset synthetic:tiny --syn-scale 0.02 --epochs 1 --dim 8 --batch 64 --threads 1 --quiet \
  --seed 0,1,2 --partition 2/3 --out-dir "$d/x2" > /dev/null 2>&1
refused "train-xmc run, version" "$exe" merge "$d/bad" "$d/p0" "$d/p1" "$d/x2"
test ! -e "$d/bad"
echo "ok"
