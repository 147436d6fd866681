"""Python variants measured by lobench's engine (`python -m lobench run`, lobench/engine.py): a variant
in a user's own file runs beside fused on the engine's inputs with errors against the float64 reference;
a broken one (raises, wrong shape, NaN, leaks memory, not a step) fails its row with the reason and the sweep goes on;
skip reasons and predicted memory skip a row before prepare() runs; wrong names are usage errors."""
import os
import re
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("lobench._engine", reason="lobench._engine is built with the C++ tree (LOBENCH_PYTHON_PACKAGE=ON)")
h5py = pytest.importorskip("h5py")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
EXAMPLE = os.path.join(ROOT, "examples", "python", "numpy_dense.py")
SWEEP = ["--B", "1", "--N", "9", "--V", "300", "--D", "8", "--L", "3", "--reduction", "mean,sum", "--weighted",
         "--pad-fraction", "0.2", "--dup-fraction", "0.2", "--warmup", "1", "--reps", "2", "--threads", "1",
         "--mem-limit", "1G"]

BROKEN = textwrap.dedent('''
    import numpy as np
    from lobench.python_variants import Variant

    class Raises(Variant):
        name = "raises"
        def prepare(self, A, E, targets, weights, reduction, options):
            def step():
                raise ValueError("kernel not compiled for this shape")
            return step

    class WrongShape(Variant):
        name = "wrong_shape"
        def prepare(self, A, E, targets, weights, reduction, options):
            return lambda: (0.5, np.zeros((A.shape[1], A.shape[0]), np.float32), np.zeros(E.shape, np.float32))

    class ReturnsNaN(Variant):
        name = "returns_nan"
        def prepare(self, A, E, targets, weights, reduction, options):
            dE = np.zeros(E.shape, np.float32)
            dE[3, 1] = np.nan
            return lambda: (0.5, np.zeros(A.shape, np.float32), dE)

    class Leaks(Variant):
        """Keeps 4 MiB (touched) from every step."""
        name = "leaks"
        def prepare(self, A, E, targets, weights, reduction, options):
            kept = []
            def step():
                kept.append(np.ones(1 << 20, np.float32))
                return 0.5, np.zeros(A.shape, np.float32), np.zeros(E.shape, np.float32)
            return step

    class NotAStep(Variant):
        name = "not_a_step"
        def prepare(self, A, E, targets, weights, reduction, options):
            return 42

    class MarksPrepare(Variant):
        """Declines sum, and predicts 1 TiB for mean: neither row may reach prepare()."""
        name = "marks_prepare"
        def skip_reason(self, shape, options):
            return "sums are not supported" if shape["reduction"] == "sum" else None
        def predicted_bytes(self, shape, options):
            return 1 << 40 if shape["reduction"] == "mean" else 0
        def prepare(self, A, E, targets, weights, reduction, options):
            raise AssertionError("prepare ran for a row that had to be skipped")

    class NamedFused(Variant):
        name = "fused"
        def prepare(self, *args):
            raise AssertionError("never")
''')


def python_lobench(*args, cwd=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [os.path.dirname(os.path.dirname(__import__("lobench").__file__)),
                                                    env.get("PYTHONPATH", "")] if p)
    env.pop("LOBENCH_PLUGIN_PATH", None)
    p = subprocess.run([sys.executable, "-m", "lobench", *args], capture_output=True, text=True, env=env, cwd=cwd,
                       timeout=300)
    return p.returncode, p.stdout, p.stderr


def rows(path):
    with h5py.File(path, "r") as f:
        r = f["results"][()]
        attrs = dict(f.attrs)
    text = lambda b: b.decode() if isinstance(b, bytes) else str(b)
    return [{k: (text(row[k]) if r.dtype[k].kind in "SOU" else row[k]) for k in r.dtype.names} for row in r], attrs


