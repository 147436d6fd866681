#!/usr/bin/env python3
"""Figures of the SASRec runs (results/seqrec-cpu.md), from `lobench train-seqrec` run files.

    python3 plots/seqrec_figures.py memory results/seqrec/table3_*.h5 -o results/seqrec/table3_memory.png
    python3 plots/seqrec_figures.py parity results/seqrec/lastfm_L8_*_s*.h5 -o results/seqrec/lastfm_parity.png
    python3 plots/seqrec_figures.py curves results/seqrec/beauty_loo_*.h5 --published 0.0605 -o results/seqrec/beauty_curves.png

`memory`: per run, the peak memory by part (parameters, gradients, optimizer state, activations, loss
workspace, loss outputs), predicted beside measured (GiB, stacked); a run recorded as skipped (OOM
predicted) shows its prediction only, hatched, with the limit it exceeded in its label.
`parity`: per seed, dense's training loss per step with the other variants' losses as markers on it
(top), each variant's largest relative difference from dense per step (middle), and test Hit@8 per
evaluated epoch with the variants side by side (bottom): identical math gives markers on the lines and
differences at rounding level.
`curves`: test HR@10 (L = 1) or Hit@8 (L > 1) per evaluated epoch, one line
per run file (its name), or per step with --x steps; a run with --early-stop has its best dev epoch
starred; the popularity baseline of each dataset dashed and, with --published, the published figure
dotted with a band of one standard error sqrt(p(1-p)/n) at the runs' test-set size n.
"""
import argparse
import collections
import os
import re

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

# gradient_sums: data-parallel runs' and micro-batched runs' partial sums and receive buffer (absent in older files).
PARTS = ("parameters", "gradients", "optimizer_state", "activations", "loss_workspace", "loss_outputs", "gradient_sums")


def attr(f, name, default=""):
    v = f.attrs.get(name, default)
    return v.decode() if isinstance(v, bytes) else v


