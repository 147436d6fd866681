#!/usr/bin/env bash
# `lobench train-xmc --frontier` end to end on a tiny synthetic set: the search writes one run file with its
# cells and lines and prints the table; --list names the lines; two partitions find the same frontier as
# the whole search, line by line; --resume trains nothing that is in the file; bad input exits 2 leaving
# an existing file as it was; the figure script draws the file.
# Usage: frontier_cli_test.sh LOBENCH SOURCE_DIR
set -euo pipefail
exe=$1
src=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
job=(train-xmc --frontier clf --dataset synthetic:tiny --syn-scale 0.05 --epochs 2 --dim 16 --batch 64 --threads 1
     --frontier-exponents 3,5 --frontier-mantissas 1-4 --seed 0,1 --rounding rne --frontier-floor 0.02 --quiet)

"$exe" "${job[@]}" --list > "$d/list.txt"
grep -q 'clf nearest_even e3' "$d/list.txt"
grep -q '^2 lines$' "$d/list.txt"

"$exe" "${job[@]}" --out "$d/all.h5" > "$d/all.txt"
grep -q 'fp32 baseline' "$d/all.txt"
grep -q 'Fewest mantissa bits' "$d/all.txt"

for k in 0 1; do "$exe" "${job[@]}" --partition $k/2 --out "$d/part$k.h5" > "$d/part$k.txt"; done

# --resume of the finished search: nothing trained again, the same table printed.
cells_before=$(python3 -c "import h5py,sys; print(len(h5py.File(sys.argv[1])['cells']))" "$d/all.h5")
"$exe" "${job[@]}" --out "$d/all.h5" --resume > "$d/resume.txt"
if grep -q ' seed ' "$d/resume.txt"; then echo "--resume trained a cell again"; exit 1; fi
grep -q 'Fewest mantissa bits' "$d/resume.txt"

# lobench merge of the two parts: one file, as the whole search wrote it.
"$exe" merge "$d/merged.h5" "$d/part0.h5" "$d/part1.h5" | grep -q 'merged 2 frontier parts, 2 lines'

python3 - "$d" "$cells_before" <<'EOF'
import sys, h5py, numpy as np
d, cells_before = sys.argv[1], int(sys.argv[2])
def lines(p):
    with h5py.File(p) as f:
        return {int(r["line"]): r for r in f["frontier"][:]}, f["cells"][:], dict(f.attrs)
whole, cells, attrs = lines(f"{d}/all.h5")
assert len(whole) == 2, whole
assert len(cells) == cells_before, "resume appended cells"
assert attrs["schema"] == "lobench train-xmc frontier, version 1"
base = cells[cells["tensor"] == b"fp32"]
assert sorted(base["seed"]) == [0, 1] and np.isfinite(base["metric"]).all()
# every frontier cell that the table reports was run on every seed
for line, r in whole.items():
    m = int(r["mantissa_bits"])
    if m > 0:
        at = cells[(cells["line"] == line) & (cells["mantissa_bits"] == m)]
        assert len(at) == 2 and np.isclose(at["metric"].mean(), r["metric_at"]), (line, at, r)
# the partitions: whole lines each, the same frontier and metrics bit for bit
for k in (0, 1):
    part, pcells, pattrs = lines(f"{d}/part{k}.h5")
    assert list(part) == [k], part
    assert pattrs["partition"] == f"{k}/2"
    for name in ("mantissa_bits", "metric_at", "metric_below", "baseline_mean", "runs"):
        a, b = part[k][name], whole[k][name]
        assert (a == b) or (np.isnan(a) and np.isnan(b)), (k, name, a, b)
merged, mcells, mattrs = lines(f"{d}/merged.h5")
assert mattrs["partition"] == "0/1" and sorted(merged) == [0, 1]
for k in (0, 1):
    for name in ("mantissa_bits", "metric_at", "metric_below", "runs"):
        a, b = merged[k][name], whole[k][name]
        assert (a == b) or (np.isnan(a) and np.isnan(b)), (k, name, a, b)
assert (mcells["tensor"] == b"fp32").sum() == 2, "the baseline kept once"
assert len(mcells) == len(cells), (len(mcells), len(cells))
print("frontier files ok")
EOF

# A signal in the middle of a line (SIGTERM, what Slurm sends): exit 128 + 15 with the finished runs kept; --resume trains each missing
# cell once and ends with the whole search's lines (bit for bit).
"$exe" "${job[@]}" --out "$d/int.h5" > "$d/int.txt" 2> "$d/int.err" &
pid=$!
for _ in $(seq 400); do [ "$(grep -c ' seed ' "$d/int.txt" || true)" -ge 4 ] && break; sleep 0.01; done
kill -TERM $pid  # (a background job of a script ignores SIGINT)
set +e; wait $pid; rc=$?; set -e
if [ $rc -eq 0 ]; then echo "(the search ended before the signal; the resume check below still runs)"; else
  test $rc -eq 143; grep -q -- '--resume' "$d/int.err"; fi
"$exe" "${job[@]}" --out "$d/int.h5" --resume > "$d/int2.txt"
python3 - "$d" <<'PY'
import sys, h5py, numpy as np
d = sys.argv[1]
with h5py.File(f"{d}/int.h5") as f, h5py.File(f"{d}/all.h5") as g:
    a, b = f["frontier"][:], g["frontier"][:]
    keys = [tuple(r[c] for c in ("tensor", "rounding", "exponent_bits", "mantissa_bits", "seed")) for r in f["cells"][:]]
    assert len(keys) == len(set(keys)), "a cell was trained twice"
    a, b = np.sort(a, order="line"), np.sort(b, order="line")
    for name in ("line", "mantissa_bits", "metric_at", "metric_below", "runs"):
        assert np.array_equal(a[name], b[name], equal_nan=a[name].dtype.kind == "f"), (name, a[name], b[name])
print("interrupted and resumed ok")
PY

python3 "$src/plots/frontier_heatmap.py" "$d/all.h5" -o "$d/f.png" > /dev/null
test -s "$d/f.png"

# Bad input: exit 2, one line naming the problem, the existing file untouched.
sum=$(md5sum < "$d/all.h5")
expect_usage_error() {  # PATTERN ARGS...
  local pattern=$1; shift
  set +e; "$exe" "$@" > /dev/null 2> "$d/err.txt"; local rc=$?; set -e
  if [ $rc -ne 2 ] || ! grep -q -- "$pattern" "$d/err.txt"; then echo "expected exit 2 with '$pattern', got $rc:"; cat "$d/err.txt"; exit 1; fi
}
expect_usage_error "exists" "${job[@]}" --out "$d/all.h5"
expect_usage_error "'weights' is not a tensor" "${job[@]/clf/weights}" --out "$d/x.h5"
expect_usage_error "sets --clf-format" "${job[@]}" --clf-format e4m3 --out "$d/x.h5"
expect_usage_error "--frontier-mantissas" "${job[@]}" --frontier-mantissas 5-2 --out "$d/x.h5"
expect_usage_error "--dim takes one value" "${job[@]}" --dim 16,32 --out "$d/x.h5"
expect_usage_error "partition 1/2 is missing" merge "$d/x.h5" "$d/part0.h5"
expect_usage_error "both partition 0/2" merge "$d/x.h5" "$d/part0.h5" "$d/part0.h5"
expect_usage_error "another search" "${job[@]}" --frontier-floor 0.03 --out "$d/all.h5" --resume
test "$(md5sum < "$d/all.h5")" = "$sum"
test ! -e "$d/x.h5"
echo "frontier cli ok"
