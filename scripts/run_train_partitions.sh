#!/usr/bin/env bash
# Runs a `lobench train-xmc` sweep as N partitions in N local processes (what a cluster's job array does,
# one partition per task), then joins their folders with `lobench merge`. Usage:
#   scripts/run_train_partitions.sh N OUT_DIR [train-xmc options, e.g. --dataset bibtex --seed 0,1,2 --threads 1]
# Parts are written beside OUT_DIR as OUT_DIR.partK/ (logs OUT_DIR.partK.log) and kept. On Slurm
# (scripts/slurm_partition.sh, docs/commands.md):
#   sbatch --array=0-7 --wait scripts/slurm_partition.sh train-xmc ... --out-dir runs.part%a
#   build/lobench merge runs runs.part0 ... runs.part7
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 N OUT_DIR [lobench train-xmc options]" >&2
  exit 2
fi
n=$1 out=${2%/}
shift 2
case "$n" in ''|*[!0-9]*) echo "$0: N must be a positive integer, got '$n'" >&2; exit 2 ;; esac
[ "$n" -ge 1 ] || { echo "$0: N must be at least 1" >&2; exit 2; }
lobench="${LOBENCH:-$(dirname "$0")/../build/lobench}"
parts=()
pids=()
for ((k = 0; k < n; k++)); do
  part="$out.part$k"
  parts+=("$part")
  "$lobench" train-xmc "$@" --partition "$k/$n" --out-dir "$part" > "$part.log" 2>&1 &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
if [ "$status" -ne 0 ]; then
  echo "$0: a partition failed (exit $status); see $out.part*.log" >&2
  exit "$status"
fi
"$lobench" merge "$out" "${parts[@]}"
