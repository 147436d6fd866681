#!/usr/bin/env python3
"""Issue 28: ELMO's recipe with fp32 against bf16 operands (`train-xmc --operand`): final P@1/3/5 and train
loss (mean +- std over seeds), seconds per epoch (each run's median epoch, then median [min-max] over the
runs) and the bf16 row's speed-up over the fp32-operand row of the same recipe and seed (the two ran back to
back: fp32 epoch seconds / bf16 epoch seconds, median [min-max] over seeds), and every row's speed-up over the
fp32 baseline (fp32 classifier, fp32 encoder, fp32 operands) of the same dataset and seed.

Usage: python3 plots/elmo_operand_table.py RUN_DIR [RUN_DIR ...] [--table TABLE.md]
"""
import argparse
import collections

import numpy as np

import elmo_common as ec


def recipe(a):
    storage = "fp32" if a["clf_format"] in ("fp32", "float32") else f"{a['clf_format']} {a['clf_rounding']}"
    return f"{storage}, {a['encoder_precision']} encoder"


def spread(values, fmt="{:.2f}"):
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return "n/a"
    return f"{fmt.format(np.median(v))} [{fmt.format(v.min())}–{fmt.format(v.max())}]"


def pm(values, scale=1.0):
    m, s, n = ec.mean_std([scale * x for x in values])
    return f"{m:.2f} ± {s:.2f}" if n > 1 else f"{m:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--table", help="also write the Markdown table here")
    args = ap.parse_args()
    groups = collections.OrderedDict()  # (dataset, recipe, operand) -> {seed: run}
    for d in args.dirs:
        for r in ec.load_dir(d):
            if ec.status(r) != "ok":
                continue
            a = r["attrs"]
            groups.setdefault((a["dataset"], recipe(a), a.get("operand", "fp32")), {})[int(a["seed"])] = r
    lines = ["| dataset | classifier, encoder | operand | runs | P@1 (%) | P@3 (%) | P@5 (%) | final train loss (nats/row) "
             "| s per epoch | ms per step | epoch time fp32 / bf16 operands | epoch time fp32 baseline / this |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (ds, rec, op), runs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] != "fp32")):
        seeds = sorted(runs)
        epoch_s = {s: float(np.median(runs[s]["epochs"]["epoch_s"])) for s in seeds}
        def speedup_over(key):
            base = groups.get(key, {})
            paired = [float(np.median(base[s]["epochs"]["epoch_s"])) / epoch_s[s] for s in seeds if s in base]
            return spread(paired) + " ×" if paired else ""
        ratio = speedup_over((ds, rec, "fp32")) if op == "bf16" else ""
        baseline = ("fp32, fp32 encoder", "fp32")
        vs_baseline = speedup_over((ds,) + baseline) if (rec, op) != baseline else ""
        lines.append(
            f"| {ds} | {rec} | {op} | {len(seeds)} | {pm([ec.last(runs[s], 'p_at_1') for s in seeds], 100)} "
            f"| {pm([ec.last(runs[s], 'p_at_3') for s in seeds], 100)} | {pm([ec.last(runs[s], 'p_at_5') for s in seeds], 100)} "
            f"| {pm([ec.last(runs[s], 'train_loss') for s in seeds])} | {spread(list(epoch_s.values()), '{:.3f}')} "
            f"| {spread([1e3 * float(runs[s]['attrs']['mean_step_s']) for s in seeds])} | {ratio} | {vs_baseline} |")
    table = "\n".join(lines) + "\n"
    print(table)
    if args.table:
        with open(args.table, "w") as f:
            f.write(table)


if __name__ == "__main__":
    main()
