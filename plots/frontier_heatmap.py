#!/usr/bin/env python3
"""The precision frontier of `lobench train-xmc --frontier` (harness/train/frontier_file.hpp) in the style
of ELMO's Figure 2: one panel per (tensor, rounding), mantissa bits across, exponent bits up, each cell
coloured by its metric's gap to fp32 (the seeds' mean minus fp32's mean, in points; the search runs only
the cells it needs, the rest stay blank), the cell's value written in it, and the frontier drawn: the
fewest mantissa bits within tolerance outlined in black, joined by a step line (a row with none in the
range is marked "none").

Usage: python3 plots/frontier_heatmap.py FRONTIER.h5 [-o FIGURE.png]
"""
import argparse
import collections

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402


def _text(x):
    return x.decode() if isinstance(x, bytes) else str(x)


def load(path):
    """(attrs, cells, lines): the root attributes and the /cells and /frontier tables as lists of dicts."""
    with h5py.File(path, "r") as f:
        if "cells" not in f or "frontier" not in f:
            raise SystemExit(f"{path}: not a frontier run file (no /cells and /frontier)")
        attrs = {k: _text(v) if isinstance(v, (bytes, str)) else v for k, v in f.attrs.items()}
        tables = []
        for name in ("cells", "frontier"):
            t = f[name][:]
            tables.append([{c: (_text(r[c]) if t.dtype[c].kind == "S" else r[c].item()) for c in t.dtype.names}
                           for r in t])
    return attrs, tables[0], tables[1]


def gaps(cells, lines):
    """{(tensor, rounding): {(e, m): (gap, seeds)}}: each cell's mean metric over its seeds minus fp32's mean."""
    base = [c["metric"] for c in cells if c["tensor"] == "fp32" and np.isfinite(c["metric"])]
    base_mean = lines[0]["baseline_mean"] if lines else (np.mean(base) if base else np.nan)
    seeds = collections.defaultdict(list)
    for c in cells:
        if c["tensor"] != "fp32":
            seeds[(c["tensor"], c["rounding"], c["exponent_bits"], c["mantissa_bits"])].append(c["metric"])
    out = collections.defaultdict(dict)
    for (t, r, e, m), v in seeds.items():
        v = np.asarray(v, dtype=float)
        mean = np.nanmean(v) if np.isfinite(v).any() else np.nan
        out[(t, r)][(e, m)] = (mean - base_mean, len(v))
    return out, base_mean


def draw(path):
    attrs, cells, lines = load(path)
    by_panel, base_mean = gaps(cells, lines)
    panels = sorted({(r["tensor"], r["rounding"]) for r in lines} | set(by_panel))
    if not panels:
        raise SystemExit(f"{path}: no searched cells yet")
    E = sorted({e for p in by_panel.values() for (e, _m) in p} | {r["exponent_bits"] for r in lines})
    M = sorted({m for p in by_panel.values() for (_e, m) in p})
    M = list(range(min(M), max(M) + 1)) if M else [1]
    metric = attrs.get("metric", "metric").replace("p@", "P@")
    tol = lines[0]["tolerance"] if lines else np.nan
    # The colour scale spans 3 tolerances: the cells near the frontier are told apart, a collapsed cell
    # (a diverged run) saturates; every cell's value is written in it.
    span = 3 * tol if np.isfinite(tol) and tol > 0 else 0.01
    fig, axes = plt.subplots(1, len(panels), figsize=(1.0 + 0.55 * len(M) * len(panels), 1.2 + 0.55 * len(E)),
                             squeeze=False, constrained_layout=True)
    image = None
    for ax, key in zip(axes[0], panels):
        grid = np.full((len(E), len(M)), np.nan)
        for (e, m), (g, _n) in by_panel.get(key, {}).items():
            grid[E.index(e), M.index(m)] = 100 * g
        image = ax.imshow(np.ma.masked_invalid(grid), origin="lower", cmap="RdBu", vmin=-100 * span, vmax=100 * span,
                          aspect="auto")
        for i in range(len(E)):
            for j in range(len(M)):
                if np.isfinite(grid[i, j]):
                    strong = abs(grid[i, j]) > 70 * span
                    ax.text(j, i, f"{grid[i, j]:+.1f}", ha="center", va="center", fontsize=7,
                            color="white" if strong else "black")
        xs, ys = [], []
        for r in sorted((r for r in lines if (r["tensor"], r["rounding"]) == key), key=lambda r: r["exponent_bits"]):
            i = E.index(r["exponent_bits"])
            if r["mantissa_bits"] < 0:
                ax.text(len(M) - 0.5, i, " none", ha="left", va="center", fontsize=7)
                continue
            j = M.index(r["mantissa_bits"])
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=2.0))
            xs += [j - 0.5, j - 0.5]
            ys += [i - 0.5, i + 0.5]
        if xs:
            ax.plot(xs, ys, color="black", linewidth=1.2, label="frontier")
        ax.set_xticks(range(len(M)), [str(m) for m in M])
        ax.set_yticks(range(len(E)), [str(e) for e in E])
        ax.set_xlabel("mantissa bits")
        ax.set_ylabel("exponent bits")
        ax.set_title(f"{key[0]} weights, {key[1]}" if key[0] == "clf" else f"logit gradient, {key[1]}", fontsize=9)
    cbar = fig.colorbar(image, ax=axes[0].tolist(), shrink=0.9)
    cbar.set_label(f"{metric} gap to fp32 (points)")
    fig.suptitle(f"{attrs.get('dataset', '')}: fewest mantissa bits within {100 * tol:.2f} points of fp32's "
                 f"{metric} {100 * base_mean:.2f} % (outlined)", fontsize=9)
    return fig


