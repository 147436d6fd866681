"""Reading lobench run files (results/SCHEMA.md) for the plots/ scripts: the /results table and the root
attributes."""
import sys

import h5py


def text(x):
    """A string column or attribute as str (h5py returns fixed-length strings as bytes)."""
    return x.decode() if isinstance(x, bytes) else str(x)


def load(path):
    """Returns (rows of /results as a structured array, root attributes with byte strings decoded)."""
    with h5py.File(path, "r") as f:
        if "results" not in f:
            sys.exit(f"{path}: no /results table (is this a lobench run file?)")
        rows = f["results"][:]
        attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
    return rows, attrs
