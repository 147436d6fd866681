#!/usr/bin/env bash
# The one-negative SASRec baseline with S3-Rec's settings (issue 38; `lobench train-seqrec --preset s3rec`,
# docs/training.md): Beauty with seeds 0, 1, 2, then Sports and Toys with seed 0, one run at a time, each
# carried across interruptions by its checkpoint. Usage:
#   scripts/s3rec_baseline.sh [train-seqrec options, e.g. --threads 2 --data-dir DIR]
# Environment:
#   LOBENCH           the lobench binary (default: build/lobench beside this script)
#   LOBENCH_DATA      the data folder holding seqrec/ (or give --data-dir); the sets are read by name
#   S3REC_EPOCHS      stop this invocation at this epoch (default 200, S3-Rec's); below 200 the run file is
#                     PARTIAL and goes to results/seqrec/s3rec/partial/NAME_to_epochE.h5 (unless early
#                     stopping ended the run first: then it is the whole run, moved to NAME.h5)
#   S3REC_ONLY        run only this one (e.g. beauty_s3rec_s1)
#   S3REC_CHECKPOINTS where the checkpoints live (default build/s3rec_checkpoints; not committed)
#   S3REC_OUT         where the run files go (default results/seqrec/s3rec; its tests use another)
# Each run NAME (beauty_s3rec_s0, ..., toys_s3rec_s0) ends as results/seqrec/s3rec/NAME.h5, the file the
# results tables read, once it has trained its 200 epochs or early stopping (patience 10 on dev NDCG@20)
# ended it. Run again after an interruption (SIGTERM, a session's end): a finished run is skipped, an
# unfinished one continues from its checkpoint (written after every epoch) bit for bit, the continued run
# file holding every epoch since the start. One run at a time: the script stops at the first run that does
# not finish (interrupted or capped by S3REC_EPOCHS) and at any error.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lobench=${LOBENCH:-$root/build/lobench}
target=${S3REC_EPOCHS:-200}
case "$target" in ''|*[!0-9]*) echo "$0: S3REC_EPOCHS must be a positive integer, got '$target'" >&2; exit 2 ;; esac
[ "$target" -ge 1 ] && [ "$target" -le 200 ] || { echo "$0: S3REC_EPOCHS must be in [1, 200], got $target" >&2; exit 2; }
[ -x "$lobench" ] || { echo "$0: no lobench at $lobench (build it, or set LOBENCH)" >&2; exit 2; }
out_dir=${S3REC_OUT:-$root/results/seqrec/s3rec}
ck_dir=${S3REC_CHECKPOINTS:-$root/build/s3rec_checkpoints}
mkdir -p "$out_dir" "$ck_dir"

# An attribute of an HDF5 file's root ("" when the file or the attribute is missing).
attr() {
  python3 - "$1" "$2" <<'EOF'
import sys
try:
    import h5py
    with h5py.File(sys.argv[1], "r") as f:
        v = f.attrs.get(sys.argv[2], "")
        print(v.decode() if isinstance(v, bytes) else v)
except (OSError, KeyError):
    print("")
EOF
}

# One run: dataset name, seed, then lobench's options. Returns 0 when the run is finished (now or before), 1 when it stopped early.
run() {
  local dataset=$1 seed=$2 name=${1}_s3rec_s$2
  shift 2  # the rest: the options for lobench
  local final=$out_dir/$name.h5 ck=$ck_dir/$name.ck.h5 out resume=()
  if [ -n "${S3REC_ONLY:-}" ] && [ "$S3REC_ONLY" != "$name" ]; then return 0; fi
  if [ -f "$final" ] && [ "$(attr "$final" status)" = ok ]; then
    echo "$name: finished ($final)"
    return 0
  fi
  if [ -f "$ck" ]; then
    local at
    at=$(attr "$ck" epoch)
    if [ -n "$at" ] && [ "$at" -ge "$target" ]; then
      echo "$name: its checkpoint holds epoch $at, not below S3REC_EPOCHS=$target: nothing to do"
      return 1
    fi
    resume=(--resume-from "$ck")
    echo "$name: continuing from epoch $at ($ck)"
  fi
  if [ "$target" -lt 200 ]; then
    mkdir -p "$out_dir/partial"
    out=$out_dir/partial/${name}_to_epoch$target.h5
  else
    out=$final
  fi
  # --overwrite: the file OUT may hold this run's interrupted part, which the continued run replaces (it
  # carries the checkpoint's epochs).
  set +e
  "$lobench" train-seqrec --preset s3rec --dataset "$dataset" --seed "$seed" --epochs "$target" \
    --checkpoint "$ck" "${resume[@]}" --out "$out" --overwrite "$@"
  local rc=$?
  set -e
  [ "$rc" -eq 0 ] || { echo "$name: lobench exited $rc ($(attr "$out" status): $(attr "$out" reason))" >&2; return 1; }
  if [ "$out" != "$final" ] && [ "$(attr "$out" early_stopped_at_epoch)" != 0 ]; then
    mv "$out" "$final"  # early stopping ended it before the cap: this is the whole run
    out=$final
  fi
  if [ "$out" = "$final" ]; then
    echo "$name: finished ($final)"
    return 0
  fi
  echo "$name: PARTIAL, epochs 1-$target in $out; run again with a larger S3REC_EPOCHS to continue"
  return 1
}

for spec in "beauty 0" "beauty 1" "beauty 2" "sports 0" "toys 0"; do
  # shellcheck disable=SC2086
  run $spec "$@" || exit 1
done
