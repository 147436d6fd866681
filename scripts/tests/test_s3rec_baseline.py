"""scripts/s3rec_baseline.sh on a tiny made-up 'beauty': a run capped by S3REC_EPOCHS is written as partial
and continued from its checkpoint by the next invocation (its run file then holds every epoch from the
first), a run that early stopping ends is the finished one, and a finished run is skipped. Needs
build/lobench (skipped without it)."""
import os
import subprocess

import pytest

h5py = pytest.importorskip("h5py")

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(REPO, "scripts", "s3rec_baseline.sh")
LOBENCH = os.path.join(REPO, "build", "lobench")
# The preset's settings, at a size that trains in a second.
SMALL = ["--no-verify", "--threads", "1", "--N", "6", "--B", "8", "--D", "8", "--early-stop", "2"]


@pytest.fixture
def tiny(tmp_path):
    os.makedirs(tmp_path / "data" / "seqrec")
    with open(tmp_path / "data" / "seqrec" / "Beauty.txt", "w") as f:
        for u in range(1, 41):
            f.write(" ".join([str(u)] + [str(1 + (u * 7 + i * 3) % 30) for i in range(9)]) + "\n")
    return tmp_path


def run(tiny, epochs=None):
    env = dict(os.environ, S3REC_ONLY="beauty_s3rec_s0", S3REC_OUT=str(tiny / "out"),
               S3REC_CHECKPOINTS=str(tiny / "ck"), LOBENCH=LOBENCH)
    env.pop("S3REC_EPOCHS", None)
    if epochs:
        env["S3REC_EPOCHS"] = str(epochs)
    return subprocess.run(["bash", SCRIPT, "--data-dir", str(tiny / "data"), *SMALL], capture_output=True, text=True,
                          env=env, cwd=REPO)


def epochs_of(path):
    with h5py.File(path, "r") as f:
        return [int(e) for e in f["epochs"]["epoch"]], {k: f.attrs[k] for k in f.attrs}


@pytest.mark.skipif(not os.access(LOBENCH, os.X_OK), reason="needs build/lobench")
def test_a_capped_run_is_partial_and_the_next_invocation_continues_it(tiny):
    r = run(tiny, 2)
    assert r.returncode == 1 and "PARTIAL" in r.stdout, r.stdout + r.stderr
    part = tiny / "out" / "partial" / "beauty_s3rec_s0_to_epoch2.h5"
    epochs, attrs = epochs_of(part)
    assert epochs == [1, 2]
    assert attrs["block"] == b"post_ln" or attrs["block"] == "post_ln"
    assert os.path.exists(tiny / "ck" / "beauty_s3rec_s0.ck.h5")
    r = run(tiny, 3)
    assert "continuing from epoch 2" in r.stdout, r.stdout + r.stderr
    epochs, attrs = epochs_of(tiny / "out" / "partial" / "beauty_s3rec_s0_to_epoch3.h5")
    assert epochs[:3] == [1, 2, 3] and int(attrs["resumed_at_epoch"]) == 2
    r = run(tiny)  # to the end: early stopping (patience 2 here) ends it
    assert r.returncode == 0 and "finished" in r.stdout, r.stdout + r.stderr
    final = tiny / "out" / "beauty_s3rec_s0.h5"
    epochs, attrs = epochs_of(final)
    assert epochs[0] == 1 and int(attrs["early_stopped_at_epoch"]) == epochs[-1] and int(attrs["best_dev_epoch"]) >= 1
    before = os.path.getmtime(final)
    r = run(tiny)
    assert r.returncode == 0 and "finished" in r.stdout and os.path.getmtime(final) == before
