#!/usr/bin/env python3
"""The sharded step's alpha-beta model (issue 13): fit and figure.

  shard_model.py --fit results/shard     prints "alpha_us bandwidth_GBs fused_gflops dense_gflops":
      alpha, beta fitted to collectives.csv (ordered_sum at R = 2 takes 2*alpha + n*beta, least squares on
      the relative error), the per-rank rates the median of scaling.csv's R = 1, 1-thread rows.
  shard_model.py results/shard/model.csv -o results/shard/model.png
      per-rank memory against R (the 24 GiB line) and predicted step time against R.
"""
import argparse
import csv
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def fit(folder):
    rows = [r for r in read_csv(f"{folder}/collectives.csv") if r["op"] == "ordered_sum" and r["ranks"] == "2"]
    n = np.array([float(r["bytes"]) for r in rows])
    t = np.array([float(r["median_s"]) for r in rows])
    # t = 2a + n b, relative residuals: rows scaled by 1/t.
    A = np.stack([2.0 / t, n / t], axis=1)
    (a, b), *_ = np.linalg.lstsq(A, np.ones_like(t), rcond=None)
    scaling = read_csv(f"{folder}/scaling.csv")

    def rate(variant):
        g = [float(r["gflops"]) for r in scaling if r["R"] == "1" and r["threads"] == "1" and r["variant"] == variant]
        return statistics.median(g)

    print(f"{a * 1e6:.4g} {1e-9 / b:.4g} {rate('cpu/fused'):.4g} {rate('cpu/dense'):.4g}")


def plot(model_csv, out):
    rows = read_csv(model_csv)
    fig, (ax_mem, ax_t, ax_c) = plt.subplots(1, 3, figsize=(17, 5))
    styles = {"fused": "-", "dense": "--", "train_fp8_fused_sr": ":", "train_bf16_fused_sr": "-."}
    colors = {"elmo_18M_D768": "C0", "yambda_cutbce": "C1", "table2_V100k": "C2"}
    for shape in colors:
        for variant, ls in styles.items():
            sel = [r for r in rows if r["shape"] == shape and r["variant"] == variant and r["network"] == "measured_shm"]
            sel.sort(key=lambda r: int(r["R"]))
            if not sel:
                continue
            R = [int(r["R"]) for r in sel]
            ax_mem.plot(R, [int(r["rank_bytes"]) / 2**30 for r in sel], ls, color=colors[shape], label=f"{shape} {variant}")
            if variant in ("fused", "train_fp8_fused_sr"):
                for net, marker in (("measured_shm", "o"), ("assumed_ib100", "x")):
                    s2 = sorted((r for r in rows if r["shape"] == shape and r["variant"] == variant and r["network"] == net),
                                key=lambda r: int(r["R"]))
                    ax_t.plot([int(r["R"]) for r in s2], [float(r["step_s"]) for r in s2], ls, marker=marker, ms=3,
                              color=colors[shape], label=f"{shape} {variant} ({net})")
                    ax_c.plot([int(r["R"]) for r in s2], [100 * float(r["comm_share"]) for r in s2], ls, marker=marker,
                              ms=3, color=colors[shape], label=f"{shape} {variant} ({net})")
    ax_mem.axhline(24, color="k", lw=0.8)
    ax_mem.text(1.1, 26, "24 GiB per rank", fontsize=8)
    for ax in (ax_mem, ax_t, ax_c):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("ranks R (vocabulary shards)")
        ax.grid(True, which="both", lw=0.3)
    ax_mem.set_ylabel("bytes on the largest rank (GiB): working + inputs/outputs")
    ax_t.set_ylabel("predicted step time (s)")
    ax_c.set_ylabel("communication share of the step (%)")
    for ax in (ax_mem, ax_t, ax_c):
        ax.legend(fontsize=6)
    ax_mem.set_title("memory per rank (exact predicted bytes)", fontsize=10)
    ax_t.set_title("step time: measured rate + alpha-beta collectives", fontsize=10)
    ax_c.set_title("communication share", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("path", help="results folder (--fit) or model.csv")
    p.add_argument("--fit", action="store_true")
    p.add_argument("-o", "--out", default="model.png")
    a = p.parse_args()
    if a.fit:
        fit(a.path)
    else:
        plot(a.path, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
