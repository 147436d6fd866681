"""One yardstick whatever the front end: `lobench run` (the C++ program) and `python -m lobench run` with a
Python variant (lobench's engine inside a Python process) measure and call the same OpenBLAS kernels, even
where NumPy and PyTorch were imported first and their OpenBLAS started on other kernels (Debian's 0.3.21
falls back to Prescott, SSE3, on CPUs it does not know: a yardstick of 28-34 GFLOP/s where the plain program
read 127-229). The Python process is Debian's interpreter (LOBENCH_TORCH_PYTHON, default /usr/bin/python3:
its NumPy and PyTorch load Debian's libopenblas.so.0, the library lobench loads); libopenblas.so.0 is loaded
there on Prescott's kernels before lobench on every CPU, and OPENBLAS_CORETYPE is unset for both runs (it
would otherwise choose the kernels for every library in both processes alike)."""
import os
import subprocess
import sys

import pytest

h5py = pytest.importorskip("h5py")
pytest.importorskip("lobench._engine", reason="lobench._engine is built with the C++ tree (LOBENCH_PYTHON_PACKAGE=ON)")

EXE = os.environ.get("LOBENCH_EXE", "")
PY = os.environ.get("LOBENCH_TORCH_PYTHON", "/usr/bin/python3")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
EXAMPLE = os.path.join(ROOT, "examples", "python", "numpy_dense.py")
POINT = ["run", "--B", "1", "--N", "9", "--V", "300", "--D", "8", "--L", "3", "--warmup", "1", "--reps", "2",
         "--threads", "2", "--mem-limit", "1G"]

# Run in the Python process: libopenblas.so.0 started on Prescott's kernels (through NumPy where NumPy links
# it, else through ctypes), NumPy and PyTorch imported, OPENBLAS_CORETYPE removed again, then `python -m
# lobench` with the arguments. Prints the kernels the process's instance runs first.
FRONT_END = """
import ctypes, os, sys
os.environ["OPENBLAS_CORETYPE"] = "Prescott"
import numpy, torch
blas = ctypes.CDLL("libopenblas.so.0")
blas.openblas_get_corename.restype = ctypes.c_char_p
print("process OpenBLAS kernels:", blas.openblas_get_corename().decode(), flush=True)
os.environ.pop("OPENBLAS_CORETYPE")
if len(sys.argv) > 1 and sys.argv[1].startswith("CORETYPE="):
    os.environ["OPENBLAS_CORETYPE"] = sys.argv.pop(1).split("=", 1)[1]
from lobench.__main__ import main
sys.exit(main(sys.argv[1:]))
"""


def _env():
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("LOBENCH_GEMM", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [os.path.dirname(os.path.dirname(__import__("lobench").__file__)),
                                                    env.get("PYTHONPATH", "")] if p)
    return env


def _needs_front_ends():
    if not os.path.isfile(EXE):
        pytest.skip("LOBENCH_EXE (the lobench executable) not given")
    probe = subprocess.run([PY, "-c", "import numpy, torch"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"{PY} lacks numpy or torch (scripts/install_deps.sh installs Debian python3-torch)")
    probe = subprocess.run([PY, "-c", "import ctypes; ctypes.CDLL('libopenblas.so.0')"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("libopenblas.so.0 not loadable (scripts/install_deps.sh installs libopenblas0-pthread)")


def _python_run(tmp_path, *args):
    script = tmp_path / "front_end.py"
    script.write_text(FRONT_END)
    return subprocess.run([PY, str(script), *args], capture_output=True, text=True, env=_env(), timeout=300)


def _attrs(path):
    with h5py.File(path, "r") as f:
        return {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}


def test_plain_program_and_python_engine_measure_and_call_the_same_openblas_kernels(tmp_path):
    _needs_front_ends()
    plain_out, py_out = tmp_path / "plain.h5", tmp_path / "python.h5"
    plain = subprocess.run([EXE, *POINT, "--variants", "fused", "--out", str(plain_out)], capture_output=True,
                           text=True, env=_env(), timeout=300)
    assert plain.returncode == 0, plain.stderr + plain.stdout
    py = _python_run(tmp_path, *POINT, "--variants", f"fused,{EXAMPLE}:NumpyDense", "--out", str(py_out))
    assert py.returncode == 0, py.stderr + py.stdout
    assert "process OpenBLAS kernels: Prescott" in py.stdout, py.stdout
    a, b = _attrs(plain_out), _attrs(py_out)
    if "sgemm_openblas_why" in a:
        pytest.skip("OpenBLAS not loadable here: " + a["sgemm_openblas_why"])
    for key in ("sgemm_openblas_library", "sgemm_openblas_kernels", "sgemm_library", "sgemm_onednn_library"):
        assert a.get(key) == b.get(key), f"{key}: lobench run {a.get(key)!r}, python -m lobench run {b.get(key)!r}"
    assert a["sgemm_openblas_kernels"] in a["sgemm_openblas_library"]
    if a["sgemm_openblas_kernels"].lower() != "prescott":  # (a CPU with AVX2: lobench asks for better kernels)
        assert b["sgemm_openblas_loaded"].startswith("a private copy of "), b["sgemm_openblas_loaded"]
        assert "with Prescott kernels" in b["sgemm_openblas_loaded"]
        assert "private copy" not in a["sgemm_openblas_loaded"]


def test_without_the_kernels_asked_for_the_row_says_so_and_products_use_eigen(tmp_path):
    """Where no instance runs the kernels lobench asks for (here an OPENBLAS_CORETYPE no OpenBLAS knows, so
    that the private copy detects its own): the machine-limits line and the run file say which kernels the
    process's instance runs, and the products go through Eigen."""
    _needs_front_ends()
    out = tmp_path / "python.h5"
    py = _python_run(tmp_path, "CORETYPE=NoSuchCore", *POINT, "--variants", f"fused,{EXAMPLE}:NumpyDense",
                     "--out", str(out))
    assert py.returncode == 0, py.stderr + py.stdout
    limits = [line for line in py.stdout.splitlines() if "machine limits" in line]
    assert limits and "was loaded before lobench with Prescott kernels, not the NoSuchCore lobench asks for" in limits[0], py.stdout
    attrs = _attrs(out)
    if "sgemm_openblas_why" in attrs:
        pytest.skip("OpenBLAS not loadable here: " + attrs["sgemm_openblas_why"])
    assert attrs["sgemm_openblas_kernels"] == "Prescott"
    assert "loaded before lobench with Prescott kernels" in attrs["sgemm_openblas_library"]
    assert attrs["sgemm_library"].startswith("Eigen ") and "not OpenBLAS" in attrs["sgemm_library"], attrs["sgemm_library"]
