#!/usr/bin/env bash
# Experiment 4 again with the RSS meter beside the count (2026-12-06): the same command as the committed runs, --mem-limit 14G.
set -u
cd "$(dirname "$0")/../../.."
common="--dataset synthetic:LF-AmazonTitles-131K --syn-scale 0.001 --epochs 1 --max-steps 2 --dim 768 --batch 128 --eval-every -1 --threads 2 --quiet --mem-limit 14G --labels-total 131073,670091,1305265,2812281,3000000,8623847,18000000 --out-dir results/elmo/exp4/runs"
build/lobench train-xmc $common --clf-format e4m3fn --rounding stochastic --update fused --chunks 1,8 --enc-precision bf16
build/lobench train-xmc $common --clf-format fp32 --rounding rne --update separate --chunks 1
build/lobench train-xmc $common --clf-format bf16 --rounding stochastic --update separate --chunks 1,8 --enc-precision bf16
echo exp4-done
