#!/usr/bin/env python3
"""The derived figures quoted in results/elmo-cpu.md (differences, ratios, percentages, ranges), computed
from the committed run files, so that each can be checked against its source. Prints Markdown-ish text.

Usage: python3 plots/elmo_report_numbers.py [RESULTS_DIR]   (default results/elmo)
"""
import collections
import glob
import os
import sys

import h5py
import numpy as np

import elmo_common as ec


def runs(pattern):
    return [ec.load_run(p) for p in sorted(glob.glob(pattern))]


def last_mean(rs, col, scale=1.0):
    return ec.mean_std([scale * ec.last(r, col) for r in rs])


def exp1(root):
    print("## Experiment 1 (mean over seeds, last epoch)")
    for ds in ("delicious", "bibtex"):
        # train-xmc names runs by canonical rounding (nearest_even) since issue 31; older runs say rne
        group = lambda lab: runs(f"{root}/exp1_{ds}/{ds}_{lab}_fused_k1_s*.h5") + (
            runs(f"{root}/exp1_{ds}/{ds}_{lab.replace('_rne', '_nearest_even')}_fused_k1_s*.h5") if lab.endswith("_rne") else [])
        ref = group("fp32_rne")
        ref_tl = last_mean(ref, "train_loss")[0]
        ref_p = {c: last_mean(ref, c, 100)[0] for c in ("p_at_1", "p_at_3", "p_at_5", "psp_at_5")}
        for lab in ("bf16_stochastic", "bf16_rne", "e4m3fn_stochastic", "e4m3fn_elmo_sr", "e4m3fn_rne"):
            g = group(lab)
            tl = last_mean(g, "train_loss")[0]
            diffs = ", ".join(f"{c} {last_mean(g, c, 100)[0] - ref_p[c]:+.2f}" for c in ref_p)
            w = np.mean([ec.last(r, "weight_mean_abs") for r in g])
            print(f"{ds} {lab} ({len(g)} seeds): train loss {tl:.3f} vs fp32 {ref_tl:.3f} = {100 * (tl / ref_tl - 1):+.2f} %; "
                  f"points vs fp32: {diffs}; mean |w| {w:.3f}")
        w = np.mean([ec.last(r, "weight_mean_abs") for r in ref])
        labels = int(ref[0]["attrs"]["num_labels"])
        print(f"{ds} fp32: mean |w| {w:.3f}; last-epoch train loss per label {ref_tl / labels:.3f} nats ({labels} labels)")
        for lab in ("fp32_rne", "e4m3fn_rne"):
            g = group(lab)
            curve = np.mean([100 * r["epochs"]["p_at_1"] for r in g], axis=0)
            ep = g[0]["epochs"]["epoch"]
            ok = np.isfinite(curve)
            print(f"{ds} {lab}: mean test P@1 by epoch " + ", ".join(f"{int(e)}: {p:.2f}" for e, p in zip(ep[ok], curve[ok])))


