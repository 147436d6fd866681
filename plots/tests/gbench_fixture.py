"""Writes Google Benchmark JSON shaped like step_bench's (repetitions, manual time, the GFLOP/s and
GFLOP/s_cpu counters, a gemm yardstick per shape) with chosen times, for the gate and dashboard tests."""
import json

import numpy as np

SHAPE = "V:16000/D:64/manual_time"
WORK = {"gemm": 2.0, "fused": 6.0, "chunked": 6.0}  # flop per P·V·D
PVD = 1024 * 16000 * 64


def write_gbench(path, times_ms, commit="abc", date="2026-12-01T10:00:00+00:00", host="ci", seed=0, cv=0.01,
                 threads=2, reps=7):
    """times_ms: {family: median step time in ms}; every family gets len reps with relative noise cv."""
    rng = np.random.default_rng(seed)
    benchmarks = []
    for family, t in times_ms.items():
        for i in range(reps):
            wall = t * (1 + cv * rng.standard_normal()) / 1e3
            cpu = wall * threads * (1 + cv * rng.standard_normal())
            flops = WORK[family] * PVD
            benchmarks.append({"name": f"{family}/{SHAPE}", "run_name": f"{family}/{SHAPE}", "run_type": "iteration",
                               "repetitions": reps, "repetition_index": i, "iterations": 1,
                               "real_time": wall * 1e3, "cpu_time": wall * 1e3, "time_unit": "ms",
                               "GFLOP/s": flops / wall / 1e9, "GFLOP/s_cpu": flops * threads / cpu / 1e9})
    data = {"context": {"date": date, "host_name": host, "num_cpus": 2, "mhz_per_cpu": 2300,
                        "caches": "L1d 48 KiB", "simd_path": "avx512", "threads": str(threads), "commit": commit},
            "benchmarks": benchmarks}
    with open(path, "w") as f:
        json.dump(data, f)
    return path
