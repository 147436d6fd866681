"""The one reader of lobench run files (results/SCHEMA.md) for Python: every script in plots/ reads
through it, and `lobench.results` re-exports it.

    import lobench_results
    df = lobench_results.read("results/quickstart.h5")       # pandas.DataFrame, one row per (variant, point)
    s = lobench_results.read_samples("results/quickstart.h5")  # row_id, sample, seconds

Strings are decoded to str; measurements that were not taken are NaN. Files of every schema version read:
version 1 wrote 0 or -1 for measurements not taken and kept the samples in a time_samples_s column; both
are converted here. The run file's root attributes are in df.attrs.

Every table of every file reads as a pandas.DataFrame through read_table(path, name); tables(path) names
them. Training files (any training job's: `lobench train-xmc`, `train-seqrec`, ...; root attribute
"schema" = "lobench COMMAND run, version V", kind() gives COMMAND) have no /results table: read() returns
their per-epoch table (/epochs); their tables are (results/SCHEMA.md lists each job's) /epochs,
/steps (train-seqrec), /memory (the /memory group's predicted_* and measured_* byte counts as one row per
meter: a "meter" column, predicted or measured, and one column per part) and, with histograms
(train-xmc --hist-every), /grad_hist and /logit_grad_hist (one row of counts per epoch, a column per bin).
read_memory() gives the /memory group as a dict. A precision-frontier file (`train-xmc --frontier`) is of
kind "frontier": read() returns its /cells, and /frontier reads through read_table. A file being written reads too: `lobench run` appends to
OUT itself, the trainers to OUT.partial-XXXXXX beside OUT until the run ends (every row is flushed as it
is appended). Column files
(`train-xmc --layouts-out`, `train_step_bench --out`: equal-length 1-D datasets at the root, and for
layouts one group of them per head layout) read as one row per entry, a "group" column naming the
group. kind() says which sort of file a path is. Every failure raises RunFileError (a ValueError) naming the file, never
SystemExit; paths that are not regular files (FIFOs, devices, directories) are refused before opening.
"""
import math
import os
import re
import stat

try:
    import h5py
except ModuleNotFoundError as e:  # (inside the package this is lobench.results, whose extra brings h5py and pandas)
    try:
        from lobench._needs import extra  # the pinned packages, installed without rebuilding lobench
        how = extra("results")
    except ImportError:  # the plots without the package
        how = "pip install h5py pandas"
    raise ModuleNotFoundError(f"lobench.results (the run-file reader) needs {e.name}, which is not installed: {how}",
                              name=e.name) from e
import numpy as np


class RunFileError(ValueError):
    """A file that is not a readable lobench run or training file; the message names the file."""

# A training job's run file: "lobench COMMAND run, version V" (harness/io/job_files.hpp: JobFiles::schema).
_TRAINING_SCHEMA = re.compile(r"^lobench (\S+) run(?:, version \d+)?$")

# Columns that are measurements: NaN when the row was not measured (skipped or failed).
MEASUREMENTS = ("time_median_s", "time_min_s", "time_max_s", "time_cv", "effective_gflops", "gemm_fraction",
                "peak_bytes", "peak_device_bytes", "loss", "rel_loss_err", "rel_dA_err", "rel_dE_err",
                "rel_loss_err_kernel", "rel_dA_err_kernel", "rel_dE_err_kernel", "counts_mismatch")


def text(x):
    """A string column or attribute as str (h5py returns fixed-length strings as bytes)."""
    return x.decode() if isinstance(x, bytes) else str(x)


def precision(row, column):
    """A record row's `operand` or `epilogue`: its text, fp32 where empty or where the file predates the
    column (the row key counts both as fp32)."""
    return (text(row[column]) if column in row.dtype.names else "") or "fp32"


def _attrs(f):
    return {k: (v.decode(errors="replace") if isinstance(v, bytes) else (v.item() if isinstance(v, np.generic) else v))
            for k, v in f.attrs.items()}


