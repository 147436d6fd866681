#!/usr/bin/env python3
"""Figures of the SASRec runs (results/seqrec-cpu.md), from `lobench train-seqrec` run files.

    python3 plots/seqrec_figures.py memory results/seqrec/table3_*.h5 -o results/seqrec/table3_memory.png
    python3 plots/seqrec_figures.py parity results/seqrec/lastfm_L8_*_s*.h5 -o results/seqrec/lastfm_parity.png
    python3 plots/seqrec_figures.py curves results/seqrec/beauty_loo_*.h5 --published 0.0605 -o results/seqrec/beauty_curves.png

`memory`: per run, the peak memory by part (parameters, gradients, optimizer state, activations, loss
workspace, loss outputs), predicted beside measured (GiB, stacked); a run recorded as skipped (OOM
predicted) shows its prediction only, hatched, with the limit it exceeded in its label.
`parity`: per variant and seed, the training loss per step (top) and test Hit@8 per evaluated epoch
(bottom): identical math gives curves on top of each other.
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


def parity(paths, out):
    runs = collections.defaultdict(dict)  # variant -> seed -> (steps, epochs)
    for p in paths:
        with h5py.File(p, "r") as f:
            seed = int(f.attrs.get("seed", 0))
            runs[attr(f, "variant", re.sub(r".*_(\w+)_s\d+\.h5$", r"\1", p))][seed] = (f["steps"][:], f["epochs"][:])
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 7), sharex=False)
    styles = {"dense": ("-", 2.5), "chunked": ("--", 1.5), "fused": (":", 1.5)}
    for vi, (variant, seeds) in enumerate(sorted(runs.items())):
        ls, lw = styles.get(variant, ("-.", 1))
        for si, (seed, (steps, epochs)) in enumerate(sorted(seeds.items())):
            color = f"C{si}"
            top.plot(steps["step"], steps["loss"], ls, lw=lw, color=color, label=f"{variant}, seed {seed}")
            ok = np.isfinite(epochs["test_hit_at_8"])
            bottom.plot(epochs["epoch"][ok], epochs["test_hit_at_8"][ok], ls, lw=lw, marker="o", color=color,
                        label=f"{variant}, seed {seed}")
    top.set_xlabel("step")
    top.set_ylabel("training loss (mean BCE over positions and V)")
    top.set_yscale("log")
    top.set_title("Training loss per step: one colour per seed, one line style per loss variant")
    bottom.set_xlabel("epoch")
    bottom.set_ylabel("test Hit@8")
    bottom.set_title("Test Hit@8 per evaluated epoch")
    for a in (top, bottom):
        a.grid(True, alpha=0.3)
        a.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    fig.savefig(out, dpi=110, bbox_inches="tight")
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
