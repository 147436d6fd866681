#!/usr/bin/env python3
"""Experiment 2 (ELMO: 3 exponent bits suffice and 2 do not; below ~6 mantissa bits nearest rounding
degrades and stochastic rounding recovers): test P@1 of classifiers stored in eXmY, one heatmap per
(rounding, subnormal handling), exponent bits x mantissa bits, mean over seeds.

Usage: python3 plots/elmo_exmy_heatmap.py RUN_DIR [RUN_DIR ...] -o FIGURE.png [--table TABLE.md]
       [--reference FP32_RUN_DIR]   (draws the fp32 P@1 as the colour scale's top and in the titles)
"""
import argparse
import collections

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import elmo_common as ec  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--table")
    ap.add_argument("--reference", help="folder with fp32 runs of the same setup")
    ap.add_argument("--metric", default="p_at_1", choices=["p_at_1", "p_at_5", "psp_at_5", "train_loss", "test_loss"],
                    help="/epochs column at the last epoch (precisions in %%, losses in nats/row)")
    args = ap.parse_args()
    runs = [r for d in args.dirs for r in ec.load_dir(d) if ec.status(r) == "ok"]
    is_loss = args.metric.endswith("loss")
    scale = 1.0 if is_loss else 100.0
    unit = "nats/row" if is_loss else "%"
    mname = {"p_at_1": "P@1", "p_at_5": "P@5", "psp_at_5": "PSP@5", "train_loss": "train loss", "test_loss": "test loss"}[args.metric]
    ref = None
    if args.reference:
        ref = ec.mean_std([scale * ec.last(r, args.metric) for r in ec.load_dir(args.reference) if ec.status(r) == "ok"])[0]
    cells = collections.defaultdict(list)  # (rounding, subnormals) -> {(e, m): [p1...]}
    for r in runs:
        a = r["attrs"]
        key = (a["clf_rounding"], int(a["clf_subnormals"]))
        cells[key].append(((int(a["clf_exponent_bits"]), int(a["clf_mantissa_bits"])), scale * ec.last(r, args.metric)))
    panels = sorted(cells, key=lambda k: (-k[1], k[0]))
    es = sorted({em[0] for v in cells.values() for em, _ in v})
    ms = sorted({em[1] for v in cells.values() for em, _ in v})
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 4.2), squeeze=False)
    finite = [p for v in cells.values() for _, p in v if np.isfinite(p)]
    if is_loss:  # colour: from the reference (or best) loss up to 1.5x of it; NaN (diverged) stays blank
        vmin = ref if ref is not None else min(finite)
        vmax = 1.5 * vmin
        cmap = "viridis_r"
    else:
        vmax = ref if ref is not None else max(finite)
        vmin, cmap = max(0.0, vmax - 8.0), "viridis"  # 8 points below the reference: small gaps stay visible
    lines = []
    for ax, key in zip(axes[0], panels):
        grid = np.full((len(es), len(ms)), np.nan)
        acc = collections.defaultdict(list)
        for em, p in cells[key]:
            acc[em].append(p)
        for (e, m), ps in acc.items():
            grid[es.index(e), ms.index(m)] = np.mean(ps)
        im = ax.imshow(grid, origin="lower", cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
        for i in range(len(es)):
            for j in range(len(ms)):
                if np.isfinite(grid[i, j]):
                    dark = grid[i, j] > vmin + 0.6 * (vmax - vmin) if is_loss else grid[i, j] < 0.6 * vmax
                    ax.text(j, i, f"{grid[i, j]:.1f}", ha="center", va="center", fontsize=8,
                            color="white" if dark else "black")
                elif any(em == (es[i], ms[j]) for em, _ in cells[key]):
                    ax.text(j, i, "NaN", ha="center", va="center", fontsize=8, color="red")
        ax.set_xticks(range(len(ms)))
        ax.set_xticklabels(ms)
        ax.set_yticks(range(len(es)))
        ax.set_yticklabels(es)
        ax.set_xlabel("mantissa bits")
        ax.set_ylabel("exponent bits")
        rnd = {"nearest_even": "nearest (RNE)", "stochastic": "stochastic"}.get(key[0], key[0])
        ax.set_title(f"{rnd}, subnormals {'on' if key[1] else 'flushed'}" + (f"\n(fp32: {ref:.1f} {unit})" if ref else ""),
                     fontsize=10)
        fig.colorbar(im, ax=ax, label=f"{mname} ({unit})")
        lines.append(f"\n**{rnd}, subnormals {'on' if key[1] else 'flushed to zero'}** ({mname}, {unit}; rows: exponent bits, "
                     "columns: mantissa bits)\n")
        lines.append("| e \\ m | " + " | ".join(str(m) for m in ms) + " |")
        lines.append("|---|" + "---|" * len(ms))
        for i, e in enumerate(es):
            lines.append(f"| {e} | " + " | ".join("" if not np.isfinite(v) else f"{v:.1f}" for v in grid[i]) + " |")
    ec.save_figure_and_table(fig, args.out, lines, args.table)


if __name__ == "__main__":
    main()
