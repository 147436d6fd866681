"""The one reader of lobench run files (results/SCHEMA.md) for Python: every script in plots/ and
harness/peers/ reads through it, and `lobench.results` re-exports it.

    import lobench_results
    df = lobench_results.read("results/quickstart.h5")       # pandas.DataFrame, one row per (variant, point)
    s = lobench_results.read_samples("results/quickstart.h5")  # row_id, sample, seconds

Strings are decoded to str; measurements that were not taken are NaN. Files of every schema version read:
version 1 wrote 0 or -1 for measurements not taken and kept the samples in a time_samples_s column; both
are converted here. The run file's root attributes are in df.attrs.
"""
import math
import sys

import h5py
import numpy as np

# Columns that are measurements: NaN when the row was not measured (skipped or failed).
MEASUREMENTS = ("time_median_s", "time_min_s", "time_max_s", "time_cv", "effective_gflops", "gemm_fraction",
                "peak_bytes", "peak_device_bytes", "loss", "rel_loss_err", "rel_dA_err", "rel_dE_err",
                "rel_loss_err_kernel", "rel_dA_err_kernel", "rel_dE_err_kernel", "counts_mismatch")


def text(x):
    """A string column or attribute as str (h5py returns fixed-length strings as bytes)."""
    return x.decode() if isinstance(x, bytes) else str(x)


def _attrs(f):
    return {k: (v.decode() if isinstance(v, bytes) else (v.item() if isinstance(v, np.generic) else v))
            for k, v in f.attrs.items()}


def _open(path):
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        sys.exit(f"{path}: cannot open as HDF5 ({e})")
    if "results" not in f:
        f.close()
        sys.exit(f"{path}: no /results table (is this a lobench run file?)")
    return f


def _columns(rows, version):
    """Structured rows -> dict of columns, strings decoded, version-1 sentinels as NaN."""
    cols = {}
    for name in rows.dtype.names:
        if name == "time_samples_s":
            continue
        col = rows[name]
        if col.dtype.kind == "S":
            cols[name] = np.array([x.decode(errors="replace") for x in col], dtype=object)
        elif name in MEASUREMENTS:
            cols[name] = col.astype(np.float64)
        else:
            cols[name] = col
    if version < 2 and len(rows):
        measured = cols["status"] == "ok"
        for name in MEASUREMENTS:
            if name in cols:
                c = cols[name]
                if name in ("peak_device_bytes", "counts_mismatch"):
                    c[c == -1] = math.nan
                c[~measured & (c == 0)] = math.nan
        if "gemm_gflops" in cols:
            cols["gemm_gflops"] = cols["gemm_gflops"].astype(np.float64)
            cols["gemm_gflops"][cols["gemm_gflops"] == 0] = math.nan
    return cols


def read(path):
    """The /results table of a run file as a pandas.DataFrame (attributes in df.attrs)."""
    import pandas as pd
    with _open(path) as f:
        rows = f["results"][:]
        attrs = _attrs(f)
    version = int(attrs.get("schema_version", 1))
    df = pd.DataFrame(_columns(rows, version))
    df.attrs.update(attrs)
    return df


def read_samples(path):
    """Every timed run as a pandas.DataFrame with columns row_id, sample, seconds."""
    import pandas as pd
    with _open(path) as f:
        if "samples" in f:
            s = f["samples"][:]
            return pd.DataFrame({"row_id": s["row_id"], "sample": s["sample"], "seconds": s["seconds"]})
        rows = f["results"][:]
    out = {"row_id": [], "sample": [], "seconds": []}
    if "time_samples_s" in rows.dtype.names:
        for r in rows:
            for i in range(min(int(r["reps"]), r["time_samples_s"].shape[0])):
                if math.isfinite(r["time_samples_s"][i]):
                    out["row_id"].append(int(r["row_id"]))
                    out["sample"].append(i)
                    out["seconds"].append(float(r["time_samples_s"][i]))
    return pd.DataFrame(out)


def load(path):
    """(rows as a NumPy record array with str columns and NaN for measurements not taken, root attributes):
    the form the plotting scripts iterate over."""
    df = read(path)
    return df.to_records(index=False), dict(df.attrs)
