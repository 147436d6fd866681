#!/usr/bin/env python3
"""The one-negative SASRec baseline with S3-Rec's settings (`train-seqrec --preset s3rec`, run by
scripts/s3rec_baseline.sh; issue 38) as mean ± std over its finished seeds per data set, beside P5's
published figures, and the same-code ratio of other runs of this code (the paper's model, with or without
the item bias) to that baseline. Prints Markdown (results/seqrec-cpu.md, section 4).

    python3 plots/seqrec_s3rec_baseline.py results/seqrec/s3rec/**/*.h5 [--ours RUN.h5 ...]

Each baseline file is tested at its best dev epoch under its own selection metric (the preset's: dev
NDCG@20; strictly better only, so the earliest of equal values: train-seqrec --early-stop's rule). A file
counts only when its run is finished: status ok and either early stopping ended it or it trained the
preset's 200 epochs. Anything else (a session's capped part in results/seqrec/s3rec/partial/, an
interrupted run) is listed as excluded, never averaged. --ours runs are tested the same way under their
own selection metric (dev HR@10 for the runs before the preset), over every epoch they recorded.

Published figures are P5's Table 3 (Geng et al., RecSys 2022; ../shared/references.md): shown beside
ours, never divided into them. Exit 2 with one line naming the file when a file is not a run of the
preset, or two finished files are the same data set and seed.
"""
import argparse
import math
import os
import sys

import h5py
import numpy as np

from seqrec_epochs import SELECT_COLUMNS, attr

# P5's Table 3, SASRec (one sampled negative, S3-Rec's code, full ranking): HR@10, NDCG@10.
PUBLISHED = {"Beauty": (0.0605, 0.0318), "Sports": (0.0350, 0.0192), "Toys": (0.0675, 0.0374)}
# The data set files' names (S3-Rec's preprocessing) -> the names P5 uses.
DATASETS = {"Beauty": "Beauty", "Sports_and_Outdoors": "Sports", "Toys_and_Games": "Toys"}
PRESET_EPOCHS = 200  # --preset s3rec --epochs (S3-Rec's run_finetune_full.py default)
# The settings that make a run file the preset's baseline (docs/training.md's table).
PRESET = {"variant": "sampled", "block": "post_ln", "heads": 2, "B": 256, "negatives": "history", "select": "ndcg@20",
          "protocol": "leave_one_out"}
METRICS = ("test_hr_at_10", "test_ndcg_at_10", "test_ndcg_at_20")


class Refused(Exception):
    pass


def dataset_name(f, path):
    stem = os.path.splitext(os.path.basename(str(attr(f, "dataset", ""))))[0]
    if stem not in DATASETS:
        raise Refused(f"{path}: data set {attr(f, 'dataset', '?')!r} is not Beauty, Sports or Toys")
    return DATASETS[stem]


def best_row(rows, select, path):
    """The recorded epoch with the best dev value of the selection metric (the first of equal ones)."""
    column = SELECT_COLUMNS.get(select)
    if column is None:
        raise Refused(f"{path}: unknown selection metric {select!r}")
    best = None
    for e in rows:
        v = float(e[column])
        if not math.isnan(v) and (best is None or v > float(best[column])):
            best = e
    if best is None:
        raise Refused(f"{path}: no evaluated epoch")
    return best


def read_run(path, baseline):
    """One file's data set, seed, whether it is finished (and why not), its rows and its best dev row;
    a baseline file must be the preset's."""
    with h5py.File(path, "r") as f:
        ds = dataset_name(f, path)
        rows = f["epochs"][:]
        select = attr(f, "select", "hr@10")
        a = {k: attr(f, k, None) for k in ("status", "early_stopped_at_epoch", "seed", "best_dev_epoch")}
        if baseline:
            check_preset({k: attr(f, k, None) for k in PRESET}, path)
    last = int(rows["epoch"][-1]) if len(rows) else 0
    early = int(a["early_stopped_at_epoch"] or 0)
    if a["status"] != "ok":
        why = f"status {a['status']}, epochs 1–{last}"
    elif early == 0 and last < PRESET_EPOCHS:
        why = f"partial: epochs 1–{last} of {PRESET_EPOCHS}, not ended by early stopping"
    else:
        why = ""
    best = best_row(rows, select, path)
    if a["best_dev_epoch"] is not None and int(a["best_dev_epoch"]) != int(best["epoch"]):
        # train-seqrec records its own pick; a disagreement means this rule is not the run's
        raise Refused(f"{path}: best dev epoch {int(best['epoch'])} by dev {select}, "
                      f"the file says {int(a['best_dev_epoch'])}")
    return {"dataset": ds, "seed": int(a["seed"] or 0), "finished": not why, "why": why, "best": best, "select": select,
            "name": os.path.basename(path).removesuffix(".h5")}


