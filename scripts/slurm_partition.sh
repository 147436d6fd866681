#!/usr/bin/env bash
#SBATCH --job-name=lobench-part
#SBATCH --output=%x-%A_%a.log
# One task of a Slurm job array: runs partition K/N of a lobench sweep (`run`, `train-xmc` or
# `train-seqrec`), K the task's index and N the array's size, so that `lobench merge` can join the parts.
# Submit from the repository root, the array's indices 0..N-1; every `%a` in the arguments becomes the
# task's index (as in sbatch's --output), so that each task writes its own part:
#   sbatch --array=0-7 --cpus-per-task=2 --wait scripts/slurm_partition.sh run @harness/sweeps/table2.args \
#       --out part%a.h5
#   build/lobench merge table2.h5 part*.h5
# LOBENCH names the program (default build/lobench, relative to the folder the job was submitted from:
# Slurm runs a copy of this script, not this file). Exit status: lobench's; 2 outside a job array or for
# an array whose indices are not 0..N-1 (the parts would not be partitions 0..N-1 of one sweep).
set -euo pipefail
if [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
  echo "slurm_partition: not a task of a job array: submit it with sbatch --array=0-N-1 (N parts)" >&2
  exit 2
fi
k=$SLURM_ARRAY_TASK_ID
n=$SLURM_ARRAY_TASK_COUNT
# shellcheck disable=SC2153  # Slurm sets SLURM_ARRAY_TASK_MIN and _MAX beside SLURM_ARRAY_TASK_ID
if [ "$SLURM_ARRAY_TASK_MIN" -ne 0 ] || [ "$SLURM_ARRAY_TASK_MAX" -ne $((n - 1)) ]; then
  echo "slurm_partition: --array must be 0-$((n - 1)) (every index from 0, once), got $n tasks from" \
       "$SLURM_ARRAY_TASK_MIN to $SLURM_ARRAY_TASK_MAX" >&2
  exit 2
fi
exec "${LOBENCH:-build/lobench}" "${@//\%a/$k}" --partition "$k/$n"
