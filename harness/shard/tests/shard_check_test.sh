#!/usr/bin/env bash
# lobench_shard_check end to end under mpirun: usage: shard_check_test.sh DRIVER "MPIRUN [FLAGS]".
# (1) ragged cases pass the accuracy rules against one process and the float64 reference at 2 and 3
# ranks; (2) two separate jobs give bit-identical outputs; (3) a rank predicted out of memory ends the
# job with status 2 and that rank's message, within a timeout (no hang); (4) a usage error exits 2.
set -uo pipefail
driver=$1
read -r -a mpirun <<< "$2"
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() {  # run NP ARGS... : stdout+stderr to $tmp/out, status in $rc
  local np=$1
  shift
  timeout 120 "${mpirun[@]}" -np "$np" "$driver" "$@" > "$tmp/out" 2>&1
  rc=$?
}

for np in 2 3; do
  for args in "--shard vocab --variant fused --V 1001 --weighted --pad-fraction 0.2 --dup-fraction 0.3 --zero-weight-fraction 0.2" \
              "--shard positions --variant chunked --V 517 --reduction sum --pad-fraction 0.1" \
              "--shard vocab,positions --variant dense --V 333 --weighted --split blocked" \
              "--shard vocab --variant fused --V 2 --split balanced"; do
    run "$np" $args
    [ "$rc" -eq 0 ] || { cat "$tmp/out"; fail "np $np $args: status $rc"; }
    grep -q '^OK$' "$tmp/out" || { cat "$tmp/out"; fail "np $np $args: no OK"; }
  done
done

# Bit-identical across two jobs (different process placement and timing each time).
run 3 --shard vocab,positions --variant fused --V 1001 --weighted --pad-fraction 0.2 --threads 1
h1=$(grep 'outputs hash' "$tmp/out")
run 3 --shard vocab,positions --variant fused --V 1001 --weighted --pad-fraction 0.2 --threads 1
h2=$(grep 'outputs hash' "$tmp/out")
[ -n "$h1" ] && [ "$h1" = "$h2" ] || fail "two jobs differ: '$h1' vs '$h2'"

# Dense at V = 1001 over 2 ranks (P = 34, D = 24, L = 5): rank 0 holds 501 rows and needs
# 3·34·501·4 = 204,408 working + 104,760 io = 309,168 bytes, rank 1 (500 rows) 308,568; a limit
# between the two fails rank 0 alone.
start=$(date +%s)
run 2 --shard vocab --variant dense --V 1001 --rank-mem-limit 308800
[ "$rc" -eq 2 ] || { cat "$tmp/out"; fail "a rank over its memory limit: status $rc, expected 2"; }
grep -q 'rank 0: OOM predicted: 309168 bytes' "$tmp/out" || { cat "$tmp/out"; fail "no message from the failing rank"; }
grep -q 'rank 1:' "$tmp/out" && { cat "$tmp/out"; fail "rank 1 reported although it fits"; }
[ $(( $(date +%s) - start )) -lt 60 ] || fail "the failing job took a minute or more"

run 2 --shard rows
[ "$rc" -eq 2 ] || { cat "$tmp/out"; fail "a bad --shard: status $rc, expected 2"; }
grep -q "must be 'vocab'" "$tmp/out" || { cat "$tmp/out"; fail "no usage message"; }
echo "shard_check_test: all passed"
