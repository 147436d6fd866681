#!/usr/bin/env python3
"""Markdown table of the CPU rows of lobench run files with their two yardsticks
(docs/method.md#the-yardstick): the machine's square product for the row's operands (the run's
sgemm_best_gflops for fp32, bf16_gemm_best_gflops for bf16 and fp8 operands (bf16_gemm_gflops in files
made before oneDNN's bf16 product entered it), for the row's threads) and the
logit product at the row's own shape (shape_gemm_gflops, schema version 5), the row's yardstick being the
larger. One line per row: its rate on 6·P·V·D, both yardsticks, %GEMM (over the larger), the ratio over the
square product alone (what a version-4 file reported) and, for chunked, %GEMM on the 8·P·V·D it computes.
The square product is the file's attribute: where a row above its yardstick made the run measure it again
higher (attribute sgemm_remeasured), earlier rows were compared with the lower value (their gemm_gflops).
Rows of an epilogue other than fp32 (an emulation, docs/method.md#the-epilogue-precision) are left out.

Usage: python3 plots/yardstick_table.py RUN.h5 [MORE.h5 ...]
"""
import argparse
import math
import os

from lobench_results import load, precision, text


def square_best(attrs, threads, operand):
    """The square product's rate for the row's operands and threads (the first thread count's attributes
    have no suffix)."""
    first = attrs.get("sgemm_threads")
    suffix = "" if first is None or int(first) == threads else f"_t{threads}"
    if operand == "fp32":
        return float(attrs.get("sgemm_best_gflops" + suffix, math.nan))
    return float(attrs.get("bf16_gemm_best_gflops" + suffix, attrs.get("bf16_gemm_gflops" + suffix, math.nan)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    args = ap.parse_args()
    print("| run file | variant | operand | P | V | D | threads | GFLOP/s | square product | product at the shape "
          "| %GEMM | over the square alone | %GEMM on 8·P·V·D |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    cpus = set()
    for path in args.runs:
        rows, attrs = load(path)
        cpus.add(attrs.get("cpu_model", "?"))
        for r in rows:
            if text(r["status"]) != "ok" or text(r["backend"]) == "cuda" or precision(r, "epilogue") != "fp32":
                continue
            rate, threads = float(r["effective_gflops"]), int(r["threads"])
            operand = precision(r, "operand")
            square = square_best(attrs, threads, operand)
            shape = float(r["shape_gemm_gflops"]) if "shape_gemm_gflops" in r.dtype.names else math.nan
            chunked = f"{800 / 6 * rate / float(r['gemm_gflops']):.1f} %" if text(r["variant"]) == "chunked" else "–"
            print(f"| {os.path.basename(path)} | {text(r['variant'])} | {operand} | {int(r['P'])} | {int(r['V'])} | {int(r['D'])} "
                  f"| {threads} | {rate:.1f} | {square:.1f} | {shape:.1f} | {100 * float(r['gemm_fraction']):.1f} % "
                  f"| {100 * rate / square:.1f} % | {chunked} |")
    print()
    print(f"CPU: {', '.join(sorted(cpus))}.")


if __name__ == "__main__":
    main()
