#!/usr/bin/env python3
"""The gate catches a regression and passes an unchanged rerun (issue 27).

Runs step_bench four ways at a small shape: a baseline, an unchanged rerun, and two injected regressions
(LOBENCH_BENCH_EXTRA_WORK=1.3 and 2: every variant's timed step does 1.3 and 2 times the work; the gemm
yardstick does not change). The four are interleaved, one repetition per process per round, so that a
change in the machine's load during the test falls on all four alike. Then the gate's comparison
(plots/perf_compare.py, or `lobench compare` with --lobench) must say:
  rerun against baseline: exit 0, no benchmark slower;
  1.3x and 2x against baseline: exit 1, every variant benchmark slower, its ratio at least 1.15 (1.3x) and
  1.6 (2x) and larger for 2x than for 1.3x. (The ratio is not exactly the factor: the extra step on
  (f - 1)·V entries has the fixed costs of a whole step, and a busy machine inflates memory-bound work.)

Usage: injected_regression.py --step-bench build/variants/bench/step_bench [--lobench build/lobench]
                              [--rounds 9] [--shape 16000x64] [--keep DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

PLOTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = {"base": "1", "rerun": "1", "x1.3": "1.3", "x2": "2"}


def run_once(step_bench, shape, extra, out):
    env = dict(os.environ, LOBENCH_BENCH_SHAPES=shape, LOBENCH_BENCH_EXTRA_WORK=extra)
    subprocess.run([step_bench, "--benchmark_filter=^(gemm|fused|chunked)/", "--benchmark_min_time=0.05",
                    "--benchmark_enable_random_interleaving=true", f"--benchmark_out={out}",
                    "--benchmark_out_format=json", "--benchmark_context=commit=test"],
                   env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def merge(parts, out):
    """One Google Benchmark JSON whose repetitions are the parts' single runs."""
    merged = None
    for i, path in enumerate(parts):
        with open(path) as f:
            data = json.load(f)
        entries = [b for b in data["benchmarks"] if b.get("run_type") != "aggregate"]
        for b in entries:
            b["repetition_index"], b["repetitions"] = i, len(parts)
        if merged is None:
            merged = data
            merged["benchmarks"] = []
        merged["benchmarks"] += entries
    with open(out, "w") as f:
        json.dump(merged, f)


def compare(args, base, cand, label):
    cmd = ([args.lobench, "compare"] if args.lobench else [sys.executable, os.path.join(PLOTS, "perf_compare.py")])
    r = subprocess.run(cmd + [base, cand, "--format", "jsonl"], capture_output=True, text=True)
    rows = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    print(f"--- {label}: exit {r.returncode}")
    for row in rows:
        print(f"  {row['benchmark']:<36} ratio {row['ratio']:.3f} [{row['ratio_lo']}, {row['ratio_hi']}] "
              f"p {row['p_value']} {row['verdict']}{'' if row['gated'] else ' (yardstick)'}")
    sys.stdout.write("  " + r.stderr.replace("\n", "\n  ") + "\n")
    return r.returncode, [row for row in rows if row["gated"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--step-bench", required=True)
    ap.add_argument("--lobench")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--shape", default="16000x64")
    ap.add_argument("--keep")
    args = ap.parse_args()
    start = time.time()
    work = args.keep or tempfile.mkdtemp(prefix="injected_regression_")
    os.makedirs(work, exist_ok=True)
    parts = {c: [] for c in CONFIGS}
    for k in range(args.rounds):
        for c, extra in CONFIGS.items():
            out = os.path.join(work, f"{c}.{k}.json")
            run_once(args.step_bench, args.shape, extra, out)
            parts[c].append(out)
    files = {}
    for c in CONFIGS:
        files[c] = os.path.join(work, f"{c}.json")
        merge(parts[c], files[c])
    print(f"{args.rounds} rounds of 4 runs at V x D = {args.shape} in {time.time() - start:.0f} s ({work})")
    failures = []
    rc, rows = compare(args, files["base"], files["rerun"], "unchanged rerun")
    if rc != 0 or any(r["verdict"] == "slower" for r in rows):
        failures.append(f"the unchanged rerun was flagged (exit {rc})")
    ratios = {}
    for c, lo in (("x1.3", 1.15), ("x2", 1.6)):
        rc, rows = compare(args, files["base"], files[c], f"injected {c}")
        if rc != 1:
            failures.append(f"{c}: exit {rc}, not 1")
        if len(rows) != 2:
            failures.append(f"{c}: {len(rows)} gated benchmarks compared, not 2 (fused, chunked)")
        for r in rows:
            ratios[(c, r["benchmark"])] = r["ratio"]
            if r["verdict"] != "slower" or r["ratio"] < lo:
                failures.append(f"{c}: {r['benchmark']} {r['verdict']} at ratio {r['ratio']:.3f} "
                                f"(want slower, ratio >= {lo})")
    for (c, name), ratio in ratios.items():
        if c == "x2" and ratio <= ratios.get(("x1.3", name), 0):
            failures.append(f"{name}: 2x ratio {ratio:.3f} not above the 1.3x one")
    print(f"total {time.time() - start:.0f} s")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print("ok: 1.3x and 2x caught, the unchanged rerun passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
