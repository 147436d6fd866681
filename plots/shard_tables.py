#!/usr/bin/env python3
"""Markdown tables of the sharded step's measurements and model (issue 13; scripts/shard_measure.sh writes
the CSV files, results/shard.md shows these tables):

  --table collectives   collectives.csv: per message size, the median time of the fixed-order sum and of
                        MPI_Allreduce at R ranks (and their ratio)
  --table scaling       scaling.csv: per (R, threads, variant), the median step over the runs [min–max],
                        the median GFLOP/s (6PVD), the communication share and the wait (imbalance) ranges
  --table model         model.csv: per shape, variant and network, the smallest R whose rank fits (the
                        `fits` column), the bytes per rank there and the predicted step (compute + comm)
  --table comm_share    model.csv: per shape, variant and network, the predicted communication share of the
                        step at R = 64 and R = 1024 (%)
  --table label_memory  label_memory.csv: per label count, the counted training peak at R = 1 and, for
                        R > 1, the largest rank's and the sum over ranks (MB = 10^6 bytes)

    python3 plots/shard_tables.py results/shard/collectives.csv --table collectives
"""
import argparse
import csv
import math
import statistics
from collections import defaultdict


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def two_digits(v):
    """v to two significant digits, written without an exponent (320, 8.0, 0.78)."""
    if v == 0:
        return "0"
    digits = 1 - math.floor(math.log10(abs(v)))
    return f"{round(v, digits):.{max(digits, 0)}f}"


def seconds(s):
    s = float(s)
    if s < 1e-3:
        return f"{two_digits(s * 1e6)} µs"
    if s < 1:
        return f"{two_digits(s * 1e3)} ms"
    return f"{s:.3g} s"


def size(n):
    n = int(n)
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def collectives(path):
    by = defaultdict(dict)
    for r in rows(path):
        by[(int(r["ranks"]), int(r["bytes"]))][r["op"]] = float(r["median_s"])
    print("| R | bytes | ordered_sum (median) | MPI_Allreduce (median) | ordered_sum / MPI_Allreduce |")
    print("|---|---|---|---|---|")
    for (ranks, n), ops in sorted(by.items()):
        if "ordered_sum" in ops and "mpi_allreduce" in ops:
            print(f"| {ranks} | {size(n)} | {seconds(ops['ordered_sum'])} | {seconds(ops['mpi_allreduce'])} | "
                  f"{ops['ordered_sum'] / ops['mpi_allreduce']:.2f} |")
    for (ranks, n), ops in sorted(by.items()):
        if "agree_or_throw" in ops:
            print(f"\nThe per-step checkpoint (`agree_or_throw`, R = {ranks}, {size(n)}): {seconds(ops['agree_or_throw'])}.")


def scaling(path):
    by = defaultdict(list)
    for r in rows(path):
        by[(r["variant"], int(r["R"]), int(r["threads"]))].append(r)
    print("| variant | R × threads | step (median of runs; min–max) | GFLOP/s (6PVD, median) | comm share | wait (imbalance) | runs |")
    print("|---|---|---|---|---|---|---|")
    for (variant, ranks, threads), rs in sorted(by.items()):
        step = [float(r["step_s"]) for r in rs]
        share = [100 * float(r["comm_share"]) for r in rs]
        wait = [float(r["wait_s_max"]) for r in rs]
        sharded = ranks > 1
        print(f"| {variant} | {ranks} × {threads} | {statistics.median(step):.2f} s ({min(step):.2f}–{max(step):.2f}) | "
              f"{statistics.median(float(r['gflops']) for r in rs):.1f} | "
              f"{f'{min(share):.1f}–{max(share):.1f} %' if sharded else '–'} | "
              f"{f'{min(wait):.2f}–{max(wait):.2f} s' if sharded else '–'} | {len(rs)} |")


def model(path):
    by = defaultdict(list)
    for r in rows(path):
        by[(r["shape"], r["variant"], r["network"])].append(r)
    print("| shape | variant | network | smallest R that fits | per rank | predicted step (compute + comm) |")
    print("|---|---|---|---|---|---|")
    for (shape, variant, network), rs in by.items():
        fit = sorted((r for r in rs if r["fits"] == "1"), key=lambda r: int(r["R"]))
        if not fit:
            print(f"| {shape} | {variant} | {network} | none up to {max(int(r['R']) for r in rs)} | | |")
            continue
        r = fit[0]
        comm = float(r["comm_s"])
        step = f"{float(r['compute_s']):.4g} s" + (f" + {seconds(comm)}" if comm > 0 else " (no comm)")
        print(f"| {shape} | {variant} | {network} | {r['R']} | {int(r['rank_bytes']) / 2**30:.2f} GiB | {step} |")


def comm_share(path, at=(64, 1024)):
    share = defaultdict(dict)
    for r in rows(path):
        share[(r["shape"], r["variant"], r["network"])][int(r["R"])] = 100 * float(r["comm_share"])
    print("| shape | variant | network | " + " | ".join(f"comm share at R = {R:,}" for R in at) + " |")
    print("|---|---|---|" + "---|" * len(at))
    for (shape, variant, network), by_r in share.items():
        print(f"| {shape} | {variant} | {network} | " + " | ".join(f"{by_r[R]:.3g} %" if R in by_r else "" for R in at) + " |")


def label_memory(path):
    by = defaultdict(lambda: defaultdict(list))
    for r in rows(path):
        by[int(r["labels"])][int(r["ranks"])].append(int(r["measured_train_peak"]))
    ranks = sorted({k for v in by.values() for k in v})
    print("| labels | " + " | ".join(f"R = {k}" + (" (max / sum)" if k > 1 else "") for k in ranks) + " |")
    print("|---|" + "---|" * len(ranks))
    for labels, per in sorted(by.items()):
        cells = [(f"{max(per[k]) / 1e6:.1f} MB" if k == 1 else f"{max(per[k]) / 1e6:.1f} / {sum(per[k]) / 1e6:.1f} MB")
                 if k in per else "" for k in ranks]
        print(f"| {labels:,} | " + " | ".join(cells) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--table", required=True, choices=("collectives", "scaling", "model", "comm_share", "label_memory"))
    args = ap.parse_args()
    {"collectives": collectives, "scaling": scaling, "model": model, "comm_share": comm_share,
     "label_memory": label_memory}[args.table](args.csv)


if __name__ == "__main__":
    main()