def _open(path, table="results"):
    """The file opened read-only, after refusing what is not a regular file (opening a FIFO blocks)."""
    name = os.fspath(path)
    try:
        st = os.stat(name)
    except OSError as e:
        raise RunFileError(f"{name}: cannot read ({e.strerror or e})") from None
    if not stat.S_ISREG(st.st_mode):
        what = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file (FIFO, socket or device)"
        raise RunFileError(f"{name}: {what}; expected a lobench run file (HDF5)")
    try:
        f = h5py.File(name, "r")
    except (OSError, ValueError) as e:
        raise RunFileError(f"{name}: cannot open as HDF5 ({e})") from None
    if table is not None and table not in f:
        tables = [k for k in f.keys() if isinstance(f.get(k, getlink=False), h5py.Dataset)]
        f.close()
        raise RunFileError(f"{name}: no /{table} table (tables: {', '.join(tables) or 'none'}; "
                           "is this a lobench run file?)")
    return f


def _guarded(path, what, fn):
    """fn() with the reader's own failures (missing fields, undecodable text, damaged data) as
    RunFileError naming the file and what was being read."""
    try:
        return fn()
    except RunFileError:
        raise
    except (KeyError, UnicodeDecodeError, ValueError, TypeError, OSError, IndexError) as e:
        raise RunFileError(f"{os.fspath(path)}: cannot read {what} ({type(e).__name__}: {e})") from None


def training_job(schema):
    """The training job that wrote a file with this `schema` attribute ("lobench train-xmc run, version 1"
    -> "train-xmc"), or None. Every training job's run files say so in the same form (harness/io/job_files.hpp),
    so a new job's files read with no change here."""
    m = _TRAINING_SCHEMA.match(schema)
    return m.group(1) if m else None


def kind(path):
    """'run' (a /results table), the training job's command for a training run file ('train-xmc',
    'train-seqrec', ...: training_job()), 'frontier' (`train-xmc --frontier`: /cells and /frontier),
    'columns' (equal-length 1-D datasets: --layouts-out, step benches), or RunFileError."""
    def probe():
        with _open(path, table=None) as f:
            schema = text(f.attrs.get("schema", ""))
            if "results" in f:
                return "run"
            if "frontier" in schema:
                return "frontier"
            job = training_job(schema)
            if job:
                return job
            if _column_layout(f) is not None:
                return "columns"
            raise RunFileError(f"{os.fspath(path)}: neither a /results table, a training file's schema "
                               f"attribute (schema = {schema!r}) nor equal-length columns")
    return _guarded(path, "the file's kind", probe)


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


def _column_layout(f):
    """(root column names, {group: column names}) when every dataset of the file is 1-D of one length
    (at the root or one group deep), else None."""
    lengths, root, groups = set(), [], {}
    for name, item in f.items():
        if isinstance(item, h5py.Dataset):
            if item.ndim != 1 or item.dtype.names is not None:
                return None
            lengths.add(item.shape[0])
            root.append(name)
        elif isinstance(item, h5py.Group):
            cols = []
            for sub, x in item.items():
                if not isinstance(x, h5py.Dataset) or x.ndim != 1 or x.dtype.names is not None:
                    return None
                lengths.add(x.shape[0])
                cols.append(sub)
            groups[name] = cols
    if len(lengths) != 1 or not (root or groups):
        return None
    return root, groups


def _read_columns(path):
    import pandas as pd
    with _open(path, table=None) as f:
        layout = _column_layout(f)
        if layout is None:
            raise RunFileError(f"{os.fspath(path)}: not a file of equal-length columns")
        root, groups = layout
        base = {name: f[name][:] for name in root}
        if not groups:
            df = pd.DataFrame(base)
        else:
            parts = [pd.DataFrame({**base, "group": g, **{c: f[g][c][:] for c in cols}}) for g, cols in groups.items()]
            df = pd.concat(parts, ignore_index=True)
        df.attrs.update(_attrs(f))
    return df


def read(path):
    """The /results table of a run file as a pandas.DataFrame (attributes in df.attrs); for a training
    file, its /epochs table; for a precision-frontier file, its /cells (the trained cells; /frontier holds
    the table of fewest bits); for a column file, its columns."""
    k = kind(path)
    if k == "columns":
        return _guarded(path, "the columns", lambda: _read_columns(path))
    if k == "frontier":
        return read_table(path, "cells")
    if k != "run":
        return read_table(path, "epochs")
    return _guarded(path, "/results", lambda: _read_results(path))


