#!/usr/bin/env python3
"""The history store of benchmark runs: a folder outside the source tree (a CI cache, an artefact
store, a checkout of a results branch), one subfolder per machine fingerprint, one file per run:

    STORE/<machine fingerprint>/<UTC date>_<commit>.json     (Google Benchmark JSON, or .h5 run files)

Runs are compared only with runs of the same machine (plots/perf_runs.py says how the fingerprint is
made). The store is append-only: recording never rewrites a run already there.

Usage: python3 plots/perf_history.py record STORE RUN      prints the stored path
       python3 plots/perf_history.py latest STORE RUN      prints the newest stored run of RUN's machine
                                                           (exit 3 when there is none)
       python3 plots/perf_history.py fingerprint RUN       prints RUN's machine fingerprint
"""
import os
import re
import shutil
import sys

import perf_runs


def stamp(run):
    """A file-name-safe sortable UTC stamp from the run's date ("2026-12-01T18:11:03+00:00")."""
    digits = re.sub(r"[^0-9]", "", run.date)[:14]
    return (digits[:8] + "T" + digits[8:14] + "Z") if len(digits) >= 14 else "00000000T000000Z"


def record(store, path):
    """Copies the run at `path` into the store; returns the stored path. Refuses to overwrite."""
    run = perf_runs.load(path)
    folder = os.path.join(store, run.machine)
    os.makedirs(folder, exist_ok=True)
    ext = ".h5" if run.kind == "lobench" else ".json"
    commit = re.sub(r"[^0-9A-Za-z]", "", run.commit)[:12] or "unknown"
    dest = os.path.join(folder, f"{stamp(run)}_{commit}{ext}")
    n = 1
    while os.path.exists(dest):  # the same commit measured twice in one second: keep both
        dest = os.path.join(folder, f"{stamp(run)}_{commit}.{n}{ext}")
        n += 1
    shutil.copyfile(path, dest + ".part")
    os.replace(dest + ".part", dest)
    return dest


def machines(store):
    """{fingerprint: [Run, ...] oldest first} of every run in the store."""
    out = {}
    if not os.path.isdir(store):
        raise perf_runs.RunFileError(f"{store}: no such history folder")
    for machine in sorted(os.listdir(store)):
        folder = os.path.join(store, machine)
        if not os.path.isdir(folder):
            continue
        runs = []
        for name in sorted(os.listdir(folder)):
            if name.endswith((".json", ".h5")):
                runs.append(perf_runs.load(os.path.join(folder, name)))
        if runs:
            out[machine] = sorted(runs, key=lambda r: (stamp(r), r.path))
    return out


def latest(store, path):
    """The newest stored run of the same machine as the run at `path`, or None."""
    run = perf_runs.load(path)
    folder = os.path.join(store, run.machine)
    if not os.path.isdir(folder):
        return None
    names = sorted(n for n in os.listdir(folder) if n.endswith((".json", ".h5")))
    return os.path.join(folder, names[-1]) if names else None


def main(argv):
    if argv[:1] == ["fingerprint"] and len(argv) == 2:
        try:
            print(perf_runs.load(argv[1]).machine)
            return 0
        except perf_runs.RunFileError as e:
            print(f"perf_history: {e}", file=sys.stderr)
            return 2
    if len(argv) != 3 or argv[0] not in ("record", "latest"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        if argv[0] == "record":
            print(record(argv[1], argv[2]))
            return 0
        found = latest(argv[1], argv[2])
    except perf_runs.RunFileError as e:
        print(f"perf_history: {e}", file=sys.stderr)
        return 2
    if not found:
        return 3
    print(found)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
