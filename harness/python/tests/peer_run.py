"""What the peer tests share: a ragged sweep run by `python -m lobench run` (lobench's engine, this
interpreter) and its rows, and the project's accuracy rule for a row against the float64 reference."""
import math
import os
import subprocess
import sys

# Ragged points: P = 9 (not a multiple of anything), V = 301, padding and repeated ids, weights with
# zeros, both reductions.
SWEEP = ["--B", "1", "--N", "9", "--V", "301", "--D", "8", "--L", "3", "--reduction", "mean,sum", "--weighted",
         "--pad-fraction", "0.2", "--dup-fraction", "0.2", "--warmup", "1", "--reps", "2", "--threads", "1",
         "--mem-limit", "1G"]
LOSS_TOL, GRAD_TOL = 1e-6, 1e-5  # relative (variants/tests/reference_checks.hpp)


def python_lobench(*args, cwd=None, python=None):
    env = dict(os.environ)
    import lobench
    env["PYTHONPATH"] = os.pathsep.join(p for p in [os.path.dirname(os.path.dirname(lobench.__file__)),
                                                    env.get("PYTHONPATH", "")] if p)
    env.pop("LOBENCH_PLUGIN_PATH", None)
    p = subprocess.run([python or sys.executable, "-m", "lobench", *args], capture_output=True, text=True, env=env,
                       cwd=cwd, timeout=600)
    return p.returncode, p.stdout, p.stderr


def rows(path):
    import h5py
    with h5py.File(path, "r") as f:
        r = f["results"][()]
        attrs = dict(f.attrs)
    text = lambda b: b.decode() if isinstance(b, bytes) else str(b)  # noqa: E731
    return [{k: (text(row[k]) if r.dtype[k].kind in "SOU" else row[k]) for k in r.dtype.names} for row in r], attrs


def assert_accurate(row, counts=True):
    """ok, measured, and within the project's tolerances of the float64 reference (NaN fails)."""
    assert row["status"] == "ok", (row["variant"], row["reason"])
    assert row["reps"] == 2 and row["time_median_s"] > 0, row
    assert row["rel_loss_err"] <= LOSS_TOL, (row["variant"], row["reduction"], row["rel_loss_err"])
    assert row["rel_dA_err"] <= GRAD_TOL, (row["variant"], row["reduction"], row["rel_dA_err"])
    assert row["rel_dE_err"] <= GRAD_TOL, (row["variant"], row["reduction"], row["rel_dE_err"])
    if counts:
        assert row["counts_mismatch"] == 0, row
    else:
        assert math.isnan(row["counts_mismatch"]), row
