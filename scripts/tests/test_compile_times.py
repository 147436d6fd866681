"""scripts/compile_times.py's launcher mode (what CMake runs for every compile and link): the command's exit
status is passed on, one record per command is appended with its output, source, kind and CPU time (the
compiler's children included), and a unit's name is the same in any build folder."""
import importlib.util
import json
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "compile_times.py")


def load():
    spec = importlib.util.spec_from_file_location("compile_times", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def record(log, *cmd):
    return subprocess.run([sys.executable, SCRIPT, "--record", str(log), *cmd], capture_output=True, text=True)


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc)")
def test_a_compile_is_recorded_with_its_cpu_time_and_a_failure_keeps_its_status(tmp_path):
    log = tmp_path / "log.jsonl"
    good = tmp_path / "good.c"
    # enough code that the compiler proper (cc1, a child of cc) takes most of the time
    good.write_text("".join(f"int f{i}(int x) {{ return x * {i} + (x >> 3) % {i + 7}; }}\n" for i in range(300)))
    bad = tmp_path / "bad.c"
    bad.write_text("int f( {\n")
    assert record(log, "cc", "-O2", "-c", str(good), "-o", str(tmp_path / "good.o")).returncode == 0
    assert record(log, "cc", "-c", str(bad), "-o", str(tmp_path / "bad.o")).returncode != 0
    exit3 = tmp_path / "exit3.sh"
    exit3.write_text("exit 3\n")
    assert record(log, "sh", str(exit3)).returncode == 3
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["kind"] for r in rows] == ["c", "c", "link"]  # no -c: a link step
    assert rows[0]["source"] == str(good) and rows[0]["out"] == str(tmp_path / "good.o")
    # cc itself only waits for cc1 and as: their CPU time must be in the record, not lost with them (cc's
    # own share is a few milliseconds; a loaded machine may stretch the wall time, hence 0.2)
    assert rows[0]["cpu_s"] >= 0.2 * rows[0]["wall_s"] and rows[0]["wall_s"] > 0.05
    assert (tmp_path / "good.o").exists()


def test_a_unity_unit_has_the_same_name_in_any_build_folder():
    ct = load()
    a = {"source": "/x/build-ct/harness/CMakeFiles/lobench.dir/Unity/unity_lobench_a_cxx.cxx", "out": ""}
    b = {"source": "/y/other/harness/CMakeFiles/lobench.dir/Unity/unity_lobench_a_cxx.cxx", "out": ""}
    assert ct.unit_name(a) == ct.unit_name(b) == "lobench.dir/Unity/unity_lobench_a_cxx.cxx"
    assert ct.unit_name({"source": "/r/harness/cli/main.cpp", "out": ""}) == "/r/harness/cli/main.cpp"


def test_a_folder_it_did_not_make_is_never_removed(tmp_path):
    keep = tmp_path / "mine"
    keep.mkdir()
    (keep / "file").write_text("kept")
    run = subprocess.run([sys.executable, SCRIPT, "--build-dir", str(keep), "lobench"], capture_output=True, text=True)
    assert run.returncode == 2 and "was not made by this script" in run.stderr
    assert (keep / "file").read_text() == "kept"
