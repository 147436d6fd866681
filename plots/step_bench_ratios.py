"""Median [min–max] over the repetitions of a step_bench JSON run (Google Benchmark's --benchmark_out).

For every shape and row: GFLOP/s (wall and CPU time) and the row's ratio to the run's yardstick as
step_bench recorded it (frac_gemm, frac_gemm_cpu: the faster of `gemm` and `gemm_own` as last measured),
and, for context, each repetition's ratio to the OpenBLAS `gemm` row of the same repetition alone and, in
runs with the `_sgemm` rows (the variants with their products through OpenBLAS), `fused`'s and `chunked`'s
ratio to their `_sgemm` row per repetition.

    python3 plots/step_bench_ratios.py results/cpu/fused_own_step.json

With --table epilogue (runs with the `epilogue` row): per shape, the element-wise work of `fused` alone
against the products, from CPU time, each repetition's figures from that repetition's rows: its time per
logit, its time over the yardstick's logit product (e) and over `fused`'s step, the three products' ratio
to the yardstick (p, `gemm_products_own`), the ceiling these two set on `fused`, 3 / (3/p + e) (the
products at their own rate plus the element-wise work, nothing else), and `fused`'s measured ratio.

With --table fused RUN...: one row per run and shape, the runs in the order given (e.g. before and after a
change, alternated in one session), from CPU time: the run's commit, the yardstick's and `fused`'s GFLOP/s
(a change of tiles changes the yardstick too: it is the logit product on `fused`'s tiles), the epilogue's
time per logit (runs with the `epilogue` row), p, and `fused`'s and `chunked`'s ratios to the yardstick
(`chunked` on the 8·P·V·D it computes).

With --table steps RUN... --rows ROW,ROW: one row per run, shape and named row (e.g. fused_bf16,
fused_e4m3), the runs in the order given (runs of two builds alternated in one session): the run's commit,
the step's wall time in ms and its GFLOP/s (wall), its median time over the first named row's median
time in the same run (e.g. e4m3's over bf16's), and x_bf16 where the row has it (step_bench's counter: the
fp8 row's speed over `fused_bf16`'s last repetition, wall time). With --by-commit, one row per commit (in
the order of its first run), shape and named row instead: the median, min and max over its runs' values,
and the number of runs.
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
    ap.add_argument("run", nargs="+", help="step_bench JSON file (--table fused: one or more)")
    ap.add_argument("--table", choices=["rates", "epilogue", "fused", "steps"], default="rates")
    ap.add_argument("--rows", default="fused_bf16", help="--table steps: the benchmark rows, comma-separated")
    ap.add_argument("--by-commit", action="store_true", help="--table steps: the runs of each commit together")
    args = ap.parse_args()
    if args.table == "fused":
        return fused_table(args.run)
    if args.table == "steps":
        return (steps_by_commit if args.by_commit else steps_table)(args.run, args.rows.split(","))
    if len(args.run) > 1:
        ap.error(f"--table {args.table} reads one run; --table fused and --table steps compare several")
    run, reps, shapes = read_run(args.run[0])
    if args.table == "epilogue":
        return epilogue_table(reps, shapes)
    print_rates(run, reps, shapes)


def read_run(path):
    """The run's JSON, its repetitions by (row, shape) then repetition index, and its shapes in order."""
    with open(path) as f:
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
    return run, reps, shapes


def print_rates(run, reps, shapes):
    """The default table (see the module's docstring)."""
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


