#!/usr/bin/env python3
"""Markdown table of a Table II sweep (Cut BCE paper) from one or more lobench run files.

Usage: python3 plots/table2_markdown.py RUN.h5 [MORE.h5 ...] [-o TABLE.md]

One line per (B, N, V): each variant's median step time, its effective throughput as a fraction of the
GEMM rate measured in the same run (Eigen SGEMM for CPU rows, cuBLAS at the row's operand precision for
GPU rows), its peak working memory, and its speed-up over the baseline (`dense`, or `cuda_dense` in a
GPU run) at the same operand precision. A variant run at several operands (`--operand`) gets a column
per operand ("cuda_fused bf16"). The paper's TPU figures are printed beside for orientation only:
different hardware, and its timings are of the loss-and-gradient step in JAX.
"""
import argparse
import math

from lobench_results import load, text

PAPER = """
Cut BCE paper, Table II (TPU; for orientation, not comparable hardware):
- B=N=32, D=128, L=8, V from 100k up: Cut BCE 53.8–91.9 % faster than Keras BCE on v6e (69.4–83.3 % on v5e),
  the gap growing with V.
- B=N=128, V=100k, D=128, L=8: Keras BCE out of memory; Cut BCE 6.93 ms (v6e), 12.79 ms (v5e).
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    ap.add_argument("-o", "--out")
    ap.add_argument("--note", default="", help="a paragraph on the measurement conditions, printed under the title")
    ap.add_argument("--baseline", default=None,
                    help="variant the speed-ups divide by (default: dense, else cuda_dense, whichever is present)")
    args = ap.parse_args()
    rows, attrs = [], {}
    for path in args.runs:
        file_rows, attrs = load(path)
        rows.extend(file_rows)

    def operand(r):  # files from before the operand column are fp32
        op = text(r["operand"]) if "operand" in r.dtype.names else ""
        return op or "fp32"

    def column(r):
        return text(r["variant"]) if operand(r) == "fp32" else f"{text(r['variant'])} {operand(r)}"

    names = {text(r["variant"]) for r in rows}
    baseline = args.baseline or ("dense" if "dense" in names else "cuda_dense" if "cuda_dense" in names else None)
    op_order = {"fp32": 0, "tf32": 1, "bf16": 2}
    columns = sorted({(text(r["variant"]), operand(r)) for r in rows},
                     key=lambda c: (c[0] != baseline, c[0], op_order.get(c[1], 3)))
    label = {c: c[0] if c[1] == "fp32" else f"{c[0]} {c[1]}" for c in columns}
    points = sorted({(int(r["B"]), int(r["N"]), int(r["D"]), int(r["L"]), int(r["V"])) for r in rows})
    by = {(text(r["variant"]), operand(r), int(r["B"]), int(r["N"]), int(r["D"]), int(r["L"]), int(r["V"])): r
          for r in rows}

    on_gpu = any(text(r["backend"]) == "cuda" for r in rows)
    if on_gpu:
        machine = attrs.get("gpu_name") or attrs.get("gpu_model") or "GPU"
        title = f"# Table II on GPU ({machine}; host {attrs.get('cpu_model', '?')}, commit {attrs.get('git_commit', '?')[:10]})"
        yardstick = "the cuBLAS GEMM rate at the row's operand precision"
    else:
        title = f"# Table II on CPU ({attrs.get('cpu_model', '?')}, commit {attrs.get('git_commit', '?')[:10]})"
        yardstick = "the SGEMM rate"
    out = [title, ""]
    out.append("Median time per loss-and-gradient step (ms); in brackets: effective 6·P·V·D throughput as a "
               f"fraction of {yardstick} measured in the same run, and peak working memory. "
               f"`speed-up` is {baseline or 'baseline'} time / variant time at the same point and operand.")
    out.append("")
    if args.note:
        out += [args.note, ""]
    others = [c for c in columns if c[0] != baseline]
    head = ("| B | N | V | " + " | ".join(label[c] for c in columns) + " | " +
            " | ".join(f"speed-up {label[c]}" for c in others) + " |")
    out.append(head)
    out.append("|" + "---|" * (3 + len(columns) + len(others)))
    for (B, N, D, L, V) in points:
        cells, times = [], {}
        for c in columns:
            r = by.get(c + (B, N, D, L, V))
            if r is None:
                cells.append("")
            elif text(r["status"]) == "ok":
                times[c] = r["time_median_s"]
                measured = math.isfinite(float(r["peak_bytes"])) and (float(r["peak_bytes"]) > 0 or text(r["backend"]) != "peer")
                mem = f"{r['peak_bytes'] / 2**20:.0f} MiB" if measured else "memory not measured"
                frac = float(r["gemm_fraction"])
                pct = f"{100 * frac:.0f} %" if math.isfinite(frac) and frac > 0 else "– %"
                cells.append(f"{r['time_median_s'] * 1e3:.1f} ({pct}, {mem})")
            elif text(r["status"]) == "skipped" and "OOM" in text(r["reason"]):
                cells.append("OOM")
            else:
                cells.append(text(r["status"]))
        speed = []
        for c in others:
            base = (baseline, c[1]) if (baseline, c[1]) in times else (baseline, "fp32")
            speed.append(f"{times[base] / times[c]:.2f}×" if base in times and c in times else "–")
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
