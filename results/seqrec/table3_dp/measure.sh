#!/bin/bash
# Table III per rank at the full catalogue, data-parallel over 2 ranks (issue 29). Sequential, nice 19.
exe=/tmp/lobench-dp
out=/work/wt-dataparallel/results/seqrec/table3_dp
mpi="mpirun --allow-run-as-root --oversubscribe -np 2"
common="--dataset synthetic:yambda --syn-scale 1 --L 8 --D 256 --layers 3 --heads 4 --eval-every -1 --threads 1 --quiet --mem-limit 6G --data-parallel"
log=$out/measure.log
stamp() { echo "== $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg) $*" >> $log; }
stamp "start; cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
stamp "R=2 B_local=8 N=256 (global B 16), 2 steps"
nice -n 19 $mpi $exe train-seqrec $common --N 256 --B 16 --variant fused,chunked --steps 2 --out-dir $out/N256_Blocal8 >> $log 2>&1
stamp "R=2 B_local=8 N=512 (global B 16), 1 step"
nice -n 19 $mpi $exe train-seqrec $common --N 512 --B 16 --variant fused,chunked --steps 1 --out-dir $out/N512_Blocal8 >> $log 2>&1
stamp "R=2 B_local=16 N=256 (global B 32), 1 step"
nice -n 19 $mpi $exe train-seqrec $common --N 256 --B 32 --variant fused,chunked --steps 1 --out-dir $out/N256_Blocal16 >> $log 2>&1
stamp "R=2 B_local=16 N=512 (global B 32), 1 step"
nice -n 19 $mpi $exe train-seqrec $common --N 512 --B 32 --variant fused,chunked --steps 1 --out-dir $out/N512_Blocal16 >> $log 2>&1
stamp "dense, one process, B=2 N=256 (the largest full-catalogue shape under ~12 GiB), 2 steps"
nice -n 19 $exe train-seqrec --dataset synthetic:yambda --syn-scale 1 --L 8 --D 256 --layers 3 --heads 4 --eval-every -1 --threads 2 --quiet --mem-limit 11G --N 256 --B 2 --variant dense --steps 2 --out $out/dense_B2_N256.h5 >> $log 2>&1
stamp "done"
