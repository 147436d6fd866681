#!/usr/bin/env python3
"""Heatmaps of the E-format study: loss and gradient errors against (exponent bits, mantissa bits).

Usage: python3 plots/e_format_heatmap.py RUN.h5 [-o FIGURE.png] [--variant fused]

Reads rows of a lobench run file whose e_format is a generic eXmY (harness/sweeps/e_format_grid.args)
and draws, for each rounding mode (rows of panels), log10 of the relative error of the loss, dA and dE
against the float64 reference on the ORIGINAL E (what the storage format costs; columns of panels).
Cells where the error is NaN or inf (the format overflowed: E ~ N(0,1) has values beyond a 2-exponent-bit
format's range, or the gradient became non-finite) are drawn grey.

Formats stored under their ml_dtypes or common names are placed on their eXmY cell and labelled with the
name: float8_e4m3fn -> e4m3, float8_e5m2 -> e5m2, float8_e3m4 -> e3m4, float16 -> e5m10, bfloat16 -> e8m7,
tf32 -> e8m10 (the sweep writes these names for the cells that have one). A float8 "fn"/"fnuz" format
differs from the generic eXmY in its special values only, so it shares the cell.
"""
import argparse
import re

import matplotlib
import matplotlib.patches

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from lobench_results import load, text  # noqa: E402


# Named formats with no eXmY spelling in their name: (exponent bits, mantissa bits).
NAMED_FORMATS = {"float16": (5, 10), "fp16": (5, 10), "half": (5, 10), "bfloat16": (8, 7), "bf16": (8, 7),
                 "tf32": (8, 10), "float32": (8, 23), "fp32": (8, 23)}
GENERIC = re.compile(r"^e(\d+)m(\d+)$")
# ml_dtypes spellings: float8_e4m3fn, float8_e5m2fnuz, float8_e4m3b11fnuz, float6_e3m2fn, float4_e2m1fn ...
ML_DTYPES = re.compile(r"^float\d+_e(\d+)m(\d+)[a-z0-9]*$")


def exmy_cell(name):
    """(exponent bits, mantissa bits, label) of a storage format name, or None when it is not one.
    label is the name for named formats (drawn in the cell) and "" for a generic eXmY."""
    m = GENERIC.match(name)
    if m:
        return int(m.group(1)), int(m.group(2)), ""
    m = ML_DTYPES.match(name)
    if m:
        return int(m.group(1)), int(m.group(2)), name
    if name in NAMED_FORMATS:
        return (*NAMED_FORMATS[name], name)
    return None


def collect_cells(rows, variant):
    """{(rounding, e, m): row} of the ok rows of `variant` whose e_format maps to an eXmY cell,
    {(e, m): label} of the cells stored under a name, and the set of (e, m) tried at all (failed or
    skipped cells stay on the axes, grey). Two ok rows on one cell: the first is kept."""
    cells, labels, tried = {}, {}, set()
    for r in rows:
        cell = exmy_cell(text(r["e_format"]))
        if cell is None or text(r["variant"]) != variant:
            continue
        e, m, label = cell
        tried.add((e, m))
        if text(r["status"]) != "ok":
            continue
        key = (text(r["e_rounding"]), e, m)
        if key in cells:
            continue
        cells[key] = r
        if label:
            labels[(e, m)] = label
    return cells, labels, tried


SHORT_NAMES = {"bfloat16": "bf16", "float16": "fp16"}


def short_name(name):
    """A named format's label in its cell: float8_e4m3fn -> e4m3fn, bfloat16 -> bf16."""
    return SHORT_NAMES.get(name, name.split("_", 1)[1] if name.startswith("float") and "_" in name else name)


def grey_reason(rows, variant):
    """Why cells are grey, for the legend, with a failed row's reason when there is one."""
    reasons = [text(r["reason"]) for r in rows
               if text(r["variant"]) == variant and exmy_cell(text(r["e_format"])) and text(r["status"]) != "ok"]
    why = f" (e.g. {reasons[0][:160]})" if reasons else ""
    return f"grey: no finite error: the format overflowed E ~ N(0, 1), the run failed or was not run{why}"


