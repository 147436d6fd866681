"""Benchmark runs as the performance gate and the dashboard see them: for every benchmark its
repetitions as times relative to the yardstick measured in the same run.

    run = perf_runs.load("step.json")          # Google Benchmark JSON or a lobench run file (HDF5)
    run.series["fused/V:100000/D:128/manual_time"].values   # one number per repetition, lower is faster

The metric (what `lobench compare` tests and the dashboard draws, so the two cannot disagree):
  - step_bench JSON: a repetition's time over the median time of `gemm/SHAPE` in the same file (the SGEMM
    of the same shape, the yardstick): "time in SGEMMs". Its fraction of the SGEMM rate, the dashboard's
    other view, is work_ratio / value with work_ratio the GFLOP/s counters' ratio (3 for 6·P·V·D against
    2·P·V·D). The gemm rows themselves are the yardstick: kept in absolute seconds and not gated.
    clock="cpu" (the default, DEFAULT_CLOCK): times are the process CPU seconds of the step, all threads
    (from the GFLOP/s_cpu counter): on a machine shared with other jobs, wall time measures the other jobs
    (a CV of 15-20 % at load 10 on 2 cores, against ~5 % for CPU time), while a slower kernel still costs
    more CPU. clock="wall": wall-clock time, for dedicated machines.
  - any other Google Benchmark JSON (no yardstick family): the repetitions' real_time (wall) or
    cpu_time (cpu; Google Benchmark's cpu_time is the main thread's) in seconds.
  - lobench run files: every timed sample of a row (/samples) times the row's yardstick rate over its
    work, seconds · gemm_gflops / (flops / 1e9) = 1 / gemm_fraction of that sample.
Files without repetitions give one value per benchmark, which the gate reports but cannot test.
"""
import hashlib
import json
import math
import os
import re
from dataclasses import dataclass, field

import numpy as np

YARDSTICK_FAMILY = "gemm"
CLOCKS = ("cpu", "wall")
DEFAULT_CLOCK = "cpu"
UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


@dataclass
class Series:
    values: np.ndarray            # per repetition, the gated metric (lower is faster)
    seconds: np.ndarray           # per repetition, absolute time
    metric: str                   # what values are: "time / SGEMM time", "seconds", ...
    gated: bool = True            # False for the yardstick itself
    fraction: np.ndarray = None   # per repetition, fraction of the yardstick's rate (None where not defined)
    rounds: np.ndarray = None     # per repetition, its repetition_index (the round of a paired run)
    unit: str = "s"               # of values, short, for a table's unit column: "CPU s", "s", "x SGEMM time"


@dataclass
class Run:
    path: str
    kind: str                     # "google-benchmark" or "lobench"
    commit: str = "?"
    date: str = "?"
    machine: str = "?"            # a short fingerprint: host, CPU count and a hash of the CPU description
    machine_text: str = "?"       # the description the fingerprint hashes
    series: dict = field(default_factory=dict)
    pairing: str = ""             # a paired run's id (plots/perf_paired.py); "" for a run made alone


class RunFileError(Exception):
    """A file that is not a readable benchmark run (a usage error: exit status 2)."""


def fingerprint(host, description):
    digest = hashlib.sha1(description.encode()).hexdigest()[:8]
    host = re.sub(r"[^A-Za-z0-9._-]+", "_", host or "host")[:40]
    return f"{host}-{digest}"


def load(path, clock=DEFAULT_CLOCK):
    if clock not in CLOCKS:
        raise RunFileError(f"clock {clock!r}: not one of {', '.join(CLOCKS)}")
    try:
        os.stat(path)
    except FileNotFoundError:
        pass  # named below: no such file, or a dangling link
    except OSError as e:  # a folder on the way this user may not enter
        raise RunFileError(f"{path}: cannot be read: {e.strerror}")
    if os.path.isdir(path):
        raise RunFileError(f"{path}: a folder, not a run file (a paired run's files are FOLDER/base.json and "
                           f"FOLDER/cand.json)")
    if not os.path.isfile(path):
        raise RunFileError(f"{path}: no such file" if not os.path.lexists(path) else
                           f"{path}: not a regular file (a device, a FIFO or a dangling link)")
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError as e:  # a file this user may not read (mode 000, another user's)
        raise RunFileError(f"{path}: cannot be read: {e.strerror}")
    if head.startswith(b"\x89HDF"):
        return load_lobench(path)
    if head.lstrip()[:1] == b"{":
        return load_google_benchmark(path, clock)
    raise RunFileError(f"{path}: neither Google Benchmark JSON nor a lobench run file (HDF5)")


