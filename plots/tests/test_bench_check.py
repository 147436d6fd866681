"""scripts/bench_check.sh, the paired gate's decisions: an unchanged candidate passes without a second set
of rounds, a slowdown fails only when a second set confirms it, a binary that fails or a store that cannot
be written gives exit 2 with its reason.

The two step_bench binaries are replaced by a fake that writes one repetition of Google Benchmark JSON per
call, its times scaled by LOBENCH_INJECT_SLOWDOWN (so --inject works on it as on the real one) and, for
the candidate, by the factors FAKE_SLOW lists for its calls in turn (a slow first set, a normal second)."""
import json
import os
import stat
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAKE = """#!{python}
import json, os, random, sys
sys.path.insert(0, {tests!r})
from gbench_fixture import write_gbench
calls = os.environ["FAKE_CALLS"] + "." + os.path.basename(sys.argv[0])
n = int(open(calls).read()) if os.path.exists(calls) else 0
open(calls, "w").write(str(n + 1))
factor = float(os.environ.get("LOBENCH_INJECT_SLOWDOWN", "1"))
slow = os.environ.get("FAKE_SLOW_" + os.path.basename(sys.argv[0]), "").split()
if n < len(slow):
    factor *= float(slow[n])
out = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--benchmark_out=")][0]
times = {{"gemm": 10.0, "fused": 40.0 * factor, "chunked": 55.0 * factor}}
write_gbench(out, times, seed=hash((os.path.basename(sys.argv[0]), n)) % 1000, cv=0.02, reps=1)
"""


def fake(tmp_path, name):
    path = tmp_path / name
    path.write_text(FAKE.format(python=sys.executable, tests=os.path.dirname(os.path.abspath(__file__))))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def gate(tmp_path, *extra, slow_cand=(), env_extra=None, cand=None):
    base, cand = fake(tmp_path, "base_bench"), cand or fake(tmp_path, "cand_bench")
    env = dict(os.environ, FAKE_CALLS=str(tmp_path / "calls"),
               FAKE_SLOW_cand_bench=" ".join(str(x) for x in slow_cand), **(env_extra or {}))
    r = subprocess.run(["bash", os.path.join(ROOT, "scripts/bench_check.sh"), "--baseline-bench", str(base),
                        "--step-bench", str(cand), "--rounds", "6", *extra, str(tmp_path / "gate")],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    calls = tmp_path / "calls.cand_bench"
    return r.returncode, r.stdout + r.stderr, int(calls.read_text()) if calls.exists() else 0


def test_unchanged_candidate_passes_without_a_second_set(tmp_path):
    rc, out, calls = gate(tmp_path)
    assert rc == 0, out
    assert "measuring again" not in out and calls == 6
    assert "pass: no benchmark slower" in out


def test_injected_slowdown_fails_confirmed(tmp_path):
    rc, out, calls = gate(tmp_path, "--inject", "1.3")
    assert rc == 1, out
    assert "confirmed by a second set of rounds" in out and calls == 12
    assert "FAIL: slower than the baseline" in out


def test_a_slow_first_set_that_the_second_does_not_repeat_passes(tmp_path):
    rc, out, _ = gate(tmp_path, slow_cand=[1.5] * 6)
    assert rc == 0, out
    assert "not confirmed" in out


def test_no_confirm_fails_on_the_first_set(tmp_path):
    rc, out, calls = gate(tmp_path, "--no-confirm", slow_cand=[1.5] * 6)
    assert rc == 1, out
    assert calls == 6


def test_within_the_threshold_passes(tmp_path):
    rc, out, _ = gate(tmp_path, "--inject", "1.05")
    assert rc == 0, out


@pytest.mark.parametrize("body,why", [("import os; os.kill(os.getpid(), 11)", "signal SIGSEGV"),
                                      ("import sys; sys.exit(1)", "exit status 1")])
def test_a_failing_candidate_is_no_verdict_exit_2(tmp_path, body, why):
    bad = tmp_path / "cand_bench"
    bad.write_text(f"#!{sys.executable}\n{body}\n")
    bad.chmod(0o755)
    rc, out, _ = gate(tmp_path, cand=bad)
    assert rc == 2, out
    assert why in out and "cand_bench" in out


def test_too_few_rounds_is_a_usage_error(tmp_path):
    r = subprocess.run(["bash", os.path.join(ROOT, "scripts/bench_check.sh"), "--rounds", "3"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--rounds 3" in r.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_an_unwritable_store_is_exit_2(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    store.chmod(0o500)
    rc, out, _ = gate(tmp_path, "--history", str(store), "--record")
    assert rc == 2, out
    assert "cannot write the history store" in out


def test_an_unwritable_store_is_exit_2_even_for_root(tmp_path):
    store = tmp_path / "store"
    store.write_text("a file, not a folder")
    rc, out, _ = gate(tmp_path, "--history", str(store), "--record")
    assert rc == 2, out
    assert "cannot write the history store" in out and "recorded" not in out


def test_record_and_site_keep_the_paired_run(tmp_path):
    pytest.importorskip("plotly")
    store, site = tmp_path / "store", tmp_path / "site"
    rc, out, _ = gate(tmp_path, "--history", str(store), "--record", "--site", str(site), "--inject", "1.3",
                      "--no-confirm")
    assert rc == 1, out
    (machine,) = os.listdir(store)
    (entry,) = os.listdir(store / machine)
    assert entry.endswith(".paired") and sorted(os.listdir(store / machine / entry)) == ["base.json", "cand.json"]
    index = (site / "index.html").read_text()
    assert "fused/V:16000/D:64/manual_time (paired)" in index and "slower" in index
