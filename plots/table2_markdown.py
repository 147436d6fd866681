#!/usr/bin/env python3
"""Markdown table of a Table II sweep (Cut BCE paper) from one or more lobench run files.

Usage: python3 plots/table2_markdown.py RUN.h5 [MORE.h5 ...] [-o TABLE.md]

One line per (B, N, V): each variant's median step time, its effective throughput as a fraction of the
SGEMM rate measured in the same run, its peak working memory, and its speed-up over `dense` (or over
the JAX peer where dense is out of memory). The paper's TPU figures are printed beside for orientation
only: different hardware, and its timings are of the loss-and-gradient step in JAX.
"""
import argparse

import h5py
import numpy as np

PAPER = """
Cut BCE paper, Table II (TPU; for orientation, not comparable hardware):
- B=N=32, D=128, L=8, V from 100k up: Cut BCE 53.8–91.9 % faster than Keras BCE on v6e (69.4–83.3 % on v5e),
  the gap growing with V.
- B=N=128, V=100k, D=128, L=8: Keras BCE out of memory; Cut BCE 6.93 ms (v6e), 12.79 ms (v5e).
"""


def text(x):
    return x.decode() if isinstance(x, bytes) else str(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    ap.add_argument("-o", "--out")
    ap.add_argument("--note", default="", help="a paragraph on the measurement conditions, printed under the title")
    args = ap.parse_args()
    rows, attrs = [], {}
    for path in args.runs:
        with h5py.File(path, "r") as f:
            rows.extend(f["results"][:])
            attrs = {k: text(v) for k, v in f.attrs.items()}
    variants = sorted({text(r["variant"]) for r in rows}, key=lambda v: (v != "dense", v))
    points = sorted({(int(r["B"]), int(r["N"]), int(r["D"]), int(r["L"]), int(r["V"])) for r in rows})
    by = {(text(r["variant"]),) + (int(r["B"]), int(r["N"]), int(r["D"]), int(r["L"]), int(r["V"])): r for r in rows}

    out = [f"# Table II on CPU ({attrs.get('cpu_model', '?')}, commit {attrs.get('git_commit', '?')[:10]})", ""]
    out.append("Median time per loss-and-gradient step (ms); in brackets: effective 6·P·V·D throughput as a "
               "fraction of the SGEMM rate measured in the same run, and peak working memory. "
               "`speed-up` is dense time / variant time at the same point.")
    out.append("")
    if args.note:
        out += [args.note, ""]
    head = "| B | N | V | " + " | ".join(variants) + " | " + " | ".join(f"speed-up {v}" for v in variants if v != "dense") + " |"
    out.append(head)
    out.append("|" + "---|" * (3 + len(variants) + len([v for v in variants if v != "dense"])))
    for (B, N, D, L, V) in points:
        cells, times = [], {}
        for v in variants:
            r = by.get((v, B, N, D, L, V))
            if r is None:
                cells.append("")
            elif text(r["status"]) == "ok":
                times[v] = r["time_median_s"]
                mem = "memory not measured" if text(r["backend"]) == "peer" else f"{r['peak_bytes'] / 2**20:.0f} MiB"
                cells.append(f"{r['time_median_s'] * 1e3:.1f} ({100 * r['gemm_fraction']:.0f} %, {mem})")
            elif text(r["status"]) == "skipped" and "OOM" in text(r["reason"]):
                cells.append("OOM")
            else:
                cells.append(text(r["status"]))
        speed = []
        for v in variants:
            if v == "dense":
                continue
            speed.append(f"{times['dense'] / times[v]:.2f}×" if "dense" in times and v in times else "–")
        out.append(f"| {B} | {N} | {V:,} | " + " | ".join(cells) + " | " + " | ".join(speed) + " |")
    out.append("")
    out.append(PAPER.strip())
    text_out = "\n".join(out) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text_out)
        print(f"wrote {args.out}")
    else:
        print(text_out)


if __name__ == "__main__":
    main()
