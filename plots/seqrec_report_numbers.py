#!/usr/bin/env python3
"""The derived figures quoted in the prose of results/seqrec-cpu.md (standard errors, differences, ranges,
same-code ratios of two runs of this code), computed from the committed run files, so that each can be
checked against its source. Prints one labelled line per figure (the document's `derived` block).

    python3 plots/seqrec_report_numbers.py [RESULTS_DIR]     (default results/seqrec)

Standard errors are sqrt(p(1-p)/n) over the run's n test users. Published figures (P5's Table 3) appear only
as differences, counted in our standard errors, never as a divisor.
"""
import math
import os
import sys

import h5py
import numpy as np

P5_BEAUTY_HR10 = 0.0605  # P5's Table 3, SASRec, Beauty (../shared/references.md)


def load(root, name):
    with h5py.File(os.path.join(root, name + ".h5"), "r") as f:
        return {int(e["epoch"]): e for e in f["epochs"][:]}, {k: f.attrs[k] for k in f.attrs}, (
            f["steps"][:] if "steps" in f else None)


def three_figures(v):
    """Three significant figures, whole numbers from 100 up (8,428 / 285 / 65.9 / 11.0 / 9.85)."""
    return f"{v:,.0f}" if v >= 100 else f"{v:.{2 - int(math.floor(math.log10(v)))}f}"


def se(p, n):
    return math.sqrt(p * (1 - p) / n)


def hr(rows, epoch, col="test_hr_at_10"):
    return float(rows[epoch][col])


def evaluated(rows, lo, hi, col):
    return [float(rows[e][col]) for e in sorted(rows) if lo <= e <= hi and not math.isnan(float(rows[e][col]))]


def section3(root):
    print("\n## Section 3: Beauty, Toys, Sports (leave-one-out)")
    rows, a, steps = load(root, "beauty_loo_fused_meanpos_s0")
    at = {int(s["step"]): float(s["loss"]) for s in steps}
    print("beauty_loo_fused_meanpos_s0 per-position train loss at steps 1 / 88 / 176 / 264 / 352 / 440 / 528 / 704: "
          + " / ".join(three_figures(at[s]) for s in (1, 88, 176, 264, 352, 440, 528, 704)))
    e20, _, _ = load(root, "beauty_loo_sampled_e20_s0")
    print(f"beauty_loo_sampled_e20_s0 dev HR@10 epoch 15 -> 20: {hr(e20, 15, 'dev_hr_at_10'):.4f} -> "
          f"{hr(e20, 20, 'dev_hr_at_10'):.4f} (+{hr(e20, 20, 'dev_hr_at_10') - hr(e20, 15, 'dev_hr_at_10'):.3f}); "
          f"dev-to-test ratio at epoch 20: {hr(e20, 20) / hr(e20, 20, 'dev_hr_at_10'):.2f}")
    for ds in ("toys", "sports"):
        bias, ab, _ = load(root, f"{ds}_loo_fused_itembias_s0")
        samp, _, _ = load(root, f"{ds}_loo_sampled_s0")
        last = max(e for e in samp if e in bias and not math.isnan(hr(samp, e)))
        p, n = hr(bias, last), int(ab["eval_users"])
        print(f"{ds}: at epoch {last}, fused with the item bias {p:.4f} / sampled {hr(samp, last):.4f} = "
              f"{p / hr(samp, last):.1f}× (same code, same epochs); its SE {se(p, n):.4f} over {n:,} users")
    rows, a, _ = load(root, "beauty_loo_fused_nobias_long_s0")
    early = [e for e in sorted(rows) if e <= 7]
    loss = [float(rows[e]["train_loss"]) for e in early if e >= 4]
    print(f"beauty_loo_fused_nobias_long_s0 epochs 4-7 train loss {1e4 * min(loss):.1f}-{1e4 * max(loss):.1f}·10⁻⁴ per element; "
          f"test HR@10 epochs 1-7 {min(evaluated(rows, 1, 7, 'test_hr_at_10')):.4f}-"
          f"{max(evaluated(rows, 1, 7, 'test_hr_at_10')):.4f}; epoch 22 test HR@10 / popularity = "
          f"{hr(rows, 22) / float(a['popularity_test_hr_at_10']):.1f}×; dev-to-test ratio at epoch 22 "
          f"{hr(rows, 22) / hr(rows, 22, 'dev_hr_at_10'):.2f}")


