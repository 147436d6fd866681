#!/usr/bin/env python3
"""The history store of benchmark runs: a folder outside the source tree (a CI cache, an artefact
store, a checkout of a results branch), one subfolder per machine fingerprint, one file per run:

    STORE/<machine fingerprint>/<UTC date>_<commit>.json     (Google Benchmark JSON, or .h5 run files)
    STORE/<machine fingerprint>/<UTC date>_<commit>.paired/  (a paired gate run: base.json and cand.json,
                                                              plots/perf_paired.py)

Runs are compared only with runs of the same machine (plots/perf_runs.py says how the fingerprint is
made); a paired entry carries its own comparison, candidate against the baseline commit measured beside
it. The store is append-only: recording never rewrites an entry already there, and two writers at once
each get their own entry (a new name is claimed atomically: a hard link or a directory rename, which fail
rather than replace).

Usage: python3 plots/perf_history.py record STORE RUN [CAND]  prints the stored path (RUN and CAND: the
                                                              two sides of one paired run)
       python3 plots/perf_history.py latest STORE RUN      prints the newest readable stored run of RUN's
                                                           machine (exit 3 when there is none)
       python3 plots/perf_history.py fingerprint RUN       prints RUN's machine fingerprint
"""
import errno
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass

import perf_runs

ENTRY = re.compile(r"^\d{8}T\d{6}Z_[0-9A-Za-z]*(\.\d+)?(\.json|\.h5|\.paired)$")


@dataclass
class Paired:
    """A paired entry of the store: the baseline commit's run and the candidate's, made in one session."""
    path: str
    base: perf_runs.Run
    cand: perf_runs.Run

    @property
    def date(self):
        return self.cand.date


def stamp(run):
    """A file-name-safe sortable UTC stamp from the run's date ("2026-12-01T18:11:03+00:00")."""
    digits = re.sub(r"[^0-9]", "", run.date)[:14]
    return (digits[:8] + "T" + digits[8:14] + "Z") if len(digits) >= 14 else "00000000T000000Z"


def _claim(folder, stem, ext, make):
    """Creates folder/stem[.n]ext with make(tmp_path) then an atomic claim of the first free name; returns it."""
    os.makedirs(folder, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".incoming-", dir=folder)
    try:
        staged = os.path.join(tmp, "entry")
        make(staged)
        for n in range(10000):
            dest = os.path.join(folder, f"{stem}{'' if n == 0 else f'.{n}'}{ext}")
            try:
                if os.path.isdir(staged):
                    if os.path.exists(dest):
                        continue
                    os.rename(staged, dest)  # fails (ENOTEMPTY/EEXIST) if another writer took dest meanwhile
                else:
                    os.link(staged, dest)  # fails with EEXIST rather than replace
                return dest
            except FileExistsError:
                continue
            except OSError as e:
                if e.errno in (errno.ENOTEMPTY, errno.EEXIST):  # another writer took dest first
                    continue
                raise
        raise perf_runs.RunFileError(f"{folder}: no free name for {stem}{ext}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def record(store, path, cand=None):
    """Copies the run at `path` (or the paired runs `path`, `cand`) into the store; returns the stored
    path. Never overwrites; raises RunFileError when the store cannot be written."""
    run = perf_runs.load(path)
    if cand is not None:
        other = perf_runs.load(cand)
        if not run.pairing or run.pairing != other.pairing:
            raise perf_runs.RunFileError(f"{path} and {cand} are not the two sides of one paired run")
        run = other
    commit = re.sub(r"[^0-9A-Za-z]", "", run.commit)[:12] or "unknown"
    folder = os.path.join(store, run.machine)

    def make(staged):
        if cand is None:
            shutil.copyfile(path, staged)
        else:
            os.mkdir(staged)
            shutil.copyfile(path, os.path.join(staged, "base.json"))
            shutil.copyfile(cand, os.path.join(staged, "cand.json"))
    try:
        ext = ".paired" if cand is not None else (".h5" if run.kind == "lobench" else ".json")
        return _claim(folder, f"{stamp(run)}_{commit}", ext, make)
    except OSError as e:
        raise perf_runs.RunFileError(f"{store}: cannot write the history store ({e.strerror or e})")


def load_entry(path, clock=perf_runs.DEFAULT_CLOCK):
    """A stored entry: a Run, or a Paired for a .paired folder."""
    if path.endswith(".paired"):
        p = Paired(path, perf_runs.load(os.path.join(path, "base.json"), clock),
                   perf_runs.load(os.path.join(path, "cand.json"), clock))
        if not p.base.pairing or p.base.pairing != p.cand.pairing:
            raise perf_runs.RunFileError(f"{path}: its two runs are not one paired run")
        return p
    return perf_runs.load(path, clock)


def machines(store, clock=perf_runs.DEFAULT_CLOCK, errors=None):
    """{fingerprint: [Run or Paired, ...] oldest first} of every readable entry in the store. Entries that
    cannot be read (a torn file) are skipped, and named in `errors` when a list is given."""
    out = {}
    if not os.path.isdir(store):
        raise perf_runs.RunFileError(f"{store}: no such history folder")
    for machine in sorted(os.listdir(store)):
        folder = os.path.join(store, machine)
        if not os.path.isdir(folder):
            continue
        runs = []
        for name in sorted(os.listdir(folder)):
            if not ENTRY.match(name):
                continue
            try:
                runs.append(load_entry(os.path.join(folder, name), clock))
            except perf_runs.RunFileError as e:
                if errors is not None:
                    errors.append(str(e))
        if runs:
            out[machine] = sorted(runs, key=lambda r: (stamp(r), r.path))
    return out


def latest(store, path):
    """The newest readable stored single run of the same machine as the run at `path`, or None."""
    run = perf_runs.load(path)
    folder = os.path.join(store, run.machine)
    if not os.path.isdir(folder):
        return None
    for name in sorted((n for n in os.listdir(folder) if ENTRY.match(n) and not n.endswith(".paired")), reverse=True):
        try:
            perf_runs.load(os.path.join(folder, name))
        except perf_runs.RunFileError:
            continue  # a torn file must not become every later run's baseline
        return os.path.join(folder, name)
    return None


def main(argv):
    if argv[:1] == ["fingerprint"] and len(argv) == 2:
        try:
            print(perf_runs.load(argv[1]).machine)
            return 0
        except perf_runs.RunFileError as e:
            print(f"perf_history: {e}", file=sys.stderr)
            return 2
    if not ((argv[:1] == ["record"] and len(argv) in (3, 4)) or (argv[:1] == ["latest"] and len(argv) == 3)):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        if argv[0] == "record":
            print(record(*argv[1:]))
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