def exp2(root):
    print("\n## Experiment 2 (Delicious, 10 epochs): cells against fp32; resolved = the seed ranges do not overlap and "
          "|delta| >= 3 standard errors")
    ref = [r for r in runs(f"{root}/exp2_fp32/*.h5") if ec.status(r) == "ok"]
    for col, scale in (("p_at_1", 100.0), ("train_loss", 1.0)):
        rv = np.array([scale * ec.last(r, col) for r in ref])
        print(f"fp32 {col}: {rv.mean():.3f} ± {rv.std(ddof=1):.3f} (min {rv.min():.3f}, max {rv.max():.3f}, {len(rv)} seeds)")
    cells = collections.defaultdict(list)
    for r in runs(f"{root}/exp2_exmy/*.h5"):
        a = r["attrs"]
        cells[(a["clf_rounding"], int(a["clf_exponent_bits"]), int(a["clf_mantissa_bits"]))].append(r)
    for col, scale in (("p_at_1", 100.0), ("train_loss", 1.0)):
        rv = np.array([scale * ec.last(r, col) for r in ref])
        print(f"\n{col}: rounding e m | seeds | mean ± std | delta vs fp32 | SE | resolved")
        for key in sorted(cells):
            rs = cells[key]
            div = [r for r in rs if ec.last(r, "weight_non_finite") > 0 or not np.isfinite(ec.last(r, "train_loss"))]
            v = np.array([scale * ec.last(r, col) for r in rs if r not in div])
            if v.size == 0:
                print(f"{key[0]:12s} e{key[1]}m{key[2]} | {len(rs)} | diverged ({len(div)}/{len(rs)})")
                continue
            d = v.mean() - rv.mean()
            se = np.sqrt((v.var(ddof=1) / v.size if v.size > 1 else 0) + rv.var(ddof=1) / rv.size)
            apart = v.min() > rv.max() or v.max() < rv.min()
            res = ("yes" if apart and abs(d) >= 3 * se else "no") if v.size > 1 else "n/a (1 seed)"
            spread = f" ± {v.std(ddof=1):.2f} ({v.min():.2f}–{v.max():.2f})" if v.size > 1 else ""
            print(f"{key[0]:12s} e{key[1]}m{key[2]} | {len(rs)}{' (' + str(len(div)) + ' div.)' if div else ''} | "
                  f"{v.mean():.2f}{spread} | {d:+.2f} ({100 * d / rv.mean():+.1f} %) | {se:.2f} | {res}")


def verdict(v, rv):
    """Resolved: the two seed ranges do not overlap and |delta| >= 3 standard errors (needs 2+ seeds each)."""
    v, rv = np.asarray(v, dtype=float), np.asarray(rv, dtype=float)
    if v.size < 2 or rv.size < 2:
        return "n/a (1 seed)"
    se = np.sqrt(v.var(ddof=1) / v.size + rv.var(ddof=1) / rv.size)
    apart = v.min() > rv.max() or v.max() < rv.min()
    return "yes" if apart and abs(v.mean() - rv.mean()) >= 3 * se else "no"


def exp2_variants(root):
    print("\n## Experiment 2 variants (flushed subnormals, saturating overflow) against the subnormals-on cell")
    diverged = lambda r: ec.last(r, "weight_non_finite") > 0 or not np.isfinite(ec.last(r, "train_loss"))
    key = lambda r: (r["attrs"]["clf_rounding"], int(r["attrs"]["clf_exponent_bits"]), int(r["attrs"]["clf_mantissa_bits"]))
    on = collections.defaultdict(list)
    for r in runs(f"{root}/exp2_exmy/*.h5"):
        on[key(r)].append(r)
    for folder in ("exp2_exmy_ftz", "exp2_exmy_sat"):
        cells = collections.defaultdict(list)
        for r in runs(f"{root}/{folder}/*.h5"):
            cells[(r["attrs"]["clf_format"], key(r))].append(r)
        for (fmt, k), rs in sorted(cells.items()):
            div = sum(diverged(r) for r in rs)
            out = [f"{folder} {fmt} {k[0]} ({len(rs)} seeds{', ' + str(div) + ' diverged' if div else ''})"]
            ok = [r for r in rs if not diverged(r)]
            ref = [q for q in on[k] if not diverged(q)]
            for col, scale in (("p_at_1", 100.0), ("train_loss", 1.0)):
                if not ok:
                    continue
                v = [scale * ec.last(r, col) for r in ok]
                rv = [scale * ec.last(q, col) for q in ref]
                sd = f" ± {np.std(v, ddof=1):.2f}" if len(v) > 1 else ""
                if rv:
                    out.append(f"{col} {np.mean(v):.2f}{sd} vs {np.mean(rv):.2f} (delta {np.mean(v) - np.mean(rv):+.2f}, "
                               f"resolved {verdict(v, rv)})")
                else:
                    out.append(f"{col} {np.mean(v):.2f}{sd} (subnormals-on cell diverged)")
            print("; ".join(out))


def exp3(root):
    print("\n## Experiment 3: see exp3_table.md (plots/elmo_grad_hist.py)")


