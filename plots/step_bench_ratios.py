"""Median [min–max] over the repetitions of a step_bench JSON run (Google Benchmark's --benchmark_out).

For every shape and row: GFLOP/s (wall and CPU time) and the row's ratio to the run's yardstick as
step_bench recorded it (frac_gemm, frac_gemm_cpu: the faster of `gemm` and `gemm_own` as last measured),
and, for context, each repetition's ratio to the OpenBLAS `gemm` row of the same repetition alone and, in
runs with the `_sgemm` rows (the variants with their products through OpenBLAS), `fused`'s and `chunked`'s
ratio to their `_sgemm` row per repetition.

    python3 plots/step_bench_ratios.py results/cpu/fused_own_step.json
"""
import argparse
import json
import statistics
from collections import defaultdict


def spread(values, fmt="{:.3g}"):
    if not values:
        return ""
    return f"{fmt.format(statistics.median(values))} [{fmt.format(min(values))}–{fmt.format(max(values))}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="step_bench JSON file")
    args = ap.parse_args()
    with open(args.run) as f:
        run = json.load(f)
    reps = defaultdict(dict)  # (row, shape) -> repetition -> benchmark entry
    for b in run["benchmarks"]:
        if b.get("run_type") != "iteration" or b.get("error_occurred"):
            continue
        row, shape = b["run_name"].split("/", 1)
        if not shape.startswith("V:"):
            continue  # (the peak row)
        reps[(row, shape.replace("/manual_time", ""))][b.get("repetition_index", 0)] = b
    shapes = sorted({s for _, s in reps}, key=lambda s: (int(s.split("/")[1].split(":")[1]), int(s.split("/")[0].split(":")[1])))
    own = any(row.endswith("_sgemm") for row, _ in reps)  # the run has the variants on OpenBLAS products beside
    print("| shape | row | GFLOP/s wall | GFLOP/s CPU time | / yardstick, wall | / yardstick, CPU time | / OpenBLAS gemm, CPU time |"
          + (" / its `_sgemm` row, CPU time |" if own else ""))
    print("| --- | --- | --- | --- | --- | --- | --- |" + (" --- |" if own else ""))
    for shape in shapes:
        gemm = reps.get(("gemm", shape), {})
        for row in ["gemm", "gemm_own", "gemm_products", "gemm_products_own", "fused_sgemm", "fused", "chunked_sgemm", "chunked"]:
            r = reps.get((row, shape))
            if not r:
                continue
            suffix = "_8PVD" if row.startswith("chunked") else ""
            col = lambda key: [b[key] for b in r.values() if key in b]
            vs_blas = [b["GFLOP/s_cpu" + suffix] / gemm[i]["GFLOP/s_cpu"] for i, b in r.items() if i in gemm]
            name = row + (" (on 8·P·V·D)" if suffix else "")
            # per repetition, the variant on our products over the same variant on OpenBLAS's (same repetition)
            sgemm = reps.get((row + "_sgemm", shape), {})
            vs_sgemm = [b["GFLOP/s_cpu"] / sgemm[i]["GFLOP/s_cpu"] for i, b in r.items() if i in sgemm]
            print(f"| {shape} | {name} | {spread(col('GFLOP/s' + suffix))} | {spread(col('GFLOP/s_cpu' + suffix))} | "
                  f"{spread(col('frac_gemm' + suffix))} | {spread(col('frac_gemm_cpu' + suffix))} | {spread(vs_blas)} |"
                  + (f" {spread(vs_sgemm)} |" if own else ""))
    ctx = run.get("context", {})
    for key in ["commit", "gemm_library", "caches", "tile_D128", "tile_D256", "simd_path"]:
        if key in ctx:
            print(f"\n{key}: {ctx[key]}", end="")
    print()


if __name__ == "__main__":
    main()
