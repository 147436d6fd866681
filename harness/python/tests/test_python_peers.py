"""The framework peers by their short names: the table the C++ program knows them by
(harness/sweep/python_peers.hpp) names every peer module's class with its name and description,
`lobench list` shows each marked "Python peer", `python -m lobench run --variants jax_dense` runs one, and
the C++ program, which cannot run them, says where they run (exit status 2)."""
import glob
import inspect
import os
import subprocess

import pytest

pytest.importorskip("lobench._engine", reason="lobench._engine is built with the C++ tree (LOBENCH_PYTHON_PACKAGE=ON)")

from lobench import _engine, engine  # noqa: E402
from lobench import python_variants as pv  # noqa: E402
from test_python_variants import SWEEP, python_lobench, rows  # noqa: E402

PACKAGE = os.path.dirname(os.path.abspath(engine.__file__))
LOBENCH_EXE = os.environ.get("LOBENCH_EXE")  # ctest sets it to the build's C++ program


def peer_classes():
    """module:Class of every Variant subclass defined in a lobench/peer_*.py module."""
    found = {}
    for path in sorted(glob.glob(os.path.join(PACKAGE, "peer_*.py"))):
        module_name = "lobench." + os.path.splitext(os.path.basename(path))[0]
        module = __import__(module_name, fromlist=["*"])
        for attr, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, pv.Variant) and value.__module__ == module_name:
                found[f"{module_name}:{attr}"] = value
    return found


def test_the_table_names_every_peer_class_as_the_class_names_itself():
    table = _engine.python_peers()
    assert sorted(spec for _, spec, _ in table) == sorted(peer_classes()), (table, sorted(peer_classes()))
    for name, spec, description in table:
        obj = pv.load_spec(spec)
        assert (obj.name, obj.description) == (name, description), spec
    assert engine.python_peers() == {name: spec for name, spec, _ in table}
    assert not set(engine.python_peers()) & set(_engine.variant_names())  # no peer shadows a built-in


@pytest.mark.skipif(not LOBENCH_EXE, reason="LOBENCH_EXE (the C++ program) is set by ctest")
def test_the_cpp_list_shows_every_peer_marked_python_peer():
    out = subprocess.run([LOBENCH_EXE, "list"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    for name, spec, description in _engine.python_peers():
        at = [i for i, line in enumerate(lines) if line.split()[:2] == [name, "python"]]
        assert len(at) == 1, (name, out.stdout)
        assert description in lines[at[0]], lines[at[0]]
        assert lines[at[0] + 1].split() == ["Python", "peer:", "python", "-m", "lobench", "run", "--variants", name,
                                            f"({spec})"], lines[at[0] + 1]


@pytest.mark.skipif(not LOBENCH_EXE, reason="LOBENCH_EXE (the C++ program) is set by ctest")
def test_the_cpp_program_says_where_a_peer_runs(tmp_path):
    out_file = tmp_path / "run.h5"
    done = subprocess.run([LOBENCH_EXE, "run", *SWEEP, "--variants", "fused,jax_dense", "--out", str(out_file)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "jax_dense is a Python peer (lobench.peer_jax_dense:JaxDense): run it with `python -m lobench run" \
        in done.stderr, done.stderr
    assert not out_file.exists()


def test_a_peer_runs_by_its_short_name(tmp_path):
    out = tmp_path / "run.h5"
    rc, stdout, err = python_lobench("run", *SWEEP, "--variants", "fused,jax_dense", "--out", str(out))
    assert rc == 0, err + stdout
    rs, attrs = rows(out)
    peer = [r for r in rs if r["variant"] == "jax_dense"]
    assert len(peer) == 2 and all(r["backend"] == "python" for r in peer), peer
    try:
        import jax  # noqa: F401
    except ImportError:  # the row is still the peer's: skipped with the reason
        assert all(r["status"] == "skipped" and "jax" in r["reason"] for r in peer), peer
    else:
        assert all(r["status"] == "ok" and r["rel_loss_err"] < 1e-5 for r in peer), peer
    plugins = attrs["plugins"].decode() if isinstance(attrs["plugins"], bytes) else str(attrs["plugins"])
    assert "python lobench.peer_jax_dense:JaxDense" in plugins, plugins


def test_python_list_shows_a_loaded_peer_once_and_the_others():
    rc, out, err = python_lobench("list", "--python-variant", "lobench.peer_jax_dense:JaxDense")
    assert rc == 0, err
    lines = out.splitlines()
    for name, spec, _ in _engine.python_peers():
        assert sum(1 for line in lines if line.split()[:1] == [name]) == 1, (name, out)
        assert sum(1 for line in lines if f"--variants {name} ({spec})" in line) == 1, (name, out)
    at = next(i for i, line in enumerate(lines) if line.startswith("jax_dense "))
    assert any("origin: python lobench.peer_jax_dense:JaxDense" in line for line in lines[at:at + 4]), out
