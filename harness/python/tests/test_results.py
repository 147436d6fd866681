"""lobench.results (plots/lobench_results.py): every run and training file in results/ reads, and
anything else raises RunFileError naming the file (never SystemExit, never blocks on a FIFO)."""
import glob
import os

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")
pytest.importorskip("pandas")
import lobench  # noqa: E402

results = lobench.results
ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "results")


def lobench_files():
    """Every HDF5 file in results/ (all written by lobench's commands and benches)."""
    return sorted(glob.glob(os.path.join(ROOT, "**", "*.h5"), recursive=True))


def test_every_committed_run_and_training_file_reads():
    files = lobench_files()
    if not files:
        pytest.skip("no results/ tree next to the sources")
    kinds = {}
    for path in files:
        df = results.read(path)
        kind = results.kind(path)
        kinds[kind] = kinds.get(kind, 0) + 1
        assert len(df.columns) > 0, path
        if kind.startswith("train-"):
            assert "epoch" in df.columns and results.read_memory(path), path
            memory = results.read_table(path, "memory")
            assert "predicted" in list(memory["meter"]), path
        for name, table in results.read_tables(path).items():  # every table of every file reads
            assert len(table.columns) > 0, (path, name)
    assert kinds.get("run", 0) > 0 and kinds.get("train-xmc", 0) > 0 and kinds.get("train-seqrec", 0) > 0, kinds
    assert kinds.get("columns", 0) > 0, kinds
    assert kinds.get("frontier", 0) > 0, kinds  # results/frontier/


def test_column_files_read_one_row_per_entry(tmp_path):
    path = tmp_path / "layouts.h5"
    with h5py.File(path, "w") as f:
        f["V"] = np.array([10, 20, 30])
        for g, scale in (("fp32", 4), ("bf16", 2)):
            f[f"{g}/weights_bytes"] = np.array([10, 20, 30]) * scale
        f.attrs["argv"] = "lobench train-xmc --layouts 10,20,30 --layouts-out layouts.h5"
    df = results.read(path)
    assert results.kind(path) == "columns" and len(df) == 6
    assert list(df[df["group"] == "bf16"]["weights_bytes"]) == [20, 40, 60]
    assert df.attrs["argv"].startswith("lobench train-xmc")
    ragged = tmp_path / "ragged.h5"
    with h5py.File(ragged, "w") as f:
        f["a"], f["b"] = np.arange(3), np.arange(4)
    with pytest.raises(results.RunFileError, match="ragged.h5: neither"):
        results.read(ragged)


def test_training_tables():
    seqrec = [p for p in lobench_files() if results.kind(p) == "train-seqrec"]
    if not seqrec:
        pytest.skip("no train-seqrec files in results/")
    steps = results.read_table(seqrec[0], "steps")
    assert {"step", "loss", "tp"} <= set(steps.columns)
    assert "lobench train-seqrec" in steps.attrs["schema"]


def test_a_new_training_jobs_files_read_without_a_change_to_the_reader(tmp_path):
    # A training job is known by its files' schema attribute (harness/io/job_files.hpp), not by a list:
    # a job the reader has never heard of (the C++ tests' toy job) reads like train-xmc's.
    path = tmp_path / "toy_seed-1.h5"
    with h5py.File(path, "w") as f:
        f.attrs["schema"] = "lobench train-toy run, version 1"
        f["epochs"] = np.array([(1, 1.0), (2, 0.5)], dtype=[("epoch", "<i8"), ("loss", "<f8")])
    assert results.kind(path) == "train-toy"
    assert list(results.read(path)["loss"]) == [1.0, 0.5]
    assert results.training_job("lobench train-xmc run, version 1") == "train-xmc"
    assert results.training_job("lobench train-xmc frontier, version 1") is None  # a frontier file


def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.h5"
    os.mkfifo(fifo)
    with pytest.raises(results.RunFileError, match=r"pipe.h5: not a regular file"):
        results.read(fifo)
    with pytest.raises(results.RunFileError, match="not a regular file"):
        results.read_samples(fifo)


@pytest.mark.parametrize("make, pattern", [
    (lambda p: None, r"cannot read \(No such file"),
    (lambda p: os.mkdir(p), r"a directory"),
    (lambda p: open(p, "w").write("not hdf5"), r"cannot open as HDF5"),
])
def test_unreadable_paths_name_the_file(tmp_path, make, pattern):
    path = str(tmp_path / "x.h5")
    make(path)
    with pytest.raises(results.RunFileError, match=pattern) as e:
        results.read(path)
    assert path in str(e.value) and isinstance(e.value, ValueError)


def test_damaged_tables_raise_run_file_errors(tmp_path):
    no_table = tmp_path / "empty.h5"
    with h5py.File(no_table, "w") as f:
        f.attrs["schema_version"] = 2
    with pytest.raises(results.RunFileError, match="empty.h5: neither a /results table"):
        results.read(no_table)
    not_a_table = tmp_path / "flat.h5"
    with h5py.File(not_a_table, "w") as f:
        f["results"] = np.arange(3.0)
    with pytest.raises(results.RunFileError, match=r"flat.h5: /results is not a table"):
        results.read(not_a_table)
    no_status = tmp_path / "v1.h5"  # version 1 without the status column the sentinels need
    with h5py.File(no_status, "w") as f:
        f["results"] = np.zeros(2, dtype=[("loss", "f8")])
        f.attrs["schema_version"] = 1
    with pytest.raises(results.RunFileError, match=r"v1.h5: cannot read /results \(KeyError"):
        results.read(no_status)
    bad_version = tmp_path / "v99.h5"
    with h5py.File(bad_version, "w") as f:
        f["results"] = np.zeros(2, dtype=[("loss", "f8")])
        f.attrs["schema_version"] = 2.7
    with pytest.raises(results.RunFileError, match=r"schema_version 2.7"):
        results.read(bad_version)
    bad_text = tmp_path / "latin1.h5"
    with h5py.File(bad_text, "w") as f:
        f["results"] = np.array([(b"\xff\xfe", 1.0)], dtype=[("variant", "S2"), ("loss", "f8")])
        f.attrs["schema_version"] = 2
    df = results.read(bad_text)  # undecodable text is replaced, never a UnicodeDecodeError
    assert df["variant"][0] == "\ufffd\ufffd"
