#!/usr/bin/env python3
"""fp32 beside bf16 in one step_bench JSON run (Google Benchmark's --benchmark_out; issue 28), Markdown.

--part ceilings: the `peak` row, the instruction ceilings measured in the run (fp32 FMA, bf16 dot
VDPBF16PS, AMX TDPBF16PS where the CPU has it; GFLOP/s on the run's threads) and each bf16 ceiling over
the FMA's.
--part steps: per shape, each variant's fp32 row and its `_bf16` row: GFLOP/s on wall and CPU time,
frac_gemm wall / CPU time (over the fp32 yardstick; chunked rows also on the 8·P·V·D they compute),
frac_gemm_bf16 (over `gemm_bf16`), x_fp32 (step_bench's counter: the bf16 row over the fp32 row of the
same variant and shape as last measured, wall; repetitions without it are left out) and the CPU-time
ratio (median CPU-time rate of the bf16 row over the fp32 row's). Median [min–max] over the repetitions.

    python3 plots/step_bench_bf16.py results/cpu/bf16_amx_step.json --part steps
"""
import argparse
import statistics

from step_bench_counters import counters

VARIANTS = ("gemm", "gemm_products", "dense", "fused", "chunked")


def num(v):
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


def spread(values, fmt=num):
    if not values:
        return ""
    return f"{fmt(statistics.median(values))} [{fmt(min(values))}–{fmt(max(values))}]"


def median(values):
    return statistics.median(values) if values else float("nan")


def ceilings(run):
    peak = run.get(("peak", ""), {})
    if not peak:
        raise SystemExit("no peak row in the run")
    fma = peak.get("fp32_fma_GFLOP/s", [])
    print("| ceiling (the run's threads) | GFLOP/s | over the fp32 FMA |")
    print("| --- | --- | --- |")
    print(f"| fp32 FMA (VFMADD231PS) | {spread(fma)} | 1 |")
    for key, name in (("bf16_dot_GFLOP/s", "bf16 dot (VDPBF16PS)"), ("amx_bf16_GFLOP/s", "AMX bf16 (TDPBF16PS)")):
        if peak.get(key):
            print(f"| {name} | {spread(peak[key])} | {median(peak[key]) / median(fma):.3f} |")


def steps(run):
    shapes = sorted({s for _, s in run if s}, key=lambda s: tuple(int(p.split(":")[1]) for p in reversed(s.split("/"))))
    print("| shape | row | GFLOP/s wall | GFLOP/s CPU time | frac_gemm wall / CPU | frac_gemm_bf16 | x_fp32 (wall) | CPU-time ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for shape in shapes:
        first = True
        for v in VARIANTS:
            fp32 = run.get((v, shape))
            for row, c in ((v, fp32), (v + "_bf16", run.get((v + "_bf16", shape)))):
                if not c:
                    continue
                frac = f"{median(c['frac_gemm']):.2f} / {median(c['frac_gemm_cpu']):.2f}"
                if c.get("frac_gemm_cpu_8PVD"):
                    frac += f" (8PVD {median(c['frac_gemm_8PVD']):.2f} / {median(c['frac_gemm_cpu_8PVD']):.2f})"
                bf16 = row.endswith("_bf16")
                fb = f"{median(c['frac_gemm_bf16']):.2f}" if bf16 and c.get("frac_gemm_bf16") else ""
                x = spread(c.get("x_fp32", []), "{:.2f}".format) if bf16 else ""
                cpu = f"{median(c['GFLOP/s_cpu']) / median(fp32['GFLOP/s_cpu']):.2f}" if bf16 and fp32 else ""
                print(f"| {shape if first else ''} | {row} | {spread(c['GFLOP/s'])} | {spread(c['GFLOP/s_cpu'])} | "
                      f"{frac} | {fb} | {x} | {cpu} |")
                first = False


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="step_bench JSON file")
    ap.add_argument("--part", choices=("ceilings", "steps"), required=True)
    args = ap.parse_args()
    run = counters(args.run)
    ceilings(run) if args.part == "ceilings" else steps(run)


if __name__ == "__main__":
    main()
