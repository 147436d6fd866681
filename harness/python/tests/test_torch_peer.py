"""The PyTorch peer as a Python variant (lobench/peer_torch_dense.py), measured by lobench's engine beside
`fused`: rows within the project's tolerances of the float64 reference (weights, both reductions, counts),
and bf16 (autocast) rows measured with their larger error recorded. Debian's torch serves /usr/bin/python3:
ctest python_pytest_torch runs this file there."""
import pytest

pytest.importorskip("lobench._engine", reason="lobench._engine is built with the C++ tree (LOBENCH_PYTHON_PACKAGE=ON)")
pytest.importorskip("h5py")
pytest.importorskip("torch", reason="torch is not importable here (Debian's python3-torch: /usr/bin/python3)")

from peer_run import SWEEP, assert_accurate, python_lobench, rows  # noqa: E402


def test_torch_peer_runs_beside_fused_with_reference_errors(tmp_path):
    out = tmp_path / "run.h5"
    rc, stdout, err = python_lobench("run", *SWEEP, "--operand", "fp32,bf16", "--variants",
                                     "fused,lobench.peer_torch_dense:TorchDense", "--out", str(out))
    assert rc == 0, err + stdout
    rs, _ = rows(out)
    fp32 = [r for r in rs if r["variant"] == "torch_dense" and r["operand"] == "fp32"]
    assert sorted(r["reduction"] for r in fp32) == ["mean", "sum"]
    for r in fp32:
        assert r["backend"] == "python"
        assert r["origin"].startswith("python lobench.peer_torch_dense:TorchDense") and "torch " in r["origin"], r
        import torch
        on_gpu = torch.cuda.is_available()  # CUDA events and torch's allocator peak there
        assert (r["timing_source"], r["memory_meter"]) == (("self_timed", "framework_counter") if on_gpu
                                                           else ("host_clock", "rss_growth")), r
        assert_accurate(r)
    bf16 = [r for r in rs if r["variant"] == "torch_dense" and r["operand"] == "bf16"]
    assert len(bf16) == 2
    for r in bf16:  # bfloat16 products: measured, with an error far above fp32's and still bounded
        assert r["status"] == "ok", r["reason"]
        assert 1e-5 < r["rel_dE_err"] < 0.1, r["rel_dE_err"]