def test_a_users_file_runs_beside_fused_with_reference_errors(tmp_path):
    out = tmp_path / "run.h5"
    rc, stdout, err = python_lobench("run", *SWEEP, "--variants", f"fused,{EXAMPLE}:NumpyDense", "--out", str(out))
    assert rc == 0, err + stdout
    rs, attrs = rows(out)
    assert sorted(r["variant"] for r in rs) == ["fused", "fused", "numpy_dense", "numpy_dense"]
    for r in rs:
        assert r["status"] == "ok", r
        for col in ("rel_loss_err", "rel_dA_err", "rel_dE_err"):
            assert r[col] < 1e-5, (r["variant"], col, r[col])  # NaN fails too
        assert r["counts_mismatch"] == 0, r
        assert r["reps"] == 2
    dense = [r for r in rs if r["variant"] == "numpy_dense"]
    assert all(r["backend"] == "python" for r in dense)
    assert all(r["predicted_bytes"] == 3 * 9 * 300 * 8 + (9 + 300) * 8 * 8 for r in dense)
    # where each row came from and how it was measured (schema version 4); provenance lists the variant
    for r in dense:
        assert r["origin"].startswith(f"python {EXAMPLE}:NumpyDense") and "numpy " in r["origin"], r["origin"]
        assert (r["timing_source"], r["memory_meter"]) == ("host_clock", "rss_growth"), r
        assert r["rss_growth_bytes"] == r["peak_bytes"] >= 0, r
    for r in rs:
        if r["variant"] == "fused":
            assert (r["origin"], r["timing_source"], r["memory_meter"]) == ("built-in", "host_clock", "counting_allocator")
    plugins = attrs["plugins"].decode() if isinstance(attrs["plugins"], bytes) else str(attrs["plugins"])
    assert f"python {EXAMPLE}:NumpyDense" in plugins, plugins


SELF_MEASURED = textwrap.dedent('''
    import numpy as np
    from lobench.python_variants import Variant

    class SelfMeasured(Variant):
        """Times itself (a fixed 12.5 ms a step) and reports its framework's peak (12,345 bytes)."""
        name = "self_measured"
        self_timed = True
        def measured_peak_bytes(self):
            return 12345
        def prepare(self, A, E, targets, weights, reduction, options):
            from lobench import bce
            def step():
                r = bce(A, E, targets, weights=weights, reduction=reduction)
                return 0.0125, (r.loss, r.dA, r.dE, r.counts)
            return step

    class BadSelfTimed(Variant):
        name = "bad_self_timed"
        self_timed = True
        def prepare(self, A, E, targets, weights, reduction, options):
            return lambda: (0.5, np.zeros(A.shape, np.float32), np.zeros(E.shape, np.float32))
''')


def test_a_self_timed_variant_with_a_framework_counter_is_recorded_as_such(tmp_path):
    (tmp_path / "measured.py").write_text(SELF_MEASURED)
    out = tmp_path / "run.h5"
    rc, stdout, err = python_lobench("run", *SWEEP, "--variants", "measured:SelfMeasured,measured:BadSelfTimed",
                                     "--out", str(out), cwd=str(tmp_path))
    assert rc == 1, err + stdout  # the badly self-timed rows fail
    rs, _ = rows(out)
    mine = [r for r in rs if r["variant"] == "self_measured"]
    assert len(mine) == 2
    for r in mine:
        assert r["status"] == "ok" and r["rel_dE_err"] < 1e-5, r
        assert r["time_median_s"] == r["time_min_s"] == r["time_max_s"] == 0.0125, r
        assert (r["timing_source"], r["memory_meter"], r["peak_bytes"]) == ("self_timed", "framework_counter", 12345), r
    for r in rs:
        if r["variant"] == "bad_self_timed":
            assert r["status"] == "failed" and "a self-timed step must return (seconds, outputs)" in r["reason"], r


