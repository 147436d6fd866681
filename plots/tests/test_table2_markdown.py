"""plots/table2_markdown.py's logic on rows made here: the fastest dense implementation of the run (a peer
when it is faster than lobench's dense; `python`: a Python variant, `peer`: an older file's peer script), fused against the fastest peer, spreads, and a ratio above the
yardstick printed as an error."""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import table2_markdown as t2  # noqa: E402

COLUMNS = [("variant", object), ("backend", object), ("operand", object), ("status", object), ("reason", object),
           ("flags", object), ("B", np.int64), ("N", np.int64), ("D", np.int64), ("L", np.int64), ("V", np.int64),
           ("threads", np.int32), ("reps", np.int32), ("time_median_s", float), ("time_min_s", float),
           ("time_max_s", float), ("time_cv", float), ("effective_gflops", float), ("gemm_fraction", float),
           ("fma_peak_gflops", float), ("peak_bytes", float), ("rss_growth_bytes", float), ("block_v", np.int64)]


def row(variant, backend, t, status="ok", reason="", flags="", frac=0.5, V=100000, block_v=0):
    nan = math.nan
    times = (t, 0.9 * t, 1.2 * t, 0.03) if status == "ok" else (nan, nan, nan, nan)
    return (variant, backend, "fp32", status, reason, flags, 32, 32, 128, 8, V, 2, 3, *times, 100.0, frac, 400.0,
            2**20 if backend == "cpu" else nan, 3 * 2**20, block_v)


def rows(*r):
    return np.array(list(r), dtype=np.dtype(COLUMNS)).view(np.recarray)


def test_speedups_are_against_the_fastest_dense_and_the_fastest_peer():
    table = t2.Rows(rows(row("dense", "cpu", 2.0), row("fused", "cpu", 0.5), row("chunked", "cpu", 0.7),
                         row("jax_dense", "peer", 1.0), row("jax_chunked", "python", 0.8), row("torch_dense", "python", 4.0)))
    summary = "\n".join(t2.summary_table(table))
    # fastest dense: jax_dense (1.0 s), fastest peer: jax_chunked (0.8 s)
    assert "| 32 | 32 | 100,000 | fp32, 2 | jax_dense 1,000.0 | jax_chunked 800.0 | 500.0 | 2.00× | 1.60× | 1.43× |" in summary
    detail = "\n".join(t2.detail_table(table))
    assert "| dense | 2,000.0 | 1,800.0–2,400.0, 3 % (3) |" in detail
    assert "| 0.50× |" in detail.split("| dense |")[1].splitlines()[0]       # lobench's dense vs jax_dense
    assert "1.00× (it)" in detail.split("| jax_dense |")[1].splitlines()[0]


def test_above_the_yardstick_is_an_error_and_oom_is_shown():
    table = t2.Rows(rows(row("fused", "cpu", 0.5, flags="above_yardstick", frac=1.07),
                         row("dense", "cpu", 0, status="skipped", reason="OOM predicted: 30 GiB > 20 GiB"),
                         row("keras_dense", "python", 1.5)))
    detail = "\n".join(t2.detail_table(table))
    fused = detail.split("| fused |")[1].splitlines()[0]
    assert "error (107 %)" in fused and "above_yardstick" in fused
    assert "| dense | OOM |" in detail
    assert "not counted" in detail.split("| keras_dense |")[1].splitlines()[0]
    summary = "\n".join(t2.summary_table(table))
    assert "keras_dense 1,500.0 | keras_dense 1,500.0 | 500.0 | 3.00× | 3.00× | – |" in summary


def test_conditions_name_the_yardsticks():
    lines = t2.conditions({"sgemm_best_gflops": 150.0, "sgemm_threads": 2, "sgemm_eigen_gflops": 140.0, "sgemm_eigen_n": 2048,
                           "sgemm_openblas_gflops": 120.0, "sgemm_openblas_n": 4096, "sgemm_own_gflops": 150.0,
                           "sgemm_own_n": 4096, "fma_peak_gflops": 400.0,
                           "fma_peak_isa": "avx512", "min_time_s": 1.0, "max_reps": 20},
                          rows(row("jax_dense", "peer", 1.0)))
    text = " ".join(lines)
    assert "best SGEMM 150.0 GFLOP/s on 2 threads" in text and "FMA peak 400.0" in text and "OpenBLAS 120.0 at 4096³" in text
    assert "lobench's own micro-kernels 150.0 at 4096³" in text
    assert "adaptive" in text and "jax_dense" not in text  # the peers are peers_line's
    assert "jax_dense" in " ".join(t2.peers_line(rows(row("jax_dense", "peer", 1.0))))


def test_block_sizes_of_one_variant_are_told_apart():
    table = t2.Rows(rows(row("jax_chunked", "peer", 0.8, block_v=1024), row("jax_chunked", "peer", 0.6, block_v=2048),
                         row("fused", "cpu", 0.5)))
    detail = "\n".join(t2.detail_table(table))
    assert "| jax_chunked block_v=1024 | 800.0 |" in detail and "| jax_chunked block_v=2048 | 600.0 |" in detail
    assert "jax_chunked 600.0 | 500.0 | – | 1.20× |" in "\n".join(t2.summary_table(table))
