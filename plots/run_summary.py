#!/usr/bin/env python3
"""Short text summary of a lobench run file, for a terminal: one line per point (B, N, D, L, V) with
each column's median step time in ms (a column is a variant at one operand precision; OOM: skipped as
out of memory, skip: skipped for another reason, FAIL: failed), then per column the worst errors
against the float64 reference where they were computed, the peak memory at the largest point that ran,
and the GEMM yardstick. The full table with throughput is plots/table2_markdown.py's.

Usage: python3 plots/run_summary.py RUN.h5
"""
import argparse
import math

from lobench_results import load, precision, text


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run")
    args = ap.parse_args()
    rows, attrs = load(args.run)
    names = rows.dtype.names

    def operand(r):
        """The operand precision, and the epilogue's where it is not fp32 (each its own column)."""
        op, epilogue = precision(r, "operand"), precision(r, "epilogue")
        return op if epilogue == "fp32" else f"{op} epilogue {epilogue}"

    def col(r):
        v = text(r["variant"])
        return v if operand(r) == "fp32" else f"{v}/{operand(r)}"

    order = {"peer": 1}
    cols = sorted({col(r) for r in rows},
                  key=lambda c: (order.get(next(text(r["backend"]) for r in rows if col(r) == c), 0), c))
    points = sorted({(int(r["B"]), int(r["N"]), int(r["D"]), int(r["L"]), int(r["V"])) for r in rows})
    by = {(col(r), int(r["B"]), int(r["N"]), int(r["D"]), int(r["L"]), int(r["V"])): r for r in rows}

    if "gpu_gemm_shape" in attrs:
        rates = ", ".join(f"{op} {float(attrs.get(f'gpu_gemm_{op}_gflops', 'nan')):.0f}" for op in ("fp32", "tf32", "bf16"))
        print(f"GEMM yardstick: cuBLAS on {attrs.get('gpu_name', '?')} ({attrs['gpu_gemm_shape']}): {rates} GFLOP/s")
    if "gemm_gflops" in attrs:
        print(f"GEMM yardstick: Eigen SGEMM {float(attrs['gemm_gflops']):.1f} GFLOP/s (first point)")
    width = max([9] + [len(c) + 1 for c in cols])
    print("median ms per step")
    print(f"{'B':>4}{'N':>5}{'D':>5}{'L':>3}{'V':>9} " + "".join(f"{c:>{width}}" for c in cols))
    for p in points:
        cells = []
        for c in cols:
            r = by.get((c,) + p)
            if r is None:
                cells.append("")
            elif text(r["status"]) == "ok":
                cells.append(f"{r['time_median_s'] * 1e3:.2f}")
            elif text(r["status"]) == "skipped":
                cells.append("OOM" if "OOM" in text(r["reason"]) else "skip")
            else:
                cells.append("FAIL")
        print(f"{p[0]:>4}{p[1]:>5}{p[2]:>5}{p[3]:>3}{p[4]:>9} " + "".join(f"{x:>{width}}" for x in cells))

    print("worst errors vs the float64 reference; peak working memory at the largest point run")
    print(f"{'column':<{width + 4}}{'rel_loss':>10}{'rel_dA':>10}{'rel_dE':>10}{'counts':>8}{'peak MiB':>10}{'dev MiB':>9}  at")
    for c in cols:
        mine = [r for r in rows if col(r) == c and text(r["status"]) == "ok"]
        if not mine:
            reasons = {text(r["reason"])[:60] for r in rows if col(r) == c}
            print(f"{c:<{width + 4}}  none ran: {'; '.join(sorted(reasons))[:120]}")
            continue

        def worst(key):
            vals = [float(r[key]) for r in mine if math.isfinite(float(r[key]))]
            return f"{max(vals):.1e}" if vals else "-"

        counts = [int(r["counts_mismatch"]) for r in mine if math.isfinite(float(r["counts_mismatch"]))]
        big = max(mine, key=lambda r: float(r["P"]) * float(r["V"]))
        dev = float(big["peak_device_bytes"]) if "peak_device_bytes" in names else math.nan
        dev = dev if math.isfinite(dev) else -1
        peak_bytes = float(big["peak_bytes"])
        peak = f"{peak_bytes / 2**20:.1f}" if math.isfinite(peak_bytes) and peak_bytes > 0 else "-"
        print(f"{c:<{width + 4}}{worst('rel_loss_err'):>10}{worst('rel_dA_err'):>10}{worst('rel_dE_err'):>10}"
              f"{(str(max(counts)) if counts else '-'):>8}{peak:>10}{(f'{dev / 2**20:.0f}' if dev >= 0 else '-'):>9}"
              f"  B={int(big['B'])} N={int(big['N'])} V={int(big['V'])}")


if __name__ == "__main__":
    main()
