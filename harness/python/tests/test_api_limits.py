"""The Python API's limits are the CLI's, and hostile calls fail cleanly (issue 23): thread counts,
OMP_NUM_THREADS, OpenMP after fork, memory planning before allocation, argument ranges, the run-file
reader on files that are not run files."""
import multiprocessing
import os
import subprocess
import sys

import numpy as np
import pytest

import lobench
from conftest import make_case, reference

SMALL = make_case(37, 301, 16, 3, True, "mean", 1)


def small_bce(**kw):
    return lobench.bce(SMALL["A"], SMALL["E"], SMALL["targets"], SMALL["weights"], **kw)


@pytest.mark.parametrize("threads, exc", [(0, ValueError), (-3, ValueError), (1025, ValueError), (100000, ValueError),
                                          (2.0, TypeError), (True, TypeError), ("2", TypeError)])
def test_threads_outside_the_clis_range_are_refused(threads, exc):
    with pytest.raises(exc, match=r"argument 'threads'.*\[1, 1024\]"):
        small_bce(threads=threads)
    with pytest.raises(exc, match=r"argument 'threads'"):
        lobench.quantize(np.ones(4, np.float32), "bfloat16", threads=threads)


def test_threads_1024_is_accepted_and_exact():
    r = small_bce(threads=1024)
    assert abs(r.loss - reference(**SMALL)["loss"]) <= 1e-6 * reference(**SMALL)["loss"]


def test_omp_num_threads_is_capped_not_trusted():
    code = ("import lobench, numpy as np; from conftest import make_case; c = make_case(37, 301, 16, 3, True, 'mean', 1);"
            "print(lobench._ext.max_threads(), lobench.bce(c['A'], c['E'], c['targets'], c['weights']).loss)")
    env = dict(os.environ, OMP_NUM_THREADS="100000")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=os.path.dirname(__file__), capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    threads, loss = out.stdout.split()
    assert 1 <= int(threads) <= min(os.cpu_count(), 1024)
    assert abs(float(loss) - small_bce().loss) <= 1e-6 * small_bce().loss


def _child_step(queue):
    queue.put((small_bce(threads=2).loss, lobench._ext.forked_child()))


def test_a_child_forked_after_a_step_runs_single_threaded_instead_of_hanging():
    parent = small_bce(threads=2).loss  # the parent's OpenMP pool now exists
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child_step, args=(queue,))
    child.start()
    child.join(60)
    if child.is_alive():
        child.kill()
        pytest.fail("the forked child hung in its first OpenMP region")
    assert child.exitcode == 0
    loss, forked = queue.get(timeout=10)
    assert forked and abs(loss - parent) <= 1e-6 * parent


def test_memory_is_planned_before_allocating():
    P, V, D = 1 << 16, 1 << 20, 8
    need = lobench.planned_bytes(P, V, D, 1, variant="dense")
    assert need > 700 * 2**30  # the dense logits alone are P·V·4 bytes = 256 GiB, plus the working set
    # Views of small arrays: nothing of the planned size is ever allocated.
    A = np.lib.stride_tricks.as_strided(np.zeros(D, np.float32), (P, D), (0, 4))
    E = np.lib.stride_tricks.as_strided(np.zeros(D, np.float32), (V, D), (0, 4))
    T = np.zeros((P, 1), np.int32)
    with pytest.raises(lobench.MemoryLimitError, match=r"need [0-9.]+ GiB with variant 'dense'.*more than the memory limit"):
        lobench.bce(A, E, T, variant="dense", convert=True)
    with pytest.raises(MemoryError):
        small_bce(mem_limit=1000)
    with pytest.raises(ValueError, match=r"\(mem_limit\)"):
        small_bce(mem_limit=1000)
    assert small_bce(mem_limit=2**30).loss > 0


@pytest.mark.parametrize("kw, pattern", [
    (dict(seed=-1), r"argument 'seed' must be in \[0, 18446744073709551615\], got -1"),
    (dict(seed=2**64), r"argument 'seed'"),
    (dict(seed=1.5), r"argument 'seed' must be an int"),
    (dict(mem_limit=0), r"argument 'mem_limit'"),
    (dict(e_rounding=3), r"argument 'e_rounding'"),
])
def test_bce_arguments_are_named(kw, pattern):
    with pytest.raises((ValueError, TypeError), match=pattern):
        small_bce(**kw)


@pytest.mark.parametrize("kw, pattern", [
    (dict(bits=2**40), r"argument 'bits' must be in \[1, 31\], got 1099511627776"),
    (dict(bits=0), r"argument 'bits'"),
    (dict(seed=-1), r"argument 'seed'"),
    (dict(rounding=None), r"argument 'rounding'"),
])
def test_quantize_arguments_are_named(kw, pattern):
    args = dict(rounding="stochastic")
    args.update(kw)
    with pytest.raises((ValueError, TypeError), match=pattern):
        lobench.quantize(np.ones(8, np.float32), "bfloat16", **args)


def test_version_and_typing_marker():
    assert isinstance(lobench.__version__, str) and lobench.__version__[0].isdigit()
    assert os.path.exists(os.path.join(os.path.dirname(os.path.realpath(lobench.__file__)), "py.typed"))


def test_python_dash_m_lobench_delegates_or_says_why(tmp_path):
    env = dict(os.environ, PATH=str(tmp_path))  # no lobench command on PATH
    out = subprocess.run([sys.executable, "-m", "lobench", "list"], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "lobench command" in out.stderr
    fake = tmp_path / "lobench"
    fake.write_text("#!/bin/sh\necho delegated \"$@\"\nexit 3\n")
    fake.chmod(0o755)
    out = subprocess.run([sys.executable, "-m", "lobench", "list", "--x"], env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 3 and out.stdout.strip() == "delegated list --x"
    fake.write_text("#!/bin/sh\necho \"lobench 0.1.0 (built from commit abc123)\"\necho \"build: Release\"\n")
    out = subprocess.run([sys.executable, "-m", "lobench", "--version"], env=env, capture_output=True, text=True,
                         timeout=60)
    # issue 43: the program's commit and build flags too, not only the package's version
    assert out.returncode == 0 and lobench.__version__ in out.stdout
    assert "built from commit abc123" in out.stdout and "build: Release" in out.stdout


def test_a_package_without_its_compiled_module_says_how_to_build_it(tmp_path):
    """The build tree after the quick start holds the package's .py files but not _ext (only `lobench` is
    built): importing it names what is missing and how to build it, not a 'circular import'."""
    import shutil
    pkg = tmp_path / "lobench"
    shutil.copytree(os.path.dirname(lobench.__file__), pkg, symlinks=False,
                    ignore=shutil.ignore_patterns("_ext*", "__pycache__"))
    r = subprocess.run([sys.executable, "-c", "import lobench"], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(tmp_path)), cwd=tmp_path)
    assert r.returncode != 0
    assert "_ext" in r.stderr and "is not built" in r.stderr and "pip install ." in r.stderr, r.stderr[-500:]
    assert "circular import" not in r.stderr, r.stderr[-500:]
