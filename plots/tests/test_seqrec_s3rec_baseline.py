"""plots/seqrec_s3rec_baseline.py on copies of the committed partial baseline file
(results/seqrec/s3rec/partial/beauty_s3rec_s0_to_epoch40.h5), edited into finished runs of other seeds and
data sets: finished runs are averaged (mean ± sample std, n stated), partial ones excluded and named, the
same-code ratio divides by the baseline's mean, and files that are not the preset or repeat a seed are refused."""
import os
import re
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(REPO, "plots", "seqrec_s3rec_baseline.py")
PARTIAL = os.path.join(REPO, "results", "seqrec", "s3rec", "partial", "beauty_s3rec_s0_to_epoch40.h5")
OURS = os.path.join(REPO, "results", "seqrec", "beauty_loo_fused_nobias_plateau_cont2_s0.h5")


def finished_copy(dst, seed=0, scale=1.0, dataset=None, **attrs):
    """The partial file as a finished run (early stopping ended it at its last epoch), its test columns scaled."""
    shutil.copy(PARTIAL, dst)
    with h5py.File(dst, "r+") as f:
        rows = f["epochs"][:]
        for c in ("test_hr_at_10", "test_ndcg_at_10", "test_ndcg_at_20"):
            rows[c] *= scale
        f["epochs"][...] = rows
        f.attrs["early_stopped_at_epoch"] = int(rows["epoch"][-1])
        f.attrs["seed"] = seed
        if dataset:
            f.attrs["dataset"] = dataset
        for k, v in attrs.items():
            f.attrs[k] = v
    return str(dst)


def best(path):
    """The test row at the first maximum of dev NDCG@20 (computed here without the script)."""
    with h5py.File(path, "r") as f:
        rows = f["epochs"][:]
    return rows[int(np.argmax(rows["dev_ndcg_at_20"]))]


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *map(str, args)], capture_output=True, text=True)


@pytest.fixture
def runs(tmp_path):
    os.makedirs(tmp_path / "partial")
    part = tmp_path / "partial" / "beauty_s3rec_s0_to_epoch40.h5"
    shutil.copy(PARTIAL, part)
    s0 = finished_copy(tmp_path / "beauty_s3rec_s0.h5", 0)
    s1 = finished_copy(tmp_path / "beauty_s3rec_s1.h5", 1, scale=1.1)
    toys = finished_copy(tmp_path / "toys_s3rec_s0.h5", 0, dataset="/data/seqrec/Toys_and_Games.txt")
    return tmp_path, str(part), s0, s1, toys


def test_finished_seeds_averaged_and_partial_excluded(runs):
    tmp, part, s0, s1, toys = runs
    r = run(part, s0, s1, toys, "--ours", OURS)
    assert r.returncode == 0, r.stderr
    hr = [float(best(p)["test_hr_at_10"]) for p in (s0, s1)]
    beauty = next(l for l in r.stdout.splitlines() if l.startswith("| Beauty |"))
    assert "| 2 (seed 0, 1) |" in beauty
    assert f"{np.mean(hr):.4f} ± {np.std(hr, ddof=1):.4f}" in beauty
    assert f"{np.mean(hr) - 0.0605:+.4f}" in beauty and "0.0605 / 0.0318" in beauty
    toys_line = next(l for l in r.stdout.splitlines() if l.startswith("| Toys |"))
    assert f"| 1 (seed 0) | {int(best(toys)['epoch'])} | {float(best(toys)['test_hr_at_10']):.4f} |" in toys_line
    assert "| Sports | none finished |" in r.stdout
    assert re.search(r"Excluded .*beauty_s3rec_s0_to_epoch40 \(partial: epochs 1–40 of 200", r.stdout)
    with h5py.File(OURS, "r") as f:
        ours_hr = float(f.attrs["best_test_hr_at_10"])
    assert f"{ours_hr / np.mean(hr):.2f}× (of {np.mean(hr):.4f}, 2 seeds)" in r.stdout


def test_only_partial_files_give_no_baseline(runs):
    tmp, part, *_ = runs
    r = run(part, "--ours", OURS)
    assert r.returncode == 0, r.stderr
    assert "| Beauty | none finished |" in r.stdout and "not computed (no finished baseline)" in r.stdout


@pytest.mark.parametrize("edit, message", [
    ({"heads": 1}, "not a --preset s3rec run (heads is 1"),
    ({"select": "hr@10"}, "not a --preset s3rec run (select"),
    ({"dataset": "/data/ml-1m.txt"}, "is not Beauty, Sports or Toys"),
])
def test_refused(tmp_path, edit, message):
    bad = finished_copy(tmp_path / "bad.h5", **edit)
    r = run(bad)
    assert r.returncode == 2 and message in r.stderr and r.stdout == "", r.stderr


def test_same_seed_twice_is_refused(runs):
    tmp, part, s0, *_ = runs
    again = finished_copy(tmp / "again.h5", 0)
    r = run(s0, again)
    assert r.returncode == 2 and "Beauty seed 0 is also" in r.stderr
