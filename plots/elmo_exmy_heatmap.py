#!/usr/bin/env python3
"""Experiment 2 (ELMO: 3 exponent bits suffice and 2 do not; below ~6 mantissa bits nearest rounding
degrades and stochastic rounding recovers): a metric at the last epoch of classifiers stored in eXmY, one
heatmap per (rounding, subnormal handling, overflow), exponent bits x mantissa bits, mean over seeds with
the seed spread (std, and min-max in the table).

A run whose classifier weights became inf/NaN (IEEE-like formats overflow to inf) is "diverged": it is left
out of the mean and counted; a cell whose every seed diverged reads "div.".

Usage: python3 plots/elmo_exmy_heatmap.py RUN_DIR [RUN_DIR ...] -o FIGURE.png [--table TABLE.md]
       [--reference FP32_RUN_DIR]   (the fp32 mean: the colour scale's end and in the titles)
       [--metric p_at_1|p_at_5|psp_at_5|train_loss|test_loss]
"""
import argparse
import collections

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import elmo_common as ec  # noqa: E402

METRIC_NAMES = {"p_at_1": "P@1", "p_at_5": "P@5", "psp_at_5": "PSP@5", "train_loss": "train loss",
                "test_loss": "test loss"}


def diverged(run):
    """The weights overflowed to inf/NaN (the loss is then NaN and the metrics are chance)."""
    return ec.last(run, "weight_non_finite") > 0 or not np.isfinite(ec.last(run, "train_loss"))


def panel_key(run):
    a = run["attrs"]
    saturating = "saturates" in a.get("clf_format_resolved", "")
    return (a["clf_rounding"], int(a["clf_subnormals"]), saturating)


def panel_name(key, long=False):
    rnd = {"nearest_even": "nearest (RNE)", "stochastic": "stochastic"}.get(key[0], key[0])
    sub = "subnormals " + ("on" if key[1] else ("flushed to zero" if long else "flushed"))
    return f"{rnd}, {sub}" + (", saturating overflow" if key[2] else "")


