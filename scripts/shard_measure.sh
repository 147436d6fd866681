#!/usr/bin/env bash
# Issue 13's measurements on this machine, then the model: usage scripts/shard_measure.sh [BUILD] [REPEATS]
#  1. the sharded step's collectives at R = 2 (shard_collective_bench)  -> results/shard/collectives.csv
#  2. strong scaling of one step (B = N = 32, V = 100k, D = 128, L = 8): R = 1 (1 and 2 threads) and
#     R = 2 (1 thread each), fused, plus dense at R = 1 for its rate; REPEATS runs each
#                                                                        -> results/shard/scaling.csv
#  3. α, β fitted to (1); the per-rank rates from (2); shard_model for R = 1 .. 1024 with them and with
#     an assumed 100 Gb/s InfiniBand (α = 2 µs, 12.5 GB/s)                -> results/shard/model.csv
#  4. the figure                                                         -> results/shard/model.png
set -euo pipefail
build=${1:-build}
repeats=${2:-3}
out=results/shard
mkdir -p "$out"
mpirun=(mpirun --allow-run-as-root --oversubscribe)
check=$build/harness/shard/lobench_shard_check

if [ "${SHARD_MODEL_ONLY:-0}" != 1 ]; then  # SHARD_MODEL_ONLY=1: redo 3-4 from the committed measurements
"${mpirun[@]}" -np 2 "$build/harness/shard/shard_collective_bench" 21 > "$out/collectives.csv"

shape=(--B 32 --N 32 --V 100000 --D 128 --L 8 --warmup 1 --reps 5 --no-compare)
echo "R,kind,variant,threads,P,V,D,reps,step_s,compute_s_max,compute_s_min,comm_s_max,wait_s_max,comm_share,comm_bytes_max,peak_bytes_max,peak_bytes_sum,gflops" > "$out/scaling.csv"
for i in $(seq "$repeats"); do
  "${mpirun[@]}" -np 1 "$check" "${shape[@]}" --variant fused --threads 1 | grep '^csv,' | cut -d, -f2- >> "$out/scaling.csv"
  "${mpirun[@]}" -np 1 "$check" "${shape[@]}" --variant fused --threads 2 | grep '^csv,' | cut -d, -f2- >> "$out/scaling.csv"
  "${mpirun[@]}" -np 2 "$check" "${shape[@]}" --variant fused --threads 1 | grep '^csv,' | cut -d, -f2- >> "$out/scaling.csv"
  "${mpirun[@]}" -np 1 "$check" "${shape[@]}" --variant dense --threads 1 | grep '^csv,' | cut -d, -f2- >> "$out/scaling.csv"
done
fi

read -r alpha_us bw_gbs fused_gflops dense_gflops < <(python3 plots/shard_model.py --fit "$out")
echo "fit: alpha ${alpha_us} us, bandwidth ${bw_gbs} GB/s; per-rank rates fused ${fused_gflops}, dense ${dense_gflops} GFLOP/s"
rm -f "$out/model.csv"
for net in "measured_shm $alpha_us $bw_gbs" "assumed_ib100 2 12.5"; do
  read -r name a b <<< "$net"
  "$build/harness/shard/shard_model" --fused-gflops "$fused_gflops" --dense-gflops "$dense_gflops" --alpha-us "$a" \
    --bandwidth-gbs "$b" --network "$name" --out "$out/model.csv"
done | tee "$out/model_summary.txt"
python3 plots/shard_model.py "$out/model.csv" -o "$out/model.png"
