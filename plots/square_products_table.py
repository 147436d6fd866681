#!/usr/bin/env python3
"""Markdown table of the machine's square products each lobench run file measured (docs/method.md#the-yardstick):
per file, the fp32 SGEMM of every library timed (Eigen, OpenBLAS, oneDNN, lobench's own micro-kernels; the
fastest is the fp32 square yardstick) and, for runs with bf16 or fp8 rows, lobench's bf16 products beside
oneDNN's bf16 matmul (the faster is the bf16 square yardstick) with their ratio, lobench over oneDNN: the
issue-44 target "lobench's bf16 GEMM ≥ 1.0× oneDNN's". GFLOP/s at the file's n³ on the first thread count
of the run (the attributes without a _t suffix; the run's last measurement of them). A library that was not
measured reads "–" (its *_why attribute says why).

Usage: python3 plots/square_products_table.py RUN.h5 [MORE.h5 ...]
"""
import math
import os

from lobench_results import load
from run_tables_cli import runs_from_command_line


def rate(attrs, name):
    value = attrs.get(name + "_gflops")
    return math.nan if value is None else float(value)


def cell(x):
    return "–" if not math.isfinite(x) else f"{x:,.1f}"


def main():
    files = runs_from_command_line(__doc__, reader=lambda path: load(path)[1])
    print("| run file | threads | n | Eigen (GFLOP/s) | OpenBLAS (GFLOP/s) | oneDNN (GFLOP/s) | lobench's own (GFLOP/s) "
          "| best SGEMM (GFLOP/s) | bf16 n | lobench bf16 (GFLOP/s) | oneDNN bf16 (GFLOP/s) | lobench bf16 / oneDNN bf16 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    cpus, implementations = set(), set()
    for path, attrs in files:
        cpus.add(attrs.get("cpu_model", "?"))
        if "bf16_gemm_onednn_library" in attrs:
            implementations.add(attrs["bf16_gemm_onednn_library"])
        ours, theirs = rate(attrs, "bf16_gemm"), rate(attrs, "bf16_gemm_onednn")
        ratio = ours / theirs if math.isfinite(ours) and math.isfinite(theirs) else math.nan
        bf16_n = attrs.get("bf16_gemm_n")
        print(f"| {os.path.basename(path)} | {int(attrs.get('sgemm_threads', 0))} | {int(attrs.get('sgemm_eigen_n', 0))} "
              f"| {cell(rate(attrs, 'sgemm_eigen'))} | {cell(rate(attrs, 'sgemm_openblas'))} "
              f"| {cell(rate(attrs, 'sgemm_onednn'))} | {cell(rate(attrs, 'sgemm_own'))} "
              f"| {cell(rate(attrs, 'sgemm_best'))} | {'–' if bf16_n is None else int(bf16_n)} | {cell(ours)} "
              f"| {cell(theirs)} | {'–' if not math.isfinite(ratio) else f'{ratio:.2f}'} |")
    print()
    print("CPU: " + "; ".join(sorted(cpus)) + "." + (" oneDNN's bf16: " + "; ".join(sorted(implementations)) + "."
                                                    if implementations else ""))


if __name__ == "__main__":
    main()
