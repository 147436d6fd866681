#!/usr/bin/env python3
"""Figure of a lobench run file: median time and peak working memory against V, one line per variant.

Usage: python3 plots/plot_sweep.py RUN.h5 [-o FIGURE.png]

Rows are grouped by (variant, B, N, D, L, threads); skipped points (for example "OOM predicted") are
marked with an x at the top of the axes, failed ones with a red x. Reads only the /results table
(results/SCHEMA.md).
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from lobench_results import load, text  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="lobench run file (HDF5)")
    ap.add_argument("-o", "--out", help="figure path (default: RUN with .png)")
    args = ap.parse_args()
    rows, attrs = load(args.run)
    out = args.out or args.run.rsplit(".", 1)[0] + ".png"

    groups = {}
    for r in rows:
        key = (text(r["variant"]), int(r["B"]), int(r["N"]), int(r["D"]), int(r["L"]), int(r["threads"]))
        groups.setdefault(key, []).append(r)
    several_shapes = len({k[1:] for k in groups}) > 1

    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(12, 4.8))
    for key, rs in sorted(groups.items()):
        rs = sorted(rs, key=lambda r: r["V"])
        label = key[0] if not several_shapes else f"{key[0]} B={key[1]} N={key[2]} D={key[3]}"
        ok = [r for r in rs if text(r["status"]) == "ok"]
        skipped = [r for r in rs if text(r["status"]) == "skipped"]
        failed = [r for r in rs if text(r["status"]) == "failed"]
        V = np.array([r["V"] for r in ok])
        (line,) = ax_t.plot(V, [r["time_median_s"] * 1e3 for r in ok], "o-", label=label)
        ax_m.plot(V, [r["peak_bytes"] / 2**20 for r in ok], "o-", color=line.get_color(), label=label)
        ax_m.plot(V, [r["predicted_bytes"] / 2**20 for r in ok], ":", color=line.get_color(), alpha=0.6,
                  label=f"{label} (predicted)")
        for ax in (ax_t, ax_m):
            for r in skipped:
                ax.plot([r["V"]], [1], marker="x", color=line.get_color(), markersize=10, transform=ax.get_xaxis_transform(),
                        clip_on=False, linestyle="none")
            for r in failed:
                ax.plot([r["V"]], [1], marker="x", color="red", markersize=10, transform=ax.get_xaxis_transform(),
                        clip_on=False, linestyle="none")
        if skipped:
            ax_t.annotate("skipped: " + text(skipped[0]["reason"])[:40], (skipped[0]["V"], 0.97),
                          xycoords=("data", "axes fraction"), fontsize=7, ha="right", va="top", color=line.get_color())

    for ax, ylabel in ((ax_t, "median time per step (ms)"), (ax_m, "peak working memory (MiB)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("vocabulary size V")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    commit = text(attrs.get("git_commit", "?"))[:10]
    gemm = attrs.get("gemm_gflops", float("nan"))
    fig.suptitle(f"lobench {args.run}: loss + dA + dE step (x at top: skipped)\n"
                 f"{text(attrs.get('cpu_model', '?'))}, SGEMM {gemm:.0f} GFLOP/s, commit {commit}", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
