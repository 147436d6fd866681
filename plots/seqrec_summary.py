#!/usr/bin/env python3
"""Markdown summary of `lobench train-seqrec` run files: status, memory predicted / measured, the
per-step time split (median over the steps after the first), steps/s and the last test metrics.

    python3 plots/seqrec_summary.py results/seqrec/*.h5
"""
import os
import sys

import h5py
import numpy as np


def attr(obj, name, default=float("nan")):
    v = obj.attrs.get(name, default)
    return v.decode() if isinstance(v, bytes) else v


def gib(b):
    return f"{b / 2**30:.2f}"


def main(paths):
    print("| run | variant | B | N | status | predicted GiB | measured GiB | RSS peak GiB | fwd s | loss s | bwd s | opt s | steps/s | test Hit@8 | HR@10 | NDCG@10 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    common = os.path.commonpath([os.path.dirname(os.path.abspath(p)) for p in paths]) if paths else ""
    for p in paths:
        name = os.path.relpath(os.path.abspath(p), common)  # unambiguous when runs sit in several folders
        with h5py.File(p, "r") as f:
            m = f["memory"].attrs
            pred = m.get("predicted_total_bytes", float("nan"))
            meas = m.get("measured_total_bytes", float("nan"))
            steps = f["steps"][:]
            split = ["", "", "", ""]
            if len(steps) > 0:  # median over the steps after the first; a one-step run shows its only step
                s = steps[1:] if len(steps) > 1 else steps
                split = [f"{np.median(s[k]):.3g}" for k in ("forward_s", "loss_s", "backward_s", "optimizer_s")]
            ep = f["epochs"][:]
            last = ep[-1] if len(ep) else None
            # runs without an evaluation (--eval-every -1) leave the metrics NaN: shown empty, not "nan"
            metrics = ["", "", ""] if last is None else [f"{last[k]:.4f}" if last[k] == last[k] else ""
                                                         for k in ("test_hit_at_8", "test_hr_at_10", "test_ndcg_at_10")]
            status = attr(f, "status", "?")
            rate = attr(f, "steps_per_s")
            rate = f"{rate:.4g}" if status == "ok" and rate == rate else ""
            reason = attr(f, "reason", "")
            print(f"| {name} | {attr(f, 'variant')} | {attr(f, 'B')} | {attr(f, 'N')} | {status}{' (' + reason + ')' if reason else ''} | "
                  f"{gib(pred)} | {gib(meas) if meas == meas else ''} | {gib(attr(f, 'rss_peak_bytes', 0))} | "
                  f"{' | '.join(split)} | {rate} | {' | '.join(metrics)} |")


if __name__ == "__main__":
    main(sys.argv[1:])
