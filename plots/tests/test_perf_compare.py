"""plots/perf_compare.py (`lobench compare`): verdicts, exit status and formats on Google Benchmark JSON
and lobench run files."""
import csv
import io
import json
import os
import subprocess
import sys

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
