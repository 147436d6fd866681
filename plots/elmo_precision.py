#!/usr/bin/env python3
"""Experiment 1 (ELMO: stochastic rounding matches fp32, nearest rounding degrades): P@1/3/5 and final
loss of each classifier format x rounding on each dataset, mean +- std over seeds, with learning curves.

Usage: python3 plots/elmo_precision.py RUN_DIR [RUN_DIR ...] -o FIGURE.png [--table TABLE.md]

Each RUN_DIR holds `lobench train-xmc` run files (one dataset each, several formats/roundings/seeds).
"""
import argparse
import collections
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import elmo_common as ec  # noqa: E402


def label(run):
    a = run["attrs"]
    enc = "" if a.get("encoder_precision") == "fp32" else f" +{a.get('encoder_precision')} enc"
    rnd = {"nearest_even": "RNE", "stochastic": "SR", "elmo_sr": "ELMO-SR"}.get(a["clf_rounding"], a["clf_rounding"])
    fmt = {"float32": "fp32", "fp32": "fp32", "bf16": "bf16", "e4m3fn": "e4m3", "e5m2": "e5m2"}.get(a["clf_format"], a["clf_format"])
    return f"{fmt} {rnd}{enc}" if fmt != "fp32" else f"fp32{enc}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("-o", "--out", help="the figure (without it: only the table is printed)")
    ap.add_argument("--table", help="also write a Markdown table here")
    args = ap.parse_args()

    datasets = []
    for d in args.dirs:
        runs = [r for r in ec.load_dir(d, recursive=True) if ec.status(r) == "ok"]
        groups = collections.OrderedDict()
        order = ["fp32", "bf16 SR", "bf16 RNE", "e4m3 SR", "e4m3 ELMO-SR", "e4m3 RNE"]
        for r in sorted(runs, key=lambda r: (order.index(label(r)) if label(r) in order else len(order), label(r), r["path"])):
            groups.setdefault(label(r), []).append(r)
        datasets.append((runs[0]["attrs"]["dataset"], groups))

    fig, axes = plt.subplots(2, len(datasets), figsize=(6.5 * len(datasets), 8.5), squeeze=False)
    lines = ["| dataset | classifier | seeds | P@1 (%) | P@3 (%) | P@5 (%) | PSP@5 (%) | final train loss (nats/row) | test loss (nats/row) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for col, (name, groups) in enumerate(datasets):
        ax = axes[0][col]
        names = list(groups)
        x = np.arange(len(names))
        for j, (metric, lab) in enumerate([("p_at_1", "P@1"), ("p_at_3", "P@3"), ("p_at_5", "P@5")]):
            means, stds = [], []
            for n in names:
                m, s, _ = ec.mean_std([100 * ec.last(r, metric) for r in groups[n]])
                means.append(m)
                stds.append(s)
            ax.bar(x + (j - 1) * 0.27, means, 0.27, yerr=stds, capsize=3, label=lab)
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=30, ha="right")
        ax.set_ylabel("test precision (%)")
        lo = min(100 * ec.last(r, "p_at_5") for g in groups.values() for r in g)
        ax.set_ylim(max(0, lo - 15), None)
        ax.set_title(f"{name}: P@k after training (mean ± std over seeds)")
        ax.legend(loc="lower left")
        ax.grid(axis="y", alpha=0.3)
        ax2 = axes[1][col]
        for n in names:
            r = groups[n][0]
            e = r["epochs"]
            ok = np.isfinite(e["p_at_1"])
            ax2.plot(e["epoch"][ok], 100 * e["p_at_1"][ok], marker="o", ms=3, label=f"{n} (seed {r['attrs']['seed']})")
        ax2.set_xlabel("epoch")
        ax2.set_ylabel("test P@1 (%)")
        ax2.set_title(f"{name}: learning curves (first seed)")
        ax2.grid(alpha=0.3)
        ax2.legend(fontsize=8)
        for n in names:
            g = groups[n]
            cells = [ec.mean_std([100 * ec.last(r, m) for r in g]) for m in ("p_at_1", "p_at_3", "p_at_5", "psp_at_5")]
            tl = ec.mean_std([ec.last(r, "train_loss") for r in g])
            te = ec.mean_std([ec.last(r, "test_loss") for r in g])
            lines.append(f"| {name} | {n} | {len(g)} | " + " | ".join(f"{m:.2f} ± {s:.2f}" for m, s, _ in cells)
                         + f" | {tl[0]:.2f} ± {tl[1]:.2f} | {te[0]:.2f} ± {te[1]:.2f} |")
    ec.save_figure_and_table(fig, args.out, lines, args.table)
    if args.table:
        print(f"wrote {args.table}")


if __name__ == "__main__":
    main()