def _gb_repetitions(data, path):
    """{run_name: [entries]} of the non-aggregate entries (one per repetition)."""
    reps = {}
    for b in data.get("benchmarks", []):
        if not isinstance(b, dict) or "real_time" not in b:
            raise RunFileError(f"{path}: a benchmark entry without real_time")
        if b.get("run_type") == "aggregate" or b.get("error_occurred"):
            continue
        name = b.get("run_name", b.get("name"))
        if not isinstance(name, str) or not name:
            raise RunFileError(f"{path}: a benchmark entry whose name is {str(name)[:40]!r}, not a string")
        reps.setdefault(name, []).append(b)
    return reps


def _number(e, key, path):
    v = e.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise RunFileError(f"{path}: {str(e.get('name'))[:80]}: '{key}' is {str(v)[:40]!r}, not a number")
    return float(v)


def _unit(e, path):
    unit = e.get("time_unit", "ns")
    if not isinstance(unit, str) or unit not in UNIT_SECONDS:
        raise RunFileError(f"{path}: {str(e.get('name'))[:80]}: time_unit {str(unit)[:20]!r} is not one of "
                           f"{', '.join(UNIT_SECONDS)}")
    return UNIT_SECONDS[unit]


def _positive(values, path, name, what):
    """The gate gives no verdict from a time that is not a positive finite number."""
    bad = ~(np.isfinite(values) & (values > 0))
    if bad.any():
        raise RunFileError(f"{path}: {name[:80]}: {int(bad.sum())} of {len(values)} {what} not a positive finite "
                           f"number (e.g. {values[bad][0]!r}); no verdict from such times")
    return values


def _gb_rounds(entries, path, name):
    idx = [e.get("repetition_index", i) for i, e in enumerate(entries)]
    if not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in idx):
        raise RunFileError(f"{path}: {name[:80]}: a repetition_index that is not a non-negative integer")
    return np.array(idx)


def _gb_seconds(entries, clock, threads, path):
    """Per repetition: seconds of the clock, and the rate counter of that clock (None when absent)."""
    name = str(entries[0].get("name"))
    wall = _positive(np.array([_number(e, "real_time", path) * _unit(e, path) for e in entries]), path, name,
                     "real_time values are")
    rate_key = "GFLOP/s" if clock == "wall" else "GFLOP/s_cpu"
    rates = [e.get(rate_key) for e in entries]
    rates = np.array(rates, dtype=float) if all(isinstance(r, (int, float)) and not isinstance(r, bool)
                                                and math.isfinite(r) and r > 0 for r in rates) else None
    if clock == "wall":
        return wall, rates
    if rates is not None and all(isinstance(e.get("GFLOP/s"), (int, float)) for e in entries):
        # step_bench: GFLOP/s = F / wall, GFLOP/s_cpu = F · threads / process CPU seconds
        flops = np.array([e["GFLOP/s"] for e in entries]) * wall
        return _positive(flops * threads / rates, path, name, "CPU times are"), rates
    return _positive(np.array([_number(e, "cpu_time", path) * _unit(e, path) for e in entries]), path, name,
                     "cpu_time values are"), None


