#!/usr/bin/env python3
"""Experiment 4's chunk counts (results/elmo/exp4/chunks/: one train-xmc run per update mode and chunk
count k at one label count): per mode, the whole-run peak (the counting allocator's measured peak, MiB),
the weight-gradient buffer (separate: one [V/k, D] chunk; fused: the tile scratch) and the logits chunk,
as the runs' /memory groups predict them, then how many runs measured exactly their prediction.

    python3 plots/elmo_chunk_table.py results/elmo/exp4/chunks
"""
import argparse
import collections

import elmo_common as ec

MiB = 2**20


def mib(b):
    return f"{b / MiB:.1f}" if b < 10 * MiB else f"{b / MiB:.0f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    args = ap.parse_args()
    runs = collections.defaultdict(dict)  # mode -> k -> /memory attributes
    labels = set()
    for r in ec.load_dir(args.folder):
        a = r["attrs"]
        runs[a["update_mode"]][int(a["chunks"])] = r["memory"]
        labels.add(int(a["num_labels"]))
    ks = sorted({k for per in runs.values() for k in per})
    print(f"At {', '.join(f'{v:,}' for v in sorted(labels))} labels (MiB):\n")
    print("| update | " + " | ".join(f"k = {k}" if i == 0 else str(k) for i, k in enumerate(ks)) + " |")
    print("|---|" + "---|" * len(ks))
    exact = total = 0
    for mode in sorted(runs, reverse=True):  # separate, then fused
        per = runs[mode]
        for label, key in (("peak, measured", "measured_peak_bytes"),
                           ("gradient chunk" if mode == "separate" else "gradient scratch", "predicted_weight_gradient_bytes"),
                           ("logits chunk", "predicted_logits_bytes")):
            print(f"| {mode}: {label} | " + " | ".join(mib(float(per[k][key])) if k in per else "" for k in ks) + " |")
        for m in per.values():
            total += 1
            exact += int(m["measured_peak_bytes"]) == int(m["predicted_peak_bytes"])
    print(f"\nMeasured peak = predicted peak, to the byte, in {exact} of {total} runs.")


if __name__ == "__main__":
    main()
