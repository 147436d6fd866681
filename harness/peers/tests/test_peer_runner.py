"""peer_runner.run_points with a fake framework on a small run file made here: rows of the file's own
type, skipped by predicted memory or by the peer, OOM at run time recorded as skipped, other errors as
failed, samples in /samples, --skip-existing."""
import argparse
import math

import h5py
import numpy as np

import peer_rows
import peer_runner

TEXT = {"variant": 32, "backend": 8, "reduction": 8, "operand": 8, "status": 8, "reason": 192, "flags": 32, "utc": 24,
        "e_format": 24}
INTS = ["row_id", "B", "N", "P", "V", "D", "L", "block_v", "seed", "predicted_bytes", "input_bytes", "output_bytes"]
INT32 = ["threads", "warmup", "reps", "ranks"]
FLOATS = ["time_median_s", "time_min_s", "time_max_s", "time_cv", "flops", "effective_gflops", "gemm_gflops",
          "gemm_fraction", "fma_peak_gflops", "peak_bytes", "rss_growth_bytes", "loss", "peak_device_bytes"]


def make_run(path):
    dtype = np.dtype([(k, f"S{n}") for k, n in TEXT.items()] + [(k, "i8") for k in INTS] + [(k, "i4") for k in INT32]
                     + [(k, "f8") for k in FLOATS])
    with h5py.File(path, "w") as f:
        f.create_dataset("results", shape=(0,), maxshape=(None,), dtype=dtype, chunks=True)
        f.create_dataset("samples", shape=(0,), maxshape=(None,), chunks=True,
                         dtype=np.dtype([("row_id", "i8"), ("sample", "i4"), ("seconds", "f8")]))
        f.attrs["schema_version"] = 3
        f.attrs["mem_limit_bytes"] = 1e6
        f.attrs["sgemm_best_gflops"], f.attrs["sgemm_threads"], f.attrs["fma_peak_gflops"] = 100.0, 1, 300.0


class FakePeer:
    variant, where, on_gpu, threads, cores, device_limit, block_v = "fake_dense", "fake 1.0", False, 1, [0], None, 0

    def __init__(self, fail_at_V=None, error=None):
        self.fail_at_V, self.error, self.released = fail_at_V, error, 0

    def skip_reason(self, op):
        return "bf16 not implemented" if op == "bf16" else None

    def predicted_bytes(self, P, V, D, L):
        return 3 * P * V * 4

    def prepare(self, op, A, E, T, V):
        if V == self.fail_at_V:
            raise self.error
        return lambda: float(np.mean(A @ E.T))

    def how(self, op):
        return "fake"

    def is_oom(self, e):
        return "RESOURCE_EXHAUSTED" in str(e)

    def after_timing(self, row):
        pass

    def release(self):
        self.released += 1


def args_for(path, V, operand=("fp32",), skip_existing=False):
    return argparse.Namespace(run=str(path), B=[1], N=[4], D=[3], L=[2], V=V, operand=list(operand), threads=1, reps=3,
                              min_time=1.0, max_reps=20, max_time=30.0, warmup=1, mem_limit_gib=None, seed=0,
                              skip_existing=skip_existing)


def read(path):
    with h5py.File(path, "r") as f:
        return f["results"][:], f["samples"][:]


def test_rows_statuses_and_samples(tmp_path):
    path = tmp_path / "run.h5"
    make_run(path)
    peer = FakePeer(fail_at_V=50, error=RuntimeError("RESOURCE_EXHAUSTED: out of memory while allocating"))
    peer_runner.run_points(peer_rows.RunFile(str(path)), args_for(path, [10, 50, 100000], operand=("fp32", "bf16")), peer)
    rows, samples = read(path)
    status = {(int(r["V"]), r["operand"].decode()): (r["status"].decode(), r["reason"].decode()) for r in rows}
    assert status[(10, "fp32")][0] == "ok" and "fake" in status[(10, "fp32")][1]
    assert status[(10, "bf16")] == ("skipped", "bf16 not implemented (fake 1.0)")
    assert status[(50, "fp32")][0] == "skipped" and status[(50, "fp32")][1].startswith("OOM: RESOURCE_EXHAUSTED")
    assert status[(100000, "fp32")][0] == "skipped" and status[(100000, "fp32")][1].startswith("OOM predicted: ")
    ok = rows[rows["status"] == b"ok"][0]
    assert ok["reps"] == 3 and ok["gemm_gflops"] == 100.0 and ok["fma_peak_gflops"] == 300.0
    assert math.isfinite(ok["rss_growth_bytes"]) and math.isnan(ok["peak_bytes"])
    assert (samples["row_id"] == ok["row_id"]).sum() == 3
    skipped = rows[rows["status"] == b"skipped"]
    assert np.isnan(skipped["time_median_s"]).all() and len(set(samples["row_id"]) & set(skipped["row_id"])) == 0
    assert peer.released == 2  # every point that was prepared (or tried to be)


def test_other_errors_fail_and_existing_points_are_left_out(tmp_path):
    path = tmp_path / "run.h5"
    make_run(path)
    peer_runner.run_points(peer_rows.RunFile(str(path)), args_for(path, [10, 20]),
                           FakePeer(fail_at_V=20, error=ValueError("bad shape")))
    rows, _ = read(path)
    assert [r["status"].decode() for r in rows] == ["ok", "failed"]
    assert rows[1]["reason"].decode() == "ValueError: bad shape"
    peer_runner.run_points(peer_rows.RunFile(str(path)), args_for(path, [10, 30], skip_existing=True), FakePeer())
    rows, _ = read(path)
    assert [int(r["V"]) for r in rows] == [10, 20, 30]
