"""lobench.run() (lobench/sweep_api.py): the `lobench run` command as a Python call. Its rows equal the
command's on the same points and seed (keys, loss, errors, memory; times differ), read back from the
command's run file; invalid input raises the command's own message; `out=` writes a file that `lobench
merge` and the readers accept; nothing reaches stdout; a notebook can run a redefined variant again."""
import importlib.util
import math
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("lobench._engine", reason="lobench._engine is built with the C++ tree (LOBENCH_PYTHON_PACKAGE=ON)")
pytest.importorskip("h5py")
pd = pytest.importorskip("pandas")

import lobench  # noqa: E402
from lobench import results  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
EXAMPLE = os.path.join(ROOT, "examples", "python", "numpy_dense.py")
CLI = os.environ.get("LOBENCH_EXE")  # the C++ program (ctest sets it)

# A small sweep, as keywords and as the command's words: 2 reductions x 2 vocabulary sizes.
POINTS = dict(B=1, N=9, V=[300, 517], D=8, L=3, reduction=["mean", "sum"], weighted=True, pad_fraction=0.2,
              dup_fraction=0.2, warmup=1, reps=2, threads=1, mem_limit="1G", seed=7)
WORDS = ["--B", "1", "--N", "9", "--V", "300,517", "--D", "8", "--L", "3", "--reduction", "mean,sum", "--weighted",
         "--pad-fraction", "0.2", "--dup-fraction", "0.2", "--warmup", "1", "--reps", "2", "--threads", "1",
         "--mem-limit", "1G", "--seed", "7"]
# The columns that say which row it is, and those that must be equal bit for bit (times differ).
KEYS = ["variant", "backend", "B", "N", "P", "V", "D", "L", "reduction", "weighted", "block_v", "block_p", "threads",
        "seed", "e_format", "e_rounding", "operand", "status", "reps", "warmup", "origin", "timing_source",
        "memory_meter"]
EXACT = ["loss", "ref_loss", "rel_loss_err", "rel_dA_err", "rel_dE_err", "rel_loss_err_kernel", "rel_dA_err_kernel",
         "rel_dE_err_kernel", "counts_mismatch", "predicted_bytes", "input_bytes", "output_bytes", "e_stored_bytes",
         "flops"]


@pytest.fixture(autouse=True)
def same_products(monkeypatch):
    # the fp32 tiles' products are chosen per process by measurement: the same choice for both sides
    monkeypatch.setenv("LOBENCH_PRODUCTS", "library")
    monkeypatch.delenv("LOBENCH_PLUGIN_PATH", raising=False)


def env_for_children():
    env = dict(os.environ)
    package_parent = os.path.dirname(os.path.dirname(lobench.__file__))
    env["PYTHONPATH"] = os.pathsep.join(p for p in [package_parent, env.get("PYTHONPATH", "")] if p)
    return env


def command(*args):
    """`lobench run ...`: the C++ program where ctest names it, else `python -m lobench` (the same engine)."""
    argv = [CLI] if CLI and not any(":" in a for a in args) else [sys.executable, "-m", "lobench"]
    p = subprocess.run(argv + list(args), capture_output=True, text=True, env=env_for_children(), timeout=300)
    return p.returncode, p.stdout, p.stderr


