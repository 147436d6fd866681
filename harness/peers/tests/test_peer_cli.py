"""Bad options and inputs of every peer script exit 2 with a message naming the option or the file, before
any framework starts, and leave the run file as it was."""
import hashlib
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SCRIPTS = ["jax_dense_bce.py", "keras_dense_bce.py", "jax_chunked_bce.py", "torch_dense_bce.py"]
SHAPE = ["--B", "1", "--N", "4", "--V", "30", "--D", "2", "--L", "1"]


@pytest.fixture(scope="module")
def run_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("peers") / "run.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("results", data=np.zeros(0, dtype=[("row_id", "i8")]), maxshape=(None,))
    return str(path)


BAD = [
    (["--threads", "0"], "--threads 0"),
    (["--threads", str(len(os.sched_getaffinity(0)) + 1)], "--threads"),
    (["--B", "0"], "--B"),
    (["--V", "ten"], "--V"),
    (["--reps", "0"], "--reps 0"),
    (["--max-reps", "2"], "--max-reps 2"),
    (["--min-time", "nan"], "--min-time"),
    (["--warmup", "-1"], "--warmup -1"),
    (["--mem-limit-gib", "-3"], "--mem-limit-gib"),
    (["--operand", "fp64"], "fp64"),
]


@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.parametrize("extra,named", BAD)
def test_bad_options_exit_2_naming_the_option(script, extra, named, run_file):
    before = hashlib.sha256(open(run_file, "rb").read()).hexdigest()
    p = subprocess.run([sys.executable, os.path.join(HERE, script), run_file] + SHAPE + extra,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and named in p.stderr, (p.returncode, p.stderr)
    assert hashlib.sha256(open(run_file, "rb").read()).hexdigest() == before


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_missing_or_foreign_run_file_exits_2(script, tmp_path):
    for path, named in ((tmp_path / "none.h5", "no such run file"), (__file__, "cannot open as HDF5")):
        p = subprocess.run([sys.executable, os.path.join(HERE, script), str(path)] + SHAPE,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and named in p.stderr, (p.returncode, p.stderr)
    assert not (tmp_path / "none.h5").exists()
