#!/usr/bin/env python3
"""Judge a Google Benchmark run of `step_bench` against a committed baseline, as ratios.

Absolute times on shared 2-core machines are noise; the ratio of a variant's time to the SGEMM time at
the same shape, measured in the same run, is not. For every benchmark `VARIANT/SHAPE` with a matching
`gemm/SHAPE` in the same file, the ratio r = time(VARIANT) / time(gemm) is computed in the baseline and
in the new run. A benchmark regresses when

    r_new > r_base · (1 + threshold),  threshold = max(--min-threshold, --sigmas · noise)

where noise is the larger relative spread (coefficient of variation of the repetitions, combined for
the variant and its gemm) of the two runs. Exit status 1 on any regression, 0 otherwise; a table of
every ratio is printed either way.

Usage: python3 plots/bench_compare.py BASELINE.json NEW.json [--min-threshold 0.25] [--sigmas 3]
"""
import argparse
import json
import math
import sys


def load(path):
    """Returns {name: (median_time, cv)} from a Google Benchmark JSON (with or without repetitions)."""
    with open(path) as f:
        data = json.load(f)
    runs, medians, cvs = {}, {}, {}
    for b in data.get("benchmarks", []):
        name = b.get("run_name", b["name"])
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[name] = b["real_time"]
            elif b.get("aggregate_name") == "cv":
                cvs[name] = b["real_time"]  # Google Benchmark reports the cv as a fraction in real_time
        else:
            runs.setdefault(name, []).append(b["real_time"])
    out = {}
    for name, times in runs.items():
        times = sorted(times)
        med = medians.get(name, times[len(times) // 2])
        if name in cvs:
            cv = cvs[name]
        elif len(times) > 1:
            mean = sum(times) / len(times)
            cv = math.sqrt(sum((t - mean) ** 2 for t in times) / (len(times) - 1)) / mean
        else:
            cv = 0.0
        out[name] = (med, cv)
    return out, data.get("context", {})


def ratios(bench):
    """{VARIANT/SHAPE: (time / gemm time, relative noise)} for benchmarks with a gemm at the same shape."""
    out = {}
    for name, (t, cv) in bench.items():
        family, _, shape = name.partition("/")
        if family == "gemm" or not shape:
            continue
        g = bench.get("gemm/" + shape)
        if g is None or g[0] <= 0:
            continue
        out[name] = (t / g[0], math.hypot(cv, g[1]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("baseline")
    ap.add_argument("new")
    ap.add_argument("--min-threshold", type=float, default=0.25, help="smallest relative slow-down called a regression")
    ap.add_argument("--sigmas", type=float, default=3.0, help="noise multiples a slow-down must exceed")
    args = ap.parse_args()
    base_b, base_ctx = load(args.baseline)
    new_b, new_ctx = load(args.new)
    base, new = ratios(base_b), ratios(new_b)
    if not new:
        sys.exit(f"{args.new}: no VARIANT/SHAPE benchmark with a matching gemm/SHAPE")
    print(f"baseline {args.baseline} (commit {base_ctx.get('commit', '?')}) vs {args.new} (commit {new_ctx.get('commit', '?')})")
    print(f"{'benchmark':<48} {'base t/gemm':>12} {'new t/gemm':>12} {'change':>8} {'threshold':>10}  verdict")
    regressions = 0
    for name in sorted(new):
        r_new, n_new = new[name]
        if name not in base:
            print(f"{name:<48} {'-':>12} {r_new:>12.3f} {'':>8} {'':>10}  new")
            continue
        r_base, n_base = base[name]
        threshold = max(args.min_threshold, args.sigmas * max(n_new, n_base))
        change = r_new / r_base - 1
        verdict = "SLOWER" if change > threshold else ("faster" if change < -threshold else "same")
        regressions += verdict == "SLOWER"
        print(f"{name:<48} {r_base:>12.3f} {r_new:>12.3f} {100 * change:>7.1f}% {100 * threshold:>9.1f}%  {verdict}")
    for name in sorted(set(base) - set(new)):
        print(f"{name:<48} missing from the new run")
    print(f"{regressions} regression(s)")
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
