#!/usr/bin/env python3
"""Figure of a lobench run file: median time and peak working memory against V, one line per variant.

Usage: python3 plots/plot_sweep.py RUN.h5 [-o FIGURE.png]

Rows are grouped by (variant, B, N, D, L, threads, and any other axis the file sweeps: operand, E's format,
its rounding, the epilogue, the reduction, weighted, seed), each series labelled with what sets it apart; every ok row is drawn, each group with its own colour,
marker and line style, and each group's points dodged sideways by a few percent of V so that series with
equal values (chunked and fused share their memory) stay visible side by side. Every timing point has a
bar from its fastest to its slowest sample (the /samples table; the time_min_s and time_max_s columns in
files without one); a point the run flagged (busy, noisy, above_yardstick) is ringed in red with its flags
written beside it, and a point slower than the same series at a larger V with the spreads apart (a curve
that should not fall: the point was not settled) is ringed too and listed under the panels. The predicted
memory is a wide pale band under each memory line: visible beside the line where they differ, a halo
around it where they agree. Skipped points (for example "OOM predicted") are marked with an x at the top
of the axes, failed ones with a red x; their reasons are listed in full under the panels. The legend sits
under the panels, outside the data. The title's SGEMM rate is the run's yardstick (root attribute
`sgemm_best_gflops`, else the rows' `gemm_gflops`). Reads the /results and /samples tables
(results/SCHEMA.md).
"""
import argparse
import itertools
import math
import textwrap

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from lobench_results import load, read_samples, text  # noqa: E402

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


# Axes of a sweep other than the shape and threads that split its rows into series when the file holds
# more than one value of them (a sweep over E's format, the operands, the epilogue, ...).
OTHER_AXES = ("operand", "e_format", "e_rounding", "epilogue", "reduction", "weighted", "seed")


def other_axes(rows):
    """The OTHER_AXES the rows take more than one value of."""
    return [a for a in OTHER_AXES if a in rows.dtype.names and len({text(v) for v in rows[a]}) > 1]


def group_rows(rows):
    """Rows by series: (variant, B, N, D, L, threads, then the values of other_axes(rows) as text)."""
    extra = other_axes(rows)
    groups = {}
    for r in rows:
        key = (text(r["variant"]), int(r["B"]), int(r["N"]), int(r["D"]), int(r["L"]), int(r["threads"]))
        key += tuple(f"{a}={text(r[a]) or '-'}" for a in extra)  # (an empty value, e.g. fp32 E's rounding: -)
        groups.setdefault(key, []).append(r)
    return groups


def group_label(key, groups):
    """The variant, plus what tells its group apart from the other groups of the same variant."""
    same_variant = [k for k in groups if k[0] == key[0]]
    fields = ("B", "N", "D", "L", "threads")
    differ = [i for i in range(1, 6) if len({k[i] for k in same_variant}) > 1]
    shapes = len({k[1:5] for k in groups}) > 1
    shown = [i for i in range(1, 6) if i in differ or (shapes and i < 5)]
    return key[0] + "".join(f" {fields[i - 1]}={key[i]}" for i in shown) + "".join(f" {v}" for v in key[6:])


DODGE = 0.035  # each group's points moved sideways by this fraction of V (log axes: a constant shift)
FLAG_RING = dict(marker="o", markersize=15, markerfacecolor="none", markeredgecolor="red", markeredgewidth=1.4,
                 linestyle="none")


