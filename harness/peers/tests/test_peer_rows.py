"""The run's yardsticks for a peer row (peer_rows.RunFile.cpu_yardsticks), the times and flags of a row
(set_times) and the peers' arguments from a run file's sweep (sweep_peer_args)."""
import math

import numpy as np

import peer_rows
from sweep_peer_args import peer_arg_lines


def fake_run(rows, attrs, version=3):
    run = peer_rows.RunFile.__new__(peer_rows.RunFile)
    dtype = np.dtype([("variant", object), ("backend", object), ("operand", object), ("P", np.int64), ("D", np.int64),
                      ("threads", np.int32), ("gemm_gflops", np.float64), ("fma_peak_gflops", np.float64)])
    run.rows = np.array(rows, dtype=dtype).view(np.recarray)
    run.dtype, run.attrs, run.version = dtype, attrs, version
    return run


ATTRS = {"sgemm_best_gflops": 150.0, "sgemm_threads": 2, "fma_peak_gflops": 400.0}


def test_cpu_row_of_the_same_threads_wins():
    run = fake_run([("fused", "cpu", "fp32", 1024, 128, 1, 80.0, 210.0), ("fused", "cpu", "fp32", 1024, 128, 2, 155.0, 405.0)],
                   ATTRS)
    assert run.cpu_yardsticks(2, 1024, 128)[:2] == (155.0, 405.0)
    assert run.cpu_yardsticks(1, 64, 8)[:2] == (80.0, 210.0)  # v3: the machine's SGEMM, not the shape's


def test_attribute_when_no_cpu_row_and_nan_for_other_threads():
    run = fake_run([("jax_dense", "peer", "fp32", 1024, 128, 2, 1.0, 1.0)], ATTRS)
    assert run.cpu_yardsticks(2, 1024, 128)[:2] == (150.0, 400.0)
    gemm, fma, why = run.cpu_yardsticks(1, 1024, 128)
    assert math.isnan(gemm) and math.isnan(fma) and "1 threads" in why


def test_schema_2_files_match_the_tile_shape():
    run = fake_run([("fused", "cpu", "fp32", 1024, 128, 2, 120.0, math.nan), ("fused", "cpu", "fp32", 4096, 128, 2, 130.0, math.nan)],
                   {}, version=2)
    assert run.cpu_yardsticks(2, 4096, 128)[0] == 130.0
    assert math.isnan(run.cpu_yardsticks(2, 16, 128)[0])


def test_set_times_fills_spread_fraction_and_flags():
    dtype = np.dtype([("reps", np.int32), ("time_median_s", np.float64), ("time_min_s", np.float64),
                      ("time_max_s", np.float64), ("time_cv", np.float64), ("flops", np.float64),
                      ("effective_gflops", np.float64), ("gemm_gflops", np.float64), ("gemm_fraction", np.float64),
                      ("flags", "S32")])
    row = np.zeros((), dtype=dtype)
    row["flops"], row["gemm_gflops"] = 3e9, 1.0
    peer_rows.set_times(row, [1.0, 1.2, 1.1])
    assert row["reps"] == 3 and row["time_median_s"] == 1.1 and row["time_min_s"] == 1.0 and row["time_max_s"] == 1.2
    assert math.isclose(row["gemm_fraction"], 3 / 1.1)
    assert row["flags"] == b"noisy,above_yardstick"


def test_peer_args_follow_the_sweep():
    attrs = {"sweep_axes": "B=32,128;N=32;D=128;L=8;reduction=mean;V=100000,200000;threads=1,2;seed=0;operand=fp32",
             "argv": "build/lobench run --B 32,128 --reps 3 --warmup 1 --reps 5 --out x.h5"}
    lines = peer_arg_lines(attrs)
    assert lines == ["--B 32,128 --N 32 --V 100000,200000 --D 128 --L 8 --operand fp32 --reps 5 --warmup 1 --seed 0 --threads 1",
                     "--B 32,128 --N 32 --V 100000,200000 --D 128 --L 8 --operand fp32 --reps 5 --warmup 1 --seed 0 --threads 2"]
    attrs["min_time_s"], attrs["max_reps"] = 1.0, 20
    assert "--min-time 1 --max-reps 20 --warmup 1" in peer_arg_lines(attrs)[0]