class Cell:
    """The seeds of one (format, rounding) point: the metric of the runs that trained, and how many diverged."""

    def __init__(self):
        self.values, self.diverged = [], 0

    def add(self, value, div):
        if div:
            self.diverged += 1
        else:
            self.values.append(value)

    @property
    def seeds(self):
        return len(self.values) + self.diverged

    @property
    def mean(self):
        return float(np.mean(self.values)) if self.values else float("nan")

    @property
    def std(self):
        return float(np.std(self.values, ddof=1)) if len(self.values) > 1 else float("nan")

    def text(self, digits, full_seeds):
        """Markdown: mean ± std (min–max), with the seed count when it is not the panel's usual one."""
        if not self.values:
            return f"div. ({self.diverged}/{self.seeds})" if self.seeds != full_seeds else "div."
        s = f"{self.mean:.{digits}f}"
        if len(self.values) > 1:
            s += f" ± {self.std:.{digits}f} ({min(self.values):.{digits}f}–{max(self.values):.{digits}f})"
        if self.diverged:
            s += f", {self.diverged}/{self.seeds} div."
        elif self.seeds != full_seeds:
            s += f" [{self.seeds} seed{'s' if self.seeds > 1 else ''}]"
        return s


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("-o", "--out", help="the figure (without it: only the table is printed)")
    ap.add_argument("--table")
    ap.add_argument("--reference", help="folder with fp32 runs of the same setup")
    ap.add_argument("--metric", default="p_at_1", choices=list(METRIC_NAMES),
                    help="/epochs column at the last epoch (precisions in %%, losses in nats/row)")
    args = ap.parse_args()
    runs = [r for d in args.dirs for r in ec.load_dir(d) if ec.status(r) == "ok"]
    is_loss = args.metric.endswith("loss")
    scale = 1.0 if is_loss else 100.0
    digits = 2 if is_loss else 1  # the figure's means; the table and every spread have 2 decimals
    unit = "nats/row" if is_loss else "%"
    mname = METRIC_NAMES[args.metric]
    ref = None
    if args.reference:
        ref = Cell()
        for r in ec.load_dir(args.reference):
            if ec.status(r) == "ok":
                ref.add(scale * ec.last(r, args.metric), diverged(r))
    cells = collections.defaultdict(lambda: collections.defaultdict(Cell))  # panel -> (e, m) -> Cell
    for r in runs:
        a = r["attrs"]
        em = (int(a["clf_exponent_bits"]), int(a["clf_mantissa_bits"]))
        cells[panel_key(r)][em].add(scale * ec.last(r, args.metric), diverged(r))
    panels = sorted(cells, key=lambda k: (k[2], -k[1], k[0]))
    ms = sorted({em[1] for p in cells.values() for em in p})
    rows_of = {k: sorted({em[0] for em in cells[k]}) for k in panels}  # exponent rows each panel has
    ncols = min(2, len(panels))
    layout = [panels[i:i + ncols] for i in range(0, len(panels), ncols)]
    heights = [max(len(rows_of[k]) for k in row) + 1.5 for row in layout]
    fig, axes = plt.subplots(len(layout), ncols, figsize=(5.4 * ncols, 0.75 * sum(heights)), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    finite = [c.mean for p in cells.values() for c in p.values() if c.values]
    top = ref.mean if ref is not None and ref.values else None
    if is_loss:  # colour: from the reference (or best) loss up to 1.5x of it; diverged stays blank
        vmin = top if top is not None else min(finite)
        vmax, cmap = 1.5 * vmin, "viridis_r"
    else:
        vmax = top if top is not None else max(finite)
        vmin, cmap = max(0.0, vmax - 8.0), "viridis"  # 8 points below the reference: small gaps stay visible
    ref_text = ""
    if ref is not None and ref.values:
        ref_text = f"fp32: {ref.text(2, ref.seeds)} {unit}, {ref.seeds} seeds"
    lines = [f"{mname} ({unit}) at the last epoch: mean ± std over seeds (min–max); "
             + (ref_text + "; " if ref_text else "")
             + "div. = the weights overflowed to inf (loss NaN), left out of the mean and counted."]
    for ax, key in zip(axes.flat, panels):
        panel, es = cells[key], rows_of[key]
        full = max(c.seeds for c in panel.values())
        grid = np.full((len(es), len(ms)), np.nan)
        for (e, m), c in panel.items():
            grid[es.index(e), ms.index(m)] = c.mean
        im = ax.imshow(grid, origin="lower", cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
        for (e, m), c in panel.items():
            i, j = es.index(e), ms.index(m)
            if c.values:
                dark = c.mean > vmin + 0.6 * (vmax - vmin) if is_loss else c.mean < vmin + 0.6 * (vmax - vmin)
                label = f"{c.mean:.{digits}f}" + (f"\n±{c.std:.2f}" if len(c.values) > 1 else "")
                if c.diverged:
                    label += f"\n{c.diverged}/{c.seeds} div."
                ax.text(j, i, label, ha="center", va="center", fontsize=7, color="white" if dark else "black")
            else:
                ax.text(j, i, "div.", ha="center", va="center", fontsize=8, color="red")
        ax.set_xticks(range(len(ms)))
        ax.set_xticklabels(ms)
        ax.set_yticks(range(len(es)))
        ax.set_yticklabels(es)
        ax.set_xlabel("mantissa bits")
        ax.set_ylabel("exponent bits")
        title = f"{panel_name(key)} ({full} seed{'s' if full > 1 else ''})"
        if top is not None:
            title += f"\nfp32: {top:.{digits}f}" + (f" ± {ref.std:.2f}" if len(ref.values) > 1 else "") + f" {unit}"
        ax.set_title(title, fontsize=9)
        fig.colorbar(im, ax=ax, label=f"{mname} ({unit})")
        lines.append(f"\n**{panel_name(key, long=True)}**, {full} seed{'s' if full > 1 else ''} per cell ({mname}, {unit}; "
                     "rows: exponent bits, columns: mantissa bits)\n")
        lines.append("| e \\ m | " + " | ".join(str(m) for m in ms) + " |")
        lines.append("|---|" + "---|" * len(ms))
        for e in es:
            lines.append(f"| {e} | " + " | ".join(panel[(e, m)].text(2, full) if (e, m) in panel else ""
                                                   for m in ms) + " |")
    ec.save_figure_and_table(fig, args.out, lines, args.table)


if __name__ == "__main__":
    main()
