#!/usr/bin/env python3
"""Issue 28: the classifier head's training step with bf16 operands against the same step with fp32
operands, timed in the same interleaved repetitions (`train_step_bench` with bf16-operand configurations,
results/elmo/operand_step_bench*.h5). One Markdown row per label count V: for the fp32 head
(fp32:rne:fused:1) and ELMO's bf16 SR head (bf16:sr:fused:1), the fp32-operand step and the bf16-operand
step (medians, ms) and x_fp32 = fp32-operand step / bf16-operand step per repetition, median [min–max].
A V in several files is taken from the first file that has it.

Usage: python3 plots/elmo_operand_step_table.py BENCH.h5 [MORE.h5 ...]
"""
import argparse
import math

import lobench_results

HEADS = (("fp32:rne:fused:1", "fp32 head"), ("bf16:sr:fused:1", "bf16 SR head"))


def ms(seconds):
    v = 1e3 * seconds
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}"


def rows_by_v(paths):
    """{V: {head config: the bf16-operand row}} (that row carries the fp32-operand step timed beside it)."""
    out = {}
    for p in paths:
        df = lobench_results.read(p)
        configs = str(df.attrs.get("configs", "")).split(",")
        if len(configs) != len(df):
            raise SystemExit(f"{p}: {len(configs)} configurations for {len(df)} rows")
        here = {}
        for cfg, (_, row) in zip(configs, df.iterrows()):
            if cfg.endswith(":bf16"):
                here.setdefault(int(row["V"]), {})[cfg[:-len(":bf16")]] = row
        for v, heads in here.items():
            out.setdefault(v, heads)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    print("| labels V | " + " | ".join(f"{name}: fp32-operand step (ms) | bf16-operand step (ms) | x_fp32"
                                       for _, name in HEADS) + " |")
    print("|---" * (1 + 3 * len(HEADS)) + "|")
    for v, heads in sorted(rows_by_v(args.files).items()):
        cells = []
        for cfg, _ in HEADS:
            r = heads.get(cfg)
            if r is None or not math.isfinite(r["x_fp32"]):
                cells += ["", "", ""]
                continue
            cells += [ms(r["fp32_step_wall_s"]), ms(r["step_wall_s"]),
                      f"{r['x_fp32']:.2f} [{r['x_fp32_min']:.2f}–{r['x_fp32_max']:.2f}]"]
        print(f"| {v:,} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
