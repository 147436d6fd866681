"""Writes small lobench run files (results/SCHEMA.md, version 2) for the figure tests: only the columns
the figure scripts read, in the types the reader (plots/lobench_results.py) expects."""
import h5py
import numpy as np

STRING_COLUMNS = {"variant": 32, "status": 16, "reason": 200, "e_format": 24, "e_rounding": 24, "flags": 32}
INT_COLUMNS = ("row_id", "B", "N", "P", "V", "D", "L", "threads", "reps")
FLOAT_COLUMNS = ("time_median_s", "time_cv", "flops", "peak_bytes", "predicted_bytes", "gemm_gflops", "gemm_fraction",
                 "effective_gflops", "rel_loss_err", "rel_dA_err", "rel_dE_err")

DEFAULTS = {"B": 4, "N": 4, "V": 1000, "D": 16, "L": 2, "threads": 1, "reps": 3, "variant": "fused", "status": "ok",
            "reason": "", "e_format": "fp32", "e_rounding": "nearest_even", "flags": ""}


def write_run(path, rows, attrs=None, samples=None):
    """rows: list of dicts (missing columns take DEFAULTS, measurements NaN); samples: {row index: [seconds
    of each timed run]} written as the /samples table. Returns path."""
    dtype = ([(c, f"S{n}") for c, n in STRING_COLUMNS.items()] + [(c, "<i8") for c in INT_COLUMNS] +
             [(c, "<f8") for c in FLOAT_COLUMNS])
    table = np.zeros(len(rows), dtype=dtype)
    for i, r in enumerate(rows):
        full = {**DEFAULTS, "row_id": i, **r}
        full["P"] = full["B"] * full["N"]
        for c in STRING_COLUMNS:
            table[c][i] = str(full[c]).encode()
        for c in INT_COLUMNS:
            table[c][i] = full[c]
        for c in FLOAT_COLUMNS:
            table[c][i] = full.get(c, np.nan)
    with h5py.File(path, "w") as f:
        f.create_dataset("results", data=table)
        if samples:
            s = [(rid, k, t) for rid, ts in sorted(samples.items()) for k, t in enumerate(ts)]
            f.create_dataset("samples", data=np.array(s, dtype=[("row_id", "<i8"), ("sample", "<i4"), ("seconds", "<f8")]))
        f.attrs["schema_version"] = 2
        for k, v in (attrs or {}).items():
            f.attrs[k] = v
    return path