def exp4(root):
    print("\n## Experiment 4: layout ratios and the label-independent term E solving (R + E) / (F + E) = reported")
    with h5py.File(f"{root}/exp4/layouts.h5", "r") as f:
        V = f["V"][:]
        tot = {k: f[k]["total_bytes"][:] / 2**30 for k in ("renee", "fp32", "elmo_bf16", "elmo_fp8")}
    for i, v in enumerate(V):
        print(f"V={int(v):,}: Renee {tot['renee'][i]:.2f}, fp32 {tot['fp32'][i]:.2f}, bf16 {tot['elmo_bf16'][i]:.2f}, "
              f"fp8 {tot['elmo_fp8'][i]:.2f} GiB; Renee/bf16 {tot['renee'][i] / tot['elmo_bf16'][i]:.2f}×, "
              f"Renee/fp8 {tot['renee'][i] / tot['elmo_fp8'][i]:.2f}×")
    for v, ratio in ((2812281, 6), (8623847, 11), (18000000, 13)):
        i = int(np.nonzero(V == v)[0][0])
        R, F = tot["renee"][i], tot["elmo_fp8"][i]
        print(f"V={v:,}: reported {ratio}× -> E = {(R - ratio * F) / (ratio - 1):.2f} GiB")
    # ELMO's published absolute peaks (GiB; its memory table: Amazon-3M = 2,812,281 labels, LF-Paper2Keywords-8.6M)
    # minus our head models: what the models leave for the encoder and activations
    for v, layout, published in ((2812281, "renee", 39.7), (2812281, "elmo_fp8", 6.6), (8623847, "renee", 105.6),
                                 (8623847, "elmo_fp8", 9.02), (8623847, "fp32", 58.44), (8623847, "elmo_bf16", 18.8)):
        i = int(np.nonzero(V == v)[0][0])
        print(f"V={v:,}: {layout} published {published} - model {tot[layout][i]:.2f} = {published - tot[layout][i]:.2f} GiB")
    n = eq = 0
    for p in glob.glob(f"{root}/exp4/runs/*.h5") + glob.glob(f"{root}/exp4/chunks/*.h5"):
        m = ec.load_run(p)["memory"]
        if "measured_peak_bytes" in m:
            n += 1
            eq += int(m["measured_peak_bytes"] == m["predicted_peak_bytes"])
    print(f"measured runs: {n}, measured = predicted to the byte: {eq}")


def bench(root):
    print("\n## Step benchmark (step_bench.h5, medians)")
    with h5py.File(f"{root}/step_bench.h5", "r") as f:
        g = {k: f[k][:] for k in f}
        cfg = ec._text(f.attrs["configs"]).split(",")
    sf, sc = g["step_wall_s"] / g["fused_wall_s"], g["step_wall_s"] / g["chunked_wall_s"]
    cpu_sf, cpu_sc = g["step_cpu_s"] / g["fused_cpu_s"], g["step_cpu_s"] / g["chunked_cpu_s"]
    for i, c in enumerate(cfg):
        print(f"{c} V={int(g['V'][i])} D={int(g['D'][i])}: step/fused {sf[i]:.3f}, step/chunked {sc[i]:.3f}")
    print(f"{len(cfg)} rows: step/fused {sf.min():.3f}–{sf.max():.3f}, step/chunked {sc.min():.3f}–{sc.max():.3f}; "
          f"CPU-time ratios differ from wall by at most {max(abs(cpu_sf - sf).max(), abs(cpu_sc - sc).max()):.3f}")
    low = [i for i, c in enumerate(cfg) if not c.startswith("fp32")]
    print(f"bf16/e4m3 rows: step/fused {sf[low].min():.3f}–{sf[low].max():.3f}")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "results/elmo"
    if not os.path.isdir(root):
        sys.exit(f"{root}: not a folder")
    exp1(root)
    exp2(root)
    exp2_variants(root)
    exp3(root)
    exp4(root)
    bench(root)


if __name__ == "__main__":
    main()