def memory(paths, out):
    runs = []
    for p in paths:
        with h5py.File(p, "r") as f:
            m = dict(f["memory"].attrs)
            ranks = int(f.attrs.get("ranks", 1))
            # Data-parallel: the per-rank batch (what a rank holds), as the paper's B_local.
            batch = f"B_local {int(f.attrs['B']) // ranks}" if ranks > 1 else f"B {int(f.attrs['B'])}"
            label = f"{attr(f, 'variant', os.path.basename(p))}\n{batch}, N {int(f.attrs['N'])}"
            if ranks > 1:
                label += f"\n(per rank of {ranks})"
            status = attr(f, "status")
            runs.append((label, status, m, int(f.attrs["V"]), (int(f.attrs["B"]), int(f.attrs["N"]))))
    runs.sort(key=lambda r: (r[4], r[0]))
    fig, ax = plt.subplots(figsize=(max(8, 1.6 * len(runs)), 5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    x = np.arange(len(runs))
    for kind, dx, hatch_ok in (("predicted", -0.2, ""), ("measured", 0.2, "")):
        bottom = np.zeros(len(runs))
        for i, part in enumerate(PARTS):
            vals = np.array([r[2].get(f"{kind}_{part}_bytes", 0 if part == "gradient_sums" else np.nan) / 2**30
                             for r in runs], dtype=float)
            hatch = ["//" if (r[1] != "ok" and kind == "predicted") else hatch_ok for r in runs]
            bars = ax.bar(x + dx, np.nan_to_num(vals), 0.38, bottom=bottom, color=colors[i % len(colors)],
                          label=part.replace("_", " ") if kind == "measured" else None,
                          alpha=1.0 if kind == "measured" else 0.55, edgecolor="black", linewidth=0.3)
            for b, h in zip(bars, hatch):
                b.set_hatch(h)
            bottom += np.nan_to_num(vals)
        for xi, total, r in zip(x, bottom, runs):
            if kind == "measured" and r[1] != "ok":
                ax.text(xi + dx, 0.3, "not run\n(OOM predicted)", ha="center", va="bottom", fontsize=7, rotation=90)
    ax.set_xticks(x)
    ax.set_xticklabels([r[0] for r in runs], fontsize=8)
    ax.set_ylabel("peak memory (GiB)")
    ax.set_title(f"SASRec training step, V = {runs[0][3]:,}: predicted (left, light) and measured (right) by part")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110, bbox_inches="tight")
    print(f"wrote {out}")


PARITY_REFERENCE = "dense"  # the variant the others are compared with (the logits materialised)
PARITY_MARKERS = "s^vDo"  # the other variants, in name order
PARITY_LINESTYLES = ("-", "--", ":", "-.")


def parity_figure(paths):
    """The parity figure (a matplotlib Figure): one colour per seed. Top: the reference variant's training
    loss per step, a line per seed, with the other variants' losses as markers on it (at staggered steps,
    so that one never covers another). Middle: each other variant's largest relative difference from the
    reference over the seeds, per step: what "on top of each other" means in numbers. Bottom: test Hit@8
    per evaluated epoch, the variants side by side (dodged around each epoch)."""
    runs = collections.defaultdict(dict)  # variant -> seed -> (steps, epochs)
    for p in paths:
        with h5py.File(p, "r") as f:
            seed = int(f.attrs.get("seed", 0))
            runs[attr(f, "variant", re.sub(r".*_(\w+)_s\d+\.h5$", r"\1", p))][seed] = (f["steps"][:], f["epochs"][:])
    ref = PARITY_REFERENCE if PARITY_REFERENCE in runs else sorted(runs)[0]
    others = [v for v in sorted(runs) if v != ref]
    marker = {v: PARITY_MARKERS[i % len(PARITY_MARKERS)] for i, v in enumerate(others)}
    seeds = sorted({s for by_seed in runs.values() for s in by_seed})
    color = {s: f"C{i}" for i, s in enumerate(seeds)}
    fig, (top, middle, bottom) = plt.subplots(3, 1, figsize=(10, 10), gridspec_kw={"height_ratios": (3, 2, 3)})
    for seed, (steps, _) in sorted(runs[ref].items()):
        top.plot(steps["step"], steps["loss"], "-", lw=1.5, color=color[seed])
    rels = {}
    for i, v in enumerate(others):
        for seed, (steps, _) in sorted(runs[v].items()):
            every = max(1, len(steps) // 12)
            top.plot(steps["step"], steps["loss"], linestyle="none", marker=marker[v], markerfacecolor="none",
                     color=color[seed], markersize=6, markevery=(every * (i + 1) // (len(others) + 1), every))
        rel = rels[v] = relative_difference(runs[ref], runs[v])
        if rel is not None:
            every = max(1, len(rel[0]) // 12)
            middle.plot(rel[0], np.maximum(rel[1], 1e-12), marker=marker[v], markerfacecolor="none", color="k",
                        linestyle=PARITY_LINESTYLES[i % len(PARITY_LINESTYLES)], lw=0.8,
                        markevery=(every * (i + 1) // (len(others) + 1), every))
    top.set(xlabel="step", ylabel="training loss (mean BCE over positions and V)", yscale="log",
            title=f"Training loss per step: {ref} as lines, {', '.join(others)} as markers on them (the seeds' "
                  f"curves nearly coincide)")
    drawn = [r for r in rels.values() if r is not None]
    same = len(drawn) > 1 and all(np.array_equal(drawn[0][1], r[1]) for r in drawn[1:])
    middle.set(xlabel="step", ylabel=f"|loss - {ref}| / {ref}\n(largest over the seeds)", yscale="log",
               title=f"Relative difference of each variant's loss from {ref}'s (floored at 1e-12: 0 is drawn there)"
                     + (f"\n{' and '.join(others)} are equal to each other at every step: one line" if same else ""))
    width = 0.6 / max(1, len(runs))
    for vi, v in enumerate([ref] + others):
        for seed, (_, epochs) in sorted(runs[v].items()):
            ok = np.isfinite(epochs["test_hit_at_8"])
            x = epochs["epoch"][ok] + (vi - (len(runs) - 1) / 2) * width
            bottom.plot(x, epochs["test_hit_at_8"][ok], linestyle="-" if v == ref else "none", color=color[seed],
                        lw=1, marker="o" if v == ref else marker[v], markerfacecolor="none", markersize=6)
    bottom.set(xlabel=f"epoch (the variants side by side: {', '.join([ref] + others)} from left to right)",
               ylabel="test Hit@8", title="Test Hit@8 per evaluated epoch")
    handles = [plt.Line2D([], [], color=color[s], lw=1.5, label=f"seed {s}") for s in seeds]
    handles += [plt.Line2D([], [], color="k", lw=1.5, marker="o", markerfacecolor="none", label=f"{ref} (line)")]
    handles += [plt.Line2D([], [], color="k", linestyle=PARITY_LINESTYLES[i % len(PARITY_LINESTYLES)], lw=0.8,
                           marker=marker[v], markerfacecolor="none", label=f"{v} (markers; middle: line)")
                for i, v in enumerate(others)]
    for a in (top, middle, bottom):
        a.grid(True, alpha=0.3)
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.99, 0.97), fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def relative_difference(ref_runs, runs):
    """(steps, the largest |loss - ref| / ref over the seeds both have), or None without a common seed."""
    common = sorted(set(ref_runs) & set(runs))
    if not common:
        return None
    n = min(min(len(ref_runs[s][0]), len(runs[s][0])) for s in common)
    ref = np.array([ref_runs[s][0]["loss"][:n] for s in common], dtype=float)
    other = np.array([runs[s][0]["loss"][:n] for s in common], dtype=float)
    return ref_runs[common[0]][0]["step"][:n], np.max(np.abs(other - ref) / np.abs(ref), axis=0)


def parity(paths, out):
    parity_figure(paths).savefig(out, dpi=110, bbox_inches="tight")
    print(f"wrote {out}")


def curves(paths, out, published=None, x_axis="epoch"):
    fig, ax = plt.subplots(figsize=(10, 5.5))
    baselines = {}
    metric_name = "HR@10"
    eval_users = None
    for i, p in enumerate(paths):
        with h5py.File(p, "r") as f:
            L = int(f.attrs.get("L", 1))
            metric, metric_name = ("test_hr_at_10", "HR@10") if L == 1 else ("test_hit_at_8", "Hit@8")
            e = f["epochs"][:]
            ok = np.isfinite(e[metric])
            xs = e["epoch" if x_axis == "epoch" else "steps"]
            name = os.path.basename(p).removesuffix(".h5")
            ax.plot(xs[ok], e[metric][ok], "-o", ms=3, color=f"C{i % 10}", label=name)
            # --early-stop runs: test at the best dev epoch, starred.
            best = int(f.attrs.get("best_dev_epoch", 0))
            if best > 0 and L == 1:
                row = e[e["epoch"] == best]
                if len(row):
                    ax.plot(row["epoch" if x_axis == "epoch" else "steps"], row[metric], "*", ms=14,
                            color=f"C{i % 10}", markeredgecolor="black",
                            label=f"{name}: best dev epoch {best}, test {float(row[metric][0]):.4f}")
            pop = float(f.attrs.get("popularity_" + metric, np.nan))
            baselines.setdefault(os.path.basename(attr(f, "dataset", "?")), pop)
            eval_users = int(f.attrs.get("eval_users", 0)) or eval_users
    for j, (dataset, pop) in enumerate(sorted(baselines.items())):
        if np.isfinite(pop):
            ax.axhline(pop, ls="--", lw=1, color="grey", label=f"popularity, {dataset}: {pop:.4f}")
    if published is not None:
        ax.axhline(published, ls=":", lw=1.5, color="black", label=f"published: {published:.4f}")
        if eval_users:  # its standard error at our test-set size, sqrt(p(1-p)/n)
            se = (published * (1 - published) / eval_users) ** 0.5
            ax.axhspan(published - se, published + se, color="black", alpha=0.08,
                       label=f"published ± 1 SE ({se:.4f}, n = {eval_users:,})")
    ax.set_xlabel("epoch (runs with other batch sizes take other numbers of steps per epoch)" if x_axis == "epoch"
                  else "training steps")
    ax.set_ylabel(f"test {metric_name}")
    ax.set_title(f"Test {metric_name} per evaluated epoch")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    fig.savefig(out, dpi=110, bbox_inches="tight")
    print(f"wrote {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("figure", choices=("memory", "parity", "curves"))
    ap.add_argument("runs", nargs="+")
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--published", type=float, help="curves: a published figure to draw beside the runs (with its "
                    "standard error at the runs' test-set size)")
    ap.add_argument("--x", choices=("epoch", "steps"), default="epoch",
                    help="curves: the horizontal axis (steps: runs of different batch sizes side by side)")
    args = ap.parse_args()
    if args.figure == "curves":
        curves(args.runs, args.out, args.published, args.x)
    else:
        (memory if args.figure == "memory" else parity)(args.runs, args.out)


if __name__ == "__main__":
    main()
