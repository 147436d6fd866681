#!/usr/bin/env python3
"""Heatmaps of the E-format study: loss and gradient errors against (exponent bits, mantissa bits).

Usage: python3 plots/e_format_heatmap.py RUN.h5 [-o FIGURE.png] [--variant fused]

Reads rows of a lobench run file whose e_format is a generic eXmY (harness/sweeps/e_format_grid.args)
and draws, for each rounding mode (rows of panels), log10 of the relative error of the loss, dA and dE
against the float64 reference on the ORIGINAL E (what the storage format costs; columns of panels).
Cells where the error is NaN or inf (the format overflowed: E ~ N(0,1) has values beyond a 2-exponent-bit
format's range, or the gradient became non-finite) are drawn grey.
"""
import argparse
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from lobench_results import load, text  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run")
    ap.add_argument("-o", "--out")
    ap.add_argument("--variant", default="fused")
    args = ap.parse_args()
    rows, _ = load(args.run)
    pat = re.compile(r"^e(\d+)m(\d+)$")
    cells = {}
    for r in rows:
        m = pat.match(text(r["e_format"]))
        if not m or text(r["variant"]) != args.variant or text(r["status"]) != "ok":
            continue
        cells[(text(r["e_rounding"]), int(m.group(1)), int(m.group(2)))] = r
    if not cells:
        raise SystemExit(f"{args.run}: no ok rows of variant {args.variant} with an eXmY e_format")
    roundings = sorted({k[0] for k in cells})
    E = sorted({k[1] for k in cells})
    M = sorted({k[2] for k in cells})
    metrics = [("rel_loss_err", "loss"), ("rel_dA_err", "dA"), ("rel_dE_err", "dE")]
    fig, axes = plt.subplots(len(roundings), 3, figsize=(13, 3.6 * len(roundings)), squeeze=False)
    for i, rnd in enumerate(roundings):
        for j, (col, title) in enumerate(metrics):
            grid = np.full((len(E), len(M)), np.nan)
            for a, e in enumerate(E):
                for b, m in enumerate(M):
                    r = cells.get((rnd, e, m))
                    if r is not None and np.isfinite(r[col]) and r[col] > 0:
                        grid[a, b] = np.log10(r[col])
            ax = axes[i][j]
            cmap = plt.get_cmap("viridis").copy()
            cmap.set_bad("lightgrey")
            im = ax.imshow(np.ma.masked_invalid(grid), origin="lower", aspect="auto", cmap=cmap, vmin=-8, vmax=0)
            ax.set_xticks(range(len(M)))
            ax.set_xticklabels(M)
            ax.set_yticks(range(len(E)))
            ax.set_yticklabels(E)
            ax.set_xlabel("mantissa bits")
            ax.set_ylabel("exponent bits")
            ax.set_title(f"{title}: log10 relative error ({rnd})", fontsize=9)
            for a in range(len(E)):
                for b in range(len(M)):
                    if np.isfinite(grid[a, b]):
                        ax.text(b, a, f"{grid[a, b]:.0f}", ha="center", va="center", fontsize=6, color="white")
            fig.colorbar(im, ax=ax, fraction=0.046)
    r0 = next(iter(cells.values()))
    fig.suptitle(f"E stored in eXmY, float32 accumulation, variant {args.variant}: errors vs the float64 reference on the "
                 f"original E\nB={r0['B']} N={r0['N']} V={r0['V']} D={r0['D']} L={r0['L']}, E ~ N(0, 1)", fontsize=10)
    fig.tight_layout()
    out = args.out or args.run.rsplit(".", 1)[0] + "_heatmap.png"
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
