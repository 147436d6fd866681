"""plots/perf_compare.py (`lobench compare`): verdicts, exit status and formats on Google Benchmark JSON
and lobench run files."""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import perf_compare
import perf_runs
from gbench_fixture import write_gbench
from run_file_fixture import write_run

PLOTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASE = {"gemm": 50.0, "fused": 160.0, "chunked": 210.0}


def cli(*args):
    r = subprocess.run([sys.executable, os.path.join(PLOTS, "perf_compare.py"), *map(str, args)],
                       capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


@pytest.fixture
def runs(tmp_path):
    def make(name, seed, **times):
        return write_gbench(str(tmp_path / name), dict(BASE, **times), seed=seed)
    return make


def test_unchanged_passes_and_slower_fails(runs):
    base, same = runs("a.json", 1), runs("b.json", 2)
    rc, out, _ = cli(base, same)
    assert rc == 0 and "0 slower" in out
    assert all(not ln.rstrip().endswith("slower") for ln in out.splitlines())
    slow = runs("c.json", 3, fused=BASE["fused"] * 1.3)
    rc, out, _ = cli(base, slow)
    assert rc == 1
    line = next(ln for ln in out.splitlines() if ln.startswith("fused/"))
    assert line.rstrip().endswith("slower")


def test_a_slower_machine_is_not_a_regression(runs):
    # everything 1.5x slower, yardstick included: the ratios to the yardstick do not move
    base = runs("a.json", 1)
    slow_machine = runs("b.json", 2, **{k: v * 1.5 for k, v in BASE.items()})
    rc, out, _ = cli(base, slow_machine)
    assert rc == 0, out


def test_threshold_is_the_users(runs):
    base, slow = runs("a.json", 1), runs("b.json", 2, fused=BASE["fused"] * 1.3)
    assert cli(base, slow, "--threshold", 50)[0] == 0
    assert cli(base, slow, "--threshold", 5)[0] == 1


def test_faster_is_reported_and_passes(runs):
    rc, out, _ = cli(runs("a.json", 1), runs("b.json", 2, chunked=BASE["chunked"] * 0.6))
    assert rc == 0 and next(ln for ln in out.splitlines() if ln.startswith("chunked/")).rstrip().endswith("faster")


def test_formats(runs):
    base, slow = runs("a.json", 1), runs("b.json", 2, fused=BASE["fused"] * 2)
    rc, out, err = cli(base, slow, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rc == 1 and [r["benchmark"].split("/")[0] for r in rows] == ["gemm", "fused", "chunked"]
    fused = next(r for r in rows if r["benchmark"].startswith("fused"))
    assert fused["verdict"] == "slower" and 1.8 < float(fused["ratio"]) < 2.2
    assert float(fused["ratio_lo"]) <= float(fused["ratio"]) <= float(fused["ratio_hi"])
    assert "noise" in err  # the summary goes to stderr so that stdout stays machine-readable
    rc, out, _ = cli(base, slow, "--format", "jsonl")
    rows = [json.loads(line) for line in out.splitlines()]
    assert rc == 1 and len(rows) == 3 and all(set(perf_compare.COLUMNS) == set(r) for r in rows)
    assert [r["gated"] for r in rows] == [False, True, True]
    rc, out, _ = cli(base, slow, "--format", "markdown")
    assert rc == 1 and out.startswith("| benchmark |") and "**slower**" in out and "noise" in out


def test_usage_errors_exit_2(runs, tmp_path):
    base = runs("a.json", 1)
    assert cli(base, tmp_path / "missing.json")[0] == 2
    (tmp_path / "junk.json").write_text("not json")
    rc, _, err = cli(base, tmp_path / "junk.json")
    assert rc == 2 and "junk.json" in err
    other = write_gbench(str(tmp_path / "other.json"), {"gemm": 1.0}, seed=1)
    rc, _, err = cli(base, other, "--filter", "fused")
    assert rc == 2 and "no benchmark in common" in err
    aggregates = json.load(open(base))
    for b in aggregates["benchmarks"]:
        b["run_type"], b["aggregate_name"] = "aggregate", "median"
    json.dump(aggregates, open(tmp_path / "aggregates.json", "w"))
    rc, _, err = cli(base, tmp_path / "aggregates.json")
    assert rc == 2 and "only aggregates" in err
    assert cli(base, base, "--threshold", -1)[0] == 2
    assert cli(base, base, "--format", "xml")[0] == 2


def test_too_few_repetitions_is_not_a_pass(tmp_path):
    def three_reps(path, seed):
        write_gbench(path, BASE, seed=seed)
        data = json.load(open(path))
        data["benchmarks"] = [b for b in data["benchmarks"] if b["repetition_index"] < 3]
        json.dump(data, open(path, "w"))
        return path
    a, b = three_reps(str(tmp_path / "a.json"), 1), three_reps(str(tmp_path / "b.json"), 2)
    rc, out, err = cli(a, b)
    assert rc == 2 and "untested" in out and "too few repetitions" in err
    assert cli(a, b, "--allow-untested")[0] == 0


def lobench_run(path, fused_scale, sgemm=100.0, seed=0):
    rng = np.random.default_rng(seed)
    rows, samples = [], {}
    for i, (variant, t) in enumerate((("fused", 0.02 * fused_scale), ("chunked", 0.03))):
        rows.append({"variant": variant, "V": 5000, "time_median_s": t, "flops": 6 * 16 * 5000 * 16.0,
                     "gemm_gflops": sgemm})
        samples[i] = list(t * (1 + 0.01 * rng.standard_normal(7)))
    return write_run(path, rows, {"git_commit": "abc", "host": "h", "cpu_model": "cpu"}, samples)


def test_lobench_run_files(tmp_path):
    base = lobench_run(str(tmp_path / "a.h5"), 1.0, seed=1)
    run = perf_runs.load(base)
    assert sorted(run.series) == ["chunked/V:5000", "fused/V:5000"]
    s = run.series["fused/V:5000"]
    assert len(s.values) == 7 and np.allclose(s.values * s.fraction, 1.0)  # value = 1 / gemm_fraction
    assert cli(base, lobench_run(str(tmp_path / "b.h5"), 1.0, seed=2))[0] == 0
    rc, out, _ = cli(base, lobench_run(str(tmp_path / "c.h5"), 1.5, seed=3))
    assert rc == 1 and next(ln for ln in out.splitlines() if ln.startswith("fused/")).rstrip().endswith("slower")


# --- Hostile inputs (issue 37): every malformed input is exit 2 with one line, never a traceback (exit 1
# means "slower") and never a verdict from times that are not positive finite numbers.

def mutate(path, fn):
    data = json.load(open(path))
    fn(data)
    json.dump(data, open(path, "w"))
    return path


@pytest.mark.parametrize("how,says", [
    (lambda d: d.__setitem__("context", "text"), "'context' is not an object"),
    (lambda d: d["context"].__setitem__("threads", [2]), "'threads'"),
    (lambda d: d["benchmarks"][0].__setitem__("real_time", "12"), "not a number"),
    (lambda d: d["benchmarks"][0].__setitem__("real_time", True), "not a number"),
    (lambda d: d["benchmarks"][0].__setitem__("run_name", 7), "not a string"),
    (lambda d: d["benchmarks"][0].__setitem__("time_unit", "fortnights"), "time_unit 'fortnights'"),
    (lambda d: d["benchmarks"][0].__setitem__("repetition_index", -1), "repetition_index"),
    (lambda d: [b.__setitem__("real_time", float("nan")) for b in d["benchmarks"]], "positive finite"),
    (lambda d: [b.__setitem__("real_time", 0) for b in d["benchmarks"]], "positive finite"),
    (lambda d: [b.__setitem__("real_time", -5) for b in d["benchmarks"]], "positive finite"),
])
def test_malformed_candidate_is_exit_2_with_one_line(runs, how, says):
    base, cand = runs("a.json", 1), runs("b.json", 2)
    mutate(cand, how)
    rc, out, err = cli(base, cand)
    assert rc == 2, (out, err)
    assert says in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_deep_nesting_is_exit_2(tmp_path, runs):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    rc, _, err = cli(runs("a.json", 1), deep)
    assert rc == 2 and "Traceback" not in err


def test_a_huge_repetition_count_does_not_exhaust_memory(tmp_path):
    path = write_gbench(str(tmp_path / "a.json"), BASE, reps=1)
    data = json.load(open(path))
    one = [b for b in data["benchmarks"] if b["name"].startswith("fused")][0]
    # (50,000 repetitions: a quadratic step, every pair of them, would need 20 GB in float64, far beyond the
    # 3 GB address space below; 200,000 took 16 s of the fast tier to prove the same)
    data["benchmarks"] = [dict(one, repetition_index=i, real_time=one["real_time"] * (1 + 1e-6 * i)) for i in range(50000)]
    json.dump(data, open(path, "w"))
    r = subprocess.run(["bash", "-c", f"ulimit -v 3000000; exec {sys.executable} {os.path.join(PLOTS, 'perf_compare.py')} "
                        f"{path} {path} --allow-untested"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-500:]


def test_without_numpy_says_so_exit_2(runs):
    base = runs("a.json", 1)
    r = subprocess.run([sys.executable, "-S", "-I", os.path.join(PLOTS, "perf_compare.py"), base, base],
                       capture_output=True, text=True)
    if r.returncode == 0:
        pytest.skip("numpy importable without site-packages")
    assert r.returncode == 2 and "lacks numpy" in r.stderr and "Traceback" not in r.stderr


def test_markdown_and_csv_cannot_carry_markup_or_formulas(tmp_path):
    evil = "fused/x` ![img](http://e.x/a.png) @someone | =HYPERLINK(\"http://e.x\")"
    paths = []
    for i in range(2):
        p = write_gbench(str(tmp_path / f"{i}.json"), BASE, seed=i)
        data = json.load(open(p))
        for b in data["benchmarks"]:
            if b["name"].startswith("fused"):
                b["name"] = b["run_name"] = evil
        data["benchmarks"].append(dict(data["benchmarks"][0], name="=cmd|' /C calc'!A0", run_name="=cmd|' /C calc'!A0"))
        json.dump(data, open(p, "w"))
        paths.append(p)
    rc, out, _ = cli(*paths, "--format", "markdown", "--allow-untested")
    assert rc == 0
    assert "`" not in out.replace("<code>", "").replace("</code>", "") or "&#96;" in out
    for bad in ("![", "](", "@someone", "`fused"):
        assert bad not in out, bad
    rc, out, _ = cli(*paths, "--format", "csv", "--allow-untested")
    cells = [row[0] for row in csv.reader(io.StringIO(out))][1:]
    assert cells and not any(c[:1] in "=+-@" for c in cells)


def test_paired_runs_are_compared_round_by_round(tmp_path):
    sides = []
    for side, f in (("base", 1.0), ("cand", 1.3)):
        p = write_gbench(str(tmp_path / f"{side}.json"), dict(BASE, fused=BASE["fused"] * f), seed=len(sides), reps=6)
        mutate(p, lambda d: d["context"].__setitem__("pairing", "p1"))
        sides.append(p)
    rc, out, _ = cli(*sides)
    assert rc == 1 and "paired run p1: 6 rounds" in out
    assert next(ln for ln in out.splitlines() if ln.startswith("fused/")).rstrip().endswith("slower")
    # five rounds or fewer cannot reach p < 0.05 one-sided (2^-4 > 0.05 at four): untested, exit 2
    for p in sides:
        mutate(p, lambda d: d.__setitem__("benchmarks", [b for b in d["benchmarks"] if b["repetition_index"] < 4]))
    rc, _, err = cli(*sides)
    assert rc == 2 and "not tested" in err


LOBENCH = os.environ.get("LOBENCH_BIN") or os.path.join(os.path.dirname(PLOTS), "build", "lobench")


@pytest.mark.skipif(not os.access(LOBENCH, os.X_OK), reason="build/lobench not built (ctest sets LOBENCH_BIN)")
def test_lobench_compare_never_reads_a_broken_interpreter_as_a_verdict(runs, tmp_path):
    base, slow = runs("a.json", 1), runs("b.json", 2, fused=BASE["fused"] * 1.3)
    run = lambda env, *a: subprocess.run([LOBENCH, "compare", *a], env=dict(os.environ, **env),  # noqa: E731
                                         capture_output=True, text=True)
    assert run({}, base, base).returncode == 0
    assert run({}, base, slow).returncode == 1
    r = run({"LOBENCH_PYTHON": "/bin/true"}, base, slow)
    assert r.returncode == 2 and "no verdict" in r.stderr
    crashing = tmp_path / "python"
    crashing.write_text("#!/bin/sh\necho 'Traceback (most recent call last):' >&2\nexit 1\n")
    crashing.chmod(0o755)
    r = run({"LOBENCH_PYTHON": str(crashing)}, base, base)
    assert r.returncode == 2 and "exit status 1" in r.stderr
    r = run({"LOBENCH_PYTHON": str(tmp_path / "missing")}, base, base)
    assert r.returncode == 2 and "cannot run" in r.stderr


def test_a_paired_run_and_a_run_file_of_one_machine_share_its_fingerprint(tmp_path):
    p = write_gbench(str(tmp_path / "p.json"), BASE, host="vm", reps=5)
    mutate(p, lambda d: d["context"].update(pairing="x", cpu_model="AMD EPYC", hardware_threads=2))
    h5 = write_run(str(tmp_path / "r.h5"), [{"variant": "fused"}],
                   attrs={"host": "vm", "cpu_model": "AMD EPYC", "hardware_threads": 2})
    assert perf_runs.load(p).machine == perf_runs.load(h5).machine


def test_a_folder_or_a_fifo_is_named_as_such(runs, tmp_path):
    base = runs("a.json", 1)
    rc, _, err = cli(base, tmp_path)
    assert rc == 2 and "a folder, not a run file" in err
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    rc, _, err = cli(base, fifo)
    assert rc == 2 and "not a regular file" in err


def test_an_unreadable_file_is_named_as_such_exit_2():
    """A file of mode 000, and one in a folder this user may not enter, are said to be unreadable (not "no
    such file", not a traceback). Modes stop every user but root: as root the comparison runs as user
    nobody (setpriv), in a folder nobody may enter."""
    prefix = []
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("running as root without setpriv: a file's mode does not stop root from reading it")
        prefix = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o755)
        base = write_gbench(os.path.join(d, "a.json"), BASE, seed=1)
        os.chmod(base, 0o644)
        closed = os.path.join(d, "closed")
        os.mkdir(closed, 0o700 if prefix else 0)
        for cand in (write_gbench(os.path.join(d, "b.json"), BASE, seed=2), os.path.join(closed, "c.json")):
            if cand.endswith("b.json"):
                os.chmod(cand, 0)
            r = subprocess.run(prefix + [sys.executable, os.path.join(PLOTS, "perf_compare.py"), base, cand],
                               capture_output=True, text=True)
            assert r.returncode == 2 and f"{cand}: cannot be read: Permission denied" in r.stderr, r.stderr
            assert "Traceback" not in r.stderr, r.stderr
