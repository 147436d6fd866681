"""Readers for `lobench train-xmc` run files (harness/train/run_file.hpp), shared by the plots/elmo_*.py
scripts. One HDF5 file per run: root attributes (provenance + configuration), /epochs (one row per
epoch), /memory (attributes: predicted breakdown and measured peaks), optional /grad_hist."""
import glob
import os
import sys

import h5py
import numpy as np


def _text(x):
    return x.decode() if isinstance(x, bytes) else x


def load_run(path):
    """Returns a dict: attrs (root), memory (attrs of /memory), epochs (structured array or None),
    grad_hist and logit_grad_hist (int64 [epochs, bins] or None), grad_hist_edges_log2, path."""
    with h5py.File(path, "r") as f:
        run = {
            "path": path,
            "attrs": {k: _text(v) for k, v in f.attrs.items()},
            "memory": {k: _text(v) for k, v in f["memory"].attrs.items()} if "memory" in f else {},
            "epochs": f["epochs"][:] if "epochs" in f else None,
            "grad_hist": f["grad_hist"][:] if "grad_hist" in f else None,
            "logit_grad_hist": f["logit_grad_hist"][:] if "logit_grad_hist" in f else None,
            "grad_hist_edges_log2": f["grad_hist_edges_log2"][:] if "grad_hist_edges_log2" in f else None,
        }
    return run


def load_dir(folder, pattern="*.h5", recursive=False):
    paths = sorted(glob.glob(os.path.join(folder, "**", pattern) if recursive else os.path.join(folder, pattern),
                             recursive=recursive))
    if not paths:
        sys.exit(f"{folder}: no run files matching {pattern}")
    runs = []
    for p in paths:
        try:
            runs.append(load_run(p))
        except OSError as e:  # a run still being written, or not a run file
            print(f"skipping {p}: {e}", file=sys.stderr)
    return runs


def last(run, column):
    """Value of an /epochs column at the last epoch (NaN when absent)."""
    e = run["epochs"]
    if e is None or len(e) == 0:
        return float("nan")
    return float(e[column][-1])


def status(run):
    return run["attrs"].get("status", "unknown")


def config_key(run, *names):
    return tuple(run["attrs"].get(n) for n in names)


def mean_std(values):
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
    if v.size == 0:
        return float("nan"), float("nan"), 0
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0, int(v.size)


def save_figure_and_table(fig, out, lines, table_path=None):
    """The end of every plots/elmo_*.py: writes the figure (without out: none, and only the table is printed,
    for a report's generated block: scripts/results_tables.py), prints the Markdown table (lines) and, given
    table_path, writes it there too."""
    if out:
        fig.tight_layout()
        fig.savefig(out, dpi=110)
        print(f"wrote {out}")
    table = "\n".join(lines) + "\n"
    print(table)
    if table_path:
        with open(table_path, "w") as f:
            f.write(table)
