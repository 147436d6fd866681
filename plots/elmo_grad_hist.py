#!/usr/bin/env python3
"""Experiment 3 (ELMO: ~20 % of the classifier gradients fall outside E5M2's range and ~90 % round to
zero in E4M3, so gradients stay bf16): histograms of log2 |g| over training against the ranges of E5M2 and
E4M3 (fn), for the classifier's weight gradient dW = G^T H (/grad_hist) and its logit gradient
G = sigmoid(z) - y (/logit_grad_hist), with the fractions that underflow each format.

Usage: python3 plots/elmo_grad_hist.py RUN.h5 [RUN.h5 ...] -o FIGURE.png [--table TABLE.md]
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import elmo_common as ec  # noqa: E402

# (name, smallest subnormal, smallest normal, largest finite)
FORMATS = [("E5M2", 2.0**-16, 2.0**-14, 57344.0), ("E4M3fn", 2.0**-9, 2.0**-6, 448.0)]
MIN_EXP, MAX_EXP, SUB = -48, 16, 4  # harness/train/grad_histogram.hpp


def fractions(counts):
    """counts: one histogram row (grad_histogram.hpp layout). Fractions of all elements."""
    counts = np.asarray(counts, dtype=np.int64)
    zero, tiny, octs, huge = counts[0], counts[1], counts[2:-2], counts[-2]
    total = counts.sum()

    def below(e):  # finite nonzero with |g| < 2^e
        return tiny + octs[: (e - MIN_EXP) * SUB].sum()

    return {
        "total": int(total),
        "zero": zero / total,
        # RNE: |g| <= half the smallest subnormal becomes 0 (the tie at exactly half goes to even = 0).
        "e5m2_to_zero": (zero + below(-17)) / total,
        "e5m2_below_min_subnormal": (zero + below(-16)) / total,
        "e5m2_below_min_normal": (zero + below(-14)) / total,
        "e4m3_to_zero": (zero + below(-10)) / total,
        "e4m3_below_min_subnormal": (zero + below(-9)) / total,
        "e4m3_below_min_normal": (zero + below(-6)) / total,
        "above_e4m3_max": (huge + octs[(9 - MIN_EXP) * SUB:].sum()) / total,  # |g| >= 512 (> 464 is NaN in e4m3fn)
    }


def panel(ax, hist, edges, title):
    for rows, lab, fill in ((hist[:1], "first epoch", True), (hist[-1:], "last epoch", False)):
        c = rows.sum(axis=0).astype(float)
        if c.sum() == 0:
            continue
        dens = c[2:-2] / c.sum() / np.diff(edges)  # per unit of log2 (the bins are not equally wide in log2)
        ax.stairs(dens, edges, label=f"{lab} ({int(c.sum()):,} values)", fill=fill, alpha=0.5 if fill else 1.0)
    top = ax.get_ylim()[1]
    for (fname, sub, norm, mx), colour, ytext in zip(FORMATS, ("tab:red", "tab:green"), (0.95, 0.7)):
        ax.axvspan(np.log2(sub), np.log2(mx), color=colour, alpha=0.07)
        ax.axvline(np.log2(sub), color=colour, ls="--", lw=1)
        ax.axvline(np.log2(sub) - 1, color=colour, ls=":", lw=1)
        ax.text(np.log2(sub) + 0.3, top * ytext, f"{fname} min subnormal\n(dotted: rounds to 0 below)", color=colour,
                fontsize=7, va="top")
    ax.set_xlim(-36, 12)
    ax.set_xlabel("log2 |g|")
    ax.set_ylabel("fraction per unit log2")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper left")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    ap.add_argument("-o", "--out", help="the figure (without it: only the table is printed)")
    ap.add_argument("--table")
    args = ap.parse_args()
    runs = [ec.load_run(p) for p in args.runs]
    for r in runs:
        if r["grad_hist"] is None:
            raise SystemExit(f"{r['path']}: no /grad_hist (train with --hist-every N)")
    # The figure: one row per configuration (dataset, format, rounding), its lowest seed; the tables: every run,
    # then the mean ± std over the seeds of each configuration.
    config = lambda r: (r["attrs"]["dataset"], r["attrs"]["clf_format"], r["attrs"]["clf_rounding"])
    shown = {}
    for r in sorted(runs, key=lambda r: int(r["attrs"]["seed"])):
        shown.setdefault(config(r), r)
    fig, axes = plt.subplots(len(shown), 2, figsize=(13, 3.3 * len(shown)), squeeze=False)
    for row, r in enumerate(shown.values()):
        a = r["attrs"]
        name = (f"{a['dataset']} (V={a['num_labels']}), {a['clf_format']} {a['clf_rounding']}, D={a['D']}, "
                f"B={a['batch']}, seed {a['seed']}")
        panel(axes[row][0], r["grad_hist"], r["grad_hist_edges_log2"], f"weight gradient dW = G^T H\n{name}")
        if r["logit_grad_hist"] is not None:
            panel(axes[row][1], r["logit_grad_hist"], r["grad_hist_edges_log2"], f"logit gradient G = sigmoid(z) - y\n{name}")
    lines = ["| run | gradient | epochs | elements | train loss per label (nats) | E5M2: rounds to 0 "
             "| E5M2: < min subnormal 2^-16 (below its range) | E5M2: < min normal 2^-14 "
             "| E4M3: rounds to 0 | E4M3: < min subnormal 2^-9 (below its range) | E4M3: < min normal 2^-6 | ≥ 512 |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    summary = {}  # (configuration, gradient, epochs) -> list of (loss per label, fractions)
    for r in runs:
        a = r["attrs"]
        # How confidently the negatives are separated: the mean train loss per label (over the epochs
        # histogrammed, or the last one). sigma(z) of a negative, hence its G, shrinks as this falls.
        loss_per_label = np.asarray(r["epochs"]["train_loss"], dtype=float) / float(a["num_labels"])
        for kind, h in (("dW", r["grad_hist"]), ("G", r["logit_grad_hist"])):
            if h is None:
                continue
            for sel, lab in ((slice(None), "all"), (slice(-1, None), "last")):
                f = fractions(h[sel].sum(axis=0))
                summary.setdefault((config(r), kind, lab), []).append((loss_per_label[sel].mean(), f))
                lines.append(f"| {os.path.basename(r['path'])} | {kind} | {lab} | {f['total']:,} | "
                             f"{loss_per_label[sel].mean():.4f} | {f['e5m2_to_zero']:.1%} | "
                             f"{f['e5m2_below_min_subnormal']:.1%} | {f['e5m2_below_min_normal']:.1%} | "
                             f"{f['e4m3_to_zero']:.1%} | {f['e4m3_below_min_subnormal']:.1%} | "
                             f"{f['e4m3_below_min_normal']:.1%} | {f['above_e4m3_max']:.2%} |")
    cols = [("e5m2_below_min_subnormal", "E5M2: below range"), ("e5m2_to_zero", "E5M2: rounds to 0"),
            ("e4m3_below_min_subnormal", "E4M3: below range"), ("e4m3_to_zero", "E4M3: rounds to 0"),
            ("e4m3_below_min_normal", "E4M3: < 2^-6")]
    lines += ["", "Mean ± std over seeds (%):", "",
              "| dataset | format | gradient | epochs | seeds | train loss per label (nats) | "
              + " | ".join(c[1] for c in cols) + " |", "|---|---|---|---|---|---|" + "---|" * len(cols)]

    def ms(v, digits):
        v = np.asarray(v, dtype=float)
        return f"{v.mean():.{digits}f}" + (f" ± {v.std(ddof=1):.{digits}f}" if v.size > 1 else "")

    for (cfg, kind, lab), items in summary.items():
        lines.append(f"| {cfg[0]} | {cfg[1]} {cfg[2]} | {kind} | {lab} | {len(items)} | "
                     f"{ms([x for x, _ in items], 4)} | "
                     + " | ".join(ms([100 * f[c] for _, f in items], 1) for c, _ in cols) + " |")
    ec.save_figure_and_table(fig, args.out, lines, args.table)


if __name__ == "__main__":
    main()
