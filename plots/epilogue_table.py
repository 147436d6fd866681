#!/usr/bin/env python3
"""Markdown table of an epilogue-precision study (`lobench run --epilogue fp32,bf16,fp16`,
docs/method.md#the-epilogue-precision) from one or more run files: one line per row that ran, with its
errors against the float64 reference (relative loss error, relative L2 errors of dA and dE), the largest
of the three in units of the epilogue's unit roundoff u (2^-8 for bf16, 2^-11 for fp16; not for fp32) and
over the largest of the fp32 epilogue's row at the same variant, operand, reduction and shape (with bf16
or fp8 operands most of the error is the operands'), its median step time and that time over the fp32 epilogue's at the same variant, operand, reduction and
shape: the emulation's cost, not a real low-precision epilogue's speed, except where the row ran natively,
marked "native": `fused` with bf16 or fp8 operands in fp16 where the run file's fp16_epilogue attribute
says "native" (in files without it: where cpu_simd lists avx512_fp16 and avx512_bf16), which computes it in
binary16 with the emulation's bits.

Usage: python3 plots/epilogue_table.py RUN.h5 [MORE.h5 ...]
"""
import argparse

from lobench_results import load, precision, text

UNIT_ROUNDOFF = {"bf16": 2.0 ** -8, "fp16": 2.0 ** -11}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    args = ap.parse_args()
    rows = []
    for path in args.runs:
        recs, attrs = load(path)
        cpu = attrs.get("cpu_model", "?")
        simd = str(attrs.get("cpu_simd", "")).split(",")
        fp16_tile = (str(attrs["fp16_epilogue"]).startswith("native") if "fp16_epilogue" in attrs
                     else "avx512_fp16" in simd and "avx512_bf16" in simd)
        for r in recs:
            if text(r["status"]) == "ok":
                rows.append((r, cpu, fp16_tile))

    def point(r):
        return (text(r["variant"]), precision(r, "operand"), text(r["reduction"]), int(r["P"]), int(r["V"]),
                int(r["D"]), int(r["threads"]))

    def largest_error(r):
        return max(float(r[c]) for c in ("rel_loss_err", "rel_dA_err", "rel_dE_err"))

    fp32_rows = {point(r): r for r, _, _ in rows if precision(r, "epilogue") == "fp32"}
    print("| variant | operand | reduction | P | V | D | epilogue | rel. loss error | rel. dA error | rel. dE error "
          "| largest / u | × fp32 epilogue's largest | median step | × fp32 epilogue's time |")
    print("| --- | --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    order = {"fp32": 0, "bf16": 1, "fp16": 2}
    rows.sort(key=lambda rc: (point(rc[0])[1:], point(rc[0])[0], order.get(precision(rc[0], "epilogue"), 9)))
    cpus = set()
    for r, cpu, fp16_tile in rows:
        cpus.add(cpu)
        variant, operand, reduction, P, V, D, threads = point(r)
        epilogue = precision(r, "epilogue")
        errors = [float(r[c]) for c in ("rel_loss_err", "rel_dA_err", "rel_dE_err")]
        base = fp32_rows.get(point(r))
        t = float(r["time_median_s"])
        if epilogue == "fp32":
            in_u, error_ratio, time_ratio = "–", "1", "1"
        else:
            in_u = f"{max(errors) / UNIT_ROUNDOFF[epilogue]:.2f}"
            error_ratio = f"{max(errors) / largest_error(base):.3g}" if base is not None else "–"
            native = (fp16_tile and epilogue == "fp16" and variant == "fused" and operand in ("bf16", "e4m3", "e5m2"))
            ratio = t / float(base["time_median_s"]) if base is not None else None
            time_ratio = "–" if ratio is None else f"{ratio:.2f} (native)" if native else f"{ratio:.0f}"
        print(f"| {variant} | {operand} | {reduction} | {P} | {V} | {D} | {epilogue} | {errors[0]:.1e} | {errors[1]:.1e} "
              f"| {errors[2]:.1e} | {in_u} | {error_ratio} | {1e3 * t:.1f} ms | {time_ratio} |")
    print()
    print(f"CPU: {', '.join(sorted(cpus))}; {len(rows)} rows from {', '.join(args.runs)}.")


if __name__ == "__main__":
    main()
