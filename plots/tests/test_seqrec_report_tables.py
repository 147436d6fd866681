"""The seqrec report tables made from the committed run files: seqrec_epochs.py --at (runs' test HR@10 at
chosen epochs), seqrec_memory_reduction.py --parts (memory by part) and seqrec_report_numbers.py (derived
figures) print what the files hold, checked here against the files read directly."""
import math
import os
import re
import subprocess
import sys

import h5py
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SEQREC = os.path.join(REPO, "results", "seqrec")


def run(script, *args):
    return subprocess.run([sys.executable, os.path.join(REPO, "plots", script), *map(str, args)],
                          capture_output=True, text=True, cwd=REPO)


def test_at_epochs_prints_each_runs_test_hr_at_those_epochs():
    paths = [os.path.join(SEQREC, "markov_chain", f"markov_chain_{n}_s0.h5") for n in ("tied_nobias_fused", "sampled")]
    r = run("seqrec_epochs.py", "--at", "2,30", *paths)
    assert r.returncode == 0, r.stderr
    rows = [l for l in r.stdout.splitlines() if l.startswith("| `")]
    for path, row in zip(paths, rows):
        with h5py.File(path, "r") as f:
            hr = {int(e["epoch"]): float(e["test_hr_at_10"]) for e in f["epochs"][:]}
        assert row.endswith(f"| {hr[2]:.4f} | {hr[30]:.4f} |"), row
    assert run("seqrec_epochs.py", "--at", "3", *paths).returncode != 0  # epoch 3 was not evaluated


def test_parts_are_the_memory_groups_bytes():
    path = os.path.join(SEQREC, "table3_B8_N256_fused.h5")
    r = run("seqrec_memory_reduction.py", "--parts", path)
    assert r.returncode == 0, r.stderr
    with h5py.File(path, "r") as f:
        m = dict(f["memory"].attrs)
    row = r.stdout.splitlines()[-1]
    for part in ("parameters", "loss_workspace", "total"):
        assert f"| {m[f'measured_{part}_bytes'] / 2**20:,.1f} |" in row
    assert row.endswith("| yes |")


def test_derived_standard_errors_follow_from_the_file():
    r = run("seqrec_report_numbers.py", SEQREC)
    assert r.returncode == 0, r.stderr
    with h5py.File(os.path.join(SEQREC, "beauty_loo_fused_nobias_plateau_cont2_s0.h5"), "r") as f:
        n = int(f.attrs["eval_users"])
        p = next(float(e["test_hr_at_10"]) for e in f["epochs"][:] if int(e["epoch"]) == 32)
    m = re.search(r"epoch 32: test HR@10 (\d\.\d{4}) ± (\d\.\d{4})", r.stdout)
    assert m and m.group(1) == f"{p:.4f}" and m.group(2) == f"{math.sqrt(p * (1 - p) / n):.4f}"


def test_derived_refuses_a_folder_without_the_runs(tmp_path):
    r = run("seqrec_report_numbers.py", tmp_path)
    assert r.returncode == 2 and "seqrec_report_numbers:" in r.stderr
