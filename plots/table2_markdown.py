#!/usr/bin/env python3
"""Markdown tables of a Table II sweep (Cut BCE paper) from one or more lobench run files (lobench's rows
and the framework peers' rows of the same run: scripts/table2.sh).

Usage: python3 plots/table2_markdown.py RUN.h5 [MORE.h5 ...] [-o TABLE.md] [--note TEXT] [--table summary|rows|conditions]

Two tables. The summary, one line per point (B, N, V): the fastest dense implementation of the run
(lobench's `dense`, `cuda_dense` or any dense peer: `jax_dense`, `keras_dense`, `torch_dense`), the fastest
peer, `fused`, and fused's speed-up over each (fastest time / fused time; `chunked` likewise). Then every
row: median step time, its spread (fastest–slowest sample and CV, with the number of samples), the
effective 6·P·V·D throughput, %GEMM against the run's best SGEMM on the row's threads (cuBLAS at the
row's operand for GPU rows), the FMA peak beside it (the physical ceiling, and the row's fraction of it),
peak working memory (the counting allocator's; a Python peer's is its RSS growth) and the process's peak RSS growth, the row's flags
(`busy`, `noisy`, `above_yardstick`: a ratio above 100 % is printed as an error, not a result) and its
speed-up over the point's fastest dense implementation. Speed-ups compare rows at the same operand and
threads. The paper's TPU figures are printed last for orientation only.
"""
import argparse
import math

from lobench_results import load, precision, text

PAPER = """
Cut BCE paper, Table II (TPU; for orientation, not comparable hardware):
- B=N=32, D=128, L=8, V from 100k up: Cut BCE 53.8–91.9 % faster than Keras BCE on v6e (69.4–83.3 % on v5e),
  the gap growing with V.
- B=N=128, V=100k, D=128, L=8: Keras BCE out of memory; Cut BCE 6.93 ms (v6e), 12.79 ms (v5e).
"""


def is_dense(variant):
    return variant in ("dense", "cuda_dense") or variant.endswith("_dense")


def number(r, name):
    return float(r[name]) if name in r.dtype.names else math.nan


def finite(x):
    return isinstance(x, float) and math.isfinite(x)


def fmt_ms(seconds):
    return f"{seconds * 1e3:,.1f}" if finite(seconds) else "–"


def fmt_mib(x):
    return f"{x / 2**20:,.1f}" if finite(x) else "–"


def fmt_pct(x):
    return f"{100 * x:.0f} %" if finite(x) else "–"


class Rows:
    """The rows by point and implementation; an implementation is (variant, operand, threads, block_v)."""

    def __init__(self, rows):
        names = rows.dtype.names if len(rows) else ()
        self.rows = rows
        self.threads_vary = len({int(r["threads"]) for r in rows}) > 1
        blocks = {}
        for r in rows:
            blocks.setdefault(text(r["variant"]), set()).add(int(r["block_v"]) if "block_v" in names else 0)
        self.blocks_vary = {v for v, b in blocks.items() if len(b) > 1}
        self.by_point = {}
        for r in rows:
            op, epilogue = precision(r, "operand"), precision(r, "epilogue")
            if epilogue != "fp32":  # (another precision of the element-wise work: its own implementation)
                op = f"{op} epilogue {epilogue}" if op != "fp32" else f"epilogue {epilogue}"
            point = (int(r["B"]), int(r["N"]), int(r["D"]), int(r["L"]), int(r["V"]))
            impl = (text(r["variant"]), op, int(r["threads"]), int(r["block_v"]) if "block_v" in names else 0)
            self.by_point.setdefault(point, {})[impl] = r  # a later row of the same key wins (a rerun)

    def label(self, impl):
        variant, op, threads, block_v = impl
        out = variant if op == "fp32" else f"{variant} {op}"
        if variant in self.blocks_vary:
            out += f" block_v={block_v}"
        return f"{out} ({threads} thr)" if self.threads_vary else out


def ok_time(r):
    return float(r["time_median_s"]) if r is not None and text(r["status"]) == "ok" else math.nan


def fastest(impls, predicate):
    """(implementation, row) of the smallest median among those the predicate accepts, or (None, None)."""
    best = (None, None)
    for impl, r in impls.items():
        t = ok_time(r)
        if predicate(impl, r) and finite(t) and (best[1] is None or t < ok_time(best[1])):
            best = (impl, r)
    return best


def is_peer(r):
    """A framework peer's row: a Python variant (backend `python`), or a peer script's of an older file (`peer`)."""
    return text(r["backend"]) in ("python", "peer")


def same_kind(impl, other):
    return impl[1] == other[1] and impl[2] == other[2]  # operand and threads


def speedup(base_row, row):
    a, b = ok_time(base_row), ok_time(row)
    return f"{a / b:.2f}×" if finite(a) and finite(b) else "–"