def test_broken_variants_fail_their_rows_and_the_sweep_goes_on(tmp_path):
    (tmp_path / "broken_variants.py").write_text(BROKEN)
    out = tmp_path / "run.h5"
    names = ["Raises", "WrongShape", "ReturnsNaN", "Leaks", "NotAStep", "MarksPrepare"]
    rc, stdout, err = python_lobench("run", *SWEEP, "--variants",
                                     "fused," + ",".join(f"broken_variants:{n}" for n in names), "--out", str(out),
                                     cwd=str(tmp_path))
    assert rc == 1, err + stdout  # finished, with failed rows
    rs, _ = rows(out)
    by = {}
    for r in rs:
        by.setdefault(r["variant"], []).append(r)
    assert [r["status"] for r in by["fused"]] == ["ok", "ok"]
    expect = {
        "raises": "its step raised ValueError: kernel not compiled for this shape",
        "wrong_shape": "its step returned dA of shape (8, 9), expected (9, 8)",
        "returns_nan": "its step returned a non-finite dE (nan at [3, 1])",
        "not_a_step": "prepare() must return a callable step",
    }
    for name, reason in expect.items():
        assert len(by[name]) == 2, by.keys()
        for r in by[name]:
            assert r["status"] == "failed" and reason in r["reason"], (name, r["reason"])
    for r in by["leaks"]:  # 4 MiB a step, as the kernel counts resident pages (to about 64 pages a thread)
        assert r["status"] == "failed" and re.search(r"it leaks memory: the process's resident memory grew by "
                                                     r"(3\.9|4\.[0-2]) and (3\.9|4\.[0-2]) MiB over steps 2 and 3",
                                                     r["reason"]), r["reason"]
    skipped = {r["reduction"]: (r["status"], r["reason"]) for r in by["marks_prepare"]}
    assert skipped["mean"][0] == "skipped" and skipped["mean"][1].startswith("OOM predicted"), skipped
    assert skipped["sum"] == ("skipped", "sums are not supported"), skipped


def test_list_shows_python_variants_with_their_origin(tmp_path):
    rc, out, err = python_lobench("list", "--python-variant", f"{EXAMPLE}:NumpyDense")
    assert rc == 0, err
    lines = out.splitlines()
    at = next(i for i, l in enumerate(lines) if l.startswith("numpy_dense "))
    assert "python" in lines[at]
    assert any(f"origin: python {EXAMPLE}:NumpyDense" in l and "numpy " in l for l in lines[at:at + 3]), out
    assert any(l.startswith("fused ") for l in lines)


@pytest.mark.parametrize("spec, message", [
    ("broken_variants:NamedFused", "the name of variant cpu/fused is already registered (built-in)"),
    ("no_such_module_here:Thing", "cannot import no_such_module_here"),
    ("broken_variants:Missing", "broken_variants has no attribute Missing"),
    ("/nonexistent/file.py:Thing", "/nonexistent/file.py: no such file"),
])
def test_wrong_names_are_usage_errors(tmp_path, spec, message):
    (tmp_path / "broken_variants.py").write_text(BROKEN)
    out = tmp_path / "run.h5"
    rc, stdout, err = python_lobench("run", *SWEEP, "--variants", spec, "--out", str(out), cwd=str(tmp_path))
    assert rc == 2, (err, stdout)
    assert message in err, err
    assert not out.exists()


def test_the_jax_dense_peer_is_a_row_with_accuracy(tmp_path):
    pytest.importorskip("jax")
    out = tmp_path / "run.h5"
    rc, stdout, err = python_lobench("run", *SWEEP, "--variants", "fused,lobench.peer_jax_dense:JaxDense",
                                     "--out", str(out))
    assert rc == 0, err + stdout
    rs, attrs = rows(out)
    peer = [r for r in rs if r["variant"] == "jax_dense"]
    assert len(peer) == 2 and all(r["status"] == "ok" for r in peer), peer
    for r in peer:
        for col in ("rel_loss_err", "rel_dA_err", "rel_dE_err"):
            assert r[col] < 1e-5, (r["reduction"], col, r[col])
        assert r["counts_mismatch"] == 0, r
    plugins = attrs["plugins"].decode() if isinstance(attrs["plugins"], bytes) else str(attrs["plugins"])
    assert "python lobench.peer_jax_dense:JaxDense" in plugins and "jax " in plugins, plugins
