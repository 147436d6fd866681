#!/usr/bin/env bash
# Build, the frontier CLI test, then the worked results (docs/formats.md, results/frontier/README.md):
# Bibtex with ELMO's recipe as in results/elmo/reproduce.sh (COMMON), then Delicious with experiment 2's
# (E2) if time is left; every search is stopped (SIGTERM, every finished run kept) at 10:19 UTC.
cd /work/wt/frontier
echo "slot at $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
cmake --build build -j2 --target lobench 2>&1 | grep -E "error|warning:" | head
bash harness/train/tests/frontier_cli_test.sh build/lobench . 2>&1 | tail -4

R=results/frontier
FR=(--frontier clf,grad --frontier-exponents 2-5 --frontier-mantissas 1-10 --rounding nearest_even,stochastic --seed 0,1,2)
COMMON=(--epochs 20 --dim 512 --dropout 0.6 --enc-lr 1e-3 --clf-lr 0.05 --schedule cosine --batch 128 --threads 1 --eval-every 5)
E2=(--epochs 10 --dim 512 --dropout 0.6 --enc-lr 1e-3 --clf-lr 0.05 --schedule cosine --batch 128 --threads 1 --eval-every 0)
run() {  # NAME ARGS...
  local name=$1; shift
  local args=(train-xmc "$@" --data-dir /work/shared/datasets --out $R/$name.h5)
  [ -e $R/$name.h5 ] && args+=(--resume)
  local left=$(( $(date -d 10:19 +%s) - $(date +%s) ))
  [ $left -gt 120 ] || return
  { echo "# $(date -u +%FT%TZ), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg); stopped at 10:19 UTC if not done"
    echo "build/lobench ${args[*]}"; } >> $R/$name.log
  timeout -s TERM $left build/lobench "${args[@]}" >> $R/$name.log 2> $R/$name.progress
  echo "# exit $? at $(date -u +%FT%TZ), load: $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/$name.log
}
run bibtex --dataset bibtex "${COMMON[@]}" "${FR[@]}"
run delicious --dataset delicious "${E2[@]}" "${FR[@]}"
date