def summary_table(table):
    out = ["| B | N | V | operand, threads | fastest dense (ms) | fastest peer (ms) | fused (ms) | fused vs fastest dense "
           "| fused vs fastest peer | chunked vs fastest dense |", "|" + "---|" * 10]
    for (B, N, D, L, V), impls in sorted(table.by_point.items()):
        kinds = sorted({(i[1], i[2]) for i in impls})
        for op, threads in kinds:
            kind = lambda i, r, op=op, threads=threads: i[1] == op and i[2] == threads  # noqa: E731
            dense_impl, dense_row = fastest(impls, lambda i, r: kind(i, r) and is_dense(i[0]))
            peer_impl, peer_row = fastest(impls, lambda i, r: kind(i, r) and is_peer(r))
            fused_impl, fused_row = fastest(impls, lambda i, r: kind(i, r) and i[0] in ("fused", "cuda_fused"))
            _, chunked_row = fastest(impls, lambda i, r: kind(i, r) and i[0] in ("chunked", "cuda_chunked"))
            if dense_row is None and fused_row is None and peer_row is None:
                continue

            def cell(impl, row):
                return f"{impl[0]} {fmt_ms(ok_time(row))}" if row is not None else "–"

            out.append(f"| {B} | {N} | {V:,} | {op}, {threads} | {cell(dense_impl, dense_row)} | {cell(peer_impl, peer_row)} | "
                       f"{fmt_ms(ok_time(fused_row))} | {speedup(dense_row, fused_row)} | {speedup(peer_row, fused_row)} | "
                       f"{speedup(dense_row, chunked_row)} |")
    return out


def status_cell(r):
    status, reason = text(r["status"]), text(r["reason"])
    if status == "skipped" and "OOM" in reason:
        return "OOM"
    return status


def detail_table(table):
    out = ["| B | N | V | implementation | median ms | spread: min–max ms, CV (samples) | GFLOP/s | %GEMM | FMA peak GFLOP/s "
           "(%) | peak MiB | RSS growth MiB | flags | vs fastest dense |", "|" + "---|" * 13]
    for (B, N, D, L, V), impls in sorted(table.by_point.items()):
        order = sorted(impls, key=lambda i: (is_peer(impls[i]), i))
        for impl in order:
            r = impls[impl]
            head = f"| {B} | {N} | {V:,} | {table.label(impl)} | "
            if text(r["status"]) != "ok":
                out.append(head + f"{status_cell(r)} | | | | | | | | |")
                continue
            dense_impl, dense_row = fastest(impls, lambda i, rr: same_kind(i, impl) and is_dense(i[0]))
            t_cv = number(r, "time_cv")
            spread = (f"{fmt_ms(number(r, 'time_min_s'))}–{fmt_ms(number(r, 'time_max_s'))}, "
                      f"{fmt_pct(t_cv)} ({int(r['reps'])})")
            flags = text(r["flags"]) if "flags" in r.dtype.names else ""
            frac = number(r, "gemm_fraction")
            pct_gemm = f"error ({fmt_pct(frac)})" if finite(frac) and frac > 1 else fmt_pct(frac)
            fma = number(r, "fma_peak_gflops")
            eff = number(r, "effective_gflops")
            fma_cell = f"{fma:,.0f} ({fmt_pct(eff / fma)})" if finite(fma) and fma > 0 else "–"
            peak = number(r, "peak_bytes")
            counted = not is_peer(r) or (text(r["backend"]) == "peer" and finite(peak) and peak > 0)  # a GPU peer's allocator peak
            vs = speedup(dense_row, r) if dense_row is not None and dense_impl != impl else ("1.00× (it)" if dense_impl == impl else "–")
            out.append(head + f"{fmt_ms(ok_time(r))} | {spread} | {eff:,.1f} | {pct_gemm} | {fma_cell} | "
                       f"{fmt_mib(peak) if counted else 'not counted'} | "
                       f"{fmt_mib(number(r, 'rss_growth_bytes'))} | {flags or '–'} | {vs} |")
    return out