def epilogue_table(reps, shapes):
    """The --table epilogue rows (see the module's docstring); exit 2 when the run has no epilogue row."""
    if not any(row == "epilogue" for row, _ in reps):
        raise SystemExit("step_bench_ratios.py: the run has no `epilogue` row (step_bench --benchmark_filter with epilogue)")
    print("| shape | epilogue, ns per logit | epilogue / logit product | epilogue / fused step | products / yardstick (p) "
          "| ceiling 3/(3/p + e) | fused / yardstick |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for shape in shapes:
        epi, prod, fused = (reps.get((row, shape), {}) for row in ("epilogue", "gemm_products_own", "fused"))
        if not epi:
            continue
        ceiling = [3 / (3 / prod[i]["frac_gemm_cpu"] + b["of_gemm_time_cpu"]) for i, b in epi.items() if i in prod]
        col = lambda r, key: [b[key] for b in r.values() if key in b]
        print(f"| {shape} | {spread(col(epi, 'ns_per_logit_cpu'))} | {spread(col(epi, 'of_gemm_time_cpu'))} | "
              f"{spread(col(epi, 'of_fused_time_cpu'))} | {spread(col(prod, 'frac_gemm_cpu'))} | {spread(ceiling)} | "
              f"{spread(col(fused, 'frac_gemm_cpu'))} |")


def fused_table(paths):
    """The --table fused rows (see the module's docstring)."""
    print("| run | commit | shape | yardstick GFLOP/s | fused GFLOP/s | epilogue, ns per logit | products / yardstick (p) "
          "| fused / yardstick | chunked / yardstick (8·P·V·D) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for path in paths:
        run, reps, shapes = read_run(path)
        commit = run.get("context", {}).get("commit", "")[:7]
        for shape in shapes:
            col = lambda row, key: [b[key] for b in reps.get((row, shape), {}).values() if key in b]
            if not col("fused", "frac_gemm_cpu"):
                continue
            # (the yardstick's rate: the fused row's own GFLOP/s over its ratio to it, per repetition)
            fused = reps.get(("fused", shape), {}).values()
            yardstick = [b["GFLOP/s_cpu"] / b["frac_gemm_cpu"] for b in fused if "GFLOP/s_cpu" in b and b.get("frac_gemm_cpu")]
            print(f"| {path.rsplit('/', 1)[-1]} | {commit} | {shape} | {spread(yardstick, '{:.0f}')} | "
                  f"{spread(col('fused', 'GFLOP/s_cpu'), '{:.0f}')} | {spread(col('epilogue', 'ns_per_logit_cpu'))} | "
                  f"{spread(col('gemm_products_own', 'frac_gemm_cpu'))} | {spread(col('fused', 'frac_gemm_cpu'))} | "
                  f"{spread(col('chunked', 'frac_gemm_cpu_8PVD'))} |")


def step_medians(paths, rows):
    """Per run (in order), shape and named row: (file name, commit, shape, row, {key: the run's values}) with
    keys real_time, GFLOP/s, x_bf16 (each repetition's) and over_first (the row's median time over the first
    named row's, one value)."""
    for path in paths:
        run, reps, shapes = read_run(path)
        commit = run.get("context", {}).get("commit", "")[:7]
        for shape in shapes:
            first = [b["real_time"] for b in reps.get((rows[0], shape), {}).values() if "real_time" in b]
            for row in rows:
                entries = list(reps.get((row, shape), {}).values())
                if not entries:
                    continue
                values = {key: [b[key] for b in entries if key in b] for key in ("real_time", "GFLOP/s", "x_bf16")}
                values["over_first"] = ([statistics.median(values["real_time"]) / statistics.median(first)]
                                        if first and values["real_time"] else [])
                yield path.rsplit("/", 1)[-1], commit, shape, row, values


def steps_cells(values, count=""):
    """The cells from the wall time on; `count`, when given, follows the time ("71.0 [70.0–72.0] (2)")."""
    return (f"{spread(values['real_time'], '{:.1f}')}{count} | {spread(values['GFLOP/s'], '{:.0f}')} | "
            f"{spread(values['over_first'], '{:.3f}')} | {spread(values['x_bf16'], '{:.3f}')} |")


def steps_table(paths, rows):
    """The --table steps rows (see the module's docstring)."""
    print(f"| run | commit | shape | row | wall time, ms | GFLOP/s (wall) | time / {rows[0]}'s | x_bf16 |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, commit, shape, row, values in step_medians(paths, rows):
        print(f"| {name} | {commit} | {shape} | {row} | " + steps_cells(values, f" ({len(values['real_time'])})"))


def steps_by_commit(paths, rows):
    """The --table steps --by-commit rows (see the module's docstring)."""
    per_commit = {}  # (commit, shape, row) -> {key: [the value of each run]}, in first-seen order
    for _, commit, shape, row, values in step_medians(paths, rows):
        cell = per_commit.setdefault((commit, shape, row), defaultdict(list))
        for key, v in values.items():
            if v:
                cell[key].append(statistics.median(v))
    print(f"| commit | shape | row | runs | wall time, ms | GFLOP/s (wall) | time / {rows[0]}'s | x_bf16 |")
    print("| --- | --- | --- | ---: | --- | --- | --- | --- |")
    for (commit, shape, row), cell in per_commit.items():
        print(f"| {commit} | {shape} | {row} | {len(cell['real_time'])} | " + steps_cells(cell))


if __name__ == "__main__":
    main()
