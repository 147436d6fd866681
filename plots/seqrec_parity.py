#!/usr/bin/env python3
"""Hit@8 parity of loss variants trained from the same seed: per (seed, variant) the last dev / test
metrics, the largest per-step loss difference to the first variant, the mean and standard deviation
over seeds, and the popularity baseline the runs recorded on the same test users.

    python3 plots/seqrec_parity.py results/seqrec/lastfm_L8_*_s*.h5
"""
import collections
import re
import sys

import h5py
import numpy as np


def main(paths):
    runs = collections.defaultdict(dict)  # seed -> variant -> (epochs, steps)
    popularity = set()  # (Hit@8, HR@10, NDCG@10) of the popularity ranking, as each run recorded it
    for p in paths:
        try:
            f = h5py.File(p, "r")
        except OSError as e:  # a run still writing its file holds a lock
            print(f"skipped {p}: {e}", file=sys.stderr)
            continue
        with f:
            if f.attrs.get("status", b"") not in (b"ok", "ok"):
                continue
            v = f.attrs["variant"]
            v = v.decode() if isinstance(v, bytes) else v
            runs[int(f.attrs["seed"])][v] = (f["epochs"][:], f["steps"][:])
            pop = tuple(float(f.attrs.get(f"popularity_test_{k}", np.nan)) for k in ("hit_at_8", "hr_at_10", "ndcg_at_10"))
            if all(np.isfinite(pop)):
                popularity.add(pop)
    print("| seed | variant | epochs | test Hit@8 | test HR@10 | test NDCG@10 | dev Hit@8 | max abs per-step loss diff vs first |")
    print("|---|---|---|---|---|---|---|---|")
    per_variant = collections.defaultdict(list)
    for seed in sorted(runs):
        first = None
        for v in sorted(runs[seed]):
            ep, st = runs[seed][v]
            last = ep[-1]
            if first is None:
                first = st
            n = min(len(first), len(st))
            diff = np.max(np.abs(first["loss"][:n] - st["loss"][:n])) if n else float("nan")
            per_variant[v].append(last["test_hit_at_8"])
            print(f"| {seed} | {v} | {len(ep)} | {last['test_hit_at_8']:.4f} | {last['test_hr_at_10']:.4f} | "
                  f"{last['test_ndcg_at_10']:.4f} | {last['dev_hit_at_8']:.4f} | {diff:.3g} |")
    print()
    print("| variant | seeds | test Hit@8 mean | std |")
    print("|---|---|---|---|")
    for v, xs in sorted(per_variant.items()):
        print(f"| {v} | {len(xs)} | {np.mean(xs):.4f} | {np.std(xs, ddof=1) if len(xs) > 1 else float('nan'):.4f} |")
    for hit, hr, ndcg in sorted(popularity):
        print(f"\nPopularity baseline on the same test users (the run files' `popularity_test_*`): "
              f"Hit@8 {hit:.4f}, HR@10 {hr:.4f}, NDCG@10 {ndcg:.4f}.")


if __name__ == "__main__":
    main(sys.argv[1:])