def _read_results(path):
    import pandas as pd
    with _open(path) as f:
        rows = f["results"][:]
        attrs = _attrs(f)
    if rows.dtype.names is None:
        raise RunFileError(f"{os.fspath(path)}: /results is not a table (dtype {rows.dtype})")
    version = attrs.get("schema_version", 1)
    if isinstance(version, bool) or not isinstance(version, (int, np.integer)) or not 1 <= int(version) <= 1000:
        raise RunFileError(f"{os.fspath(path)}: schema_version {version!r} is not a version this reader knows")
    df = pd.DataFrame(_columns(rows, int(version)))
    df.attrs.update(attrs)
    return df


def tables(path):
    """The names of the file's tables, each readable with read_table: its compound tables (/results,
    /samples, /epochs, /steps), its count tables (/grad_hist, /logit_grad_hist) and /memory."""
    def names():
        with _open(path, table=None) as f:
            out = []
            for k in f.keys():
                item = f.get(k, getlink=False)
                if isinstance(item, h5py.Dataset) and isinstance(f.get(k), h5py.Dataset):
                    d = f[k]
                    if (d.ndim == 1 and d.dtype.names is not None) or (d.ndim == 2 and d.dtype.kind in "iu"):
                        out.append(k)
                elif k == "memory" and isinstance(f.get(k), h5py.Group):
                    out.append(k)
            return out
    return _guarded(path, "the table names", names)


def _memory_frame(path, f):
    """/memory's attributes METER_PART (METER: predicted or measured) as one row per meter."""
    import pandas as pd
    if "memory" not in f or not isinstance(f["memory"], h5py.Group):
        raise RunFileError(f"{os.fspath(path)}: no /memory group (not a training file?)")
    rows = {}
    for key, value in _attrs(f["memory"]).items():
        meter, _, part = key.partition("_")
        if not part:
            continue
        rows.setdefault(meter, {})[part] = value
    order = [m for m in ("predicted", "measured") if m in rows] + sorted(set(rows) - {"predicted", "measured"})
    parts = []
    for m in order:
        parts += [p for p in rows[m] if p not in parts]
    return pd.DataFrame({"meter": order, **{p: [rows[m].get(p, math.nan) for m in order] for p in parts}})


def read_table(path, name):
    """Any table of a run or training file as a DataFrame (tables() names them): /results, /samples,
    /epochs, /steps as their columns, strings decoded; /memory one row per meter; /grad_hist and
    /logit_grad_hist one row per recorded epoch, one column per bin. Root attributes (and the table's own)
    in df.attrs."""
    import pandas as pd
    if name == "results":  # the run file's table, with its version's conventions (read())
        return _guarded(path, "/results", lambda: _read_results(path))

    def table():
        with _open(path, table=name) as f:
            attrs = _attrs(f)
            if name == "memory":
                df = _memory_frame(path, f)
                df.attrs.update(attrs)
                return df
            item = f[name]
            if not isinstance(item, h5py.Dataset):
                raise RunFileError(f"{os.fspath(path)}: /{name} is not a table")
            rows = item[:]
            attrs.update(_attrs(item))
        if rows.dtype.names is None and rows.ndim == 2 and rows.dtype.kind in "iu":
            df = pd.DataFrame(rows)
            df.attrs.update(attrs)
            return df
        if rows.dtype.names is None:
            raise RunFileError(f"{os.fspath(path)}: /{name} is not a table (dtype {rows.dtype})")
        cols = {}
        for field in rows.dtype.names:
            col = rows[field]
            if col.dtype.kind == "S":
                cols[field] = np.array([x.decode(errors="replace") for x in col], dtype=object)
            elif col.ndim > 1:  # an array column: one array per row
                cols[field] = list(col)
            else:
                cols[field] = col
        df = pd.DataFrame(cols)
        df.attrs.update(attrs)
        return df
    return _guarded(path, f"/{name}", table)


def read_tables(path):
    """{name: DataFrame} of every table of the file (tables(), read_table())."""
    return {name: read_table(path, name) for name in tables(path)}


def read_memory(path):
    """A training file's /memory group (predicted_* and measured_* bytes) as a dict."""
    def memory():
        with _open(path, table=None) as f:
            if "memory" not in f:
                raise RunFileError(f"{os.fspath(path)}: no /memory group (not a training file?)")
            return _attrs(f["memory"])
    return _guarded(path, "/memory", memory)


def read_samples(path):
    """Every timed run as a pandas.DataFrame with columns row_id, sample, seconds."""
    return _guarded(path, "the timing samples", lambda: _read_samples(path))


def _read_samples(path):
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
