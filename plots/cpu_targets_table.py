#!/usr/bin/env python3
"""Issue 44's CPU targets, one line per lobench run file, each a ratio measured in that run, with whether it
is met: so that a run on any CPU says at once where lobench stands there (results/cpu/performance.md).

  fp32 fused, D = 128    %GEMM of fp32 `fused` (over the larger yardstick: the best square SGEMM or the
                         product at the row's shape; docs/method.md#the-yardstick)          target ≥ 90 %
  fp32 fused, D = 256    the same                                                             target ≥ 95 %
  chunked, 8·P·V·D       the lowest of the fp32 `chunked` rows, on the 8·P·V·D it computes   target ≥ 85 %
  bf16 fused, D = 128    %GEMM of bf16 `fused` over the bf16 yardstick (lobench's or oneDNN's bf16
                         products, the faster)                            target ≥ 70 % where the CPU has AMX
  bf16 / fp32 speed      fp32 `fused`'s step time over bf16 `fused`'s at D = 128: the issue's "about 3× fp32
                         `fused`" beside its 70 % (shown, not judged)
  e4m3 / bf16 time       e4m3 `fused`'s step time over bf16 `fused`'s at D = 128 ("e4m3 at bf16 speed")
                                                                          target ≤ 1.05 (within the noise)
  bf16 GEMM / oneDNN     lobench's bf16 products over oneDNN's bf16 matmul at the square size
                                                                          target ≥ 1.00 where the CPU has AMX

A ✓ or ✗ follows each value; "–" where the run has no such row (or no oneDNN); a target that holds only on
AMX reads "(no AMX)" on other CPUs, whose value is shown but not judged. Rows flagged by the run
(`busy`, `noisy`, ...) are used as they are; the flags are counted in the last column. Under a table of
several runs, a line says in how many of them each target was met (a machine's spread can put one target
on either side of its line from run to run).

The runs this reads are made by, for example:
    build/lobench run --variants fused,chunked --operand fp32,bf16,e4m3 --B 32 --N 32 --V 100000 \\
        --D 128,256 --L 8 --threads 2 --reps 5 --out RUN.h5

Usage: python3 plots/cpu_targets_table.py RUN.h5 [MORE.h5 ...]
"""
import math
import os

from run_tables_cli import runs_from_command_line


def rows_of(df, variant, operand, D=None):
    r = df[(df.variant == variant) & (df.operand == operand) & (df.status == "ok") & (df.backend == "cpu")]
    return r if D is None else r[r.D == D]


def judged(value, ok, text, applies=True):
    """The cell: `text` (the value written), then ✓/✗, or "(no AMX)" where the target does not apply; and
    the verdict: True or False, None where nothing is judged."""
    if value is None or not math.isfinite(value):
        return "–", None
    if not applies:
        return f"{text} (no AMX)", None
    met = bool(ok(value))
    return f"{text} {'✓' if met else '✗'}", met


# Values are written rounded away from their target's side (down for a lower bound, up for an upper one), so
# that a value judged short of its target never reads as meeting it (0.89996 is "89.99 %", not "90.00 %").
def percent(x):
    return f"{math.floor(1e4 * x) / 100:.2f} %"


def down(x, digits):
    return f"{math.floor(x * 10 ** digits) / 10 ** digits:.{digits}f}"


def up(x, digits):
    return f"{math.ceil(x * 10 ** digits) / 10 ** digits:.{digits}f}"


def has_amx(attrs):
    simd = attrs.get("cpu_simd")
    if simd is not None:
        return "amx_bf16" in str(simd).split(",")
    return "amx" in str(attrs.get("bf16_gemm_library", "")).lower()  # (files before cpu_simd)


def first(series):
    return float(series.iloc[0]) if len(series) else None


# Each target's name in the "met" line and its column's heading, in line()'s order.
TARGETS = [("fp32 fused, D = 128", "fp32 fused, D = 128 (≥ 90 %)"),
           ("fp32 fused, D = 256", "fp32 fused, D = 256 (≥ 95 %)"),
           ("chunked", "chunked, 8·P·V·D (≥ 85 %)"),
           ("bf16 fused, D = 128", "bf16 fused, D = 128 (≥ 70 % on AMX)"),
           ("e4m3 / bf16 time", "e4m3 / bf16 time (≤ 1.05)"),
           ("bf16 GEMM / oneDNN", "bf16 GEMM / oneDNN (≥ 1.00 on AMX)")]