def example_variant():
    spec = importlib.util.spec_from_file_location("numpy_dense_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.NumpyDense()


def example_variant_named(name):
    v = example_variant()
    v.name = name
    return v


def assert_same_rows(df, path):
    ref = results.read(path)
    assert list(df.columns) == list(ref.columns)
    assert [str(t) for t in df.dtypes] == [str(t) for t in ref.dtypes]
    assert len(df) == len(ref) > 0
    for (_, mine), (_, theirs) in zip(df.iterrows(), ref.iterrows()):
        assert [mine[k] for k in KEYS] == [theirs[k] for k in KEYS]
        for col in EXACT:
            a, b = mine[col], theirs[col]
            assert (a == b) or (isinstance(a, float) and math.isnan(a) and math.isnan(b)), (mine["variant"], col, a, b)
        if mine["memory_meter"] == "counting_allocator":  # exact (a Python variant's RSS growth is not)
            assert mine["peak_bytes"] == theirs["peak_bytes"], mine["variant"]
    assert df.attrs["sweep_axes"] == ref.attrs["sweep_axes"]
    assert df.attrs["fp32_products"] == ref.attrs["fp32_products"]


def test_built_in_rows_equal_the_commands(tmp_path):
    out = tmp_path / "cli.h5"
    rc, stdout, err = command("run", *WORDS, "--variants", "fused,chunked", "--out", str(out))
    assert rc == 0, err
    df = lobench.run(["fused", "chunked"], **POINTS)
    assert_same_rows(df, out)
    assert set(df["status"]) == {"ok"} and (df["time_median_s"] > 0).all()
    assert df.attrs["units"]["time_median_s"] == "s" and df.attrs["units"]["peak_bytes"] == "bytes"
    assert df.attrs["argv"].startswith("lobench.run: lobench run ")


def test_a_python_variant_object_gives_the_rows_of_its_file_spec(tmp_path):
    # `python -m lobench run --variants fused,FILE:Class` against lobench.run with the object itself,
    # whose rows run in a child process (isolation) that gets it pickled: by value, as its module was
    # loaded from a file by hand and cannot be imported by name
    pytest.importorskip("cloudpickle")
    out = tmp_path / "cli.h5"
    rc, stdout, err = command("run", *WORDS, "--variants", f"fused,{EXAMPLE}:NumpyDense", "--out", str(out))
    assert rc == 0, err
    df = lobench.run(["fused", example_variant()], **POINTS)
    ref = results.read(out)
    # the origin names where the variant came from: the file's spec there, the object's class here
    assert all(o.startswith("python numpy_dense_example.NumpyDense object") for o in df[df.backend == "python"].origin)
    df["origin"] = ref["origin"]
    assert_same_rows(df, out)
    assert set(df["status"]) == {"ok"}
    assert (df[df.variant == "numpy_dense"]["rel_dE_err"] < 1e-5).all()


def test_a_file_spec_is_taken_as_the_command_takes_it(tmp_path):
    (tmp_path / "mine.py").write_text(open(EXAMPLE).read().replace('"numpy_dense"', '"dense_from_file"'))
    spec = f"{tmp_path / 'mine.py'}:NumpyDense"
    df = lobench.run(f"fused,{spec}", **dict(POINTS, V=300, reduction="mean"))
    assert list(df["variant"]) == ["fused", "dense_from_file"] and set(df["status"]) == {"ok"}
    assert df.iloc[1]["origin"].startswith(f"python {spec}")
    assert lobench.run([spec, spec], **dict(POINTS, V=300, reduction="mean"))["variant"].tolist() == ["dense_from_file"]
    # the name now belongs to that file in this process: another class under it is refused, saying so
    with pytest.raises(ValueError, match="dense_from_file .*registered that name from .*mine.py:NumpyDense"):
        lobench.run([example_variant_named("dense_from_file")], **POINTS)


def engine_message(*args):
    """The command's one-line error (without its `lobench: ` prefix) and its exit status."""
    rc, stdout, err = command("run", *args)
    first = err.strip().splitlines()[0]
    for prefix in ("lobench: error: ", "lobench: "):
        if first.startswith(prefix):
            return rc, first[len(prefix):]
    return rc, first


@pytest.mark.parametrize("keywords,words", [
    (dict(B=0), ["--B", "0"]),
    (dict(variants=["fused", "no_such_variant"]), ["--variants", "fused,no_such_variant"]),
    (dict(pad_fraction=1.5), ["--pad-fraction", "1.5"]),
    (dict(reps=-1), ["--reps", "-1"]),
    (dict(mem_limit="lots"), ["--mem-limit", "lots"]),
    (dict(V=[]), ["--V", ""]),
    (dict(resume=True, overwrite=True), ["--resume", "--overwrite"]),
    (dict(isolate=True, no_isolate=True), ["--isolate", "--no-isolate"]),
])
def test_invalid_input_raises_the_commands_message(tmp_path, keywords, words):
    rc, message = engine_message(*WORDS, *words, "--out", str(tmp_path / "cli.h5"))
    assert rc == 2
    with pytest.raises(ValueError) as e:
        lobench.run(**dict(POINTS, **keywords), out=str(tmp_path / "api.h5"))
    assert str(e.value) == message
    assert not (tmp_path / "api.h5").exists()


def test_an_existing_file_is_refused_and_left_as_it_was(tmp_path):
    out = tmp_path / "run.h5"
    out.write_bytes(b"not yours")
    with pytest.raises(ValueError, match="exists"):
        lobench.run("fused", **POINTS, out=str(out))
    assert out.read_bytes() == b"not yours"


def test_keywords_that_are_no_option_are_type_errors():
    with pytest.raises(TypeError, match="unexpected keyword argument 'vocab'.*block_v"):
        lobench.run("fused", vocab=10)
    with pytest.raises(TypeError, match="'weighted' is a flag"):
        lobench.run("fused", weighted="yes")
    with pytest.raises(TypeError, match="takes no 'format'"):
        lobench.run("fused", format="csv")


def test_out_writes_a_part_that_merge_joins_with_the_commands_part(tmp_path):
    mine, theirs, merged = tmp_path / "part0.h5", tmp_path / "part1.h5", tmp_path / "merged.h5"
    df = lobench.run(["fused"], **POINTS, partition="0/2", out=str(mine))
    assert len(df) == 2
    pd.testing.assert_frame_equal(df, results.read(mine))
    rc, _, err = command("run", *WORDS, "--variants", "fused", "--partition", "1/2", "--out", str(theirs))
    assert rc == 0, err
    rc, _, err = command("merge", str(merged), str(mine), str(theirs))
    assert rc == 0, err
    assert sorted(results.read(merged)["V"].tolist()) == [300, 300, 517, 517]


def test_list_returns_the_commands_lines():
    rc, stdout, err = command("run", *WORDS, "--variants", "fused,chunked", "--list")
    assert rc == 0, err
    assert lobench.run(["fused", "chunked"], **POINTS, list=True) == stdout.splitlines()[:-1]


def test_dry_run_returns_the_planned_rows():
    df = lobench.run(["fused"], **POINTS, dry_run=True)
    assert set(df["status"]) == {"planned"} and len(df) == 4


SCRIPT = textwrap.dedent('''
    import sys
    import lobench
    from lobench.python_variants import Variant
    import numpy as np

    class Offset(Variant):  # defined in __main__, as in a notebook: the row's process gets it by value
        name = "offset"
        def __init__(self, by):
            self.by = by
        def prepare(self, A, E, targets, weights, reduction, options):
            def step():
                r = lobench.bce(A, E, targets, weights=weights, reduction=reduction)
                return r.loss + self.by, r.dA, r.dE, r.counts
            return step

    kw = dict(B=1, N=9, V=300, D=8, L=3, reps=2, warmup=1, threads=1, mem_limit="1G", progress=PROGRESS)
    first = lobench.run(["fused", Offset(0.0)], **kw)
    again = lobench.run([Offset(1.0)], **kw)  # the same name, another object: a notebook cell run again
    sys.stderr.write(f"RESULT {first.status.tolist()} {first.rel_loss_err.iloc[1]} {again.loss.iloc[0] - first.loss.iloc[1]}\\n")
''')


@pytest.mark.parametrize("progress", [None, True])
def test_nothing_on_stdout_and_a_bar_only_when_asked(tmp_path, progress):
    pytest.importorskip("cloudpickle")
    script = tmp_path / "notebook.py"
    script.write_text(SCRIPT.replace("PROGRESS", repr(progress)))
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env_for_children(),
                       timeout=300, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr
    assert p.stdout == ""
    result = [l for l in p.stderr.splitlines() if l.startswith("RESULT ")]
    assert result, p.stderr
    status, rel_err, shift = result[0].split(" ", 1)[1].rsplit(" ", 2)
    assert status == "['ok', 'ok']" and float(rel_err) < 1e-6 and abs(float(shift) - 1.0) < 1e-9
    bar = p.stderr.replace(result[0], "")
    if progress:
        assert "lobench.run:" in bar and "100%" in bar, bar
    else:
        assert bar.strip() == "", bar  # not a terminal: no bar, no notes


def test_a_main_class_without_cloudpickle_is_refused_with_the_ways_out(monkeypatch):
    class InMain(lobench.python_variants.Variant):
        name = "in_main"

        def prepare(self, A, E, targets, weights, reduction, options):
            return lambda: None

    InMain.__module__ = "__main__"
    monkeypatch.setitem(sys.modules, "cloudpickle", None)  # import cloudpickle raises ImportError
    with pytest.raises(ValueError, match="in_main: .*cloudpickle.*no_isolate=True"):
        lobench.run([InMain()], **POINTS)
