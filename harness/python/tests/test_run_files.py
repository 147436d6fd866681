"""lobench.results on files these tests make with the lobench executable (LOBENCH_EXE, set by ctest):
every table of a `lobench run` file, a train-xmc file and a train-seqrec file reads as a DataFrame whose
values are the file's own (checked against h5py), with the tables the writers declare."""
import os
import subprocess

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")
pytest.importorskip("pandas")
import lobench  # noqa: E402

results = lobench.results
EXE = os.environ.get("LOBENCH_EXE", "")
pytestmark = pytest.mark.skipif(not os.path.isfile(EXE), reason="LOBENCH_EXE (the lobench executable) not given")


def lobench_cmd(*args):
    subprocess.run([EXE, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)


def same_as_file(path, name, df):
    """df holds exactly the columns and values of the compound table /name."""
    with h5py.File(path, "r") as f:
        rows = f[name][:]
    assert list(df.columns) == list(rows.dtype.names)
    assert len(df) == len(rows)
    for c in rows.dtype.names:
        if rows[c].dtype.kind == "S":
            assert list(df[c]) == [x.decode() for x in rows[c]], c
        else:
            np.testing.assert_array_equal(df[c].to_numpy(), rows[c], err_msg=c)


@pytest.fixture(scope="module")
def run_file(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("run") / "run.h5")
    lobench_cmd("run", "--B", "1", "--N", "4", "--V", "64,96", "--D", "4", "--L", "2", "--variants", "chunked",
                "--reps", "2", "--warmup", "0", "--threads", "1", "--out", path)
    return path


@pytest.fixture(scope="module")
def xmc_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("xmc")
    lobench_cmd("train-xmc", "--dataset", "synthetic:tiny", "--syn-scale", "0.05", "--epochs", "2", "--dim", "16",
                "--batch", "64", "--seeds", "0", "--threads", "1", "--hist-every", "4", "--quiet",
                "--out-dir", str(d / "runs"))
    files = sorted((d / "runs").glob("*.h5"))
    assert len(files) == 1, files
    return str(files[0])


@pytest.fixture(scope="module")
def seqrec_file(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("seqrec") / "run.h5")
    lobench_cmd("train-seqrec", "--dataset", "synthetic:yambda", "--syn-scale", "0.002", "--L", "2", "--N", "16",
                "--B", "4", "--D", "16", "--layers", "1", "--heads", "2", "--steps", "3", "--variant", "fused",
                "--threads", "1", "--quiet", "--out", path)
    return path


def test_run_file_tables(run_file):
    assert results.kind(run_file) == "run"
    assert sorted(results.tables(run_file)) == ["results", "samples"]
    df = results.read(run_file)
    same_as_file(run_file, "results", df)
    assert list(df["V"]) == [64, 96] and set(df["status"]) == {"ok"}
    samples = results.read_table(run_file, "samples")
    same_as_file(run_file, "samples", samples)
    assert len(samples) == int(df["reps"].sum()) == 4
    # read_samples is the same table
    assert results.read_samples(run_file).equals(samples[["row_id", "sample", "seconds"]])
    # every sample belongs to its row: the row's median is theirs
    for _, r in df.iterrows():
        s = samples[samples["row_id"] == r["row_id"]]["seconds"]
        assert r["time_median_s"] == pytest.approx(float(np.median(s)), rel=0, abs=0)


def test_xmc_file_tables(xmc_file):
    assert results.kind(xmc_file) == "train-xmc"
    assert sorted(results.tables(xmc_file)) == ["epochs", "grad_hist", "logit_grad_hist", "memory"]
    all_tables = results.read_tables(xmc_file)
    epochs = all_tables["epochs"]
    same_as_file(xmc_file, "epochs", epochs)
    assert list(epochs["epoch"]) == [1, 2] and epochs.attrs["status"] == "ok"
    memory = all_tables["memory"]
    assert list(memory["meter"]) == ["predicted", "measured"]
    predicted = memory[memory["meter"] == "predicted"].iloc[0]
    parts = ["weights_bytes", "weight_gradient_bytes", "optimizer_state_bytes", "logits_bytes", "encoder_bytes",
             "workspace_bytes"]
    assert predicted["total_bytes"] == sum(predicted[p] for p in parts)
    measured = memory[memory["meter"] == "measured"].iloc[0]
    assert measured["peak_bytes"] > 0 and np.isnan(measured["weights_bytes"])  # measured: the peaks only
    with h5py.File(xmc_file, "r") as f:
        assert predicted["peak_bytes"] == f["memory"].attrs["predicted_peak_bytes"]
        hist = f["grad_hist"][:]
    g = all_tables["grad_hist"]
    assert g.shape == hist.shape and g.shape[0] == 2 and (g.to_numpy() == hist).all()
    assert "bins" in g.attrs and all_tables["logit_grad_hist"].shape == hist.shape


def test_seqrec_file_tables(seqrec_file):
    assert results.kind(seqrec_file) == "train-seqrec"
    assert sorted(results.tables(seqrec_file)) == ["epochs", "memory", "steps"]
    steps = results.read_table(seqrec_file, "steps")
    same_as_file(seqrec_file, "steps", steps)
    assert list(steps["step"]) == [1, 2, 3] and np.isfinite(steps["loss"]).all()
    same_as_file(seqrec_file, "epochs", results.read(seqrec_file))
    memory = results.read_table(seqrec_file, "memory")
    assert list(memory["meter"]) == ["predicted", "measured"]
    for _, m in memory.iterrows():
        parts = ["parameters_bytes", "gradients_bytes", "optimizer_state_bytes", "activations_bytes",
                 "loss_workspace_bytes", "loss_outputs_bytes", "gradient_sums_bytes"]
        assert m["total_bytes"] == sum(m[p] for p in parts)
    assert memory.attrs["schema"].startswith("lobench train-seqrec run")


def test_missing_table_names_the_file(seqrec_file):
    with pytest.raises(results.RunFileError, match="no /grad_hist table"):
        results.read_table(seqrec_file, "grad_hist")