def check_preset(settings, path):
    for k, want in PRESET.items():
        got = settings[k]
        got = got.item() if hasattr(got, "item") else got  # numpy scalar -> Python, for the message
        if got is None or (int(got) != want if isinstance(want, int) else got != want):
            raise Refused(f"{path}: not a --preset s3rec run ({k} is {got!r}, the preset's is {want!r})")


def mean_std(values):
    """'mean ± std' (sample std) over seeds; one seed has no spread to give."""
    v = np.asarray(values, dtype=float)
    return f"{v.mean():.4f} ± {v.std(ddof=1):.4f}" if v.size > 1 else f"{v[0]:.4f}"


def baseline_table(groups):
    print("| data set | finished seeds | best dev epoch (dev NDCG@20) | test HR@10 | test NDCG@10 | test NDCG@20 | "
          "P5's SASRec HR@10 / NDCG@10 (published) | ours − P5's HR@10 |")
    print("|---|---|---|---|---|---|---|---|")
    for ds in PUBLISHED:
        runs = groups.get(ds, [])
        p_hr, p_ndcg = PUBLISHED[ds]
        if not runs:
            print(f"| {ds} | none finished | | | | | {p_hr:.4f} / {p_ndcg:.4f} | |")
            continue
        seeds = ", ".join(str(r["seed"]) for r in runs)
        epochs = ", ".join(str(int(r["best"]["epoch"])) for r in runs)
        cols = [mean_std([float(r["best"][m]) for r in runs]) for m in METRICS]
        diff = np.mean([float(r["best"]["test_hr_at_10"]) for r in runs]) - p_hr
        print(f"| {ds} | {len(runs)} (seed {seeds}) | {epochs} | {' | '.join(cols)} | {p_hr:.4f} / {p_ndcg:.4f} | "
              f"{diff:+.4f} ({100 * diff / p_hr:+.0f} %) |")


def excluded_line(excluded):
    """The runs left out of the means (each with why, and its best so far, marked as such)."""
    if not excluded:
        return "Excluded: none."
    return "Excluded (not finished, so not averaged): " + "; ".join(
        f"{r['name']} ({r['why']}; its best dev epoch so far, {int(r['best']['epoch'])}: test HR@10 "
        f"{float(r['best']['test_hr_at_10']):.4f}, NDCG@10 {float(r['best']['test_ndcg_at_10']):.4f})" for r in excluded) + "."


def ratio_table(ours, groups):
    print("| run (this code) | data set | objective, output bias | best dev epoch (its selection) | test HR@10 | test NDCG@10 | "
          "÷ baseline HR@10 | ÷ baseline NDCG@10 | P5's SASRec HR@10 (published, beside) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in ours:
        base = groups.get(r["dataset"], [])
        hr, ndcg = float(r["best"]["test_hr_at_10"]), float(r["best"]["test_ndcg_at_10"])
        if base:
            n = len(base)
            b_hr = np.mean([float(b["best"]["test_hr_at_10"]) for b in base])
            b_ndcg = np.mean([float(b["best"]["test_ndcg_at_10"]) for b in base])
            ratios = f"{hr / b_hr:.2f}× (of {b_hr:.4f}, {n} seed{'s' if n > 1 else ''}) | {ndcg / b_ndcg:.2f}×"
        else:
            ratios = "not computed (no finished baseline) | not computed"
        print(f"| {r['name']} | {r['dataset']} | {r['objective']} | {int(r['best']['epoch'])} (dev {r['select'].upper()}) | "
              f"{hr:.4f} | {ndcg:.4f} | {ratios} | {PUBLISHED[r['dataset']][0]:.4f} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="--preset s3rec run files (finished and partial)")
    ap.add_argument("--ours", action="append", default=[], metavar="RUN.h5",
                    help="another run of this code on the same data, divided by the baseline's mean")
    a = ap.parse_args(argv)
    try:
        groups, excluded, seen = {}, [], {}
        for p in a.runs:
            r = read_run(p, baseline=True)
            if not r["finished"]:
                excluded.append(r)
                continue
            key = (r["dataset"], r["seed"])
            if key in seen:
                raise Refused(f"{p}: {r['dataset']} seed {r['seed']} is also {seen[key]}")
            seen[key] = p
            groups.setdefault(r["dataset"], []).append(r)
        ours = []
        for p in a.ours:
            r = read_run(p, baseline=False)
            with h5py.File(p, "r") as f:
                r["objective"] = f"{attr(f, 'variant', '?')}, bias {attr(f, 'output_bias', 'none')}"
            ours.append(r)
    except (Refused, OSError, KeyError) as e:
        print(f"seqrec_s3rec_baseline: {e}", file=sys.stderr)
        return 2
    for rs in groups.values():
        rs.sort(key=lambda r: r["seed"])
    baseline_table(groups)
    print()
    print(excluded_line(excluded))
    if ours:
        print()
        ratio_table(ours, groups)
    return 0


if __name__ == "__main__":
    sys.exit(main())
