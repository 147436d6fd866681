#!/usr/bin/env bash
# Runs a sweep as N partitions in N local processes (what a cluster's job array does, one partition per
# task), then joins them with `lobench merge`. Usage:
#   scripts/run_partitions.sh N OUT.h5 [lobench run options, e.g. @harness/sweeps/table2.args --threads 1]
# Parts are written beside OUT as OUT.partK.h5 and kept. On Slurm, the same with a job array
# (scripts/slurm_partition.sh, docs/commands.md):
#   sbatch --array=0-7 --cpus-per-task=2 --wait scripts/slurm_partition.sh run @harness/sweeps/table2.args \
#       --out part%a.h5
#   build/lobench merge table2.h5 part*.h5
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 N OUT.h5 [lobench run options]" >&2
  exit 2
fi
n=$1 out=$2
shift 2
case "$n" in ''|*[!0-9]*) echo "$0: N must be a positive integer, got '$n'" >&2; exit 2 ;; esac
[ "$n" -ge 1 ] || { echo "$0: N must be at least 1" >&2; exit 2; }
lobench="${LOBENCH:-$(dirname "$0")/../build/lobench}"
parts=()
pids=()
for ((k = 0; k < n; k++)); do
  part="${out%.h5}.part$k.h5"
  parts+=("$part")
  "$lobench" run "$@" --partition "$k/$n" --out "$part" > "${part%.h5}.log" 2>&1 &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
if [ "$status" -ne 0 ]; then
  echo "$0: a partition failed (exit $status); see ${out%.h5}.part*.log" >&2
  exit "$status"
fi
"$lobench" merge "$out" "${parts[@]}"