def converged_one_negative(root):
    print("\n## Section 4, last part: trained with early stopping (issue 29)")
    rows, a, _ = load(root, "beauty_loo_sampled_B128_patience20_s0")
    n = int(a["eval_users"])
    best = hr(rows, 54)
    print(f"beauty_loo_sampled_B128_patience20_s0: epochs 20-64 dev HR@10 {min(evaluated(rows, 20, 64, 'dev_hr_at_10')):.3f}-"
          f"{max(evaluated(rows, 20, 64, 'dev_hr_at_10')):.3f}, test {min(evaluated(rows, 20, 64, 'test_hr_at_10')):.3f}-"
          f"{max(evaluated(rows, 20, 64, 'test_hr_at_10')):.3f}; train loss {float(rows[20]['train_loss']):.3f} -> "
          f"{float(rows[64]['train_loss']):.3f}; dev-to-test ratio at epoch 54 {best / hr(rows, 54, 'dev_hr_at_10'):.2f}; "
          f"epoch 20 vs 54 test HR@10 {abs(best - hr(rows, 20)):.4f} apart")
    print(f"  against P5's {P5_BEAUTY_HR10}: {best - P5_BEAUTY_HR10:+.4f} ({100 * (best / P5_BEAUTY_HR10 - 1):+.0f} %), "
          f"{abs(best - P5_BEAUTY_HR10) / se(P5_BEAUTY_HR10, n):.0f} standard errors of the published figure "
          f"({se(P5_BEAUTY_HR10, n):.4f} at n = {n:,})")
    rows, a, _ = load(root, "beauty_loo_fused_nobias_plateau_cont2_s0")
    for e in (28, 32, 62):
        p = hr(rows, e)
        print(f"beauty_loo_fused_nobias_plateau_cont2_s0 epoch {e}: test HR@10 {p:.4f} ± {se(p, n):.4f}; against P5's "
              f"{P5_BEAUTY_HR10}: {p - P5_BEAUTY_HR10:+.4f}, {(p - P5_BEAUTY_HR10) / se(p, n):+.1f} standard errors")
    dev = lambda e: hr(rows, e, "dev_hr_at_10")
    print(f"  dev HR@10 epochs 54 -> 62: {dev(54):.4f} -> {dev(62):.4f} ({dev(62) - dev(54):+.4f}); epochs 28 -> 32: "
          f"{dev(28):.4f} -> {dev(32):.4f} ({dev(32) - dev(28):+.4f}); dev-to-test ratio at epoch 24 {hr(rows, 24) / dev(24):.2f}")


GIB = 2.0**30


def memory(root):
    print("## Sections 1 and 1b: memory (GiB unless said)")
    over = []
    for v in ("dense", "chunked", "fused"):
        with h5py.File(os.path.join(root, "table3_scaled", f"yambda_{v}_s0.h5"), "r") as f:
            over.append((float(f.attrs["rss_peak_bytes"]) - float(f["memory"].attrs["measured_total_bytes"])) / GIB)
    print(f"V = 87,695 runs (table3_scaled): RSS peak above the count {min(over):.2f}-{max(over):.2f}")
    with h5py.File(os.path.join(root, "table3_B8_N256_fused.h5"), "r") as f:
        m = f["memory"].attrs
        tables = sum(float(m[f"measured_{x}_bytes"]) for x in ("parameters", "gradients", "optimizer_state")) / GIB
        print(f"full catalogue B 8, N 256, fused, one process: parameters + gradients + AdamW state {tables:.1f} of "
              f"{float(m['measured_total_bytes']) / GIB:.1f}")
    with h5py.File(os.path.join(root, "table3_dp", "dense_B2_N256.h5"), "r") as f:
        m = f["memory"].attrs
        print(f"dense B 2, N 256 (one process): loss workspace {float(m['measured_loss_workspace_bytes']) / 2**20:,.1f} MiB; "
              f"RSS peak above the count {(float(f.attrs['rss_peak_bytes']) - float(m['measured_total_bytes'])) / GIB:.2f}; "
              f"data set {float(f.attrs['interactions']) / 1e6:.1f} M interactions")
    over, speed = [], []
    for cell in sorted(os.listdir(os.path.join(root, "table3_dp"))):
        if not cell.startswith("N"):
            continue
        step = {}
        for v in ("chunked", "fused"):
            with h5py.File(os.path.join(root, "table3_dp", cell, f"yambda_{v}_s0.h5"), "r") as f:
                r = f["ranks"][:]
                over += list((r["rss_peak_bytes"] - r["measured_bytes"]) / GIB)
                step[v] = float(np.median(f["steps"]["step_s"]))
                if cell == "N256_Blocal8" and v == "fused":
                    m = f["memory"].attrs
                    kept = sum(float(m[f"measured_{x}_bytes"]) for x in
                               ("parameters", "gradients", "optimizer_state", "loss_outputs")) / GIB
                    print(f"data parallel, 2 ranks, B_local 8, N 256, fused: parameters + gradients + AdamW state + loss "
                          f"outputs {kept:.1f} of {float(m['measured_total_bytes']) / GIB:.1f} per rank")
        speed.append(step["chunked"] / step["fused"])
    print(f"data parallel, every cell and rank: RSS peak above the count {min(over):.2f}-{max(over):.2f}; chunked / fused "
          f"median step seconds {min(speed):.1f}-{max(speed):.1f}")


def main(argv):
    root = argv[1] if len(argv) > 1 else "results/seqrec"
    try:
        memory(root)
        section3(root)
        converged_one_negative(root)
    except (OSError, KeyError) as e:
        print(f"seqrec_report_numbers: {root}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