def table(path):
    """The frontier table as Markdown lines: per (tensor, rounding) the fewest mantissa bits at each exponent
    width, and beside it the metric (seeds' mean ± std, points) at the frontier and one bit below."""
    with h5py.File(path, "r") as f:
        rows = f["frontier"][()]
    names = {"clf": "classifier weights", "grad": "logit gradient"}
    roundings = {"nearest_even": "nearest", "stochastic": "stochastic"}
    by_line = collections.OrderedDict()
    for r in rows:
        by_line.setdefault((_text(r["tensor"]), _text(r["rounding"])), {})[int(r["exponent_bits"])] = r
    widths = sorted({e for line in by_line.values() for e in line})
    base = rows[0]
    out = [f"fp32 {100 * base['baseline_mean']:.2f} ± {100 * base['baseline_std']:.2f} %, tolerance "
           f"{100 * base['tolerance']:.2f} points; each cell: fewest mantissa bits m (metric at m | at m − 1, "
           "mean ± std over the seeds, %)", "",
           "| tensor | rounding | " + " | ".join(f"e{e}" for e in widths) + " |",
           "|---|---|" + "---|" * len(widths)]

    def cell(r):
        if r is None:
            return ""
        m = int(r["mantissa_bits"])
        if m < 0:
            return "none"
        at = f"{100 * r['metric_at']:.2f} ± {100 * r['std_at']:.2f}"
        below = (f"{100 * r['metric_below']:.2f} ± {100 * r['std_below']:.2f}"
                 if np.isfinite(r["metric_below"]) else "–")
        return f"**{m}** ({at} \\| {below})"
    for (tensor, rounding), line in by_line.items():
        out.append(f"| {names.get(tensor, tensor)} | {roundings.get(rounding, rounding)} | "
                   + " | ".join(cell(line.get(e)) for e in widths) + " |")
    return out


def cells_table(path):
    """Every searched cell as Markdown lines: its seeds, the metric (mean ± std over the seeds, %), the gap to
    fp32's mean in points, the final train loss (mean over the seeds whose loss is finite) and its change
    against fp32's, and how many seeds' weights overflowed to inf or NaN."""
    attrs, cells, _ = load(path)
    groups = collections.OrderedDict()
    for c in cells:
        groups.setdefault((c["tensor"], c["rounding"], c["exponent_bits"], c["mantissa_bits"]), []).append(c)
    base = groups.pop(next(k for k in groups if k[0] == "fp32"))
    base_metric = np.mean([c["metric"] for c in base])
    base_loss = np.mean([c["train_loss"] for c in base])
    out = [f"fp32: {attrs.get('metric', 'metric')} {100 * base_metric:.2f} %, train loss {base_loss:.2f} nats/row "
           f"({len(base)} seeds)", "",
           "| tensor | rounding | format | seeds | metric (%) | − fp32 (points) | train loss | against fp32's | overflowed seeds |",
           "|---|---|---|---|---|---|---|---|---|"]
    for (tensor, rounding, e, m), cs in sorted(groups.items()):
        metric = 100 * np.array([c["metric"] for c in cs], dtype=float)
        loss = np.array([c["train_loss"] for c in cs], dtype=float)
        loss = loss[np.isfinite(loss)]
        spread = f" ± {metric.std(ddof=1):.2f}" if metric.size > 1 else ""
        lossc = (f"{loss.mean():.2f} | {100 * (loss.mean() / base_loss - 1):+.1f} %" if loss.size else "– | –")
        bad = sum(int(c["weight_non_finite"]) > 0 for c in cs)
        out.append(f"| {tensor} | {rounding} | e{e}m{m} | {len(cs)} | {metric.mean():.2f}{spread} | "
                   f"{metric.mean() - 100 * base_metric:+.2f} | {lossc} | {bad} |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_file")
    ap.add_argument("-o", "--out", default="frontier.png")
    ap.add_argument("--table", action="store_true", help="print the frontier table (Markdown) instead of drawing")
    ap.add_argument("--cells", action="store_true", help="print every searched cell's metric and train loss (Markdown)")
    args = ap.parse_args()
    if args.cells:
        print("\n".join(cells_table(args.run_file)))
        return
    if args.table:
        print("\n".join(table(args.run_file)))
        return
    fig = draw(args.run_file)
    fig.savefig(args.out, dpi=150)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
