#!/usr/bin/env python3
"""Peak memory of `lobench train-seqrec` runs against a baseline run (results/seqrec-cpu.md: the memory
reduction of Cut BCE against `dense`): one Markdown row per run file, its counted peak (the counting
allocator's measured total; for a run that did not train, a dry run or one skipped as out of memory,
the predicted total, marked so), the RSS peak where the run trained, and the change against the
baseline's peak, (run − baseline) / baseline, in %.

    python3 plots/seqrec_memory_reduction.py BASELINE.h5 RUN.h5 [RUN.h5 ...]
    python3 plots/seqrec_memory_reduction.py --parts RUN.h5 [RUN.h5 ...]

--parts prints instead each run's memory by part (MiB, from its /memory group): the counted bytes where
the run trained, else the predicted ones, and whether every part's prediction equals its count.
"""
import argparse
import os

import h5py


def attr(obj, name, default=float("nan")):
    v = obj.attrs.get(name, default)
    return v.decode() if isinstance(v, bytes) else v


def peak(path):
    """(variant, B, N, status, bytes, how the bytes were got, RSS peak bytes or NaN)."""
    with h5py.File(path, "r") as f:
        m = f["memory"].attrs
        measured = float(m.get("measured_total_bytes", float("nan")))
        status = attr(f, "status", "?")
        if measured == measured:
            value, how, rss = measured, "measured", float(attr(f, "rss_peak_bytes"))
        else:
            value, how, rss = float(m["predicted_total_bytes"]), f"predicted ({status}, not trained)", float("nan")
        return attr(f, "variant"), int(attr(f, "B")), int(attr(f, "N")), value, how, rss


def gib(b):
    return "" if b != b else f"{b / 2**30:.2f}"


PARTS = ("parameters", "gradients", "optimizer_state", "activations", "loss_workspace", "loss_outputs", "total")


def parts_table(paths):
    print("| run | variant | " + " | ".join(p.replace("_", " ") for p in PARTS) + " | predicted = counted, every part |")
    print("|---|---|" + "---|" * (len(PARTS) + 1))
    for p in paths:
        with h5py.File(p, "r") as f:
            m, variant = {k: int(v) for k, v in f["memory"].attrs.items()}, attr(f, "variant")
        trained = "measured_total_bytes" in m
        kind = "measured" if trained else "predicted"
        cells = [f"{m[f'{kind}_{part}_bytes'] / 2**20:,.1f}" for part in PARTS]
        same = (("yes" if all(m[f"measured_{x}_bytes"] == m[f"predicted_{x}_bytes"] for x in PARTS) else "no")
                if trained else "predicted only (not trained)")
        print(f"| `{os.path.basename(p)}` | `{variant}` | " + " | ".join(cells) + f" | {same} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("baseline")
    ap.add_argument("runs", nargs="*")
    ap.add_argument("--parts", action="store_true", help="each run's memory by part instead (the baseline is a run too)")
    args = ap.parse_args()
    if args.parts:
        parts_table([args.baseline] + args.runs)
        return
    if not args.runs:
        ap.error("give a baseline and at least one run (or --parts)")
    base = peak(args.baseline)[3]
    print("| run | variant | B | N | peak GiB | counted how | RSS peak GiB | against the first row |")
    print("|---|---|---|---|---|---|---|---|")
    for p in [args.baseline] + args.runs:
        variant, b, n, value, how, rss = peak(p)
        change = "baseline" if p == args.baseline else f"{100 * (value - base) / base:+.1f} %".replace("-", "−")
        run = os.path.join(os.path.basename(os.path.dirname(p)), os.path.basename(p))
        print(f"| `{run}` | `{variant}` | {b} | {n} | {gib(value)} | {how} | {gib(rss)} | {change} |")


if __name__ == "__main__":
    main()