# The column shown after the bf16 target, not judged: how many times fp32 `fused`'s speed bf16 `fused` runs.
SPEEDUP_HEADING = "bf16 / fp32 fused speed, D = 128 (shown)"
SPEEDUP_AFTER = 4  # (after the fourth target's column)


def line(path, df):
    a = df.attrs
    amx = has_amx(a)
    fp32_128 = first(rows_of(df, "fused", "fp32", 128).gemm_fraction)
    fp32_256 = first(rows_of(df, "fused", "fp32", 256).gemm_fraction)
    chunked = rows_of(df, "chunked", "fp32").gemm_fraction
    chunked_8pvd = float(chunked.min()) * 8 / 6 if len(chunked) else None
    bf16_128 = first(rows_of(df, "fused", "bf16", 128).gemm_fraction)
    bf16_time = first(rows_of(df, "fused", "bf16", 128).time_median_s)
    e4m3_time = first(rows_of(df, "fused", "e4m3", 128).time_median_s)
    e4m3_over_bf16 = e4m3_time / bf16_time if e4m3_time and bf16_time else None
    fp32_time = first(rows_of(df, "fused", "fp32", 128).time_median_s)
    speedup = f"{fp32_time / bf16_time:.2f}×" if fp32_time and bf16_time else "–"
    ours, theirs = a.get("bf16_gemm_gflops"), a.get("bf16_gemm_onednn_gflops")
    gemm_ratio = float(ours) / float(theirs) if ours is not None and theirs is not None else None
    flagged = int((df["flags"].astype(str) != "").sum())
    cpu = str(a.get("cpu_model", "?")) + (f", {a['cpu_id']}" if "cpu_id" in a else "")
    targets = [
        judged(fp32_128, lambda x: x >= 0.90, percent(fp32_128 or 0)),
        judged(fp32_256, lambda x: x >= 0.95, percent(fp32_256 or 0)),
        judged(chunked_8pvd, lambda x: x >= 0.85, percent(chunked_8pvd or 0)),
        judged(bf16_128, lambda x: x >= 0.70, percent(bf16_128 or 0), applies=amx),
        judged(e4m3_over_bf16, lambda x: x <= 1.05, up(e4m3_over_bf16 or 0, 3)),
        judged(gemm_ratio, lambda x: x >= 1.0, down(gemm_ratio or 0, 2), applies=amx),
    ]
    target_cells = [cell for cell, _ in targets]
    target_cells.insert(SPEEDUP_AFTER, speedup)
    cells = [os.path.basename(path), cpu, "yes" if amx else "no", *target_cells, f"{flagged} of {len(df)}"]
    return "| " + " | ".join(cells) + " |", [met for _, met in targets]


def met_in(verdicts):
    """Under a table of several runs: in how many of the runs that judge it each target was met."""
    parts = []
    for (name, _), column in zip(TARGETS, zip(*verdicts)):
        judged_runs = [met for met in column if met is not None]
        if judged_runs:
            parts.append(f"{name}: {sum(judged_runs)} of {len(judged_runs)}")
    return "Targets met, in the runs that judge them: " + "; ".join(parts) + "." if parts else ""


def main():
    frames = runs_from_command_line(__doc__)
    headings = [heading for _, heading in TARGETS]
    headings.insert(SPEEDUP_AFTER, SPEEDUP_HEADING)
    print("| run file | CPU | AMX | " + " | ".join(headings) + " | rows flagged |")
    print("| --- | --- | --- |" + " ---: |" * (len(headings) + 1))
    verdicts = []
    for path, df in frames:
        text, met = line(path, df)
        print(text)
        verdicts.append(met)
    summary = met_in(verdicts) if len(frames) > 1 else ""
    if summary:
        print()
        print(summary)


if __name__ == "__main__":
    main()
