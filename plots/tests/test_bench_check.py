"""scripts/bench_check.sh's decision: a slowdown fails the gate only when a second measurement confirms it.

The benchmark binary is replaced by a fake that writes prepared Google Benchmark JSON (one file per call,
in order), so each case decides exactly what the first and the confirming measurement show."""
import os
import stat
import subprocess
import sys

from gbench_fixture import write_gbench

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NORMAL = {"gemm": 10.0, "fused": 40.0, "chunked": 55.0}
SLOW = {"gemm": 10.0, "fused": 60.0, "chunked": 82.0}  # 1.5x the variants, the same yardstick

FAKE = """#!{python}
import os, shutil, sys
queue = os.environ["FAKE_BENCH_QUEUE"]
with open(queue) as f:
    files = f.read().split()
out = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--benchmark_out=")][0]
shutil.copy(files[0], out)
with open(queue, "w") as f:
    f.write(" ".join(files[1:]))
"""


def gate(tmp_path, measurements, *extra):
    """Runs bench_check.sh against a NORMAL baseline; the fake binary returns `measurements` in turn."""
    fake = tmp_path / "fake_step_bench"
    fake.write_text(FAKE.format(python=sys.executable))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    base = write_gbench(str(tmp_path / "base.json"), NORMAL, seed=1)
    files = [write_gbench(str(tmp_path / f"m{i}.json"), t, seed=10 + i) for i, t in enumerate(measurements)]
    queue = tmp_path / "queue"
    queue.write_text(" ".join(files))
    env = dict(os.environ, FAKE_BENCH_QUEUE=str(queue))
    r = subprocess.run(["bash", os.path.join(ROOT, "scripts/bench_check.sh"), "--step-bench", str(fake),
                        "--baseline", base, *extra, str(tmp_path / "cand.json")],
                       cwd=ROOT, env=env, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr, queue.read_text().split()


def test_unchanged_run_passes_without_a_second_measurement(tmp_path):
    rc, out, left = gate(tmp_path, [NORMAL, SLOW])
    assert rc == 0, out
    assert "measuring again" not in out
    assert len(left) == 1  # the confirming measurement was never taken


def test_a_slow_first_measurement_that_the_second_does_not_repeat_passes(tmp_path):
    rc, out, _ = gate(tmp_path, [SLOW, NORMAL])
    assert rc == 0, out
    assert "not confirmed" in out


def test_a_slowdown_seen_twice_fails(tmp_path):
    rc, out, _ = gate(tmp_path, [SLOW, SLOW])
    assert rc == 1, out
    assert "confirmed by a second measurement" in out


def test_no_confirm_fails_on_the_first_measurement(tmp_path):
    rc, out, left = gate(tmp_path, [SLOW, NORMAL], "--no-confirm")
    assert rc == 1, out
    assert len(left) == 1