def conditions(attrs, rows):
    lines = []
    best = attrs.get("sgemm_best_gflops")
    if best is not None:
        parts = [f"best SGEMM {float(best):,.1f} GFLOP/s on {attrs.get('sgemm_threads', '?')} threads"]
        if "sgemm_eigen_gflops" in attrs:
            parts.append(f"Eigen {float(attrs['sgemm_eigen_gflops']):,.1f} at {attrs.get('sgemm_eigen_n', '?')}³")
        if "sgemm_openblas_gflops" in attrs:
            parts.append(f"OpenBLAS {float(attrs['sgemm_openblas_gflops']):,.1f} at {attrs.get('sgemm_openblas_n', '?')}³")
        elif "sgemm_openblas_why" in attrs:
            parts.append(f"OpenBLAS not measured: {attrs['sgemm_openblas_why']}")
        if "sgemm_onednn_gflops" in attrs and finite(float(attrs["sgemm_onednn_gflops"])):
            parts.append(f"oneDNN {float(attrs['sgemm_onednn_gflops']):,.1f} at {attrs.get('sgemm_onednn_n', '?')}³")
        if "sgemm_own_gflops" in attrs and finite(float(attrs["sgemm_own_gflops"])):
            parts.append(f"lobench's own micro-kernels {float(attrs['sgemm_own_gflops']):,.1f} at {attrs.get('sgemm_own_n', '?')}³")
        if "fma_peak_gflops" in attrs:
            parts.append(f"FMA peak {float(attrs['fma_peak_gflops']):,.1f} GFLOP/s ({attrs.get('fma_peak_isa', '?')})")
        lines.append("Yardsticks measured in the run (its last measurement): " + "; ".join(parts) + ".")
        # A resumed run, or one whose limits were re-measured, has rows against different yardsticks:
        # each row's %GEMM is against its own (gemm_gflops), whose range is said here.
        own = [number(r, "gemm_gflops") for r in rows if text(r["backend"]) == "cpu" and text(r["status"]) == "ok"]
        own = [g for g in own if finite(g) and g > 0]
        if own and max(own) > 1.01 * min(own):
            lines.append(f"The rows' own yardsticks (each row's %GEMM is against its own) range from {min(own):,.1f} to "
                         f"{max(own):,.1f} GFLOP/s: the machine's speed changed during the run.")
    if "min_time_s" in attrs:
        lines.append(f"Repetitions: adaptive (total ≥ {float(attrs['min_time_s']):g} s and CV ≤ "
                     f"{100 * float(attrs.get('cv_target', 0.05)):g} %, at most {attrs.get('max_reps', '?')}).")
    return lines


def peers_line(rows):
    """The peers of the run (listed apart from the measured conditions: a dated run's peers were other scripts)."""
    peers = sorted({text(r["variant"]) for r in rows if is_peer(r)})
    return [f"Peers in the same run: {', '.join(peers)} (Python variants, lobench/peer_*.py; their "
            f"framework and its version in each row's origin)."] if peers else []


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    ap.add_argument("-o", "--out")
    ap.add_argument("--note", default="", help="a paragraph on the measurement conditions, printed under the title")
    ap.add_argument("--table", choices=("summary", "rows", "conditions"),
                    help="print only this table (for a generated block of a report: scripts/results_tables.py)")
    args = ap.parse_args()
    import numpy as np
    parts, attrs = [], {}
    for path in args.runs:
        file_rows, file_attrs = load(path)
        parts.append(file_rows)
        attrs = attrs or file_attrs  # the first file's provenance and yardsticks
    common = set.intersection(*(set(p.dtype.names) for p in parts))
    rows = np.concatenate([p[[n for n in parts[0].dtype.names if n in common]] for p in parts]) if len(parts) > 1 else parts[0]
    table = Rows(rows)
    if args.table:
        tables = {"summary": summary_table, "rows": detail_table, "conditions": lambda t: conditions(attrs, rows)}
        print("\n".join(tables[args.table](table)))
        return

    on_gpu = any(text(r["backend"]) == "cuda" for r in rows)
    if on_gpu:
        machine = attrs.get("gpu_name") or attrs.get("gpu_model") or "GPU"
        title = f"# Table II on GPU ({machine}; host {attrs.get('cpu_model', '?')}, commit {str(attrs.get('git_commit', '?'))[:10]})"
    else:
        title = f"# Table II on CPU ({attrs.get('cpu_model', '?')}, commit {str(attrs.get('git_commit', '?'))[:10]})"
    out = [title, ""]
    if args.note:
        out += [args.note, ""]
    out += conditions(attrs, rows) + peers_line(rows) + [""]
    out += ["## Summary", "", "Median step times; speed-ups are the other's time / fused's (chunked's) time, at the "
            "same operand and threads.", ""]
    out += summary_table(table) + [""]
    out += ["## Every row", "", "%GEMM: effective 6·P·V·D throughput / the run's best SGEMM on the row's threads "
            "(above 100 % is a measurement error); FMA peak: the physical ceiling and the row's fraction of it; "
            "peak MiB: the counting allocator's working bytes (peers: not counted); RSS growth: the process's peak "
            "resident memory during the timed steps minus before them (a Python peer's: from before prepare() to after the last step).", ""]
    out += detail_table(table) + ["", PAPER.strip()]
    text_out = "\n".join(out) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text_out)
        print(f"wrote {args.out}")
    else:
        print(text_out)


if __name__ == "__main__":
    main()
