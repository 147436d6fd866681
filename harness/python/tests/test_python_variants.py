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


@pytest.mark.slow  # the same run and checks, stricter, in the fast tier: test_jax_peers.py's jax_dense case
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


HOSTILE = textwrap.dedent('''
    import os, sys
    import numpy as np
    from lobench.python_variants import Variant

    def outputs(A, E, loss=0.5, dA=None, counts=None):
        r = (loss, np.zeros(A.shape, np.float32) if dA is None else dA, np.zeros(E.shape, np.float32))
        return r if counts is None else r + (counts,)

    class Quiet(Variant):
        def prepare(self, A, E, targets, weights, reduction, options):
            return lambda: self.result(A, E)

    class SysExit(Quiet):
        name = "sys_exit"
        def result(self, A, E): sys.exit(0)
    class HardExit(Quiet):
        name = "hard_exit"
        def result(self, A, E): os._exit(0)
    class Segfaults(Quiet):
        name = "segfaults"
        def result(self, A, E):
            import ctypes
            ctypes.string_at(0)
    class StrLoss(Quiet):
        name = "str_loss"
        def result(self, A, E): return outputs(A, E, loss="0.69")
    class BoolLoss(Quiet):
        name = "bool_loss"
        def result(self, A, E): return outputs(A, E, loss=True)
    class NaNLoss(Quiet):
        name = "nan_loss"
        def result(self, A, E): return outputs(A, E, loss=float("nan"))
    class ComplexDA(Quiet):
        name = "complex_dA"
        def result(self, A, E): return outputs(A, E, dA=np.zeros(A.shape, np.complex64))
    class FractionalCounts(Quiet):
        name = "fractional_counts"
        def result(self, A, E): return outputs(A, E, counts=np.full((A.shape[0], 4), 0.5))
    class SkipEmpty(Quiet):
        name = "skip_empty"
        def skip_reason(self, shape, options): return ""
        def result(self, A, E): return outputs(A, E)
    class SkipFalse(Quiet):
        name = "skip_false"
        def skip_reason(self, shape, options): return False
        def result(self, A, E): return outputs(A, E)
    class NegativePrediction(Quiet):
        name = "negative_prediction"
        def predicted_bytes(self, shape, options): return -1
        def result(self, A, E): return outputs(A, E)

    class InitRaises(Variant):
        name = "init_raises"
        def __init__(self): raise RuntimeError("no licence")
    class NameRaises(Variant):
        @property
        def name(self): raise KeyError("name")
''')

ONE = ["--B", "1", "--N", "9", "--V", "300", "--D", "8", "--L", "3", "--warmup", "1", "--reps", "2", "--threads", "1",
       "--mem-limit", "1G"]


def test_a_hostile_variant_costs_its_row_not_the_sweep(tmp_path):
    """Isolated (the default for Python variants): exits, crashes and garbage results each fail their own
    row with the reason; fused after them is measured as ever; the run file reads; exit status 1."""
    (tmp_path / "hostile.py").write_text(HOSTILE)
    expect = {
        "sys_exit": "its step raised SystemExit: 0",
        "hard_exit": "exited with status 0 before its row was complete",
        "segfaults": "killed by SIGSEGV",
        "str_loss": "a loss of type str",
        "bool_loss": "a loss of type bool",
        "nan_loss": "non-finite loss",
        "complex_dA": "dA of dtype complex64",
        "fractional_counts": "counts that are not whole numbers",
        "skip_empty": "skip_reason must return None or a non-empty str, got ''",
        "skip_false": "skip_reason must return None or a non-empty str, got False",
        "negative_prediction": "its predicted working memory is -1 bytes (negative)",
    }
    classes = ["SysExit", "HardExit", "Segfaults", "StrLoss", "BoolLoss", "NaNLoss", "ComplexDA", "FractionalCounts",
               "SkipEmpty", "SkipFalse", "NegativePrediction"]
    out = tmp_path / "run.h5"
    rc, stdout, err = python_lobench("run", *ONE, "--variants", ",".join(f"hostile:{c}" for c in classes) + ",fused",
                                     "--out", str(out), cwd=str(tmp_path))
    assert rc == 1, err + stdout
    by = {r["variant"]: r for r in rows(out)[0]}
    for name, reason in expect.items():
        assert by[name]["status"] == "failed" and reason in by[name]["reason"], (name, by[name]["reason"])
    assert by["fused"]["status"] == "ok" and by["fused"]["rel_dE_err"] < 1e-5, by["fused"]


@pytest.mark.parametrize("args, message", [
    (["--variants", "hostile:InitRaises"], "hostile:InitRaises: InitRaises() raised RuntimeError: no licence"),
    (["--variants", "hostile:NameRaises"], "hostile:NameRaises: reading its `name` raised KeyError"),
    (["--python-variant"], "--python-variant needs a value"),
])
def test_broken_declarations_are_usage_errors_not_tracebacks(tmp_path, args, message):
    (tmp_path / "hostile.py").write_text(HOSTILE)
    rc, stdout, err = python_lobench("run", *ONE, *args, "--out", str(tmp_path / "run.h5"), cwd=str(tmp_path))
    assert rc == 2, (err, stdout)
    assert message in err and "Traceback" not in err, err
    assert not (tmp_path / "run.h5").exists()


def test_the_cpp_program_points_a_python_variant_to_python_m_lobench(tmp_path):
    exe = os.environ.get("LOBENCH_EXE")
    if not exe:
        pytest.skip("LOBENCH_EXE (the C++ program) not given")
    p = subprocess.run([exe, "run", *ONE, "--variants", "mine.py:Mine", "--out", str(tmp_path / "run.h5")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    assert "unknown variant 'mine.py:Mine'" in p.stderr and "python -m lobench run" in p.stderr, p.stderr
