#!/usr/bin/env python3
"""Per-rank memory and time of data-parallel `lobench train-seqrec --data-parallel` runs (results/seqrec-cpu.md,
section 1b): one Markdown row per run file with the rank-local batch, the predicted and counted peak per rank
(GiB, rank 0 / rank 1 / ...), each rank's RSS peak, and rank 0's last step: its wall time, its loss part and
the gradient sum's time (comm_s), and the bytes each rank sent per step (the largest rank's total over the
steps). A one-process run (no /ranks table) reads as one rank from /memory.

    python3 plots/seqrec_ranks_table.py results/seqrec/table3_dp/N*/*.h5 results/seqrec/table3_dp/dense_B2_N256.h5
"""
import argparse
import os

import h5py

GiB = 2**30


def attr(f, name, default=float("nan")):
    v = f.attrs.get(name, default)
    return v.decode() if isinstance(v, bytes) else v


def row(path):
    with h5py.File(path, "r") as f:
        steps = f["steps"][:]
        last = steps[-1]
        if "ranks" in f:
            ranks = f["ranks"][:]
            predicted = [int(r["predicted_bytes"]) for r in ranks]
            measured = [int(r["measured_bytes"]) for r in ranks]
            rss = [int(r["rss_peak_bytes"]) for r in ranks]
            sent = f"{max(int(r['comm_bytes_sent']) for r in ranks) / len(steps) / GiB:.2f}"
            comm = f"{float(last['comm_s']):.1f}"
        else:
            m = f["memory"].attrs
            predicted, measured = [int(m["predicted_total_bytes"])], [int(m["measured_total_bytes"])]
            rss, sent, comm = [int(attr(f, "rss_peak_bytes"))], "–", "–"
        n = len(predicted)
        b_local = int(attr(f, "B")) // n
        when = f" (step {int(last['step'])})" if len(steps) > 1 else ""
        name = os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path))
        return (f"| `{attr(f, 'variant')}` | {b_local} | {int(attr(f, 'N'))} | {n} | {max(predicted) / GiB:.2f} | "
                f"{' / '.join(f'{b / GiB:.2f}' for b in measured)} | {' / '.join(f'{b / GiB:.2f}' for b in rss)} | "
                f"{len(steps)} | {float(last['step_s']):.0f}{when} | {float(last['loss_s']):.0f} | {comm} | {sent} | `{name}` |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    args = ap.parse_args()
    print("| variant | B_local | N | ranks | predicted GiB per rank | counted GiB per rank | RSS peak GiB per rank | steps "
          "| s per step (rank 0) | of which loss s | gradient sum s | GiB sent per rank per step | run file |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p in args.runs:
        print(row(p))


if __name__ == "__main__":
    main()