def draw_panel(ax, grid, E, M, labels, cmap):
    im = ax.imshow(np.ma.masked_invalid(grid), origin="lower", aspect="auto", cmap=cmap, vmin=-8, vmax=0)
    ax.set_xticks(range(len(M)))
    ax.set_xticklabels(M)
    ax.set_yticks(range(len(E)))
    ax.set_yticklabels(E)
    ax.set_xlabel("mantissa bits")
    ax.set_ylabel("exponent bits")
    for a, e in enumerate(E):
        for b, m in enumerate(M):
            if not np.isfinite(grid[a, b]):
                continue
            # dark text on the bright (yellow, green) end of viridis, white on the dark end
            color = "black" if grid[a, b] > -3.5 else "white"
            name = labels.get((e, m), "")
            if name:  # a named format: its short name under the value, boxed so it is found at a glance
                ax.text(b, a, f"{grid[a, b]:.0f}\n{short_name(name)}", ha="center", va="center", fontsize=7,
                        color=color, fontweight="bold", linespacing=0.9,
                        bbox=dict(boxstyle="square,pad=0.15", fc="none", ec=color, lw=0.8))
            else:
                ax.text(b, a, f"{grid[a, b]:.0f}", ha="center", va="center", fontsize=9, color=color)
    return im


def draw(run, variant):
    """The figure of one run file (a matplotlib Figure; the caller saves it)."""
    rows, _ = load(run)
    cells, labels, tried = collect_cells(rows, variant)
    if not cells:
        raise SystemExit(f"{run}: no ok rows of variant {variant} with an eXmY or named storage format")
    roundings = sorted({k[0] for k in cells})
    E = sorted({e for e, _ in tried})
    M = sorted({m for _, m in tried})
    metrics = [("rel_loss_err", "loss"), ("rel_dA_err", "dA"), ("rel_dE_err", "dE")]
    fig, axes = plt.subplots(len(roundings), 3, figsize=(19, 4.6 * len(roundings) + 0.8), squeeze=False)
    cmap = plt.get_cmap("viridis").with_extremes(bad="lightgrey")
    any_grey = False
    for i, rnd in enumerate(roundings):
        for j, (col, title) in enumerate(metrics):
            grid = np.full((len(E), len(M)), np.nan)
            for a, e in enumerate(E):
                for b, m in enumerate(M):
                    r = cells.get((rnd, e, m))
                    if r is not None and np.isfinite(r[col]) and r[col] > 0:
                        grid[a, b] = np.log10(r[col])
            any_grey = any_grey or bool(np.isnan(grid).any())
            ax = axes[i][j]
            im = draw_panel(ax, grid, E, M, labels, cmap)
            ax.set_title(f"{title}: log10 relative error ({rnd})", fontsize=10)
            fig.colorbar(im, ax=ax, fraction=0.046)
    r0 = next(iter(cells.values()))
    fig.suptitle(f"E stored in eXmY, float32 accumulation, variant {variant}: errors vs the float64 reference on the "
                 f"original E\nB={r0['B']} N={r0['N']} V={r0['V']} D={r0['D']} L={r0['L']}, E ~ N(0, 1); each cell "
                 f"log10 of the relative error (-8: 1e-8); boxed: a named format", fontsize=11)
    if any_grey:  # the grey cells said in words (issue 43: a grey row without a legend)
            fig.legend(handles=[matplotlib.patches.Patch(facecolor="lightgrey", edgecolor="grey",
                                                     label=grey_reason(rows, variant))],
                   loc="lower center", frameon=False, fontsize=9)
    fig.tight_layout(rect=(0, 0.04 if any_grey else 0, 1, 1))
    return fig


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run")
    ap.add_argument("-o", "--out")
    ap.add_argument("--variant", default="fused")
    args = ap.parse_args()
    fig = draw(args.run, args.variant)
    out = args.out or args.run.rsplit(".", 1)[0] + "_heatmap.png"
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
