#!/usr/bin/env python3
"""Fails when the Python environment drifts from the one lobench is tested with.

Checks that every package pinned in requirements.lock is installed for this interpreter at exactly the
pinned version, and that pyproject.toml pins the same versions (its extras and build requirements may
name only locked packages, each with `==` and the locked version). Prints one line per difference and
exits 1 if there is any, 0 otherwise; 2 when a file cannot be read.

  python3 scripts/check_env.py                 # the installed environment and pyproject.toml
  python3 scripts/check_env.py --pyproject-only
"""
from __future__ import annotations

import argparse
import importlib.metadata as metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def canonical(name: str) -> str:
    """PEP 503 normalisation: ml_dtypes, ML-Dtypes and ml.dtypes are one package."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path: Path) -> dict[str, str]:
    pins: dict[str, str] = {}
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", line)
        if not m:
            raise ValueError(f"{path}:{number}: not a 'name==version' pin: {raw!r}")
        name = canonical(m.group(1))
        if name in pins:
            raise ValueError(f"{path}:{number}: {m.group(1)} is pinned twice")
        pins[name] = m.group(2)
    return pins


def installed_differences(pins: dict[str, str]) -> list[str]:
    problems = []
    for name, want in sorted(pins.items()):
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            problems.append(f"{name}: pinned {want}, not installed for {sys.executable}")
            continue
        if have != want:
            problems.append(f"{name}: pinned {want}, installed {have} ({sys.executable})")
    return problems


def pyproject_differences(pins: dict[str, str], path: Path) -> list[str]:
    data = tomllib.loads(path.read_text())
    requirements = [("build-system.requires", r) for r in data.get("build-system", {}).get("requires", [])]
    for extra, reqs in data.get("project", {}).get("optional-dependencies", {}).items():
        requirements += [(f"optional-dependencies.{extra}", r) for r in reqs]
    problems = []
    for where, req in requirements:
        m = re.fullmatch(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*?)\s*", req)
        name, spec = canonical(m.group(1)), m.group(3)
        if name == "lobench":  # an extra that gathers the others ("lobench[jax,torch]")
            continue
        if name not in pins:
            problems.append(f"pyproject.toml {where}: {req!r} is not in requirements.lock")
        elif spec != f"=={pins[name]}":
            problems.append(f"pyproject.toml {where}: {req!r}, requirements.lock pins =={pins[name]}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lock", type=Path, default=ROOT / "requirements.lock")
    parser.add_argument("--pyproject", type=Path, default=ROOT / "pyproject.toml")
    parser.add_argument("--pyproject-only", action="store_true", help="check only pyproject.toml against the lock")
    args = parser.parse_args()
    try:
        pins = read_lock(args.lock)
        problems = pyproject_differences(pins, args.pyproject)
    except (OSError, ValueError, tomllib.TOMLDecodeError) as e:
        print(f"check_env: {e}", file=sys.stderr)
        return 2
    if not args.pyproject_only:
        problems = installed_differences(pins) + problems
    for p in problems:
        print(f"check_env: {p}", file=sys.stderr)
    if problems:
        print(f"check_env: {len(problems)} difference(s) from {args.lock.name}; "
              "scripts/install_deps.sh installs the pinned versions", file=sys.stderr)
        return 1
    print(f"check_env: {len(pins)} pinned packages as locked ({sys.executable}); pyproject.toml agrees")
    return 0


if __name__ == "__main__":
    sys.exit(main())
