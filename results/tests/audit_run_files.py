#!/usr/bin/env python3
"""Audit of every committed run file (results/**/*.h5 with a /results table; results/schema/ holds format
fixtures and is left out): no measured row above 100 % of its yardstick, and every measured CPU or peer
row with its spread (at least 3 timed runs, a finite CV, min ≤ median ≤ max).

Usage: python3 results/tests/audit_run_files.py [ROOT]     (exit 1 and one line per offending row)
"""
import glob
import math
import os
import sys

import h5py


def audit(path):
    problems = []
    with h5py.File(path, "r") as f:
        if "results" not in f:
            return problems
        rows = f["results"][:]
    names = rows.dtype.names
    for r in rows:
        if r["status"] != b"ok" or r["backend"] == b"cuda":
            continue
        where = f"{path}: row {int(r['row_id'])} {r['variant'].decode()} V={int(r['V'])}"
        frac = float(r["gemm_fraction"])
        if math.isfinite(frac) and frac > 1.0:
            problems.append(f"{where}: {100 * frac:.0f} % of its yardstick")
        cv = float(r["time_cv"]) if "time_cv" in names else float("nan")
        if int(r["reps"]) < 3 or not math.isfinite(cv):
            problems.append(f"{where}: no spread ({int(r['reps'])} timed runs, CV {cv})")
        elif not float(r["time_min_s"]) <= float(r["time_median_s"]) <= float(r["time_max_s"]):
            problems.append(f"{where}: min/median/max out of order")
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    files = [p for p in sorted(glob.glob(os.path.join(root, "**", "*.h5"), recursive=True))
             if os.sep + "schema" + os.sep not in p]
    problems = [p for path in files for p in audit(path)]
    for p in problems:
        print(p)
    print(f"audit_run_files: {len(files)} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
