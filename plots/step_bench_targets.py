#!/usr/bin/env python3
"""Issue 28's step targets from step_bench JSON runs (Google Benchmark's --benchmark_out): per shape,
median [min–max] over the run's repetitions (their number in parentheses) of

  - fp32 `fused` over the best SGEMM, CPU time (frac_gemm_cpu; target ≥ 0.95),
  - `chunked` on the 8·P·V·D it computes, CPU time (frac_gemm_cpu_8PVD; target ≥ 0.85),
  - bf16 `fused` over fp32 `fused` (`fused_bf16`'s x_fp32, wall: over the fp32 row as last measured in the
    same run; target ≥ 1.7; repetitions without the counter are left out),

each beside the same from a run of the code before the change (--fp32-before, --bf16-before), and whether
the median meets the target (with how many repetitions fall below it when the median does). Markdown.

    python3 plots/step_bench_targets.py --fp32 AFTER.json --fp32-before BEFORE.json --bf16 BF16.json --bf16-before B.json
"""
import argparse
import statistics

from step_bench_counters import counters

TARGETS = (  # (what, run, benchmark row, counter, threshold, digits)
    ("fp32 `fused` ≥ 95 % of the best SGEMM (CPU time)", "fp32", "fused", "frac_gemm_cpu", 0.95, 3),
    ("`chunked` ≥ 85 % on 8·P·V·D (CPU time)", "fp32", "chunked", "frac_gemm_cpu_8PVD", 0.85, 3),
    ("bf16 `fused` ≥ 1.7× fp32 `fused` (x_fp32, wall)", "bf16", "fused_bf16", "x_fp32", 1.7, 2),
)


def shape_order(shape):
    """V:100000/D:128 before V:200000/D:128 before V:100000/D:256 (D, then V), as step_bench_ratios.py."""
    v, d = (int(part.split(":")[1]) for part in shape.split("/"))
    return d, v


def spread(values, digits):
    if not values:
        return "not in the run"
    f = f"{{:.{digits}f}}"
    return f"{f.format(statistics.median(values))} [{f.format(min(values))}–{f.format(max(values))}] ({len(values)})"


def verdict(values, threshold):
    if not values:
        return ""
    below = sum(v < threshold for v in values)
    if statistics.median(values) < threshold:
        return "**no**"
    return "yes" + (f" ({below} of {len(values)} repetitions below)" if below else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fp32", required=True, help="step_bench JSON of the fp32 rows")
    ap.add_argument("--bf16", required=True, help="step_bench JSON with the bf16 rows")
    ap.add_argument("--fp32-before", help="the same as --fp32, code before the change")
    ap.add_argument("--bf16-before", help="the same as --bf16, code before the change")
    args = ap.parse_args()
    runs = {"fp32": counters(args.fp32), "bf16": counters(args.bf16)}
    before = {"fp32": counters(args.fp32_before) if args.fp32_before else None,
              "bf16": counters(args.bf16_before) if args.bf16_before else None}
    print("| target | shape | measured: median [min–max] (repetitions) | before the change | met? |")
    print("| --- | --- | --- | --- | --- |")
    for what, run, row, counter, threshold, digits in TARGETS:
        shapes = sorted((s for r, s in runs[run] if r == row and s), key=shape_order)
        for i, shape in enumerate(shapes):
            values = runs[run][(row, shape)].get(counter, [])
            old = before[run][(row, shape)].get(counter, []) if before[run] is not None else None
            print(f"| {what if i == 0 else ''} | {shape} | {spread(values, digits)} | "
                  f"{'' if old is None else spread(old, digits)} | {verdict(values, threshold)} |")


if __name__ == "__main__":
    main()
