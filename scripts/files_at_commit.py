#!/usr/bin/env python3
"""Run a table command on run files as they were at an earlier commit: for numbers a document keeps after
their run files were replaced (the files are still in git's history, so the numbers stay reproducible).

    python3 scripts/files_at_commit.py COMMIT -- python3 plots/elmo_operand_table.py results/elmo/operand_delicious

Every argument of the command under results/ (a file or a folder) is taken from COMMIT (git archive into
a temporary folder, removed afterwards) and replaced by its copy's path; everything else, the scripts
included, is today's. The command runs from the repository root; its standard output and exit status are
passed on. Exit 2 when COMMIT or one of the paths is not in the repository's history (a shallow clone
lacks old commits: fetch them, `git fetch --unshallow`).
"""
import io
import os
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fail(message):
    print(f"files_at_commit: {message}", file=sys.stderr)
    return 2


def main(argv):
    if len(argv) < 3 or argv[1] != "--":
        return fail("usage: files_at_commit.py COMMIT -- COMMAND [ARGS...]")
    commit, command = argv[0], argv[2:]
    paths = [a for a in command[1:] if os.path.normpath(a).startswith("results" + os.sep)]
    if not paths:
        return fail("the command names no path under results/")
    r = subprocess.run(["git", "-C", ROOT, "archive", "--format=tar", commit, "--"] + paths, capture_output=True)
    if r.returncode != 0:
        return fail(f"{commit}: {r.stderr.decode(errors='replace').strip() or 'git archive failed'}")
    if command[0] in ("python3", "python"):
        command[0] = sys.executable
    with tempfile.TemporaryDirectory(prefix="files_at_commit.") as tmp:
        with tarfile.open(fileobj=io.BytesIO(r.stdout)) as tar:
            tar.extractall(tmp, filter="data")
        argv_at = [os.path.join(tmp, a) if a in paths else a for a in command]
        return subprocess.run(argv_at, cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
