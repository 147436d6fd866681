"""What the framework peers (jax_dense_bce.py, keras_dense_bce.py, jax_chunked_bce.py, torch_dense_bce.py)
share: the command line, the inputs protocol, rows of a lobench run file's /results table (results/SCHEMA.md),
the run's yardsticks for a peer's row, and their appending. How they measure is peer_measure.py; the loop
over the points, peer_runner.py.

Rows take the run file's own row type, so a peer writes whatever columns that file has (files of an
earlier schema version simply lack the newer ones). The file is read through plots/lobench_results.py.
"""
import argparse
import datetime
import math

import numpy as np

OPERANDS = ("fp32", "tf32", "bf16")


def parse_list(s):
    """A comma-separated list of positive integers (a shape axis)."""
    try:
        values = [int(x) for x in s.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{s}' is not a comma-separated list of integers")
    if any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"'{s}': every value must be at least 1")
    return values


def parse_args(ap):
    """ap.parse_args() with the common options validated: a bad value exits 2 with a message naming it."""
    import peer_measure
    import os
    args = ap.parse_args()
    allowed = len(os.sched_getaffinity(0))
    if args.threads < 1 or args.threads > allowed:
        ap.error(f"--threads {args.threads}: must be in [1, {allowed}] (the CPUs this process may run on)")
    if not os.path.isfile(args.run):
        ap.error(f"{args.run}: no such run file (create it with `lobench run ... --out {args.run}`)")
    import h5py
    try:
        with h5py.File(args.run, "r") as f:
            if "results" not in f:
                ap.error(f"{args.run}: no /results table (not a lobench run file)")
    except OSError as e:
        ap.error(f"{args.run}: cannot open as HDF5 ({e})")
    for name in ("min_time", "max_time"):
        value = getattr(args, name)
        if not math.isfinite(value) or value < 0:
            ap.error(f"--{name.replace('_', '-')} {value}: must be a finite number >= 0")
    if args.warmup < 0:
        ap.error(f"--warmup {args.warmup}: must be >= 0")
    if args.mem_limit_gib is not None and not (math.isfinite(args.mem_limit_gib) and args.mem_limit_gib > 0):
        ap.error(f"--mem-limit-gib {args.mem_limit_gib}: must be a finite number > 0")
    try:
        peer_measure.repetitions_of(args)
    except ValueError as e:
        ap.error(str(e))
    return args


def parse_operands(s):
    ops = [x for x in s.split(",") if x]
    for op in ops:
        if op not in OPERANDS:
            raise argparse.ArgumentTypeError(f"unknown operand '{op}' (valid: {', '.join(OPERANDS)})")
    if not ops:
        raise argparse.ArgumentTypeError("needs at least one operand")
    return ops


def add_common_args(ap, default_operands="fp32"):
    import peer_measure
    ap.add_argument("run", help="lobench run file to append to (created by `lobench run`)")
    for axis in ("B", "N", "V", "D", "L"):
        ap.add_argument(f"--{axis}", type=parse_list, required=True)
    ap.add_argument("--operand", type=parse_operands, default=parse_operands(default_operands),
                    help=f"precisions of the product's operands, comma-separated ({', '.join(OPERANDS)}; "
                         f"default {default_operands})")
    ap.add_argument("--threads", type=int, default=2,
                    help="CPU threads: the process is bound to its first N CPUs before the framework starts "
                         "(peer_measure.bind_cores); recorded in the rows (0 on a GPU)")
    peer_measure.add_timing_args(ap)
    ap.add_argument("--mem-limit-gib", type=float, default=None,
                    help="skip points whose predicted working set exceeds this (default: the run file's mem_limit_bytes)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-existing", action="store_true",
                    help="leave out points the run file already has a row of this peer for (same shape, operand, "
                         "threads, seed, block size): what a resumed scripts/table2.sh does")


def points(args):
    """(B, N, D, L, V, operand) in lobench's order: operand fastest, then V."""
    for B in args.B:
        for N in args.N:
            for D in args.D:
                for L in args.L:
                    for V in args.V:
                        for op in args.operand:
                            yield B, N, D, L, V, op


_last_inputs = {}


def inputs(seed, P, V, D, L):
    """The inputs protocol: A, E ~ N(0, 1) float32, L targets per position uniform in [0, V). The last
    shape's are kept, so that the operands of one point (the fastest axis) share them."""
    key = (seed, P, V, D, L)
    if key not in _last_inputs:
        _last_inputs.clear()
        rng = np.random.default_rng(seed)
        A = rng.standard_normal((P, D), dtype=np.float32)
        E = rng.standard_normal((V, D), dtype=np.float32)
        T = rng.integers(0, V, size=(P, L))
        _last_inputs[key] = (A, E, T)
    return _last_inputs[key]


