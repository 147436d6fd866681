#!/usr/bin/env python3
"""Data-parallel `lobench train-seqrec --data-parallel` runs against one process with the same global batch
and micro-batches (results/seqrec-cpu.md): one Markdown row per data-parallel run file with its rank count,
whether its final parameters' hash equals the one-process run's, how many steps' losses (and confusion
counts) equal it bit for bit, and on how many ranks the counted peak equals the prediction. Exits 1 when a
run differs from the one-process run in any of these (the table still printed).

    python3 plots/seqrec_dp_identity.py results/seqrec/dp8/one_process.h5 results/seqrec/dp8/ranks8.h5
"""
import argparse
import os
import sys

import h5py
import numpy as np


def load(path):
    with h5py.File(path, "r") as f:
        attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
        return attrs, f["steps"][()], (f["ranks"][()] if "ranks" in f else None)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("one_process", help="the run file of one process (no --data-parallel)")
    ap.add_argument("runs", nargs="+", help="data-parallel run files of the same settings")
    args = ap.parse_args()
    a, steps, ranks = load(args.one_process)
    if ranks is not None:
        sys.exit(f"{args.one_process}: has a /ranks table: not a one-process run")
    print("| ranks | B_local | micro-batch | V | final parameters' hash = one process's | steps with equal loss bits "
          "| steps with equal counts | ranks with counted = predicted | run file |")
    print("|---|---|---|---|---|---|---|---|---|")
    ok = True
    for path in args.runs:
        b, s2, r2 = load(path)
        n = int(b.get("ranks", 1))
        same_hash = b["parameters_hash"] == a["parameters_hash"]
        k = min(len(s2), len(steps))
        loss_equal = int((s2["loss"][:k].view(np.uint64) == steps["loss"][:k].view(np.uint64)).sum())
        counts_equal = int(sum(all(s2[c][i] == steps[c][i] for c in ("tp", "fp", "fn", "tn")) for i in range(k)))
        exact = int((r2["measured_bytes"] == r2["predicted_bytes"]).sum()) if r2 is not None else 0
        ok &= same_hash and loss_equal == len(steps) == len(s2) and counts_equal == k and exact == n
        name = os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path))
        print(f"| {n} | {int(b['B']) // n} | {int(b['micro_batch'])} | {int(b['V']):,} | {'yes' if same_hash else '**no**'} "
              f"| {loss_equal} of {len(steps)} | {counts_equal} of {k} | {exact} of {n} | `{name}` |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
