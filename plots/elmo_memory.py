#!/usr/bin/env python3
"""Experiment 4 (ELMO: peak memory vs number of labels; FP8 6x / 11x / 13x below Renee at 3M / 8.6M /
18M labels): predicted memory of the published layouts (Renee, plain fp32, ELMO bf16, ELMO fp8; head only)
beside this trainer's configurations, measured where they ran and predicted beyond: the counting allocator's
peak and, beside it, the process's resident-set growth over the run (the independent meter; files without it
leave its columns empty).

Usage: python3 plots/elmo_memory.py LAYOUTS.h5 RUN_DIR -o FIGURE.png [--table TABLE.md]

LAYOUTS.h5: `lobench train-xmc --layouts ... --layouts-out`. RUN_DIR: `lobench train-xmc --labels-total
... --mem-limit ...` run files (status ok: measured; skipped: predicted only).
"""
import argparse
import collections

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import elmo_common as ec  # noqa: E402

GiB = float(1 << 30)
PAPER = {"3M": 6.0, "8.6M": 11.0, "18M": 13.0}  # ELMO fp8 vs Renee (abstract / README)


def config_name(a):
    rnd = {"nearest_even": "rne", "stochastic": "sr"}.get(a["clf_rounding"], a["clf_rounding"])
    return f"ours {a['clf_format']} {rnd} {a['update_mode']} k={a['chunks']}"


def head_bytes(m, prefix):
    return sum(float(m[f"{prefix}{c}_bytes"]) for c in ("weights", "weight_gradient", "optimizer_state", "logits"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("layouts")
    ap.add_argument("runs")
    ap.add_argument("-o", "--out", help="the figure (without it: only the table is printed)")
    ap.add_argument("--table")
    args = ap.parse_args()
    with h5py.File(args.layouts, "r") as f:
        V = f["V"][:]
        lay = {name: f[name]["total_bytes"][:] for name in ("renee", "fp32", "elmo_bf16", "elmo_fp8")}
        D, B, k = int(f.attrs["D"]), int(f.attrs["B"]), int(f.attrs["chunks"])
    runs = ec.load_dir(args.runs)
    series = collections.defaultdict(list)  # config -> [(V, predicted, measured or nan, predicted head, measured head)]
    for r in runs:
        a, m = r["attrs"], r["memory"]
        pred = float(m["predicted_peak_bytes"])
        meas = float(m.get("measured_peak_bytes", np.nan)) if ec.status(r) == "ok" else np.nan
        rss = float(m.get("measured_rss_growth_bytes", np.nan)) if ec.status(r) == "ok" else np.nan
        series[config_name(a)].append((int(a["num_labels"]), pred, meas, head_bytes(m, "predicted_"),
                                       float(m.get("predicted_encoder_bytes", 0)), rss))
    fig, axes = plt.subplots(1, 2, figsize=(14, 5.5))
    ax = axes[0]
    styles = {"renee": ("black", "Renee (fp32 master + momentum + fp16 copy + fp16 logits)"),
              "fp32": ("tab:gray", "plain fp32 (weights + gradient + fp32 logits)"),
              "elmo_bf16": ("tab:blue", f"ELMO bf16 (k={k})"), "elmo_fp8": ("tab:orange", f"ELMO fp8 fused (k={k})")}
    for name, (c, lab) in styles.items():
        ax.plot(V, lay[name] / GiB, color=c, ls="--", marker=".", label=f"{lab}: layout model, head only")
    colours = plt.cm.Dark2(np.linspace(0, 1, max(3, len(series))))
    for (name, pts), c in zip(sorted(series.items()), colours):
        pts.sort()
        v = np.array([p[0] for p in pts])
        ax.plot(v, np.array([p[1] for p in pts]) / GiB, color=c, lw=1, label=f"{name}: predicted (total)")
        meas = np.array([p[2] for p in pts])
        ok = np.isfinite(meas)
        ax.plot(v[ok], meas[ok] / GiB, color=c, ls="none", marker="o", mfc="none", ms=8, label=f"{name}: measured")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("labels")
    ax.set_ylabel("peak memory (GiB)")
    ax.set_title(f"peak training memory vs labels (D={D}, B={B})")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=6.5, loc="upper left")
    ax = axes[1]
    for name in ("fp32", "elmo_bf16", "elmo_fp8"):
        ax.plot(V, lay["renee"] / lay[name], color=styles[name][0], marker="o", label=f"Renee / {name} (head only)")
    for enc in (2.0, 4.0):
        ax.plot(V, (lay["renee"] + enc * GiB) / (lay["elmo_fp8"] + enc * GiB), color="tab:orange", ls=":",
                label=f"Renee / ELMO fp8 with {enc:.0f} GiB encoder on both")
    for lab, r in PAPER.items():
        x = {"3M": 2.8e6, "8.6M": 8.6e6, "18M": 18e6}[lab]
        ax.plot([x], [r], "k*", ms=12)
        ax.annotate(f"paper {r:.0f}x", (x, r), textcoords="offset points", xytext=(5, -12), fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("labels")
    ax.set_ylabel("memory ratio vs Renee")
    ax.set_title("ratios (layout models) vs ELMO's reported 6x / 11x / 13x")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    lines = ["| labels | Renee | fp32 | ELMO bf16 | ELMO fp8 | Renee/bf16 | Renee/fp8 |", "|---|---|---|---|---|---|---|"]
    for i, v in enumerate(V):
        lines.append(f"| {v:,} | " + " | ".join(f"{lay[n][i] / GiB:.2f}" for n in ("renee", "fp32", "elmo_bf16", "elmo_fp8"))
                     + f" | {lay['renee'][i] / lay['elmo_bf16'][i]:.1f}x | {lay['renee'][i] / lay['elmo_fp8'][i]:.1f}x |")
    lines.append("")
    lines.append("| configuration | labels | predicted peak (GiB) | measured peak (GiB) | measured/predicted "
                 "| RSS growth (GiB) | RSS/measured | head part (GiB) | encoder (GiB) |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for name, pts in sorted(series.items()):
        for v, p, mm, hd, enc, rss in sorted(pts):
            counted = f"{mm / GiB:.3f} | {mm / p:.4f}" if np.isfinite(mm) else "(not run) | "
            metered = f"{rss / GiB:.3f} | {rss / mm:.4f}" if np.isfinite(rss) and np.isfinite(mm) else " | "
            lines.append(f"| {name} | {v:,} | {p / GiB:.3f} | {counted} | {metered} | {hd / GiB:.3f} | {enc / GiB:.3f} |")
    lines.append("")
    lines.append("RSS growth minus the counted peak, per configuration, over its measured label counts (MiB):")
    lines.append("")
    for name, pts in sorted(series.items()):
        gaps = [(rss - mm) / 2**20 for _, _, mm, _, _, rss in pts if np.isfinite(rss) and np.isfinite(mm)]
        if gaps:
            lines.append(f"- {name}: {min(gaps):.1f} to {max(gaps):.1f} over {len(gaps)} runs")
    ec.save_figure_and_table(fig, args.out, lines, args.table)


if __name__ == "__main__":
    main()
