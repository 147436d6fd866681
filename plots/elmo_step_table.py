#!/usr/bin/env python3
"""The classifier's training step against the registry's `fused` and `chunked` loss-and-gradient variants
at the same shape (`train_step_bench --out`, results/elmo/step_bench.h5): one Markdown row per
configuration (FORMAT:ROUNDING:MODE:CHUNKS) and shape, median wall times (ms) and the step's ratio to each,
then the ranges of the ratios and the largest difference between the wall-time and CPU-time ratios.

    python3 plots/elmo_step_table.py results/elmo/step_bench.h5
"""
import argparse

import numpy as np

import lobench_results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench")
    args = ap.parse_args()
    df = lobench_results.read(args.bench)
    configs = str(df.attrs.get("configs", "")).split(",")
    if len(configs) != len(df):
        raise SystemExit(f"{args.bench}: {len(configs)} configurations for {len(df)} rows")
    sf, sc = df["step_wall_s"] / df["fused_wall_s"], df["step_wall_s"] / df["chunked_wall_s"]
    cpu_sf, cpu_sc = df["step_cpu_s"] / df["fused_cpu_s"], df["step_cpu_s"] / df["chunked_cpu_s"]
    print("| step (format:rounding:update:chunks) | V | D | step (ms) | `fused` (ms) | `chunked` (ms) | step / fused | step / chunked |")
    print("|---|---|---|---|---|---|---|---|")
    for i, cfg in enumerate(configs):
        r = df.iloc[i]
        print(f"| {cfg} | {int(r['V'])} | {int(r['D'])} | {1e3 * r['step_wall_s']:.0f} | {1e3 * r['fused_wall_s']:.0f} | "
              f"{1e3 * r['chunked_wall_s']:.0f} | {sf.iloc[i]:.2f} | {sc.iloc[i]:.2f} |")
    fp32 = np.array([c.startswith("fp32") for c in configs])
    print(f"\n{len(configs)} rows: step / fused {sf.min():.2f}–{sf.max():.2f} (fp32 {sf[fp32].min():.2f}–{sf[fp32].max():.2f}, "
          f"bf16 and e4m3 {sf[~fp32].min():.2f}–{sf[~fp32].max():.2f}), step / chunked {sc.min():.2f}–{sc.max():.2f}; "
          f"CPU-time ratios differ from wall by at most {max((cpu_sf - sf).abs().max(), (cpu_sc - sc).abs().max()):.2f}.")


if __name__ == "__main__":
    main()