def short_count(x):
    """25000 -> 25k, 1500000 -> 1.5M: a vocabulary size as a tick label."""
    for unit, scale in (("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:g}{unit}"
    return f"{x:g}"


def spread_ms(rows, samples):
    """{row_id: (fastest, slowest) sample in ms} of every ok row: from /samples, else the min/max columns."""
    out = {}
    if samples is not None and len(samples):
        for rid, g in samples.groupby("row_id"):
            out[int(rid)] = (float(g["seconds"].min()) * 1e3, float(g["seconds"].max()) * 1e3)
    for r in rows:
        if int(r["row_id"]) not in out and "time_min_s" in rows.dtype.names:
            out[int(r["row_id"])] = (float(r["time_min_s"]) * 1e3, float(r["time_max_s"]) * 1e3)
    return out


def unsettled(ok, spreads):
    """Rows (V ascending) slower than the same series at a larger V, their spreads apart: a step whose time
    falls as V grows was measured while something else ran (or ran too few times to tell)."""
    out = []
    for i, r in enumerate(ok):
        lo_i = spreads.get(int(r["row_id"]), (r["time_median_s"] * 1e3,) * 2)[0]
        for later in ok[i + 1:]:
            hi_later = spreads.get(int(later["row_id"]), (later["time_median_s"] * 1e3,) * 2)[1]
            if later["V"] > r["V"] and hi_later < lo_i:
                out.append((r, later))
                break
    return out


def draw_group(ax_t, ax_m, rs, label, style, offset, spreads, notes):
    rs = sorted(rs, key=lambda r: r["V"])
    ok = [r for r in rs if text(r["status"]) == "ok"]
    color, marker, ls = style
    V = np.array([r["V"] for r in ok], dtype=float) * (1 + DODGE) ** offset
    t = np.array([r["time_median_s"] * 1e3 for r in ok])
    lo_hi = np.array([spreads.get(int(r["row_id"]), (np.nan, np.nan)) for r in ok]).reshape(-1, 2)
    yerr = np.vstack([np.clip(t - lo_hi[:, 0], 0, None), np.clip(lo_hi[:, 1] - t, 0, None)])
    yerr = np.nan_to_num(yerr)
    ax_t.plot(V, t, marker=marker, linestyle=ls, color=color, label=label, markerfacecolor="none", markersize=7)
    ax_t.errorbar(V, t, yerr=yerr, fmt="none", ecolor=color, capsize=3, elinewidth=1, label="_spread")
    predicted = np.array([r["predicted_bytes"] for r in ok], dtype=float) / 2**20
    if np.any(np.isfinite(predicted) & (predicted > 0)):
        ax_m.plot(V, predicted, "-", color=color, alpha=0.22, linewidth=7, solid_capstyle="round", label="_predicted")
    ax_m.plot(V, [r["peak_bytes"] / 2**20 for r in ok], marker=marker, linestyle=ls, color=color, label=label,
              markerfacecolor="none", markersize=7)
    for x, y, r in zip(V, t, ok):
        flags = text(r["flags"]) if "flags" in r.dtype.names else ""
        if flags:
            ax_t.plot([x], [y], **FLAG_RING, label="_flagged")
            ax_t.annotate(flags, (x, y), xytext=(9, -3), textcoords="offset points", fontsize=7.5, color="red",
                          va="top")
    for r, later in unsettled(ok, spreads):
        x = V[ok.index(r)]
        ax_t.plot([x], [r["time_median_s"] * 1e3], **FLAG_RING, label="_unsettled")
        notes.append(f"{label} V={r['V']}: slower than at V={later['V']} with the spreads apart: not settled "
                     f"(measured while the machine was busy, or too few repetitions)")
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
    try:
        samples = read_samples(run)
    except Exception:  # noqa: BLE001  (a file without samples: the min/max columns give the spread)
        samples = None
    spreads = spread_ms(rows, samples)
    for i, ((key, rs), style) in enumerate(zip(sorted(groups.items()), styles)):
        offset = i - (len(groups) - 1) / 2
        draw_group(ax_t, ax_m, rs, group_label(key, groups), style, offset, spreads, notes)
    for ax, ylabel in ((ax_t, "median time per step (ms; column time_median_s)"),
                       (ax_m, "peak working memory (MiB; column peak_bytes)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("vocabulary size V")
        ax.set_ylabel(ylabel)
        # 2000 and 0.5, not 2×10³ and 5×10⁻¹; V ticked at the swept values themselves (25k, 50k, ...)
        ax.yaxis.set_major_formatter(matplotlib.ticker.LogFormatter())
        ax.yaxis.set_minor_formatter(matplotlib.ticker.LogFormatter(labelOnlyBase=False, minor_thresholds=(1, 0.4)))
        swept = sorted({int(r["V"]) for r in rows})
        ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(swept))
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: short_count(x)))
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
    fig.suptitle(f"lobench {run}: loss + dA + dE step; bars: fastest to slowest sample; red ring: flagged or not "
                 f"settled;\nwide pale band: predicted memory; x at top: skipped, red x: failed; points dodged "
                 f"{DODGE:.1%} in V per series\n{text(attrs.get('cpu_model', '?'))}, {rate}, commit {commit}",
                 fontsize=9)
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
