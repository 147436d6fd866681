"""The JAX peers as Python variants (lobench/peer_jax_dense.py, peer_keras_dense.py, peer_jax_chunked.py),
measured by lobench's engine beside `fused` on its ragged inputs: every row ok and within the project's
tolerances of the float64 reference, weights and both reductions; the JAX thread-pool rule; operands they
do not implement skipped with the reason."""
import os

import pytest

pytest.importorskip("lobench._engine", reason="lobench._engine is built with the C++ tree (LOBENCH_PYTHON_PACKAGE=ON)")
pytest.importorskip("h5py")
pytest.importorskip("jax", reason="jax is not installed for this interpreter (scripts/install_deps.sh)")

from peer_run import SWEEP, assert_accurate, python_lobench, rows  # noqa: E402

PEERS = {"jax_dense": ("lobench.peer_jax_dense:JaxDense", True),
         "keras_dense": ("lobench.peer_keras_dense:KerasDense", True),
         "jax_chunked": ("lobench.peer_jax_chunked:JaxChunked", False)}


def keras_usable():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    try:
        import keras
    except Exception as e:  # noqa: BLE001
        return f"keras is not importable ({e})"
    return None if keras.backend.backend() == "jax" else f"keras runs on {keras.backend.backend()}"


# The fast tier runs jax_dense here; keras_dense's and jax_chunked's rows are measured with their errors
# against the float64 reference in the fast tier too, by ctest table2_smoke (mean, unweighted); their
# weighted mean and sum rows are the full tier's.
@pytest.mark.parametrize("name", [n if n == "jax_dense" else pytest.param(n, marks=pytest.mark.slow)
                                  for n in sorted(PEERS)])
def test_peer_runs_beside_fused_with_reference_errors(tmp_path, name):
    spec, counts = PEERS[name]
    if name == "keras_dense" and keras_usable():
        pytest.skip(keras_usable())
    out = tmp_path / "run.h5"
    rc, stdout, err = python_lobench("run", *SWEEP, "--block-v", "128", "--variants", f"fused,{spec}", "--out", str(out))
    assert rc == 0, err + stdout
    rs, attrs = rows(out)
    plugins = attrs["plugins"].decode() if isinstance(attrs["plugins"], bytes) else str(attrs["plugins"])
    assert f"python {spec}" in plugins and "jax " in plugins, plugins
    mine = [r for r in rs if r["variant"] == name]
    assert sorted(r["reduction"] for r in mine) == ["mean", "sum"], mine
    for r in mine:
        assert r["backend"] == "python" and r["threads"] == 1 and r["weighted"] == 1
        assert r["origin"].startswith(f"python {spec}") and "jax " in r["origin"], r["origin"]
        assert (r["timing_source"], r["memory_meter"]) == ("host_clock", "rss_growth"), r
        assert_accurate(r, counts=counts)
    assert [r["status"] for r in rs if r["variant"] == "fused"] == ["ok", "ok"]


def test_a_second_thread_count_is_skipped_not_mislabelled(tmp_path):
    """XLA's pool is sized once: the process is pinned to max(--threads) CPUs, so a 1-thread row of a
    --threads 1,2 sweep cannot have one thread, and says so."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 CPUs")
    out = tmp_path / "run.h5"
    sweep = [a for a in SWEEP]
    sweep[sweep.index("--threads") + 1] = "1,2"
    rc, stdout, err = python_lobench("run", *sweep, "--reduction", "mean", "--variants", "lobench.peer_jax_dense:JaxDense",
                                     "--out", str(out))
    assert rc == 0, err + stdout
    by_threads = {r["threads"]: r for r in rows(out)[0]}
    assert by_threads[2]["status"] == "ok", by_threads[2]["reason"]
    assert by_threads[1]["status"] == "skipped" and "XLA's CPU pool has 2 threads" in by_threads[1]["reason"]


def test_operands_they_do_not_implement_are_skipped(tmp_path):
    out = tmp_path / "run.h5"
    rc, stdout, err = python_lobench("run", *SWEEP, "--reduction", "mean", "--operand", "bf16", "--variants",
                                     "lobench.peer_jax_chunked:JaxChunked", "--out", str(out))
    assert rc == 0, err + stdout
    (r,), _ = rows(out)
    assert r["status"] == "skipped" and "operand bf16 is not implemented by this peer" in r["reason"], r