def text(x):
    return x.decode() if isinstance(x, bytes) else str(x)


def dense_bytes(P, V):
    """The dense working set both peers are judged by: logits, multi-hot targets, logit gradient."""
    return 3 * P * V * 4


def _lobench_results():
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plots"))
    import lobench_results
    return lobench_results


class RunFile:
    """The run file's row type, host memory limit and GEMM yardsticks, read once."""

    def __init__(self, path):
        import h5py
        self.path = path
        with h5py.File(path, "r") as f:
            self.dtype = f["results"].dtype
            self.has_samples_table = "samples" in f
        self.rows, self.attrs = _lobench_results().load(path)
        self.mem_limit = float(self.attrs.get("mem_limit_bytes", 20 * 2**30))
        self.version = int(self.attrs.get("schema_version", 1))

    def gpu_gemm_gflops(self, P, D, operand):
        """The run's cuBLAS rate at this operand for a GPU peer: a GPU row's value at this (P, D), or the file
        attributes when they were measured at this shape; NaN if none."""
        names = self.dtype.names
        for r in self.rows:
            if text(r["backend"]) != "cuda" or int(r["P"]) != P or int(r["D"]) != D:
                continue
            row_op = text(r["operand"]) if "operand" in names else ""
            if (row_op or "fp32") == operand and float(r["gemm_gflops"]) > 0:
                return float(r["gemm_gflops"])
        if self.attrs.get("gpu_gemm_shape", "").split() == [f"m={P}", "n=8192", f"k={D}"]:
            return float(self.attrs.get(f"gpu_gemm_{operand}_gflops", math.nan))
        return math.nan

    def cpu_yardsticks(self, threads, P, D):
        """(best SGEMM GFLOP/s, FMA peak GFLOP/s, where they came from) for a CPU peer on `threads` threads:
        the highest of the run's CPU rows on the same threads, else the run's sgemm_best_gflops / fma_peak_gflops
        attributes when sgemm_threads is the same; NaN otherwise (a yardstick of other threads is no
        yardstick). Files before schema version 3 have neither: their CPU rows' gemm_gflops is the SGEMM of
        the point's tile shape, taken from a row of the same threads, P and D."""
        names = self.dtype.names
        if self.version < 3:
            for r in self.rows:
                if (text(r["backend"]) == "cpu" and int(r["P"]) == P and int(r["D"]) == D
                        and int(r["threads"]) == threads and float(r["gemm_gflops"]) > 0):
                    return float(r["gemm_gflops"]), math.nan, "a cpu row's tile-shape SGEMM (schema < 3)"
            return math.nan, math.nan, "no yardstick (schema < 3, no cpu row of these threads and shape)"
        # The highest of the CPU rows' limits: lobench re-measures the machine's limits when a row runs
        # faster than them and keeps the higher value, so later rows (and a resumed run's) carry higher
        # ones; the first row's would make a peer measured in a faster minute look above its yardstick.
        best = None
        for r in self.rows:
            if text(r["backend"]) == "cpu" and int(r["threads"]) == threads and float(r["gemm_gflops"]) > 0:
                fma = float(r["fma_peak_gflops"]) if "fma_peak_gflops" in names else math.nan
                if best is None or float(r["gemm_gflops"]) > best[0]:
                    best = (float(r["gemm_gflops"]), fma)
        if best is not None:
            return best[0], best[1], f"the highest of the cpu rows' limits at {threads} threads"
        attr_threads = self.attrs.get("sgemm_threads")
        if attr_threads is not None and int(attr_threads) == threads:
            return (float(self.attrs.get("sgemm_best_gflops", math.nan)), float(self.attrs.get("fma_peak_gflops", math.nan)),
                    f"the sgemm_best_gflops attribute ({threads} threads)")
        return math.nan, math.nan, f"no yardstick at {threads} threads in the run (sgemm_threads {attr_threads})"

    def has_row(self, variant, B, N, D, L, V, operand, threads, seed, block_v):
        """Whether the file already holds a row of this peer at this point."""
        names = self.dtype.names
        for r in self.rows:
            row_op = (text(r["operand"]) if "operand" in names else "") or "fp32"
            if (text(r["variant"]) == variant and (int(r["B"]), int(r["N"]), int(r["D"]), int(r["L"]), int(r["V"])) ==
                    (B, N, D, L, V) and row_op == operand and int(r["threads"]) == threads and int(r["seed"]) == seed
                    and int(r["block_v"]) == block_v):
                return True
        return False

    def set_attribute(self, name, value):
        """A root attribute of the run file (a peer's configuration, e.g. its BLAS), as a string."""
        import h5py
        with h5py.File(self.path, "a") as f:
            f.attrs[name] = str(value)

    def new_row(self, variant, B, N, D, L, V, operand, threads, args):
        P = B * N
        row = np.zeros((), dtype=self.dtype)
        for k in self.dtype.names:  # not measured: NaN, never 0 (schema version 2 on)
            if self.dtype[k].kind == "f" and self.version >= 2:
                row[k] = math.nan
        row["variant"], row["backend"], row["reduction"] = variant.encode(), b"peer", b"mean"
        for k, v in dict(B=B, N=N, P=P, V=V, D=D, L=L, threads=threads, seed=args.seed, warmup=args.warmup,
                         reps=0).items():
            row[k] = v
        names = self.dtype.names
        if "operand" in names:
            row["operand"] = operand.encode()
        if "peak_device_bytes" in names and self.version < 2:
            row["peak_device_bytes"] = -1
        if "ranks" in names:
            row["ranks"] = 1
        if "e_format" in names:
            row["e_format"] = b"fp32"
        row["flops"] = 6.0 * P * V * D
        if "time_samples_s" in names:
            row["time_samples_s"][:] = math.nan
        for k in ("rel_loss_err", "rel_dA_err", "rel_dE_err", "ref_loss", "loss", "rel_loss_err_kernel",
                  "rel_dA_err_kernel", "rel_dE_err_kernel", "gemm_fraction"):
            if k in names:
                row[k] = math.nan
        if self.version < 2:
            row["counts_mismatch"] = -1
        if "flags" in names:
            row["flags"] = b""
        row["predicted_bytes"] = dense_bytes(P, V)
        row["input_bytes"] = (P * D + V * D + P * L) * 4
        row["utc"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ").encode()
        return row

    def append(self, row, samples=()):
        """Appended and flushed per row, like lobench: the samples first (in /samples, or in the row's
        time_samples_s column in a version-1 file), then the row."""
        import h5py
        with h5py.File(self.path, "a") as f:
            ds = f["results"]
            n = ds.shape[0]
            row["row_id"] = n
            if "samples" in f:
                t = f["samples"]
                m = t.shape[0]
                t.resize((m + len(samples),))
                for i, x in enumerate(samples):
                    rec = np.zeros((), dtype=t.dtype)
                    rec["row_id"], rec["sample"], rec["seconds"] = n, i, x
                    t[m + i] = rec
            elif "time_samples_s" in ds.dtype.names:
                row["time_samples_s"][: len(samples)] = samples
            ds.resize((n + 1,))
            ds[n] = row


def set_reason(row, text):
    row["reason"] = text.encode()[: row.dtype["reason"].itemsize - 1]


def set_times(row, samples):
    """The timing columns from the samples (which RunFile.append writes), the yardstick fraction and the flags
    (`noisy`, `above_yardstick`); gemm_gflops must be set before."""
    import peer_measure
    med = float(np.median(samples))
    row["reps"] = len(samples)
    row["time_median_s"], row["time_min_s"], row["time_max_s"] = med, min(samples), max(samples)
    names = row.dtype.names
    if "time_cv" in names and len(samples) > 1:
        row["time_cv"] = peer_measure.cv(samples)
    row["effective_gflops"] = row["flops"] / med / 1e9
    if row["gemm_gflops"] > 0:
        row["gemm_fraction"] = row["effective_gflops"] / row["gemm_gflops"]
    if "flags" in names:
        cv = float(row["time_cv"]) if "time_cv" in names else math.nan
        row["flags"] = peer_measure.flags_of(cv, float(row["gemm_fraction"])).encode()


def describe(row):
    ok = row["status"].item() == b"ok"
    op = row["operand"].item().decode() if "operand" in row.dtype.names else "fp32"
    t = f"{float(row['time_median_s']) * 1e3:.1f} ms, {float(row['effective_gflops']):.1f} GFLOP/s" if ok else ""
    frac = float(row["gemm_fraction"])
    if ok and math.isfinite(frac):
        t += f" ({100 * frac:.0f}% of the run's GEMM)"
    if ok and math.isfinite(float(row["peak_bytes"])) and float(row["peak_bytes"]) > 0:
        t += f", peak {int(row['peak_bytes']) / 2**20:.0f} MiB"
    return (f"{row['variant'].item().decode()} B={int(row['B'])} N={int(row['N'])} V={int(row['V'])} D={int(row['D'])} "
            f"L={int(row['L'])} {op}: {row['status'].item().decode()} {t} {row['reason'].item().decode()}")
