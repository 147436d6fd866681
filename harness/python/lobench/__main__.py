"""`python -m lobench ARGS` (and the `lobench` command pip installs): runs lobench's C++ command-line
program with ARGS: $LOBENCH_CLI when set, else the program the wheel carries (lobench/bin/lobench), else
(the build tree's package, which has no bin/) a `lobench` on PATH that is not this entry point. Without
one, a message says how to get it and the exit status is 2. `--version` answers here (the Python
package's version, then the C++ program's: its commit and build flags). `run` and `list` naming Python variants (lobench/python_variants.py) run lobench's
engine in this process instead (lobench/engine.py)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import List, Optional

from ._version import __version__

_GUARD = "LOBENCH_PYTHON_DELEGATED"  # set for the program we start: a second hop means a loop


def _is_this_entry_point(path: str) -> bool:
    """A `lobench` script made by pip for this package (a Python file naming lobench.__main__)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return head.startswith(b"#!") and b"python" in head.split(b"\n", 1)[0] and b"lobench" in head


def find_cli() -> Optional[str]:
    explicit = os.environ.get("LOBENCH_CLI")
    if explicit:
        return explicit
    packaged = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "lobench")
    if os.path.isfile(packaged) and os.access(packaged, os.X_OK):
        return packaged
    me = os.path.realpath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    for d in os.environ.get("PATH", "").split(os.pathsep):
        cand = shutil.which("lobench", path=d) if d else None
        if cand and os.path.realpath(cand) != me and not _is_this_entry_point(cand):
            return cand
    return None


def _version() -> int:
    """The package's version, then the C++ program's own --version (the commit and build flags it was built
    with, docs/commands.md), or why that is missing."""
    print(f"lobench (Python package) {__version__}", flush=True)
    cli = find_cli()
    if cli is None:
        print("C++ program: none found (this copy of the package has no bin/lobench and none is on PATH), so no "
              "commit or build flags to show")
        return 0
    env = dict(os.environ, **{_GUARD: "1"})
    try:
        out = subprocess.run([cli, "--version"], capture_output=True, text=True, timeout=60, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        print(f"C++ program {cli}: --version failed ({e})")
        return 0
    print(f"C++ program {cli}:\n{out.stdout.rstrip()}" if out.returncode == 0 and out.stdout.strip()
          else f"C++ program {cli}: --version failed (exit status {out.returncode}) {out.stderr.strip()[:200]}")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--version"], ["-V"]):
        return _version()
    from . import engine  # Python variants (`--variants mymod:MyVariant`): lobench's engine in this process

    if engine.wants_engine(args):
        return engine.main(args)
    if os.environ.get(_GUARD):
        print("lobench: the lobench command found on PATH is this Python entry point again; set LOBENCH_CLI to the "
              "C++ program (build/lobench)", file=sys.stderr)
        return 2
    cli = find_cli()
    if cli is None:
        print("lobench: no lobench command found: this copy of the Python package (the build tree's) has no "
              "bin/lobench. Build the C++ program (scripts/build.sh; it is build/lobench) and put it on "
              "PATH or in $LOBENCH_CLI, or `pip install .`, whose wheel carries it.", file=sys.stderr)
        return 2
    env = dict(os.environ, **{_GUARD: "1"})
    try:
        os.execve(cli, [cli] + args, env)
    except OSError as e:
        print(f"lobench: cannot run {cli}: {e.strerror or e}", file=sys.stderr)
        return 2
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
