#!/usr/bin/env bash
# Issue 38: 8 data-parallel ranks (the paper's slice, oversubscribed on this 2-core machine) against one
# process with the same global batch and micro-batches, at the largest synthetic Yambda catalogue whose 8
# ranks fit beside the other jobs of this shared 24 GiB machine (--syn-scale 0.25: 219,236 items; 8 ranks
# predicted at about 1.4 GiB each, RSS about 0.5 GiB more). Two steps, global B = 64 (B_local = 8 on 8
# ranks), N = 256, the paper's model shape otherwise (D 256, 3 layers, 4 heads, L 8), `fused`, no
# evaluation. Checked by plots/seqrec_dp_identity.py (bit-identity) and plots/seqrec_ranks_table.py
# (memory per rank). Run from the repository root: bash results/seqrec/dp8/measure.sh
set -euo pipefail
out=results/seqrec/dp8
args=(train-seqrec --dataset synthetic:yambda --syn-scale 0.25 --L 8 --D 256 --layers 3 --heads 4 --N 256
      --B 64 --micro-batch 8 --variant fused --steps 2 --eval-every -1 --quiet --mem-limit 3G --overwrite)
build/lobench "${args[@]}" --threads 2 --out "$out/one_process.h5"
mpirun --allow-run-as-root --oversubscribe -np 8 build/lobench "${args[@]}" --threads 1 --data-parallel --out "$out/ranks8.h5"
