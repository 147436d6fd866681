#!/usr/bin/env python3
"""Markdown tables of the fp32 products paths of lobench run files (docs/method.md, "The products of fused and
chunked are chosen per CPU"): which products each file's fp32 `fused`/`chunked` rows ran through (its
fp32_products attribute: our own micro-kernels, the library's or oneDNN's) and why (fp32_products_basis: forced
by LOBENCH_PRODUCTS, measured now, or from the cache), then per variant and shape every path's median step time
over the files that ran it, with its spread and its ratio to our kernels' median: the ground truth a choice
made by a shorter timing is checked against. A file whose choice was measured now also gets the timing it
rests on (the basis's own words).

Usage: python3 plots/products_paths_table.py RUN.h5 [MORE.h5 ...]
"""
import os
import statistics

from run_tables_cli import runs_from_command_line

PATHS = (("own", "own "), ("oneDNN", "oneDNN "), ("library", "library "))  # (name, fp32_products prefix)


def path_of(products):
    for name, prefix in PATHS:
        if products.startswith(prefix):
            return name
    return "mixed" if " at D " in products else "?"


def basis_word(basis):
    if basis.startswith("LOBENCH_PRODUCTS="):
        return "forced (" + basis.split(" ", 1)[0] + ")"
    if basis.startswith("measured now"):
        return "measured now"
    if basis.startswith("from cache"):
        return "from the cache"
    return basis.split(";", 1)[0]


def main():
    frames = runs_from_command_line(__doc__)
    times = {}  # (variant, P, V, D, threads, path) -> [median ms per file]
    print("| run file | fp32 products | how | variant | P | V | D | threads | median ms | GFLOP/s | %GEMM |")
    print("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    cpus, measured = set(), []
    for path, df in frames:
        products, basis = df.attrs.get("fp32_products", ""), df.attrs.get("fp32_products_basis", "")
        cpus.add(df.attrs.get("cpu_model", "?"))
        if basis.startswith("measured now"):
            measured.append((os.path.basename(path), basis))
        rows = df[(df.status == "ok") & (df.backend == "cpu") & (df.operand == "fp32")
                  & df.variant.isin(["fused", "chunked"])]
        for r in rows.itertuples():
            ms = 1e3 * r.time_median_s
            print(f"| {os.path.basename(path)} | {path_of(products)} | {basis_word(basis)} | {r.variant} | {r.P} | {r.V} "
                  f"| {r.D} | {r.threads} | {ms:.1f} | {r.effective_gflops:.1f} | {100 * r.gemm_fraction:.1f} % |")
            times.setdefault((r.variant, r.P, r.V, r.D, r.threads, path_of(products)), []).append(ms)
    print()
    print("| variant | P | V | D | threads | path | files | median ms [min–max] | / own's median |")
    print("| --- | ---: | ---: | ---: | ---: | --- | ---: | --- | ---: |")
    for key in sorted(times, key=lambda k: (k[0], k[3], k[2], k[1], k[4], [p for p, _ in PATHS].index(k[5])
                                            if k[5] in [p for p, _ in PATHS] else 9)):
        variant, P, V, D, threads, path = key
        ms = times[key]
        own = times.get((variant, P, V, D, threads, "own"))
        ratio = f"{statistics.median(ms) / statistics.median(own):.3f}" if own else "–"
        print(f"| {variant} | {P} | {V} | {D} | {threads} | {path} | {len(ms)} "
              f"| {statistics.median(ms):.1f} [{min(ms):.1f}–{max(ms):.1f}] | {ratio} |")
    print()
    print("CPU: " + "; ".join(sorted(cpus)) + ".")
    for name, basis in measured:
        print()
        print(f"{name}, the choice's basis: {basis}")


if __name__ == "__main__":
    main()
