#!/usr/bin/env python3
"""Figure of a lobench run file: median time and peak working memory against V, one line per variant.

Usage: python3 plots/plot_sweep.py RUN.h5 [-o FIGURE.png]

Rows are grouped by (variant, B, N, D, L, threads); every ok row is drawn, each group with its own colour,
marker and line style so that series with equal values (chunked and fused share their memory) stay
visible. Skipped points (for example "OOM predicted") are marked with an x at the top of the axes, failed
ones with a red x; their reasons are listed in full under the panels. The legend sits under the panels,
outside the data. The title's SGEMM rate is the run's yardstick (root attribute `sgemm_best_gflops`, else
the rows' `gemm_gflops`). Reads only the /results table (results/SCHEMA.md).
"""
import argparse
import itertools
import math
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from lobench_results import load, text  # noqa: E402

MARKERS = "osD^v<>pP*Xh"
LINESTYLES = ("-", "--", "-.", (0, (3, 1, 1, 1, 1, 1)))


def yardstick_gflops(rows, attrs):
    """The run's SGEMM rate in GFLOP/s, or None when the file has none."""
    for key in ("sgemm_best_gflops", "gemm_gflops"):
        v = attrs.get(key)
        if v is not None and math.isfinite(float(v)) and float(v) > 0:
            return float(v)
    if "gemm_gflops" in rows.dtype.names:
        col = np.asarray(rows["gemm_gflops"], dtype=float)
        col = col[np.isfinite(col) & (col > 0)]
        if col.size:
            return float(np.median(col))
    return None


def group_rows(rows):
    groups = {}
    for r in rows:
        key = (text(r["variant"]), int(r["B"]), int(r["N"]), int(r["D"]), int(r["L"]), int(r["threads"]))
        groups.setdefault(key, []).append(r)
    return groups


def group_label(key, groups):
    """The variant, plus what tells its group apart from the other groups of the same variant."""
    same_variant = [k for k in groups if k[0] == key[0]]
    fields = ("B", "N", "D", "L", "threads")
    differ = [i for i in range(1, 6) if len({k[i] for k in same_variant}) > 1]
    shapes = len({k[1:5] for k in groups}) > 1
    shown = [i for i in range(1, 6) if i in differ or (shapes and i < 5)]
    return key[0] + "".join(f" {fields[i - 1]}={key[i]}" for i in shown)


def draw_group(ax_t, ax_m, rs, label, style, notes):
    rs = sorted(rs, key=lambda r: r["V"])
    ok = [r for r in rs if text(r["status"]) == "ok"]
    color, marker, ls = style
    V = np.array([r["V"] for r in ok])
    ax_t.plot(V, [r["time_median_s"] * 1e3 for r in ok], marker=marker, linestyle=ls, color=color, label=label,
              markerfacecolor="none", markersize=7)
    ax_m.plot(V, [r["peak_bytes"] / 2**20 for r in ok], marker=marker, linestyle=ls, color=color, label=label,
              markerfacecolor="none", markersize=7)
    predicted = [r["predicted_bytes"] for r in ok]
    if any(math.isfinite(float(p)) and p > 0 for p in predicted):
        ax_m.plot(V, np.array(predicted, dtype=float) / 2**20, ":", color=color, alpha=0.6, label="_predicted")
    for r in rs:
        status = text(r["status"])
        if status == "ok":
            continue
        for ax in (ax_t, ax_m):
            ax.plot([r["V"]], [1], marker="x", color="red" if status == "failed" else color, markersize=10,
                    transform=ax.get_xaxis_transform(), clip_on=False, linestyle="none")
        notes.append(f"{label} V={r['V']}: {status}: {text(r['reason'])}")


def draw(run):
    """The figure of one run file (a matplotlib Figure; the caller saves it)."""
    rows, attrs = load(run)
    groups = group_rows(rows)
    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(12, 5.2))
    colors = plt.get_cmap("tab20").colors if len(groups) > 10 else plt.get_cmap("tab10").colors
    styles = zip(itertools.cycle(colors), itertools.cycle(MARKERS), itertools.cycle(LINESTYLES))
    notes = []
    for (key, rs), style in zip(sorted(groups.items()), styles):
        draw_group(ax_t, ax_m, rs, group_label(key, groups), style, notes)
    for ax, ylabel in ((ax_t, "median time per step (ms)"), (ax_m, "peak working memory (MiB)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("vocabulary size V")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
    # One legend entry per group (the time panel has every group, ok rows or not), under the panels.
    handles, labels = ax_t.get_legend_handles_labels()
    ncol = min(3, max(1, len(handles)))
    legend_rows = math.ceil(len(handles) / ncol)
    wrapped = [line for n in notes for line in textwrap.wrap(n, 150, subsequent_indent="    ")]
    notes_in = 0.13 * len(wrapped) + (0.1 if wrapped else 0)
    bottom_in = 0.25 + 0.22 * legend_rows + notes_in
    height = 5.2 + bottom_in
    fig.set_figheight(height)
    fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, notes_in / height))
    if wrapped:
        fig.text(0.01, 0.05 / height, "\n".join(wrapped), fontsize=7, va="bottom", ha="left", family="monospace")
    commit = text(attrs.get("git_commit", "?"))[:10]
    gemm = yardstick_gflops(rows, attrs)
    rate = f"SGEMM {gemm:.0f} GFLOP/s" if gemm else "no SGEMM yardstick in the file"
    fig.suptitle(f"lobench {run}: loss + dA + dE step (x at top: skipped, red x: failed; dotted: predicted memory)\n"
                 f"{text(attrs.get('cpu_model', '?'))}, {rate}, commit {commit}", fontsize=9)
    fig.tight_layout(rect=(0, bottom_in / height, 1, 1))
    return fig


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="lobench run file (HDF5)")
    ap.add_argument("-o", "--out", help="figure path (default: RUN with .png)")
    args = ap.parse_args()
    out = args.out or args.run.rsplit(".", 1)[0] + ".png"
    draw(args.run).savefig(out, dpi=120)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