def load_google_benchmark(path, clock=DEFAULT_CLOCK):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError, RecursionError) as e:
        raise RunFileError(f"{path}: not readable JSON ({str(e)[:200]})")
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise RunFileError(f"{path}: no 'benchmarks' list (is this Google Benchmark JSON?)")
    ctx = data.get("context", {})
    if not isinstance(ctx, dict):
        raise RunFileError(f"{path}: 'context' is not an object")
    description = f"{ctx.get('num_cpus')} CPUs at {ctx.get('mhz_per_cpu')} MHz; {ctx.get('caches', '')}; " \
                  f"simd {ctx.get('simd_path', '?')}; {ctx.get('threads', '?')} threads"
    if ctx.get("pairing") and ctx.get("cpu_model"):
        # A paired run needs no yardstick, and is the same machine as lobench's run files made on it: the
        # run files' description (load_lobench), so both kinds get one fingerprint.
        description = f"{ctx.get('cpu_model')}; {ctx.get('hardware_threads', '?')} hardware threads"
    elif ctx.get("gemm_library"):  # the yardstick's library and kernels: a new yardstick starts a new series
        description += f"; yardstick {ctx['gemm_library']}"
    run = Run(path, "google-benchmark", str(ctx.get("commit", "?")), str(ctx.get("date", "?")),
              fingerprint(str(ctx.get("host_name") or "host"), description), f"{ctx.get('host_name', '?')}: {description}",
              pairing=str(ctx.get("pairing") or ""))
    try:
        threads = float(ctx.get("threads", 1) or 1)
    except (TypeError, ValueError):
        raise RunFileError(f"{path}: context 'threads' {str(ctx.get('threads'))[:40]!r} is not a number")
    if not (math.isfinite(threads) and 1 <= threads <= 1e6):
        raise RunFileError(f"{path}: context 'threads' {threads} is not a thread count")
    reps = _gb_repetitions(data, path)
    if not reps and data["benchmarks"]:
        raise RunFileError(f"{path}: only aggregates (mean, median, ...), no repetitions to test; run the benchmark "
                           "without --benchmark_report_aggregates_only")
    timed = {name: _gb_seconds(es, clock, threads, path) for name, es in reps.items()}
    rounds = {name: _gb_rounds(es, path, name) for name, es in reps.items()}
    yard = {name.partition("/")[2]: name for name in reps if name.partition("/")[0] == YARDSTICK_FAMILY}
    unit = "process CPU" if clock == "cpu" else "wall"
    for name, (secs, rates) in timed.items():
        family, _, shape = name.partition("/")
        ref = yard.get(shape)
        if family == YARDSTICK_FAMILY or ref is None or run.pairing:
            # A paired run (plots/perf_paired.py) needs no yardstick: its control is the baseline's process
            # of the same round, and dividing by this process's own SGEMM only adds that SGEMM's noise (CV of
            # the per-round ratios 6-13 % in seconds against 9-19 % in SGEMMs, 5 rounds at load 3.5).
            run.series[name] = Series(secs, secs, f"{unit} seconds", gated=family != YARDSTICK_FAMILY or not yard,
                                      rounds=rounds[name], unit="CPU s" if clock == "cpu" else "s")
            continue
        ref_secs, ref_rates = timed[ref]
        ref_time = float(np.median(ref_secs))
        fraction = rates / float(np.median(ref_rates)) if rates is not None and ref_rates is not None else None
        run.series[name] = Series(secs / ref_time, secs, f"{unit} time / {ref} {unit} time", True, fraction,
                                  rounds=rounds[name], unit="x SGEMM time")
    return run


LOBENCH_KEY = ("variant", "B", "N", "V", "D", "L", "threads", "reduction", "e_format", "e_rounding", "operand",
               "epilogue")


def _row_name(row, varying):
    parts = [str(row["variant"])]
    parts += [f"{c}:{row[c]}" for c in LOBENCH_KEY[1:] if c in varying]
    return "/".join(parts)


def load_lobench(path):
    import lobench_results  # the one reader of run files (plots/lobench_results.py)
    try:
        df = lobench_results.read(path)
        samples = lobench_results.read_samples(path)
    except (SystemExit, lobench_results.RunFileError) as e:
        raise RunFileError(str(e))
    a = df.attrs
    description = f"{a.get('cpu_model', '?')}; {a.get('hardware_threads', '?')} hardware threads"
    run = Run(path, "lobench", str(a.get("git_commit", "?"))[:12], str(a.get("start_utc", "?")),
              fingerprint(str(a.get("host", "host")), description), f"{a.get('host', '?')}: {description}")
    ok = df[df["status"] == "ok"]
    varying = {c for c in LOBENCH_KEY[1:] if c in df.columns and df[c].nunique() > 1}
    varying |= {"V"} if "V" in df.columns else set()
    by_row = {rid: g["seconds"].to_numpy() for rid, g in samples.groupby("row_id")} if len(samples) else {}
    for _, row in ok.iterrows():
        secs = by_row.get(row["row_id"])
        if secs is None or len(secs) == 0:
            secs = np.array([row["time_median_s"]])
        gemm, flops = row.get("gemm_gflops", math.nan), row.get("flops", math.nan)
        name = _row_name(row, varying)
        if name in run.series:
            name += f"/row:{row['row_id']}"
        if math.isfinite(gemm) and gemm > 0 and math.isfinite(flops) and flops > 0:
            sgemm_seconds = flops / (gemm * 1e9)
            run.series[name] = Series(secs / sgemm_seconds, secs, "time / time at the SGEMM rate", True,
                                      fraction=sgemm_seconds / secs, unit="x SGEMM time")
        else:
            run.series[name] = Series(secs, secs, "seconds")
    return run
